/* reuse.c - the reuse observer (reuse.h, docs/REUSE.md): watchpoint pairs
 * on sampled elements, followed through frees and collections, and the
 * signatures of the profile. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attacher/analyses/reuse.h"
#include "attacher/core/collector.h"
#include "attacher/core/decode.h"
#include "attacher/core/insn_len.h"
#include "attacher/core/remote.h"
#include "attacher/watch/watch.h"
#include "common/log.h"
#include "common/reuse_math.h"

#define MAX_PROCS 16
#define MAX_OBJS 4096   /* objects whose pairs are counted for the access rate */
#define MAX_THREADS 1024
#define NO_OBJ UINT32_MAX

/* One pair: armed at `take`, attributed at `sample`, hit by `poll`,
 * taken (committed) in time order at `flush`. */
struct ru_rec {
	bool used, attributed, has_hit;
	uint64_t cookie;
	pid_t pid, tid;
	uint32_t asid, ctx;
	uint64_t addr;         /* watched now */
	uint64_t old_addr;     /* before the last move (0: not moved) */
	unsigned len;
	uint64_t lo, hi;       /* the object now */
	uint64_t deadline;     /* CLOCK_MONOTONIC: censored when not hit by then */
	uint64_t gc_since;     /* a collection of its space began then (0: none) */
	uint32_t obj;          /* its object's entry in ru_obs.objs (NO_OBJ: none) */
	struct watch_hit hit;
};

/* One sampled object, for the access rate (os_kac_rate): the pairs its
 * thread's samples put on it. Followed through collections' moves; a
 * native object freed is not marked (a later object of the same context,
 * size and address on the same thread continues its entry). */
struct ru_obj {
	pid_t tid;
	uint32_t asid, ctx;
	bool dead;
	uint64_t lo, hi;
	uint64_t off_lo, off_hi;  /* sampled offsets: lowest start, highest end */
	unsigned npairs, nlost;
	double pairs_w;
	double first_w, last_w;   /* its thread's pairs (width-weighted) before its first, after its last */
	double wmul;              /* its reuse times' weight per byte in the footprint (os_kac_weights) */
};

/* One reuse taken. */
struct ru_time {
	uint32_t ctx;
	uint32_t obj;          /* NO_OBJ: not counted for the access rate */
	unsigned len;
	double ns;             /* CPU time, trap cost subtracted */
};

struct ru_stats {
	uint64_t offered, armed, busy_thread, rate_limited, full, width_unknown, unaligned;
	uint64_t enospc, thread_gone, arm_errors, no_set;
	uint64_t unattributed, freed, died, moves_lost, moved, move_failed, stale_hit;
	uint64_t censored, stopped, hits_unknown, no_cpu_time;
};

struct ru_obs {
	struct os_collector *c;
	struct {
		pid_t pid;
		struct watch_set *w;
	} set[MAX_PROCS];
	unsigned nset;
	char set_err[256];
	struct ru_rec rec[OS_RU_MAX_ARMED];
	uint64_t next_cookie;
	double tokens;          /* rate bound: pairs that may be armed now */
	uint64_t tokens_at;
	bool stopped;
	struct ru_time *times;
	size_t ntimes, cap;
	double *cens;           /* censored per context (grown to nctx) */
	uint32_t ncens;
	uint64_t gc_begin[64];  /* latest GC begin drained, by asid (asid < 64) */
	struct os_decoder *dec;
	struct os_hmap mix;     /* pid << 48 | insn -> instructions << 16 | memory ones */
	double mix_insns, mix_mem; /* summed over the pairs armed */
	double ips, trap_ns;
	int trap_err;
	char trap_why[256];        /* watch_open's reason, when it refused */
	struct watch_set *self_w;  /* our own process: trap calibration */
	double traps[OS_RU_TRAP_MAX];
	size_t ntraps;
	uint64_t trap_at, trap_cookie;
	uint64_t cache[3];
	double width_sum;
	struct ru_stats st;
	/* objects and threads for the access rate */
	struct ru_obj *objs;
	uint32_t nobjs;
	uint64_t objs_full;
	struct {
		pid_t tid;
		double w;
	} thr[MAX_THREADS];
	unsigned nthr;
	/* the model, made at profile_notes */
	bool modelled;
	double rate, mem_share, width, calib_rate;
	size_t kac_used;
	double kac_share;          /* of the attributed pairs, on the objects used */
};

static struct watch_set *set_of(struct ru_obs *o, pid_t pid)
{
	char err[256] = "";
	unsigned i;

	for (i = 0; i < o->nset; i++)
		if (o->set[i].pid == pid)
			return o->set[i].w;
	if (o->nset == MAX_PROCS)
		return NULL;
	o->set[o->nset].pid = pid;
	o->set[o->nset].w = watch_open(pid, WATCH_ROUTE_PERF, err, sizeof(err));
	if (!o->set[o->nset].w && !o->set_err[0])
		snprintf(o->set_err, sizeof(o->set_err), "%s", err);
	return o->set[o->nset++].w;
}

