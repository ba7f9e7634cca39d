/* replica.c - the replica analysis engine (see replica.h). */
#include "attacher/analyses/replica.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "attacher/core/decode.h"
#include "common/grow.h"
#include "common/hashmap.h"
#include "common/shm.h"

#define HIT_BATCH 64
#define EXPIRY_SLACK_NS 300000000ULL /* forget an unhit comparison this long after its age */

struct ref {                   /* <off, V> of object O1 */
	uint64_t lo, hi;       /* O1, lo == 0: no longer known (freed) */
	uint32_t off;
	uint8_t len;
	uint64_t v;
};

struct ex_ent {
	uint64_t lo, hash;
};

struct ctxst {
	struct os_replica cnt;
	uint32_t asid;
	bool java, active;
	struct ref *refs;
	unsigned nrefs, refnext;
	bool full_done;
	bool tgt_exact;        /* objects hashed by os_rep_exact_content: no more by samples */
	uint32_t own_lost;     /* own comparisons forgotten (object freed / GC) since the last
				* one compared */
	uint64_t own_probe;    /* time of the last offer let through while own_lost is high */
	uint64_t last_full;
	/* exact figure, current epoch */
	struct ex_ent *ex;
	unsigned nex;
	uint64_t seen;         /* objects offered to the reservoir this epoch */
	struct os_hmap hashes; /* content hash -> objects with it (in ex) */
};

struct thr {
	pid_t pid, tid;
	uint64_t offered;      /* offers since the registers were last all free */
	uint64_t slot[WATCH_SLOTS]; /* cookie, 0 = free */
};

struct cmp {
	bool used;
	bool java;
	uint32_t ctx, asid;
	uint32_t thr;          /* index in r->thr */
	unsigned slot;
	uint64_t cookie;
	uint64_t waddr;
	unsigned len;
	uint64_t v;
	uint64_t lo1, hi1, lo2, hi2;
	uint64_t armed_at;     /* time of the sample that armed it */
};

/* A context compared in the target (tgt_exact) whose own comparisons were
 * forgotten OWN_LOST_MAX times in a row by frees (not collections, which end
 * every armed Java comparison at once) (its objects die before the sampled
 * thread touches the watched word again: the short-lived objects the
 * in-target comparisons are for) gets one offer per OWN_PROBE_NS, not one
 * per sample: each futile one cost a breakpoint opened on the target's
 * thread (IPIs) and traps on reused memory until the free was applied. */
#define OWN_LOST_MAX 16
#define OWN_PROBE_NS 1000000000ULL

struct os_rep {
	struct os_rep_cfg cfg;
	struct os_rep_backend be;
	struct os_rep_stats st;
	uint64_t rng;
	struct ctxst *ctx;
	uint32_t nctx;
	struct thr *thr;
	uint32_t nthr, capthr;
	struct os_hmap tid2thr;
	struct cmp *cmp;
	size_t ncmp, capcmp;
	struct os_hmap cookie2cmp;
	uint64_t next_cookie;
	size_t narmed;
	struct os_hmap armed_at;  /* asid << 48 | O2 start -> comparisons armed on it */
	uint64_t last_expire;
	struct watch_hit *hq;  /* queued hits, sorted by time */
	size_t nhq, caphq;
	uint64_t *gc_seen;     /* per asid: latest collection begin drained */
	bool stopped;          /* os_rep_stop: nothing is armed any more */
	uint32_t ngc;
	struct os_hmap widths; /* asid << 48 | instruction -> access width */
	struct os_decoder *dec;
	struct os_hmap exset;  /* asid << 48 | object start -> ctx + 1 (offered this epoch) */
	uint8_t *buf1, *buf2;
	size_t capbuf;
	uint64_t latest;       /* latest time given */
	bool exact_wanted;     /* os_rep_exact_wanted */
};

void os_rep_cfg_default(struct os_rep_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->refs_per_ctx = 4;
	cfg->slots_per_thread = WATCH_SLOTS;
	cfg->max_age_ns = 500000000ULL;
	cfg->full_check_interval_ns = 2000000ULL;
	cfg->exact_per_ctx = 256;
	cfg->max_object_bytes = 1 << 20;
	cfg->seed = 0x9e3779b97f4a7c15ULL;
}

static uint64_t rnd(struct os_rep *r)
{
	/* xorshift64* */
	r->rng ^= r->rng >> 12;
	r->rng ^= r->rng << 25;
	r->rng ^= r->rng >> 27;
	return r->rng * 0x2545F4914F6CDD1DULL;
}

static uint64_t below(struct os_rep *r, uint64_t n)
{
	return n ? rnd(r) % n : 0;
}

struct os_rep *os_rep_new(const struct os_rep_cfg *cfg, const struct os_rep_backend *be)
{
	struct os_rep *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	if (cfg)
		r->cfg = *cfg;
	else
		os_rep_cfg_default(&r->cfg);
	if (!r->cfg.refs_per_ctx)
		r->cfg.refs_per_ctx = 4;
	if (!r->cfg.slots_per_thread || r->cfg.slots_per_thread > WATCH_SLOTS)
		r->cfg.slots_per_thread = WATCH_SLOTS;
	if (!r->cfg.max_object_bytes)
		r->cfg.max_object_bytes = 1 << 20;
	r->be = *be;
	r->rng = r->cfg.seed ? r->cfg.seed : 0x9e3779b97f4a7c15ULL;
	os_hmap_init(&r->tid2thr);
	os_hmap_init(&r->cookie2cmp);
	os_hmap_init(&r->exset);
	os_hmap_init(&r->widths);
	os_hmap_init(&r->armed_at);
	return r;
}

void os_rep_free(struct os_rep *r)
{
	if (!r)
		return;
	for (uint32_t i = 0; i < r->nctx; i++) {
		free(r->ctx[i].refs);
		free(r->ctx[i].ex);
		os_hmap_destroy(&r->ctx[i].hashes);
	}
	free(r->ctx);
	free(r->thr);
	free(r->cmp);
	free(r->hq);
	free(r->gc_seen);
	free(r->buf1);
	free(r->buf2);
	os_hmap_destroy(&r->tid2thr);
	os_hmap_destroy(&r->cookie2cmp);
	os_hmap_destroy(&r->exset);
	os_hmap_destroy(&r->widths);
	os_hmap_destroy(&r->armed_at);
	os_decoder_free(r->dec);
	free(r);
}

static struct ctxst *ctx_get(struct os_rep *r, uint32_t ci)
{
	if (ci == OS_NONE)
		return NULL;
	if (ci >= r->nctx) {
		uint32_t n = r->nctx;
		struct ctxst *c = os_grow32(r->ctx, &n, (size_t)ci + 1, sizeof(*c), 64, UINT32_MAX);

		if (!c)
			return NULL;
		memset(c + r->nctx, 0, (n - r->nctx) * sizeof(*c));
		for (uint32_t i = r->nctx; i < n; i++)
			os_hmap_init(&c[i].hashes);
		r->ctx = c;
		r->nctx = n;
	}
	return &r->ctx[ci];
}

static struct thr *thr_get(struct os_rep *r, pid_t pid, pid_t tid, uint32_t *idx)
{
	uint64_t v;

	if (os_hmap_get(&r->tid2thr, (uint64_t)(uint32_t)tid, &v)) {
		*idx = (uint32_t)v;
		return &r->thr[v];
	}
	{
		struct thr *t = os_grow32(r->thr, &r->capthr, (size_t)r->nthr + 1, sizeof(*t), 16,
					  UINT32_MAX);

		if (!t)
			return NULL;
		r->thr = t;
	}
	if (os_hmap_put(&r->tid2thr, (uint64_t)(uint32_t)tid, r->nthr) < 0)
		return NULL;
	memset(&r->thr[r->nthr], 0, sizeof(r->thr[0]));
	r->thr[r->nthr].pid = pid;
	r->thr[r->nthr].tid = tid;
	*idx = r->nthr;
	return &r->thr[r->nthr++];
}

static uint64_t obj_key(uint32_t asid, uint64_t lo)
{
	return (uint64_t)asid << 48 | (lo & ((1ULL << 48) - 1));
}

static bool gc_after(const struct os_rep *r, uint32_t asid, uint64_t time)
{
	return asid < r->ngc && r->gc_seen[asid] > time;
}

/* ---- comparisons ---- */