static int obs_start(void **self, struct os_collector *c, char *err, size_t errlen)
{
	struct ru_obs *o = calloc(1, sizeof(*o));
	double trap;

	if (!o) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	*self = o;
	o->c = c;
	o->next_cookie = 1;
	o->tokens = 1;
	o->tokens_at = os_now_ns();
	os_hmap_init(&o->mix);
	o->dec = os_decoder_new();
	o->ips = os_ru_calibrate_ips();
	o->self_w = watch_open(getpid(), WATCH_ROUTE_PERF, err, errlen);
	if (!o->self_w)
		snprintf(o->trap_why, sizeof(o->trap_why), "%s", err);
	trap = o->self_w ? 0 : -ENODEV;
	for (int k = 0; o->self_w && k < OS_RU_TRAP_START * 2 && o->ntraps < OS_RU_TRAP_START;
	     k++) {
		trap = os_ru_trap_once(o->self_w, ++o->trap_cookie);
		if (trap >= 0)
			o->traps[o->ntraps++] = trap;
		else if (trap != -EIO)
			break;
	}
	if (!o->ntraps)
		o->trap_err = trap < 0 ? (int)trap : -EIO;
	o->trap_at = os_now_ns();
	err[0] = 0;
	os_ru_cache_sizes(o->cache);
	return 0;
}

static struct ru_rec *rec_find(struct ru_obs *o, uint64_t cookie)
{
	for (unsigned i = 0; i < OS_RU_MAX_ARMED; i++)
		if (o->rec[i].used && o->rec[i].cookie == cookie)
			return &o->rec[i];
	return NULL;
}

/* A pair of an object ends without its reuse time. */
static void obj_lost(struct ru_obs *o, const struct ru_rec *r)
{
	if (r->obj != NO_OBJ && r->obj < o->nobjs)
		o->objs[r->obj].nlost++;
}

static void rec_disarm(struct ru_obs *o, struct ru_rec *r)
{
	struct watch_set *w = set_of(o, r->pid);

	obj_lost(o, r);
	if (w)
		watch_disarm(w, r->cookie); /* -ENOENT: hit or gone already */
	r->used = false;
}

static bool take_token(struct ru_obs *o)
{
	uint64_t now = os_now_ns();

	o->tokens += (double)(now - o->tokens_at) * 1e-9 * OS_RU_RATE;
	o->tokens_at = now;
	if (o->tokens > 4)
		o->tokens = 4;
	if (o->tokens < 1)
		return false;
	o->tokens -= 1;
	return true;
}

/* The target of a relative jump (jcc rel8/rel32, jmp rel8/rel32) that
 * starts at p (len bytes, at address a); 0: not one. */
static uint64_t jump_target(const uint8_t *p, unsigned len, uint64_t a)
{
	unsigned k = 0;

	while (k < len && ((p[k] & 0xf0) == 0x40 || p[k] == 0x66 || p[k] == 0x2e || p[k] == 0x3e))
		k++; /* REX, operand size, branch hints */
	if (k + 2 == len && ((p[k] & 0xf0) == 0x70 || p[k] == 0xeb))
		return a + len + (uint64_t)(int64_t)(int8_t)p[k + 1];
	if (k + 5 == len && p[k] == 0xe9)
		return a + len + (uint64_t)(int64_t)(int32_t)(p[k + 1] | p[k + 2] << 8 |
							       p[k + 3] << 16 | (uint32_t)p[k + 4] << 24);
	if (k + 6 == len && p[k] == 0x0f && (p[k + 1] & 0xf0) == 0x80)
		return a + len + (uint64_t)(int64_t)(int32_t)(p[k + 2] | p[k + 3] << 8 |
							       p[k + 4] << 16 | (uint32_t)p[k + 5] << 24);
	return 0;
}

/* Instructions and memory-accessing ones of [from, to) in code (at
 * address base); false when a length is unknown or the walk does not end
 * at `to` exactly. */
static bool count_mix(struct ru_obs *o, const uint8_t *code, size_t n, uint64_t base,
		      uint64_t from, uint64_t to, unsigned *insns, unsigned *mem)
{
	uint64_t a = from;

	*insns = *mem = 0;
	while (a < to) {
		unsigned l = os_insn_len(code + (a - base), n - (size_t)(a - base));
		struct os_mem_insn m;

		if (!l)
			return false;
		(*insns)++;
		if (o->dec && os_decode_prev(o->dec, code, n, base, a + l, a, &m) != OS_DEC_NOMEM)
			(*mem)++;
		a += l;
	}
	return a == to;
}

/* The instruction mix of the code the sampled instruction is in (docs/
 * REUSE.md "access rate"): the loop body when the first jump after it goes
 * back to or before it (within 192 bytes), else the straight code from it
 * to that jump. Cached per instruction. false: not decodable. */