static void cmp_forget(struct os_rep *r, struct cmp *c, bool disarm)
{
	struct thr *t = &r->thr[c->thr];
	bool any = false;

	if (disarm)
		r->be.disarm(r->be.arg, c->cookie);
	os_hmap_del(&r->cookie2cmp, c->cookie);
	t->slot[c->slot] = 0;
	r->narmed--;
	{
		uint64_t *n = os_hmap_ref(&r->armed_at, obj_key(c->asid, c->lo2), 0);

		if (n && *n > 1)
			--*n;
		else
			os_hmap_del(&r->armed_at, obj_key(c->asid, c->lo2));
	}
	for (unsigned i = 0; i < WATCH_SLOTS; i++)
		any |= t->slot[i] != 0;
	if (!any)
		t->offered = 0; /* a fresh reservoir once the registers are all free */
	c->used = false;
}

/* Comparison c is forgotten unhit: its object was freed or moved. */
static void own_lost(struct os_rep *r, const struct cmp *c)
{
	struct ctxst *x = c->ctx < r->nctx ? &r->ctx[c->ctx] : NULL;

	if (x && x->own_lost < UINT32_MAX)
		x->own_lost++;
}

static struct cmp *cmp_new(struct os_rep *r)
{
	for (size_t i = 0; i < r->ncmp; i++)
		if (!r->cmp[i].used)
			return &r->cmp[i];
	{
		struct cmp *n = os_grow(r->cmp, &r->capcmp, r->ncmp + 1, sizeof(*n), 32);

		if (!n)
			return NULL;
		r->cmp = n;
	}
	r->cmp[r->ncmp].used = false;
	return &r->cmp[r->ncmp++];
}

/* Offers comparison c (not yet stored) to thread t: reservoir over the
 * offers since its registers were last all free. */
static void offer(struct os_rep *r, uint32_t ti, const struct cmp *proto)
{
	struct thr *t = &r->thr[ti];
	unsigned nslots = r->cfg.slots_per_thread, slot = nslots, used = 0;
	struct cmp *c;
	uint64_t cookie;
	int rc;

	r->st.offers++;
	if (r->stopped) { /* after os_rep_stop: the target is being left */
		r->st.after_stop++;
		return;
	}
	t->offered++;
	for (unsigned i = 0; i < nslots; i++) {
		if (t->slot[i])
			used++;
		else if (slot == nslots)
			slot = i;
	}
	if (used == nslots) {
		uint64_t j = below(r, t->offered), idx;

		if (j >= nslots) {
			r->st.not_chosen++;
			return;
		}
		slot = (unsigned)j;
		if (os_hmap_get(&r->cookie2cmp, t->slot[slot], &idx)) {
			uint64_t offered = t->offered;

			r->st.replaced++;
			cmp_forget(r, &r->cmp[idx], true);
			t->offered = offered; /* the reservoir goes on */
		} else {
			t->slot[slot] = 0;
		}
	}
	cookie = ++r->next_cookie;
	rc = r->be.arm(r->be.arg, t->pid, t->tid, proto->waddr, proto->len, cookie,
		       r->cfg.max_age_ns);
	if (rc == -ENOSPC) {
		r->st.enospc++;
		return;
	}
	if (rc == -ESRCH) {
		r->st.thread_gone++;
		return;
	}
	if (rc < 0) {
		r->st.arm_errors++;
		return;
	}
	c = cmp_new(r);
	if (!c || os_hmap_put(&r->cookie2cmp, cookie, (uint64_t)(c - r->cmp)) < 0) {
		r->be.disarm(r->be.arg, cookie);
		r->st.arm_errors++;
		return;
	}
	*c = *proto;
	c->used = true;
	c->cookie = cookie;
	c->thr = ti;
	c->slot = slot;
	r->thr[ti].slot[slot] = cookie;
	r->narmed++;
	r->st.armed++;
	{
		uint64_t *n = os_hmap_ref(&r->armed_at, obj_key(c->asid, c->lo2), 0);

		if (n)
			++*n;
	}
}

static void expire(struct os_rep *r, uint64_t now)
{
	if (!r->narmed || now < r->last_expire + 10000000ULL)
		return; /* at most every 10 ms of sample time */
	r->last_expire = now;
	for (size_t i = 0; i < r->ncmp; i++) {
		struct cmp *c = &r->cmp[i];

		if (c->used && now > c->armed_at + r->cfg.max_age_ns + EXPIRY_SLACK_NS) {
			r->st.expired++;
			cmp_forget(r, c, true);
		}
	}
}

/* ---- reading the target ---- */

static bool buf_room(struct os_rep *r, size_t n)
{
	uint8_t *a, *b;

	if (n <= r->capbuf)
		return true;
	a = realloc(r->buf1, n);
	if (!a)
		return false;
	r->buf1 = a;
	b = realloc(r->buf2, n);
	if (!b)
		return false;
	r->buf2 = b;
	r->capbuf = n;
	return true;
}

/* Reads the data of object [lo, hi) (header words excluded) into buf. */
static bool read_obj(struct os_rep *r, pid_t pid, uint64_t lo, uint64_t hi, bool java,
		     uint8_t *buf, size_t *n)
{
	uint64_t skip = java ? 8 : 0;

	if (hi <= lo + skip || hi - lo > r->cfg.max_object_bytes)
		return false;
	*n = (size_t)(hi - lo - skip);
	return r->be.read(r->be.arg, pid, lo + skip, buf, *n) == (ssize_t)*n;
}

/* The backend's collection token for a late read of an object (1 where
 * collections do not matter: native objects, no token). */
static uint64_t gc_token(const struct os_rep *r, bool java)
{
	return java && r->be.gc_token ? r->be.gc_token(r->be.gc_arg) : 1;
}

/* ---- exact figure ---- */

static uint64_t mask_of(unsigned len)
{
	return len >= 8 ? UINT64_MAX : (1ULL << (8 * len)) - 1;
}


static void exact_close(struct os_rep *r, struct ctxst *x)
{
	for (unsigned i = 0; i < x->nex; i++) {
		uint64_t k = 0;

		os_hmap_get(&x->hashes, x->ex[i].hash, &k);
		x->cnt.exact_objects++;
		if (k >= 2)
			x->cnt.exact_twins++;
	}
	x->nex = 0;
	x->seen = 0;
	os_hmap_destroy(&x->hashes);
	os_hmap_init(&x->hashes);
	(void)r;
}

/* The reservoir's place for one more object of x (*j), false when the
 * reservoir does not take it (counted). */
static bool exact_slot(struct os_rep *r, struct ctxst *x, uint64_t *j)
{
	unsigned cap = r->cfg.exact_per_ctx;

	x->seen++;
	if (x->nex < cap) {
		*j = x->nex;
	} else {
		*j = below(r, x->seen);
		if (*j >= cap) {
			r->st.exact_not_chosen++;
			return false;
		}
	}
	if (!x->ex) {
		x->ex = calloc(cap, sizeof(*x->ex));
		if (!x->ex)
			return false;
	}
	return true;
}

static void exact_store(struct os_rep *r, struct ctxst *x, uint64_t j, uint64_t lo, uint64_t hash)
{
	uint64_t *cnt;

	if (j < x->nex) { /* reservoir: replaces a hashed one */
		cnt = os_hmap_ref(&x->hashes, x->ex[j].hash, 0);
		if (cnt && *cnt)
			--*cnt;
		r->st.exact_replaced++;
	} else {
		x->nex++;
	}
	x->ex[j].lo = lo;
	x->ex[j].hash = hash;
	cnt = os_hmap_ref(&x->hashes, hash, 0);
	if (cnt)
		++*cnt;
	r->st.exact_hashed++;
}

static void exact_offer(struct os_rep *r, struct ctxst *x, uint32_t ci, const struct os_rep_sample *s)
{
	uint64_t key = obj_key(s->asid, s->lo), j, g;
	size_t n;

	if (!r->cfg.exact_per_ctx || os_hmap_get(&r->exset, key, &j))
		return;
	if (x->tgt_exact) { /* read alive in the target's time, not ~100 ms late */
		r->st.exact_by_target++;
		return;
	}
	r->exact_wanted = true;
	if (s->frees_unknown) { /* not known alive: maybe next time */
		r->st.exact_unfollowed++;
		return;
	}
	if (s->dead) { /* freed since the sample: its memory may hold another object */
		r->st.exact_dead++;
		return;
	}
	g = gc_token(r, s->java);
	if (!g) { /* a collection runs or is not drained: maybe next time */
		r->st.gc_unsettled++;
		return;
	}
	if (os_hmap_put(&r->exset, key, ci + 1ULL) < 0 || !exact_slot(r, x, &j))
		return;
	if (!buf_room(r, (size_t)r->cfg.max_object_bytes) ||
	    !read_obj(r, s->pid, s->lo, s->hi, s->java, r->buf1, &n)) {
		r->st.exact_read_fail++;
		return;
	}
	if (gc_token(r, s->java) != g) { /* may hold another object's bytes */
		r->st.gc_unsettled++;
		return;
	}
	exact_store(r, x, j, s->lo, os_rep_content_hash(r->buf1, n));
}