static bool code_mix(struct ru_obs *o, pid_t pid, uint64_t insn, unsigned *insns, unsigned *mem)
{
	uint64_t key = (uint64_t)pid << 48 | (insn & ((1ULL << 48) - 1)), v, base = insn - 192, a;
	uint8_t code[192 + 256];
	ssize_t got;

	if (os_hmap_get(&o->mix, key, &v)) {
		*insns = (unsigned)(v >> 16);
		*mem = (unsigned)(v & 0xffff);
		return *insns > 0;
	}
	*insns = *mem = 0;
	got = insn > 192 ? os_remote_read(pid, base, code, sizeof(code)) : -1;
	if (got == (ssize_t)sizeof(code)) {
		a = insn;
		for (int k = 0; k < 48 && a < base + sizeof(code); k++) {
			size_t off = (size_t)(a - base);
			unsigned l = os_insn_len(code + off, sizeof(code) - off);
			uint64_t tgt;

			if (!l)
				break;
			tgt = jump_target(code + off, l, a);
			a += l;
			if (!tgt)
				continue;
			if (tgt <= insn && tgt >= base && count_mix(o, code, sizeof(code), base, tgt, a,
								      insns, mem)) {
				unsigned i2, m2; /* tgt must be a boundary before insn */

				if (!count_mix(o, code, sizeof(code), base, tgt, insn, &i2, &m2))
					*insns = *mem = 0;
			}
			if (!*insns)
				count_mix(o, code, sizeof(code), base, insn, a, insns, mem);
			break;
		}
	}
	if (o->mix.count < 65536)
		os_hmap_put(&o->mix, key, (uint64_t)*insns << 16 | (*mem & 0xffff));
	return *insns > 0;
}

/* Stage 1: a sampled access, the target running: arm a pair on it. */
static void obs_take(void *self, const struct os_obs_take *t, void *data)
{
	struct ru_obs *o = self;
	struct watch_set *w;
	struct ru_rec *r = NULL;
	unsigned width, i, busy = 0;
	bool wr;
	int e;

	memset(data, 0, 8);
	if (o->stopped || o->trap_err || !t->addr)
		return;
	o->st.offered++;
	for (i = 0; i < OS_RU_MAX_ARMED; i++) {
		if (o->rec[i].used && o->rec[i].tid == (pid_t)t->tid && !o->rec[i].has_hit &&
		    ++busy == OS_RU_PER_THREAD) {
			o->st.busy_thread++;
			return;
		}
		if (!o->rec[i].used && !r)
			r = &o->rec[i];
	}
	if (!r) {
		o->st.full++;
		return;
	}
	w = set_of(o, t->pid);
	if (!w) {
		o->st.no_set++;
		return;
	}
	width = watch_access_width(w, t->ip, &wr);
	if (width != 1 && width != 2 && width != 4 && width != 8) {
		o->st.width_unknown++;
		return;
	}
	if (t->addr & (width - 1)) {
		o->st.unaligned++;
		return;
	}
	if (!take_token(o)) {
		o->st.rate_limited++;
		return;
	}
	e = watch_arm_pair(w, (pid_t)t->tid, t->addr, width, o->next_cookie, 0);
	if (e) {
		if (e == -ENOSPC)
			o->st.enospc++;
		else if (e == -ESRCH)
			o->st.thread_gone++;
		else
			o->st.arm_errors++;
		return;
	}
	memset(r, 0, sizeof(*r));
	r->used = true;
	r->cookie = o->next_cookie++;
	r->pid = t->pid;
	r->tid = (pid_t)t->tid;
	r->asid = t->asid;
	r->addr = t->addr;
	r->len = width;
	r->deadline = os_now_ns() + OS_RU_MAX_AGE_NS;
	r->obj = NO_OBJ;
	o->st.armed++;
	{
		unsigned ni, nm;

		if (code_mix(o, t->pid, t->insn, &ni, &nm)) {
			o->mix_insns += ni;
			o->mix_mem += nm;
		}
	}
	memcpy(data, &r->cookie, 8);
}

/* Its thread's attributed pairs, width-weighted, with `w` more (-1: the
 * table is full). */
static double thread_add(struct ru_obs *o, pid_t tid, double w)
{
	unsigned i;

	for (i = 0; i < o->nthr && o->thr[i].tid != tid; i++)
		;
	if (i == o->nthr) {
		if (i == MAX_THREADS)
			return -1;
		o->thr[i].tid = tid;
		o->thr[i].w = 0;
		o->nthr++;
	}
	o->thr[i].w += w;
	return o->thr[i].w;
}

/* An attributed pair: counted with its object (found or added). */
static void obj_count(struct ru_obs *o, struct ru_rec *r)
{
	double after = thread_add(o, r->tid, r->len), before = after - r->len;
	uint64_t off = r->addr - r->lo;
	struct ru_obj *e = NULL;
	uint32_t i;

	if (after < 0)
		return;
	for (i = 0; i < o->nobjs; i++) {
		e = &o->objs[i];
		if (!e->dead && e->tid == r->tid && e->asid == r->asid && e->lo == r->lo &&
		    e->hi == r->hi && e->ctx == r->ctx)
			break;
	}
	if (i == o->nobjs) {
		if (!o->objs) {
			o->objs = calloc(MAX_OBJS, sizeof(*o->objs));
			if (!o->objs)
				return;
		}
		if (o->nobjs == MAX_OBJS) {
			o->objs_full++;
			return;
		}
		e = &o->objs[o->nobjs++];
		memset(e, 0, sizeof(*e));
		e->tid = r->tid;
		e->asid = r->asid;
		e->ctx = r->ctx;
		e->lo = r->lo;
		e->hi = r->hi;
		e->first_w = before;
		e->off_lo = off;
		e->off_hi = off + r->len;
	}
	r->obj = i;
	e->npairs++;
	e->pairs_w += r->len;
	e->last_w = after;
	if (off < e->off_lo)
		e->off_lo = off;
	if (off + r->len > e->off_hi)
		e->off_hi = off + r->len;
}

/* Stage 4: the sample attributed: the element's object and context. */
static void obs_sample(void *self, const struct os_obs_sample *x)
{
	struct ru_obs *o = self;
	struct os_collector *c = o->c;
	struct os_runtime *rt = c->attrib.rt;
	struct os_aspace *as = os_tasks_get(&c->tasks, x->asid);
	uint64_t cookie, canon = x->addr, v;
	struct ru_rec *r;

	memcpy(&cookie, x->data, 8);
	if (!cookie || !(r = rec_find(o, cookie)))
		return;
	if (rt && rt->ops->sample_addr)
		canon = rt->ops->sample_addr(rt, x->asid, x->addr);
	if (x->ctx == OS_NONE || !as || !as->objects ||
	    !os_iv_lookup(as->objects, canon, &r->lo, &r->hi, &v)) {
		o->st.unattributed++;
		rec_disarm(o, r);
		return;
	}
	r->ctx = os_val_ctx(v);
	r->attributed = true;
	obj_count(o, r);
	/* a collection began after the sample: its address may be stale */
	if (x->asid < 64 && o->gc_begin[x->asid] > x->time)
		r->gc_since = o->gc_begin[x->asid];
}

static void censor(struct ru_obs *o, uint32_t ctx)
{
	if (ctx >= o->ncens) {
		uint32_t n = ctx + 64;
		double *p = realloc(o->cens, n * sizeof(*p));

		if (!p)
			return;
		memset(p + o->ncens, 0, (n - o->ncens) * sizeof(*p));
		o->cens = p;
		o->ncens = n;
	}
	o->cens[ctx] += 1;
	o->st.censored++;
}

/* A hit whose accesses both touched the element: its reuse is taken. */
static void commit(struct ru_obs *o, struct ru_rec *r)
{
	const struct watch_hit *h = &r->hit;
	bool stale = false;

	r->used = false;
	if (r->gc_since) {
		/* an access to the address the element had before a collection
		 * began, made after it began, is another object's: the element
		 * moved away (or the collection has not told yet) */
		uint64_t old = r->old_addr ? r->old_addr : r->addr;

		stale = (h->first_addr == old && h->first_time_ns > r->gc_since) ||
			(h->addr == old && h->time_ns > r->gc_since);
	}
	if (stale) {
		o->st.stale_hit++;
		obj_lost(o, r);
		return;
	}
	if (!h->run_ns) {
		o->st.no_cpu_time++;
		obj_lost(o, r);
		return;
	}
	if (o->ntimes == o->cap) {
		size_t n = o->cap ? o->cap * 2 : 1024;
		struct ru_time *p = realloc(o->times, n * sizeof(*p));

		if (!p)
			return;
		o->times = p;
		o->cap = n;
	}
	o->times[o->ntimes].ctx = r->ctx;
	o->times[o->ntimes].obj = r->obj;
	o->times[o->ntimes].len = r->len;
	o->times[o->ntimes].ns = (double)h->run_ns; /* the trap's cost: at the model */
	o->width_sum += h->width ? h->width : r->len;
	o->ntimes++;
}

/* The pairs' hits, kept with their records. */
static void poll_hits(struct ru_obs *o)
{
	for (unsigned s = 0; s < o->nset; s++) {
		struct watch_hit h[16];
		int n;

		if (!o->set[s].w)
			continue;
		while ((n = watch_poll(o->set[s].w, h, 16)) > 0) {
			for (int k = 0; k < n; k++) {
				struct ru_rec *r = rec_find(o, h[k].cookie);

				if (!r || !h[k].pair) {
					o->st.hits_unknown++; /* a pair already ended: must not happen */
					continue;
				}
				r->hit = h[k];
				r->has_hit = true;
			}
		}
	}
}

/* After the rings are drained: hits and pairs past their age; now and
 * then, the trap's cost again. */
static void obs_poll(void *self)
{
	struct ru_obs *o = self;
	uint64_t now = os_now_ns();

	if (o->self_w && !o->stopped && now - o->trap_at > OS_RU_TRAP_EVERY_NS &&
	    o->ntraps < OS_RU_TRAP_MAX) {
		double t = os_ru_trap_once(o->self_w, ++o->trap_cookie);

		if (t >= 0)
			o->traps[o->ntraps++] = t;
		o->trap_at = now;
	}

	poll_hits(o);
	for (unsigned i = 0; i < OS_RU_MAX_ARMED; i++) {
		struct ru_rec *r = &o->rec[i];
		struct watch_set *w;

		if (!r->used || r->has_hit || now < r->deadline)
			continue;
		w = set_of(o, r->pid);
		if (w && watch_disarm(w, r->cookie) == 0) {
			if (r->attributed)
				censor(o, r->ctx);
			obj_lost(o, r);
		} else {
			o->st.thread_gone++;
		}
		r->used = false;
	}
}

/* The pairs on [lo, hi) of asid end at `time`: those hit before are taken,
 * the others disarmed (counted in *count). */
static void end_range(struct ru_obs *o, uint32_t asid, uint64_t lo, uint64_t hi, uint64_t time,
		      uint64_t *count)
{
	for (unsigned i = 0; i < OS_RU_MAX_ARMED; i++) {
		struct ru_rec *r = &o->rec[i];

		if (!r->used || !r->attributed || r->asid != asid || r->hi <= lo || r->lo >= hi)
			continue;
		if (r->has_hit && r->hit.time_ns <= time) {
			commit(o, r);
			continue;
		}
		(*count)++;
		rec_disarm(o, r);
	}
}