void os_rep_exact_hashed(struct os_rep *r, uint32_t ctx, uint32_t asid, uint64_t lo,
			 uint64_t hash)
{
	struct ctxst *x = ctx_get(r, ctx);
	uint64_t j;

	if (!x || !r->cfg.exact_per_ctx)
		return;
	if (!x->active) {
		x->active = true;
		x->asid = asid;
	}
	x->tgt_exact = true;
	os_hmap_put(&r->exset, obj_key(asid, lo), ctx + 1ULL);
	if (exact_slot(r, x, &j))
		exact_store(r, x, j, lo, hash);
}

void os_rep_exact_content(struct os_rep *r, uint32_t ctx, uint32_t asid, uint64_t lo,
			  const void *buf, size_t n)
{
	os_rep_exact_hashed(r, ctx, asid, lo, os_rep_content_hash(buf, n));
}

void os_rep_set_slots(struct os_rep *r, unsigned n)
{
	if (n && n <= WATCH_SLOTS)
		r->cfg.slots_per_thread = n;
}

uint32_t os_rep_nctx(const struct os_rep *r)
{
	return r->nctx;
}

bool os_rep_ref_pick(struct os_rep *r, uint32_t ctx, uint32_t *off, unsigned *width,
		     uint64_t *v, bool *java)
{
	struct ctxst *x = ctx < r->nctx ? &r->ctx[ctx] : NULL;
	struct ref *ref;

	if (!x || !x->nrefs || r->stopped)
		return false;
	ref = &x->refs[below(r, x->nrefs)];
	*off = ref->off;
	*width = ref->len;
	*v = ref->v;
	*java = x->java;
	return true;
}

void os_rep_compared(struct os_rep *r, uint32_t ctx, uint64_t value, uint64_t v, unsigned width)
{
	struct ctxst *x = ctx_get(r, ctx);

	if (!x)
		return;
	if ((value & mask_of(width)) == (v & mask_of(width)))
		x->cnt.equivalent++;
	else
		x->cnt.different++;
	r->st.compared_target++;
}

/* ---- samples ---- */

/* The watched window of a sample: len 1/2/4/8 bytes at a, aligned, inside
 * the object's data. Java objects: never in the first 16 bytes (mark word,
 * class word, and the array length or a first 4-byte field with compressed
 * class pointers): the class word and the length are equal in every
 * same-sized object of a context, and bounds checks read the length often
 * (ReplicaAttachFixture's random long[]s: 3 of 24 comparisons "equal",
 * theta 0.125, all on it). */
#define JAVA_WINDOW_SKIP 16

static bool window(const struct os_rep_sample *s, uint64_t *a, unsigned *len)
{
	uint64_t data_lo = s->lo + (s->java ? JAVA_WINDOW_SKIP : 0);
	unsigned w = s->width;

	if (w == 1 || w == 2 || w == 4 || w == 8) {
		*len = w;
		*a = s->addr & ~(uint64_t)(w - 1);
	} else {
		*len = 8;
		*a = s->addr & ~7ULL;
	}
	while (*len > 1 && (*a < data_lo || *a + *len > s->hi)) {
		*len /= 2; /* at an object's edge: the part inside */
		*a = s->addr & ~(uint64_t)(*len - 1);
	}
	return *a >= data_lo && *a + *len <= s->hi;
}

void os_rep_sample(struct os_rep *r, const struct os_rep_sample *s)
{
	struct ctxst *x;
	struct ref *ref = NULL;
	uint64_t a, v;
	unsigned len, eligible = 0;
	uint32_t ti;
	struct thr *t;

	os_rep_flush(r, s->time);
	if (s->time > r->latest)
		r->latest = s->time;
	expire(r, s->time);
	r->st.samples++;
	x = ctx_get(r, s->ctx);
	if (!x || s->hi <= s->lo)
		return;
	if (!x->active) {
		x->active = true;
		x->asid = s->asid;
	}
	x->java |= s->java;
	if (gc_after(r, s->asid, s->time)) {
		r->st.gc_window++;
		return;
	}
	exact_offer(r, x, s->ctx, s);
	if (!s->value_ok || !window(s, &a, &len)) {
		r->st.no_value++;
		return;
	}
	v = (s->word8 >> (8 * (a & 7))) & mask_of(len);
	/* a reference of another object, uniformly among those remembered */
	for (unsigned i = 0; i < x->nrefs; i++) {
		struct ref *c = &x->refs[i];

		if ((c->lo && c->lo == s->lo) || s->lo + c->off + c->len > s->hi)
			continue;
		if (below(r, ++eligible) == 0)
			ref = c;
	}
	if (!ref) {
		r->st.no_ref++;
	} else if (x->tgt_exact && x->own_lost >= OWN_LOST_MAX &&
		   s->time < x->own_probe + OWN_PROBE_NS) {
		r->st.own_futile++; /* compared in the target; one probe per second */
	} else {
		if (x->tgt_exact && x->own_lost >= OWN_LOST_MAX)
			x->own_probe = s->time;
		t = thr_get(r, s->pid, s->tid, &ti);
		if (t) {
			struct cmp proto = { .ctx = s->ctx, .asid = s->asid, .java = s->java,
					     .waddr = s->lo + ref->off, .len = ref->len,
					     .v = ref->v, .lo1 = ref->lo, .hi1 = ref->hi,
					     .lo2 = s->lo, .hi2 = s->hi, .armed_at = s->time };

			offer(r, ti, &proto);
		}
	}
	/* this access becomes a reference of the context */
	if (!x->refs) {
		x->refs = calloc(r->cfg.refs_per_ctx, sizeof(*x->refs));
		if (!x->refs)
			return;
	}
	ref = &x->refs[x->refnext];
	x->refnext = (x->refnext + 1) % r->cfg.refs_per_ctx;
	if (x->nrefs < r->cfg.refs_per_ctx)
		x->nrefs++;
	ref->lo = s->lo;
	ref->hi = s->hi;
	ref->off = (uint32_t)(a - s->lo);
	ref->len = (uint8_t)len;
	ref->v = v;
	r->st.refs++;
}

/* ---- hits ---- */

static void full_check(struct os_rep *r, struct ctxst *x, const struct cmp *c, bool eq,
		       uint64_t time)
{
	bool differ;
	size_t n1, n2;
	pid_t pid = r->thr[c->thr].pid;

	if (x->full_done && time < x->last_full + r->cfg.full_check_interval_ns) {
		r->st.full_rate_skipped++;
		return;
	}
	if (!c->lo1 || gc_after(r, c->asid, time) ||
	    (r->be.alive && !r->be.alive(r->be.alive_arg, c->asid, c->lo1, c->hi1, c->ctx))) {
		r->st.full_skipped_gone++;
		return;
	}
	if (c->hi1 - c->lo1 != c->hi2 - c->lo2) {
		differ = true; /* different lengths are different contents */
	} else {
		/* read now, well after the hit: a collection since then moves
		 * both objects and gives their memory to new ones */
		uint64_t g = gc_token(r, c->java);

		if (!g) {
			r->st.gc_unsettled++;
			return;
		}
		if (!buf_room(r, (size_t)r->cfg.max_object_bytes) ||
		    !read_obj(r, pid, c->lo1, c->hi1, c->java, r->buf1, &n1) ||
		    !read_obj(r, pid, c->lo2, c->hi2, c->java, r->buf2, &n2)) {
			r->st.full_read_fail++;
			return;
		}
		if (gc_token(r, c->java) != g) {
			r->st.gc_unsettled++;
			return;
		}
		differ = n1 != n2 || memcmp(r->buf1, r->buf2, n1) != 0;
	}
	x->full_done = true;
	x->last_full = time;
	x->cnt.full_checks++;
	if (eq)
		x->cnt.full_match++;
	if (differ) {
		x->cnt.full_differ++;
		if (eq)
			x->cnt.full_differ_match++;
	}
}