/* The memory [lo, hi) of asid was freed at `time`, as just read from the
 * target (before the collector applies it, 100 ms later): the pairs
 * watching it are disarmed at once, whether attributed yet or not (a pair
 * complete before the free stays, to be taken in time order). */
static void freed_now(struct ru_obs *o, uint32_t asid, uint64_t lo, uint64_t hi, uint64_t time)
{
	poll_hits(o);
	for (unsigned i = 0; i < OS_RU_MAX_ARMED; i++) {
		struct ru_rec *r = &o->rec[i];

		if (!r->used || r->asid != asid || r->addr >= hi || r->addr + r->len <= lo ||
		    (r->has_hit && r->hit.time_ns <= time))
			continue;
		o->st.freed++;
		rec_disarm(o, r);
	}
}

/* The extent of the memory a free, realloc, unmap or mremap event ends
 * (the object is still in the index): false for other events. */
static bool freed_range(struct ru_obs *o, const struct os_obj_event *ev, uint64_t *lo,
			uint64_t *hi)
{
	struct os_aspace *as = os_tasks_get(&o->c->tasks, ev->asid);

	*lo = ev->addr;
	*hi = 0;
	switch (ev->type) {
	case OS_EV_FREE:
	case OS_EV_REALLOC:
	case OS_EV_MREMAP:
		if (ev->type != OS_EV_FREE)
			*lo = ev->aux; /* the old block */
		if (!as || !as->objects || !os_iv_lookup(as->objects, *lo, NULL, hi, NULL))
			*hi = *lo + 1;
		return true;
	case OS_EV_MUNMAP:
		*hi = ev->addr + ev->size;
		return true;
	default:
		return false;
	}
}

/* Drained: a free ends its pairs now; a collection began (the newest the
 * collector knows). */
static void obs_drained(void *self, const struct os_obj_event *ev, uint64_t time)
{
	struct ru_obs *o = self;
	uint64_t lo, hi;

	if (freed_range(o, ev, &lo, &hi)) {
		freed_now(o, ev->asid, lo, hi, time);
		return;
	}
	if (ev->type != OS_EV_GC_BEGIN)
		return;
	if (ev->asid < 64 && time > o->gc_begin[ev->asid])
		o->gc_begin[ev->asid] = time;
	for (unsigned i = 0; i < OS_RU_MAX_ARMED; i++)
		if (o->rec[i].used && o->rec[i].asid == ev->asid && !o->rec[i].gc_since)
			o->rec[i].gc_since = time;
}

/* In time order, before the event is applied: frees end their pairs (those
 * the drained event left: attributed since, hit before the free). */
static void obs_event(void *self, const struct os_obj_event *ev, uint64_t time)
{
	struct ru_obs *o = self;
	uint64_t lo, hi;

	if (freed_range(o, ev, &lo, &hi))
		end_range(o, ev->asid, lo, hi, time, &o->st.freed);
}

struct lo_idx {
	uint64_t lo;           /* the address before the collection: the sort key */
	size_t i;
};

static int by_lo(const void *a, const void *b)
{
	uint64_t x = ((const struct lo_idx *)a)->lo, y = ((const struct lo_idx *)b)->lo;

	return x < y ? -1 : x > y;
}