static void take_hit(struct os_rep *r, const struct watch_hit *h)
{
	uint64_t idx, val;
	struct cmp c;
	struct ctxst *x;
	bool eq;

	r->st.hits++;
	if (!os_hmap_get(&r->cookie2cmp, h->cookie, &idx)) {
		r->st.hit_unknown++;
		return;
	}
	c = r->cmp[idx];
	cmp_forget(r, &r->cmp[idx], false); /* a hit disarms its watchpoint */
	if (!h->value_ok) {
		r->st.hit_no_value++;
		return;
	}
	if (h->width && h->width != c.len)
		r->st.width_differs++;
	x = ctx_get(r, c.ctx);
	if (!x)
		return;
	val = h->value & mask_of(c.len);
	eq = val == c.v;
	if (eq)
		x->cnt.equivalent++;
	else
		x->cnt.different++;
	x->own_lost = 0;
	r->st.compared++;
	full_check(r, x, &c, eq, h->time_ns);
}

void os_rep_hit(struct os_rep *r, const struct watch_hit *h)
{
	struct watch_hit *n = os_grow(r->hq, &r->caphq, r->nhq + 1, sizeof(*n), 64);
	size_t i;

	if (!n) {
		r->st.poll_errors++;
		return;
	}
	r->hq = n;
	/* insertion from the back: hits arrive nearly in time order */
	for (i = r->nhq; i > 0 && r->hq[i - 1].time_ns > h->time_ns; i--)
		;
	memmove(r->hq + i + 1, r->hq + i, (r->nhq - i) * sizeof(*r->hq));
	r->hq[i] = *h;
	r->nhq++;
}

void os_rep_poll(struct os_rep *r)
{
	struct watch_hit h[HIT_BATCH];
	int n;

	if (!r->be.poll)
		return;
	do {
		n = r->be.poll(r->be.arg, h, HIT_BATCH);
		if (n < 0) {
			r->st.poll_errors++;
			return;
		}
		for (int i = 0; i < n; i++)
			os_rep_hit(r, &h[i]);
	} while (n == HIT_BATCH);
}

void os_rep_flush(struct os_rep *r, uint64_t time)
{
	size_t i;

	for (i = 0; i < r->nhq && r->hq[i].time_ns <= time; i++)
		take_hit(r, &r->hq[i]);
	if (i) {
		memmove(r->hq, r->hq + i, (r->nhq - i) * sizeof(*r->hq));
		r->nhq -= i;
	}
}

/* ---- object events ---- */

/* After a collection in asid: its Java objects may be offered to the exact
 * figure again (a new epoch; they moved). */
static void exset_forget_java(struct os_rep *r, uint32_t asid)
{
	size_t it = 0, n = 0;
	uint64_t k, v, *del = malloc((r->exset.count + 1) * sizeof(*del));

	while (del && os_hmap_next(&r->exset, &it, &k, &v))
		if ((k >> 48) == asid && v && r->ctx[v - 1].java)
			del[n++] = k;
	for (size_t j = 0; j < n; j++)
		os_hmap_del(&r->exset, del[j]);
	free(del);
}

void os_rep_event(struct os_rep *r, uint64_t time, uint32_t asid, uint64_t lo, uint64_t hi,
		  bool gc)
{
	os_rep_flush(r, time);
	for (size_t i = 0; r->narmed && i < r->ncmp; i++) {
		struct cmp *c = &r->cmp[i];

		if (!c->used || c->asid != asid)
			continue;
		if (gc ? c->java : (c->lo2 < hi && lo < c->hi2)) {
			r->st.invalidated++;
			if (!gc) /* a collection ends every Java comparison, young or not */
				own_lost(r, c);
			cmp_forget(r, c, true);
		} else if (!gc && c->lo1 < hi && lo < c->hi1) {
			c->lo1 = c->hi1 = 0; /* O1 gone: no full check */
		}
	}
	if (gc) {
		for (uint32_t ci = 0; ci < r->nctx; ci++) {
			struct ctxst *x = &r->ctx[ci];

			if (x->active && x->asid == asid && x->java) {
				x->nrefs = x->refnext = 0; /* objects move: O1 may become O2 */
				exact_close(r, x);
			}
		}
		exset_forget_java(r, asid);
	}
}

void os_rep_free_object(struct os_rep *r, uint64_t time, uint32_t asid, uint64_t lo, uint64_t hi)
{
	uint64_t n;

	os_rep_flush(r, time);
	/* a freed object: a new one at the same start is another object */
	os_hmap_del(&r->exset, obj_key(asid, lo));
	if (!os_hmap_get(&r->armed_at, obj_key(asid, lo), &n))
		return; /* the common case: nothing watched there (one look-up) */
	for (size_t i = 0; r->narmed && i < r->ncmp; i++) {
		struct cmp *c = &r->cmp[i];

		if (c->used && c->asid == asid && c->lo2 < hi && lo < c->hi2) {
			r->st.invalidated++;
			own_lost(r, c);
			cmp_forget(r, c, true);
		}
	}
}

void os_rep_gc_seen(struct os_rep *r, uint32_t asid, uint64_t time)
{
	if (asid >= r->ngc) {
		uint64_t *g = realloc(r->gc_seen, (asid + 1) * sizeof(*g));

		if (!g)
			return;
		memset(g + r->ngc, 0, (asid + 1 - r->ngc) * sizeof(*g));
		r->gc_seen = g;
		r->ngc = asid + 1;
	}
	if (time > r->gc_seen[asid])
		r->gc_seen[asid] = time;
}

void os_rep_stop(struct os_rep *r)
{
	os_rep_poll(r);
	for (size_t i = 0; i < r->ncmp; i++) {
		bool hit = false;

		if (!r->cmp[i].used)
			continue;
		/* a queued hit has disarmed its watchpoint already: keep it */
		for (size_t k = 0; k < r->nhq && !hit; k++)
			hit = r->hq[k].cookie == r->cmp[i].cookie;
		if (hit)
			continue;
		r->st.stopped++;
		cmp_forget(r, &r->cmp[i], true);
	}
	r->stopped = true;
}

void os_rep_finish(struct os_rep *r)
{
	os_rep_poll(r);
	os_rep_flush(r, UINT64_MAX);
	for (size_t i = 0; i < r->ncmp; i++)
		if (r->cmp[i].used)
			cmp_forget(r, &r->cmp[i], true);
	for (uint32_t ci = 0; ci < r->nctx; ci++)
		if (r->ctx[ci].active)
			exact_close(r, &r->ctx[ci]);
}

void os_rep_counts(const struct os_rep *r, uint32_t ctx, struct os_replica *out)
{
	memset(out, 0, sizeof(*out));
	if (ctx < r->nctx)
		*out = r->ctx[ctx].cnt;
}

void os_rep_get_stats(const struct os_rep *r, struct os_rep_stats *out)
{
	*out = r->st;
}

bool os_rep_exact_wanted(struct os_rep *r)
{
	bool w = r->exact_wanted;

	r->exact_wanted = false;
	return w;
}

size_t os_rep_armed(const struct os_rep *r)
{
	return r->narmed;
}

/* Access width of the instruction [insn, ip) of pid, cached per asid/insn. */
static unsigned access_width(struct os_rep *r, pid_t pid, uint32_t asid, uint64_t insn,
			     uint64_t ip)
{
	uint64_t key = (uint64_t)asid << 48 | (insn & ((1ULL << 48) - 1)), v;
	struct os_mem_insn m;
	uint8_t code[16];
	size_t n = (size_t)(ip - insn);
	unsigned w = 0;

	if (os_hmap_get(&r->widths, key, &v))
		return (unsigned)v;
	if (ip > insn && n <= sizeof(code) && r->be.read(r->be.arg, pid, insn, code, n) ==
	    (ssize_t)n) {
		if (!r->dec)
			r->dec = os_decoder_new();
		if (r->dec && os_decode_prev(r->dec, code, n, insn, ip, insn, &m) == OS_DEC_OK)
			w = m.width;
	}
	if (r->widths.count < 65536)
		os_hmap_put(&r->widths, key, w);
	return w;
}

bool os_rep_read_access(struct os_rep *r, pid_t pid, uint32_t asid, uint64_t insn, uint64_t ip,
			uint64_t addr, uint8_t *width, uint64_t *word8)
{
	*width = (uint8_t)access_width(r, pid, asid, insn, ip);
	return r->be.read(r->be.arg, pid, addr & ~7ULL, word8, 8) == 8;
}