int os_ru_follow_moves(uint64_t *lo, bool *moved, size_t n, const struct os_obj_move *moves,
		       size_t nmoves)
{
	struct lo_idx *v = malloc((n ? n : 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		v[i] = (struct lo_idx){ lo[i], i };
		moved[i] = false;
	}
	qsort(v, n, sizeof(*v), by_lo);
	for (size_t k = 0; n && k < nmoves; k++) {
		size_t a = 0, b = n;

		while (a < b) {
			size_t m = (a + b) / 2;

			if (v[m].lo < moves[k].from)
				a = m + 1;
			else
				b = m;
		}
		/* v keeps the old addresses: a chain of moves (A to B, B to C)
		 * moves each object once */
		for (; a < n && v[a].lo == moves[k].from; a++) {
			lo[v[a].i] = moves[k].to;
			moved[v[a].i] = true;
		}
	}
	free(v);
	return 0;
}

/* A collection applied: the objects counted for the access rate follow
 * their moves; those neither moved nor in place are dead. */
static void objs_collected(struct ru_obs *o, const struct os_gc_report *rep,
			   struct os_aspace *as)
{
	uint32_t *idx, n = 0;
	uint64_t *lo;
	bool *moved;

	if (!o->nobjs)
		return;
	idx = malloc(o->nobjs * sizeof(*idx));
	lo = malloc(o->nobjs * sizeof(*lo));
	moved = malloc(o->nobjs * sizeof(*moved));
	for (uint32_t i = 0; idx && lo && moved && i < o->nobjs; i++)
		if (!o->objs[i].dead && o->objs[i].asid == rep->asid) {
			idx[n] = i;
			lo[n++] = o->objs[i].lo;
		}
	if (n && !os_ru_follow_moves(lo, moved, n, rep->moves, rep->nmoves)) {
		for (uint32_t k = 0; k < n; k++) {
			struct ru_obj *e = &o->objs[idx[k]];
			uint64_t s, x;

			if (moved[k]) {
				e->hi = lo[k] + (e->hi - e->lo);
				e->lo = lo[k];
			} else if (!as || !as->objects ||
				   !os_iv_lookup(as->objects, e->lo, &s, &x, NULL) || s != e->lo ||
				   x != e->hi) {
				e->dead = true;
			}
		}
	}
	free(idx);
	free(lo);
	free(moved);
}

/* A collection applied: pairs on moved objects follow them, pairs on dead
 * ones end. */
static void obs_collected(void *self, const struct os_gc_report *rep)
{
	struct ru_obs *o = self;
	struct os_aspace *as = os_tasks_get(&o->c->tasks, rep->asid);

	objs_collected(o, rep, as);

	for (unsigned i = 0; i < OS_RU_MAX_ARMED; i++) {
		struct ru_rec *r = &o->rec[i];
		struct watch_set *w;
		uint64_t s, e, v;
		size_t k;

		if (!r->used || !r->attributed || r->asid != rep->asid)
			continue;
		for (k = 0; k < rep->nmoves && rep->moves[k].from != r->lo; k++)
			;
		if (k < rep->nmoves) {
			uint64_t to = rep->moves[k].to + (r->addr - r->lo);

			r->old_addr = r->addr;
			r->hi = rep->moves[k].to + (r->hi - r->lo);
			r->lo = rep->moves[k].to;
			r->addr = to;
			o->st.moved++;
			w = set_of(o, r->pid);
			/* a pair already complete stays as it is (judged at commit) */
			if (!r->has_hit && (!w || watch_move(w, r->cookie, to))) {
				o->st.move_failed++;
				rec_disarm(o, r);
			}
			continue;
		}
		if (as && as->objects && os_iv_lookup(as->objects, r->lo, &s, &e, &v) && s == r->lo &&
		    e == r->hi) {
			/* survived in place: its address holds */
			if (!r->old_addr)
				r->gc_since = 0;
			continue;
		}
		if (rep->moves_lost)
			o->st.moves_lost++;
		else
			o->st.died++;
		rec_disarm(o, r);
	}
}

static void obs_flush(void *self, uint64_t cutoff)
{
	struct ru_obs *o = self;

	for (unsigned i = 0; i < OS_RU_MAX_ARMED; i++) {
		struct ru_rec *r = &o->rec[i];

		if (r->used && r->has_hit && r->attributed && r->hit.time_ns <= cutoff)
			commit(o, r);
	}
}

/* Before the target is left: nothing stays armed on it. */
static void obs_stop(void *self)
{
	struct ru_obs *o = self;

	o->stopped = true;
	obs_poll(o);
	for (unsigned i = 0; i < OS_RU_MAX_ARMED; i++) {
		struct ru_rec *r = &o->rec[i];

		if (r->used && !r->has_hit) {
			o->st.stopped++;
			r->obj = NO_OBJ; /* cut short by the stop: not lost to its object */
			rec_disarm(o, r);
		}
	}
}

static void obs_finish(void *self)
{
	struct ru_obs *o = self;

	obs_stop(o);
	obs_flush(o, UINT64_MAX);
	for (unsigned i = 0; i < OS_RU_MAX_ARMED; i++)
		if (o->rec[i].used) { /* hit but never attributed */
			o->st.unattributed++;
			rec_disarm(o, &o->rec[i]);
		}
}

static void obs_destroy(void *self)
{
	struct ru_obs *o = self;

	if (!o)
		return;
	for (unsigned i = 0; i < o->nset; i++)
		watch_close(o->set[i].w);
	watch_close(o->self_w);
	free(o->times);
	free(o->cens);
	free(o->objs);
	os_hmap_destroy(&o->mix);
	os_decoder_free(o->dec);
	free(o);
}

/* The access rate from the sampled objects (os_kac_rate, docs/REUSE.md
 * "Access rate"), when enough of them qualify: it replaces the calibrated
 * one. Reuse times with the trap's cost subtracted. */
static void kac_model(struct ru_obs *o)
{
	struct os_kac_obj *k;
	uint32_t *tid;
	double all = 0, on = 0, *mult;

	o->kac_used = 0;
	o->kac_share = 0;
	for (uint32_t i = 0; i < o->nobjs; i++)
		o->objs[i].wmul = 1;
	if (!o->nobjs || !(k = calloc(o->nobjs, sizeof(*k))))
		return;
	for (uint32_t i = 0; i < o->nobjs; i++) {
		const struct ru_obj *e = &o->objs[i];

		k[i].bytes = (double)(e->hi - e->lo);
		k[i].span = (double)(e->off_hi - e->off_lo);
		k[i].npairs = e->npairs;
		k[i].nlost = e->nlost;
		k[i].pairs_w = e->pairs_w;
		k[i].window_w = e->last_w - e->first_w;
	}
	for (size_t i = 0; i < o->ntimes; i++) {
		uint32_t j = o->times[i].obj;

		if (j >= o->nobjs)
			continue;
		k[j].ndone++;
		k[j].nshort += !(o->times[i].ns > 0);
		k[j].done_w += o->times[i].len;
		k[j].rt_w += o->times[i].ns * o->times[i].len;
	}
	o->rate = os_kac_rate(k, o->nobjs, &o->kac_used);
	if (!(o->rate > 0)) {
		o->rate = o->calib_rate;
		o->kac_used = 0;
	} else {
		/* the qualifying objects' reuse times by their access shares, per
		 * thread (kept 1 when out of memory) */
		tid = malloc(o->nobjs * sizeof(*tid));
		mult = malloc(o->nobjs * sizeof(*mult));
		if (tid && mult) {
			for (uint32_t i = 0; i < o->nobjs; i++)
				tid[i] = (uint32_t)o->objs[i].tid;
			os_kac_weights(k, o->nobjs, tid, mult);
			for (uint32_t i = 0; i < o->nobjs; i++)
				o->objs[i].wmul = mult[i];
		}
		free(tid);
		free(mult);
	}
	/* the share of the attributed pairs that the objects used carry */
	for (uint32_t i = 0; i < o->nobjs; i++) {
		size_t one;

		all += k[i].pairs_w;
		if (os_kac_rate(&k[i], 1, &one) > 0)
			on += k[i].pairs_w;
	}
	o->kac_share = all > 0 ? on / all : 0;
	free(k);
}

/* The model's access rate: the share of memory-accessing instructions in
 * the code of the pairs' samples (code_mix). */
static void model(struct ru_obs *o)
{
	double traps[OS_RU_TRAP_MAX];

	memcpy(traps, o->traps, o->ntraps * sizeof(*traps));
	o->trap_ns = o->ntraps ? os_ru_median(traps, o->ntraps) : 0;
	for (size_t i = 0; i < o->ntimes; i++)
		o->times[i].ns = o->times[i].ns > o->trap_ns ? o->times[i].ns - o->trap_ns : 0;
	o->modelled = true;
	o->mem_share = o->mix_insns > 0 ? o->mix_mem / o->mix_insns : 0;
	o->width = o->ntimes ? o->width_sum / (double)o->ntimes : 0;
	o->calib_rate = o->ips * o->mem_share * o->width;
	o->rate = o->calib_rate;
	kac_model(o);
}

static void obs_notes(void *self, struct os_profile *p)
{
	struct ru_obs *o = self;
	const struct ru_stats *s = &o->st;
	struct watch_stats ws = { 0 };
	char note[900];

	model(o);
	for (unsigned i = 0; i < o->nset; i++) {
		struct watch_stats x;

		if (!o->set[i].w)
			continue;
		watch_get_stats(o->set[i].w, &x);
		ws.armed += x.armed;
		ws.thread_gone += x.thread_gone;
		ws.errors += x.errors;
	}
	p->analyses |= OS_AN_REUSE;
	memcpy(p->ru.cache, o->cache, sizeof(p->ru.cache));
	p->ru.bytes_per_ns = o->rate;
	p->ru.rate_source = o->kac_used ? OS_RU_RATE_OBJECTS : OS_RU_RATE_CALIBRATED;
	p->ru.insn_per_ns = o->ips;
	p->ru.mem_share = o->mem_share;
	p->ru.width = o->width;
	p->ru.trap_ns = o->trap_ns;
	p->ru.pairs = o->ntimes;
	p->ru.censored = s->censored;
	p->ru.max_age_ns = OS_RU_MAX_AGE_NS;
	if (o->trap_err) {
		char why[320];

		if (o->trap_why[0])
			snprintf(why, sizeof(why), "%s", o->trap_why);
		else if (o->trap_err == -EIO)
			snprintf(why, sizeof(why), "watchpoint pairs armed on objscope's own thread "
				 "never trapped");
		else
			snprintf(why, sizeof(why), "watchpoint pairs refused on this machine (%s)",
				 strerror(-o->trap_err));
		snprintf(note, sizeof(note), "reuse: not measured: %s", why);
		os_profile_add_note(p, note);
		os_warn("--reuse: %s: no reuse distances", why);
		return;
	}
	if (o->kac_used)
		snprintf(note, sizeof(note),
			 "reuse: distances are ESTIMATES (footprint model, docs/REUSE.md) from %llu "
			 "reuse times of watchpoint pairs (thread CPU time, %.0f ns trap cost "
			 "subtracted: the median of %zu calibrations); access rate %.2f bytes/ns "
			 "from %zu sampled objects (their sizes over their mean reuse times, by "
			 "their shares of the pairs: %.1f%% of the pairs; the calibrated rate "
			 "would be %.2f = %.2f instructions/ns x %.3f memory share x %.2f bytes)",
			 (unsigned long long)o->ntimes, o->trap_ns, o->ntraps, o->rate, o->kac_used,
			 100 * o->kac_share, o->calib_rate, o->ips, o->mem_share, o->width);
	else
		snprintf(note, sizeof(note),
			 "reuse: distances are ESTIMATES (footprint model, docs/REUSE.md) from %llu "
			 "reuse times of watchpoint pairs (thread CPU time, %.0f ns trap cost "
			 "subtracted: the median of %zu calibrations); access rate %.2f bytes/ns = "
			 "%.2f instructions/ns (calibrated loop) x %.3f memory share of the sampled "
			 "code's instructions x %.2f bytes mean width (no sampled object had %d "
			 "reuses with at most %.0f%% of its pairs lost: %llu objects counted, %llu "
			 "past the table)",
			 (unsigned long long)o->ntimes, o->trap_ns, o->ntraps, o->rate, o->ips,
			 o->mem_share, o->width, OS_KAC_MIN_DONE, 100 * OS_KAC_MAX_LOST,
			 (unsigned long long)o->nobjs, (unsigned long long)o->objs_full);
	os_profile_add_note(p, note);
	snprintf(note, sizeof(note),
		 "reuse lost: %llu samples offered, %llu pairs armed; not armed: %llu thread "
		 "busy, %llu rate bound (%d/s), %llu table full, %llu width unknown, %llu "
		 "unaligned, %llu no free debug register, %llu thread gone, %llu arm errors, "
		 "%llu no watch set; ended: %llu censored (no reuse in %llu ms), %llu "
		 "unattributed, %llu objects freed, %llu objects died, %llu moves lost, %llu "
		 "moves failed, %llu stale hits (old address after a GC), %llu lost to "
		 "thread exit, %llu without CPU time, %llu disarmed at stop; %llu moved "
		 "with their object; %llu hits of ended pairs",
		 (unsigned long long)s->offered, (unsigned long long)s->armed,
		 (unsigned long long)s->busy_thread, (unsigned long long)s->rate_limited,
		 OS_RU_RATE, (unsigned long long)s->full, (unsigned long long)s->width_unknown,
		 (unsigned long long)s->unaligned, (unsigned long long)s->enospc,
		 (unsigned long long)s->thread_gone, (unsigned long long)s->arm_errors,
		 (unsigned long long)s->no_set, (unsigned long long)s->censored,
		 (unsigned long long)(OS_RU_MAX_AGE_NS / 1000000),
		 (unsigned long long)s->unattributed, (unsigned long long)s->freed,
		 (unsigned long long)s->died, (unsigned long long)s->moves_lost,
		 (unsigned long long)s->move_failed, (unsigned long long)s->stale_hit,
		 (unsigned long long)ws.thread_gone, (unsigned long long)s->no_cpu_time,
		 (unsigned long long)s->stopped, (unsigned long long)s->moved,
		 (unsigned long long)s->hits_unknown);
	os_profile_add_note(p, note);
	if (o->set_err[0])
		os_warn("--reuse: %s", o->set_err);
}

/* Signatures: each reuse time through the footprint model, into its
 * context's bins (summed into the profile's context it became). */
static int obs_sections(void *self, const struct os_obs_build *b)
{
	struct ru_obs *o = self;
	struct os_fp fp;
	double *t, *w, cens = 0;
	int ret = 0;

	if (!o->modelled)
		model(o);
	for (uint32_t i = 0; i < o->ncens; i++)
		cens += o->cens[i];
	if (!o->ntimes || !(o->rate > 0))
		goto censored;
	t = malloc(o->ntimes * sizeof(*t));
	w = malloc(o->ntimes * sizeof(*w));
	if (!t || !w) {
		free(t);
		free(w);
		return -ENOMEM;
	}
	for (size_t i = 0; i < o->ntimes; i++) {
		uint32_t j = o->times[i].obj;

		t[i] = o->times[i].ns;
		/* by the objects' access shares (kac_model) */
		w[i] = o->times[i].len * (j < o->nobjs ? o->objs[j].wmul : 1);
	}
	ret = os_fp_build(&fp, t, w, o->ntimes, cens * o->width, o->rate);
	free(t);
	free(w);
	if (ret)
		return ret == -ENOMEM ? ret : 0;
	for (size_t i = 0; i < o->ntimes; i++) {
		uint32_t ci = o->times[i].ctx;
		struct os_reuse *r;
		double d;

		if (ci >= b->c->attrib.nctx || b->ctxmap[ci] == OS_NONE ||
		    b->ctxmap[ci] >= b->p->ncontexts)
			continue;
		r = os_profile_reuse(b->p, b->ctxmap[ci]);
		if (!r) {
			os_fp_destroy(&fp);
			return -ENOMEM;
		}
		d = os_fp_distance(&fp, o->times[i].ns);
		r->bins[os_reuse_bin(d >= 1.8e19 ? UINT64_MAX : (uint64_t)llround(d))] += 1;
	}
	os_fp_destroy(&fp);
censored:
	for (uint32_t ci = 0; ci < o->ncens && ci < b->c->attrib.nctx; ci++) {
		struct os_reuse *r;

		if (!o->cens[ci] || b->ctxmap[ci] == OS_NONE || b->ctxmap[ci] >= b->p->ncontexts)
			continue;
		r = os_profile_reuse(b->p, b->ctxmap[ci]);
		if (!r)
			return -ENOMEM;
		r->bins[OS_REUSE_COLD] += o->cens[ci];
	}
	return 0;
}

const struct os_observer_ops os_reuse_observer = {
	.name = "reuse",
	.sample_data = 8, /* the pair's cookie */
	/* every round applied: moves followed soon after a collection */
	.eager = true,
	.start = obs_start,
	.take = obs_take,
	.drained = obs_drained,
	.poll = obs_poll,
	.event = obs_event,
	.collected = obs_collected,
	.sample = obs_sample,
	.flush = obs_flush,
	.finish = obs_finish,
	.stop = obs_stop,
	.profile_notes = obs_notes,
	.profile_sections = obs_sections,
	.destroy = obs_destroy,
};
