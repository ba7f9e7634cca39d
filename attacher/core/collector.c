/* collector.c - reads the sources, orders object events and samples,
 * attributes, and builds the profile. */
#include "attacher/core/collector.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "runtimes/runtime.h"
#include "attacher/core/collector_jit.h"
#include "attacher/core/remote.h"
#include "common/grow.h"
#include "common/log.h"
#include "common/search.h"

#define WINDOW_NS 100000000ULL /* object events and samples are applied 100 ms late */
/* Steps 3 and 4 of a round (drain every thread's ring, sort and apply the
 * queue) at most this often: the loop wakes every 5 ms, and each drain
 * touches one page per ring slot (512 by default) even when nothing came. */
#define APPLY_EVERY_NS 20000000ULL

enum { Q_EVENT = 1, Q_SAMPLE = 2 };

struct os_qitem {
	uint64_t time;
	uint32_t seq;
	uint32_t kind;
	union {
		struct os_obj_event ev;
		struct {
			uint64_t addr, sp;
			uint32_t asid, node;
			uint32_t tid;
			/* the observers' bytes from take (attacher/core/observer.h) */
			uint64_t data[OS_OBS_SAMPLE_DATA / 8];
		} s;
	};
};

/* Per-round buffers of what perf delivered. */
struct side {
	uint64_t time;
	uint32_t type; /* PERF_RECORD_* */
	uint32_t pid, ppid, tid;
	bool exec;
	uint32_t prot;
	uint64_t addr, len, pgoff;
	struct os_file_id id; /* MMAP2: the file's device and inode */
	size_t str;    /* offset into strs */
};

struct raw {
	struct os_perf_sample s;
	size_t chain;  /* offset into chains */
	size_t stack;  /* offset into stacks */
	const uint8_t *ring_stack; /* the stack in the perf buffer (held), or NULL */
};

struct round {
	struct side *side;
	size_t nside, capside;
	struct raw *raw;
	size_t nraw, capraw;
	uint64_t *chains;
	size_t nchains, capchains;
	char *strs;
	size_t nstrs, capstrs;
	uint8_t *stacks;
	size_t nstacks, capstacks;
	struct os_collector *c;
	bool oom;
	uint64_t last_apply; /* when steps 3 and 4 last ran */
	size_t qsorted;      /* c->q[qh, qh + qsorted) is in queue order (cmp_q) */
	struct os_qitem *qtmp; /* merge buffer */
	size_t qtmpcap;
};

static struct round R; /* reused between rounds: one collector per process */

static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
	void *np;

	if (need <= *cap) /* also nothing yet and nothing needed (no stack copies:
			   * --call-graph fp), where os_grow gives back the NULL */
		return true;
	np = os_grow(*p, cap, need, elem, 64);

	if (!np)
		return false;
	*p = np;
	return true;
}

static size_t round_str(struct round *r, const char *s)
{
	size_t n = strlen(s) + 1, off = r->nstrs;

	if (!grow((void **)&r->strs, &r->capstrs, r->nstrs + n, 1)) {
		r->oom = true;
		return SIZE_MAX;
	}
	memcpy(r->strs + off, s, n);
	r->nstrs += n;
	return off;
}

static struct side *round_side(struct round *r)
{
	if (!grow((void **)&r->side, &r->capside, r->nside + 1, sizeof(*r->side))) {
		r->oom = true;
		return NULL;
	}
	memset(&r->side[r->nside], 0, sizeof(*r->side));
	r->side[r->nside].str = SIZE_MAX;
	return &r->side[r->nside++];
}

static void cb_sample(void *arg, const struct os_perf_sample *s)
{
	struct round *r = arg;
	struct raw *w;

	if (!grow((void **)&r->raw, &r->capraw, r->nraw + 1, sizeof(*r->raw)) ||
	    !grow((void **)&r->chains, &r->capchains, r->nchains + s->nchain, sizeof(uint64_t)) ||
	    (!(s->has & OS_PS_IN_RING) &&
	     !grow((void **)&r->stacks, &r->capstacks, r->nstacks + s->stack_len, 1))) {
		r->oom = true;
		r->c->lost++;
		return;
	}
	w = &r->raw[r->nraw++];
	w->s = *s;
	w->chain = r->nchains;
	memcpy(r->chains + r->nchains, s->chain, s->nchain * sizeof(uint64_t));
	r->nchains += s->nchain;
	w->s.chain = NULL;
	w->stack = r->nstacks;
	w->ring_stack = NULL;
	if (s->has & OS_PS_IN_RING) { /* used in place: the buffer is held until released */
		w->ring_stack = s->stack;
	} else {
		if (s->stack_len)
			memcpy(r->stacks + r->nstacks, s->stack, s->stack_len);
		r->nstacks += s->stack_len;
	}
	w->s.stack = NULL;
}

static void cb_comm(void *arg, uint32_t pid, uint32_t tid, const char *comm, bool exec,
		    uint64_t time)
{
	struct round *r = arg;
	struct side *e = round_side(r);

	if (!e)
		return;
	e->type = PERF_RECORD_COMM;
	e->time = time;
	e->pid = pid;
	e->tid = tid;
	e->exec = exec;
	e->str = round_str(r, comm);
}

static void cb_task(struct round *r, uint32_t type, uint32_t pid, uint32_t ppid, uint32_t tid,
		    uint64_t time)
{
	struct side *e = round_side(r);

	if (!e)
		return;
	e->type = type;
	e->time = time;
	e->pid = pid;
	e->ppid = ppid;
	e->tid = tid;
}

static void cb_fork(void *arg, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid,
		    uint64_t time)
{
	(void)ptid;
	cb_task(arg, PERF_RECORD_FORK, pid, ppid, tid, time);
}

static void cb_exit(void *arg, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid,
		    uint64_t time)
{
	(void)ptid;
	cb_task(arg, PERF_RECORD_EXIT, pid, ppid, tid, time);
}

static void cb_mmap(void *arg, uint32_t pid, uint32_t tid, uint64_t addr, uint64_t len,
		    uint64_t pgoff, uint32_t prot, uint32_t flags, const char *file,
		    const struct os_file_id *id, uint64_t time)
{
	struct round *r = arg;
	struct side *e = round_side(r);

	(void)flags;
	if (!e)
		return;
	e->type = PERF_RECORD_MMAP2;
	e->time = time;
	e->pid = pid;
	e->tid = tid;
	e->addr = addr;
	e->len = len;
	e->pgoff = pgoff;
	e->prot = prot;
	e->id = *id;
	e->str = round_str(r, file);
}

static void cb_lost(void *arg, uint64_t n)
{
	struct round *r = arg;

	r->c->lost += n;
}

static const struct os_perf_cb perf_cbs = {
	.sample = cb_sample,
	.comm = cb_comm,
	.fork = cb_fork,
	.exit = cb_exit,
	.mmap = cb_mmap,
	.lost = cb_lost,
};

static struct os_code_cache *code_cache; /* one collector per process, as R */

static ssize_t code_read(void *arg, uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct os_collector *c = arg;
	struct os_aspace *as = os_tasks_aspace(&c->tasks, pid);

	if (!as)
		return os_remote_read((pid_t)pid, addr, buf, len);
	return os_code_read(&code_cache, c->sym, (pid_t)pid, as->id, addr, buf, len);
}

static uint64_t code_func_start(void *arg, uint32_t asid, uint64_t addr)
{
	struct os_collector *c = arg;

	return os_sym_func_start(c->sym, asid, addr);
}

/* The analyses the options enable (attacher/core/observer.h). */
static int observers_start(struct os_collector *c, char *err, size_t errlen)
{
	const struct os_observer_ops *ops[OS_OBS_MAX];
	size_t n = os_observers_enabled(c->opts, c->sampler.pmu, ops, OS_OBS_MAX);
	int rc;

	if (c->obs_started)
		return 0;
	c->obs_started = true;

	for (size_t i = 0; i < n; i++) {
		struct os_obs *b = &c->obs[c->nobs];

		if (c->obs_data + ops[i]->sample_data > OS_OBS_SAMPLE_DATA) {
			snprintf(err, errlen, "%s: no room for its sample data", ops[i]->name);
			return -ENOSPC;
		}
		b->ops = ops[i];
		b->self = NULL;
		b->data_off = c->obs_data;
		if (ops[i]->start) {
			rc = ops[i]->start(&b->self, c, err, errlen);
			if (rc < 0) {
				if (ops[i]->destroy)
					ops[i]->destroy(b->self);
				return rc;
			}
		}
		c->nobs++;
		c->obs_data += (ops[i]->sample_data + 7) & ~7u;
		c->obs_eager |= ops[i]->eager;
	}
	return 0;
}

/* Calls `fn` of every observer that has one, with args after self. */
#define OBS_EACH(c, fn, ...)                                                   \
	do {                                                                   \
		for (unsigned obs_i_ = 0; obs_i_ < (c)->nobs; obs_i_++)         \
			if ((c)->obs[obs_i_].ops->fn)                         \
				(c)->obs[obs_i_].ops->fn((c)->obs[obs_i_].self, ##__VA_ARGS__); \
	} while (0)

/* os_attrib.collected: a runtime adapter applied a collection. */
static void obs_collected(void *arg, const struct os_gc_report *r)
{
	struct os_collector *c = arg;

	OBS_EACH(c, collected, r);
}

int os_collector_init(struct os_collector *c, const struct os_opts *o, char *err, size_t errlen)
{
	int rc;
	uint32_t flags = o->no_mmap ? 0 : OS_SHM_F_TRACK_MMAP;

	memset(c, 0, sizeof(*c));
	c->opts = o;
	c->shm.fd = -1;
	os_bpf_filter_init(&c->jitf);
	c->sym = os_sym_new();
	if (!c->sym) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	os_sym_set_separate_lines(c->sym, o->debug_lines);
	os_tasks_init(&c->tasks, c->sym);
	rc = os_attrib_init(&c->attrib, &c->tasks);
	if (rc < 0) {
		snprintf(err, errlen, "out of memory");
		return rc;
	}
	c->attrib.min_size = o->min_size;
	c->attrib.small_sample = o->small_sample;
	c->attrib.small_hold = o->small_sample != 0; /* attach: off (cmd_attach.c) */
	/* runtime adapters: every runtime of the registry (runtimes/registry.c),
	 * each dormant until an address space announces its runtime */
	c->attrib.rt = os_runtimes_new(&c->attrib, c->sym, o);
	flags |= os_runtimes_shm_flags(o);
	if (o->native_exact)
		flags |= OS_SHM_F_NATIVE_EXACT;
	if (!c->attrib.rt) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = os_sampler_create(&c->sampler, o, err, errlen);
	if (rc < 0)
		return rc;
	rc = os_shm_host_create(&c->shm, o->slots, (uint64_t)o->ring_kb * 1024, o->min_size, flags);
	if (rc < 0) {
		snprintf(err, errlen, "cannot create the shared event rings (%u threads x %u KiB): %s",
			 o->slots, o->ring_kb, strerror(-rc));
		return rc;
	}
	c->shm_ready = true;
	c->shm.hdr->small_sample = o->small_sample; /* before any target maps it */
	c->shm_mean_max = o->small_sample;
	c->ca.arg = c;
	c->ca.read = code_read;
	c->ca.func_start = code_func_start;
	if (o->call_graph_dwarf) {
		c->unw = os_unwinder_new(c->sym);
		if (!c->unw) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
	}
	c->status_line = o->progress || isatty(STDERR_FILENO);
	R.c = c;
	/* the analyses start in collector_open, once the sampler is decided */
	return 0;
}

/* The sampler's event, with the side-band records that follow the target. */
static void collector_attr(struct os_collector *c, struct perf_event_attr *a,
			   bool enable_on_exec)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	c->sampler.ops->setup(&c->sampler, &attr);
	if (c->unw) {
		attr.sample_type |= PERF_SAMPLE_STACK_USER;
		attr.sample_stack_user = c->opts->stack_copy;
	}
	attr.sample_id_all = 1;
	attr.inherit = 1;
	attr.task = 1;
	attr.comm = 1;
	attr.comm_exec = 1;
	attr.mmap = 1;
	attr.mmap2 = 1;
	attr.mmap_data = 1;
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	attr.disabled = enable_on_exec ? 1 : 0;
	attr.enable_on_exec = enable_on_exec ? 1 : 0;
	attr.watermark = 1;
	attr.wakeup_watermark = c->opts->perf_pages * (unsigned)sysconf(_SC_PAGESIZE) / 4;
	*a = attr;
}

/* Opens the sampler's events on pid through open_fn (os_perf_open: one
 * inherited event per CPU; os_perf_open_threads: one per thread). */
static int collector_open(struct os_collector *c, pid_t pid, bool enable_on_exec,
			  int (*open_fn)(struct os_perf **, pid_t, struct perf_event_attr *,
					 unsigned, char *, size_t),
			  char *err, size_t errlen)
{
	struct perf_event_attr attr;
	int rc;

	collector_attr(c, &attr, enable_on_exec);
	rc = open_fn(&c->perf, pid, &attr, c->opts->perf_pages, err, errlen);
	if (rc < 0 && rc != -ESRCH && c->sampler.chosen_auto) {
		/* -e auto: a PMU the kernel lists may still refuse the event (a
		 * virtual PMU without PEBS): the software sampler, said in a note */
		rc = os_sampler_fallback(&c->sampler, c->opts, err, err, errlen);
		if (rc < 0)
			return rc;
		collector_attr(c, &attr, enable_on_exec);
		rc = open_fn(&c->perf, pid, &attr, c->opts->perf_pages, err, errlen);
	}
	if (rc < 0)
		return rc;
	/* the analyses, now that the sampler is decided (the data sources
	 * want a PMU sampler); collections the runtimes report go to those
	 * that want them (none: the runtimes do not even gather them) */
	rc = observers_start(c, err, errlen);
	for (unsigned i = 0; rc == 0 && i < c->nobs; i++)
		if (c->obs[i].ops->collected) {
			c->attrib.collected = obs_collected;
			c->attrib.collected_arg = c;
		}
	if (rc < 0)
		return rc;
	os_perf_hold(c->perf, true); /* stacks are used in place (os_collector_round) */
	c->perf_ready = true;
	c->start_ns = os_now_ns();
	return 0;
}

/* The overhead budget (overhead.h) once the events are open: the
 * calibration takes the sampler's event as it was opened. */
static int budget_open(struct os_collector *c, pid_t pid, bool enable_on_exec, int rc)
{
	struct perf_event_attr attr;

	if (rc < 0)
		return rc;
	os_jit_filter_open(c);
	collector_attr(c, &attr, enable_on_exec);
	/* record (enable_on_exec): calibrated once the command runs
	 * (os_collector_calibrate), so that a short one does not wait */
	os_overhead_open(c, pid, &attr, enable_on_exec);
	return 0;
}

void os_collector_calibrate(struct os_collector *c)
{
	if (c->perf_ready)
		os_overhead_calibrate(c);
}

int os_collector_open(struct os_collector *c, pid_t pid, bool enable_on_exec, char *err,
		      size_t errlen)
{
	return budget_open(c, pid, enable_on_exec,
			   collector_open(c, pid, enable_on_exec, os_perf_open, err, errlen));
}

int os_collector_open_with(struct os_collector *c, pid_t pid,
			   int (*open_fn)(struct os_perf **, pid_t, struct perf_event_attr *,
					  unsigned, char *, size_t),
			   char *err, size_t errlen)
{
	return collector_open(c, pid, false, open_fn, err, errlen);
}

int os_collector_open_attach(struct os_collector *c, pid_t pid, char *err, size_t errlen)
{
	return budget_open(c, pid, false,
			   collector_open(c, pid, false, os_perf_open_threads, err, errlen));
}

static void apply_side(struct os_collector *c, struct round *r, const struct side *e)
{
	const char *s = e->str == SIZE_MAX ? NULL : r->strs + e->str;

	switch (e->type) {
	case PERF_RECORD_COMM: {
		struct os_thread_info *th;

		if (e->exec && e->pid == e->tid)
			os_tasks_exec(&c->tasks, e->pid);
		th = os_tasks_thread_named(&c->tasks, e->pid, e->tid, s, e->time);
		/* a JIT compiler thread is known by its name: its blocks go
		 * without paths from its next one on (ring_event) */
		if (th)
			os_jit_named(c, th);
		break;
	}
	case PERF_RECORD_FORK:
		if (e->pid != e->ppid)
			os_tasks_fork(&c->tasks, e->ppid, e->pid);
		break;
	case PERF_RECORD_EXIT:
		os_jit_filter_take(c, e->pid, e->tid); /* its id may be reused */
		/* the thread's ring will not be written again: drain and recycle it */
		if (c->shm_ready && c->pidns && e->pid == c->pidns->host_pid)
			os_shm_host_thread_gone(&c->shm, c->pidns->ns_pid,
						os_pidns_ns_tid(c->pidns, e->tid));
		else if (c->shm_ready)
			os_shm_host_thread_gone(&c->shm, e->pid, e->tid);
		break;
	case PERF_RECORD_MMAP2:
		os_tasks_mmap_id(&c->tasks, e->pid, e->addr, e->len, e->pgoff, e->prot, s,
				 e->id.maj, e->id.min, e->id.ino);
		break;
	}
}

static int cmp_side(const void *a, const void *b)
{
	const struct side *x = a, *y = b;

	return x->time < y->time ? -1 : x->time > y->time;
}

static struct os_qitem *queue_push(struct os_collector *c, uint64_t time, uint32_t kind)
{
	struct os_qitem *q;

	if (c->qn == c->qcap && c->qh) { /* room at the front: move the live items there */
		memmove(c->q, c->q + c->qh, (c->qn - c->qh) * sizeof(*c->q));
		c->qn -= c->qh; /* R.qsorted counts from the head: unchanged */
		c->qh = 0;
	}
	if (!grow((void **)&c->q, &c->qcap, c->qn + 1, sizeof(*c->q)))
		return NULL;
	q = &c->q[c->qn++];
	q->time = time;
	q->seq = c->seq++;
	q->kind = kind;
	return q;
}

struct stack_copy {
	const uint8_t *data;
	uint64_t lo, len;
};

static bool stack_read(void *arg, uint64_t addr, uint64_t *word)
{
	const struct stack_copy *sc = arg;

	if (addr < sc->lo || addr + 8 > sc->lo + sc->len || addr + 8 < addr)
		return false;
	memcpy(word, sc->data + (addr - sc->lo), 8);
	return true;
}

/* runtime.h's os_rt_read over the stack copy. */
static bool stack_read_buf(void *arg, uint64_t addr, void *buf, size_t len)
{
	const struct stack_copy *sc = arg;

	if (addr < sc->lo || addr - sc->lo > sc->len || sc->len - (addr - sc->lo) < len)
		return false;
	memcpy(buf, sc->data + (addr - sc->lo), len);
	return true;
}

/* Access paths through JIT code (a JVM without -XX:+PreserveFramePointer
 * keeps no frame pointer there: the kernel's chain and fp_chain stop at the
 * first compiled frame, or go astray): when the sampled pc lies in a
 * runtime's code, or the DWARF unwinding stopped at such a pc, the runtime
 * adapter walks on by its own frame rules (java_walk). Returns the number
 * of frames, 0 when it did not apply (the path is then made as before). */
static uint32_t java_path(struct os_collector *c, uint32_t asid, const struct os_perf_sample *s,
			  const uint8_t *stack, uint64_t insn, uint64_t *frames, uint32_t max,
			  uint32_t ndwarf)
{
	struct os_runtime *rt = c->attrib.rt;
	struct stack_copy sc = { stack, s->regs[OS_REG_SP], s->stack_len };
	struct os_rt_frame f;
	uint32_t n;

	if (!ndwarf) { /* the leaf itself: a walk that ends there (a leaf in a
		        * prologue) stands too, rbp is no frame pointer in JIT code */
		f = (struct os_rt_frame){ s->ip, s->regs[OS_REG_SP], s->regs[OS_REG_BP], s->regs };
		n = rt->ops->java_walk(rt, asid, &f, true, stack_read_buf, &sc, frames, max);
		if (!n)
			return 0;
		if (frames[0] == s->ip)
			frames[0] = insn;
		return n;
	}
	/* the DWARF path's last frame, where it stopped */
	if (ndwarf < 2 || !os_unwind_stopped(c->unw, &f.sp, &f.fp))
		return 0;
	f.pc = frames[ndwarf - 1];
	f.regs = NULL; /* a caller: its registers are not known */
	n = rt->ops->java_walk(rt, asid, &f, false, stack_read_buf, &sc, frames + ndwarf - 1,
			       max - (ndwarf - 1));
	if (n < 2)
		return 0;
	frames[0] = insn;
	return ndwarf - 1 + n;
}

/* The access path from the kernel's frame-pointer chain. While the chain
 * stays inside the sampled stack copy the frame pointer of each frame is
 * known too, so a runtime adapter can name frames that have no symbol
 * (interpreted methods: the runtime finds them in the frame). */
static uint32_t fp_chain(struct os_collector *c, uint32_t asid, const struct os_perf_sample *s,
			 const uint64_t *chain, const uint8_t *stack, uint64_t insn, uint64_t *frames,
			 uint32_t max)
{
	struct os_runtime *rt = c->attrib.rt;
	struct stack_copy sc = { stack, s->regs[OS_REG_SP], s->stack_len };
	bool named = rt && rt->ops->frame_word && s->stack_len;
	uint64_t fp = s->regs[OS_REG_BP], w;
	uint32_t n = 1;

	frames[0] = named ? rt->ops->frame_word(rt, asid, s->ip, fp, s->regs, stack_read, &sc)
			  : insn;
	if (frames[0] == s->ip)
		frames[0] = insn;
	for (uint32_t i = 1; i < s->nchain && n < max; i++) {
		uint64_t pc = chain[i];

		/* frame i's pc is the return address saved at fp + 8; its own frame
		 * pointer is the one saved at fp */
		if (named && stack_read(&sc, fp + 8, &w) && w == pc && stack_read(&sc, fp, &w) &&
		    w > fp) {
			fp = w;
			pc = rt->ops->frame_word(rt, asid, pc, fp, NULL, stack_read, &sc);
		} else {
			named = false;
		}
		frames[n++] = pc;
	}
	return n;
}

static void take_sample(struct os_collector *c, struct raw *w, const uint64_t *chain,
			const uint8_t *stack)
{
	struct os_perf_sample *s = &w->s;
	struct os_thread_info *th = os_tasks_thread(&c->tasks, s->pid, s->tid, NULL);
	struct os_aspace *as = os_tasks_aspace(&c->tasks, s->pid);
	uint64_t addr = 0, insn = s->ip, frames[OS_MAX_FRAMES];
	uint32_t n = 0, nj = 0;
	bool java = c->attrib.rt && c->attrib.rt->ops->java_walk && s->stack_len;
	enum os_dec_status st;
	struct os_qitem *q;

	c->samples_total++;
	if (th)
		th->samples++;
	if (!as)
		return;
	/* a JIT compiler thread's: counted only (collector_jit.c) */
	if (th && os_jit_sample(c, th))
		return;
	s->chain = chain;
	st = c->sampler.ops->address(&c->sampler, s, as->id, &c->ca, &addr, &insn);
	switch (st) {
	case OS_DEC_OK:
		break;
	case OS_DEC_NOMEM:
		c->unaddr_nomem++;
		return;
	case OS_DEC_CLOBBERED:
		c->unaddr_clobbered++;
		return;
	default:
		c->unaddr_undecodable++;
		return;
	}
	c->samples_addressed++;
	if (c->attrib.rt && c->attrib.rt->ops->sample_taken)
		c->attrib.rt->ops->sample_taken(c->attrib.rt, as, addr);
	/* access path: the accessing instruction, then the callers, from the
	 * stack copy's CFI where possible, through JIT code by the runtime's
	 * frame rules, else from the frame-pointer chain */
	if (java)
		nj = java_path(c, as->id, s, stack, insn, frames, OS_MAX_FRAMES, 0);
	if (!nj && c->unw && s->stack_len)
		n = os_unwind(c->unw, as->id, s->tid, s->regs, stack, s->stack_len, frames,
			      OS_MAX_FRAMES);
	if (!nj && java && n >= 2)
		nj = java_path(c, as->id, s, stack, insn, frames, OS_MAX_FRAMES, n);
	if (nj) {
		n = nj;
		c->unwound_java++;
	} else if (n >= 2 && n >= s->nchain) {
		c->unwound_dwarf++;
		frames[0] = insn;
	} else {
		n = fp_chain(c, as->id, s, chain, stack, insn, frames, OS_MAX_FRAMES);
		c->unwound_fp++;
	}
	if (n >= OS_MAX_FRAMES)
		c->paths_full++;
	/* objscope's own work in the target (its hooks, their unwinding, the
	 * rings): counted apart, never the program's objects' accesses */
	if (os_aspace_is_self(as, frames, n)) {
		c->samples_self++;
		return;
	}
	/* a GC thread's access (copying, marking): apart from the program's */
	if (th && th->gc && n)
		frames[n < OS_MAX_FRAMES ? n++ : n - 1] = OS_RT_WORD_GC_THREAD;
	q = queue_push(c, s->time, Q_SAMPLE);
	if (!q) {
		c->lost++;
		return;
	}
	q->s.addr = addr;
	q->s.sp = s->regs[OS_REG_SP];
	q->s.asid = as->id;
	q->s.node = os_attrib_path(&c->attrib, as->id, frames, n);
	q->s.tid = s->tid;
	if (c->nobs) { /* analyses: what they read while the target still holds it */
		struct os_obs_take t = { (pid_t)s->pid, s->tid, as->id, s->ip, insn, addr, s };

		memset(q->s.data, 0, sizeof(q->s.data));
		for (unsigned i = 0; i < c->nobs; i++)
			if (c->obs[i].ops->take)
				c->obs[i].ops->take(c->obs[i].self, &t,
						    (uint8_t *)q->s.data + c->obs[i].data_off);
	}
}

static void ring_event(const struct os_event *ev, void *arg)
{
	struct os_collector *c = arg;
	struct os_obj_event oe;
	struct os_qitem *q;

	if (c->pidns && ev->pid == c->pidns->ns_pid) {
		/* our ids (attach to a container), written into the drain's
		 * private copy of the record (os_shm_host_drain): ours to change */
		struct os_event *t = (struct os_event *)ev;
		uint32_t tid = os_pidns_host_tid(c->pidns, ev->tid);

		t->pid = c->pidns->host_pid;
		t->tid = tid ? tid : ev->tid;
	}

	os_jit_block(c, ev); /* a JIT compiler thread's block: its next ones without paths */
	if (!os_attrib_prepare(&c->attrib, ev, &oe))
		return;
	OBS_EACH(c, drained, &oe, ev->time); /* e.g. a GC begin: content read before is stale */
	OBS_EACH(c, drained_raw, ev, &oe);
	q = queue_push(c, ev->time, Q_EVENT);
	if (!q) {
		c->attrib.c.dropped_events++;
		return;
	}
	q->ev = oe;
}

/* Attributes a queued sample, then gives it to the analyses. */
static void apply_sample(struct os_collector *c, const struct os_qitem *q)
{
	struct os_tasks *t = &c->tasks;
	struct os_aspace *as;
	struct os_obs_sample s;
	uint32_t acc;

	/* under the budget a sample stands for 1 / the sampled share of its
	 * interval (attrib.h tw) */
	c->attrib.tw = os_overhead_time_weight(c, q->time);
	s.ctx = os_attrib_charge(&c->attrib, q->s.asid, q->s.addr, q->s.sp, q->s.node, &acc);
	if (!c->nobs)
		return;
	as = os_tasks_get(t, q->s.asid);
	s.time = q->time;
	s.since_ns = q->time > c->start_ns ? q->time - c->start_ns : 0;
	s.asid = q->s.asid;
	s.pid = as ? as->pid : 0;
	s.tid = q->s.tid;
	s.addr = q->s.addr;
	s.sp = q->s.sp;
	s.access_node = q->s.node;
	s.acc = acc;
	for (unsigned i = 0; i < c->nobs; i++) {
		if (!c->obs[i].ops->sample)
			continue;
		s.data = (const uint8_t *)q->s.data + c->obs[i].data_off;
		c->obs[i].ops->sample(c->obs[i].self, &s);
	}
}

static int cmp_q(const void *a, const void *b)
{
	const struct os_qitem *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	/* at equal times an allocation precedes the samples that hit it */
	if (x->kind != y->kind)
		return x->kind == Q_EVENT ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Sorts c->q by cmp_q. What a round leaves in the queue (the last
 * WINDOW_NS, about five rounds' worth) is sorted already: only the items
 * queued since are sorted, then merged in from where they start. cmp_q is
 * a total order (seq is unique), so this is the order a sort of the whole
 * queue gives. */
static void queue_sort(struct os_collector *c, struct round *r)
{
	/* indices below are relative to the queue's head c->q + c->qh */
	size_t n = c->qn - c->qh;
	size_t old = r->qsorted < n ? r->qsorted : n, add = n - old, lo;
	struct os_qitem *q = c->q + c->qh, *a, *b, *end, *out;

	r->qsorted = 0;
	if (add > 1)
		qsort(q + old, add, sizeof(*q), cmp_q);
	if (!old || !add || cmp_q(&q[old - 1], &q[old]) <= 0)
		goto sorted;
	/* the first sorted item after q[old] */
	lo = os_lower_bound(old, i, cmp_q(&q[i], &q[old]) < 0);
	if (!grow((void **)&r->qtmp, &r->qtmpcap, old - lo, sizeof(*q))) {
		qsort(q, n, sizeof(*q), cmp_q);
		goto sorted;
	}
	/* merge q[lo, old) (moved out) with q[old, qn) into q[lo, qn) */
	memcpy(r->qtmp, q + lo, (old - lo) * sizeof(*q));
	a = r->qtmp;
	end = r->qtmp + (old - lo);
	b = q + old;
	out = q + lo;
	while (a < end && b < q + n)
		*out++ = cmp_q(b, a) < 0 ? *b++ : *a++;
	while (a < end)
		*out++ = *a++;
sorted:
	r->qsorted = n;
}

/* An observer wants this round drained and applied (observer.h, `eager`). */
bool os_collector_eager(struct os_collector *c)
{
	if (!c->obs_eager)
		return false;
	for (unsigned i = 0; i < c->nobs; i++) {
		const struct os_observer_ops *o = c->obs[i].ops;

		if (o->eager && (!o->eager_now || o->eager_now(c->obs[i].self)))
			return true;
	}
	return false;
}

void os_collector_round(struct os_collector *c, bool final)
{
	struct round *r = &R;
	uint64_t cutoff, work = os_overhead_thread_ns(); /* the samples' cost to us (overhead.h) */
	size_t i, done;

	r->nside = r->nraw = r->nchains = r->nstrs = r->nstacks = 0;
	os_overhead_round(c); /* the budget: sampling on or off */
	if (c->perf_ready)
		os_perf_read(c->perf, &perf_cbs, r);
	/* 1. follow processes, threads and mappings in time order */
	if (r->nside) /* r->side is NULL before the first side-band record */
		qsort(r->side, r->nside, sizeof(*r->side), cmp_side);
	for (i = 0; i < r->nside; i++)
		apply_side(c, r, &r->side[i]);
	/* 2. address the samples now, while the code can still be read */
	for (i = 0; i < r->nraw; i++)
		take_sample(c, &r->raw[i], r->chains + r->raw[i].chain,
			    r->raw[i].ring_stack ? r->raw[i].ring_stack : r->stacks + r->raw[i].stack);
	if (c->perf_ready) /* the stacks used in place are done with */
		os_perf_release(c->perf);
	c->ovh.sample_work_ns += os_overhead_thread_ns() - work;
	if (!final && !os_collector_eager(c) && os_now_ns() - r->last_apply < APPLY_EVERY_NS)
		return; /* r->oom stays set for the next full round to report */
	r->last_apply = os_now_ns();
	/* 3. object events from the target's rings */
	if (c->shm_ready)
		os_shm_host_drain(&c->shm, ring_event, c);
	OBS_EACH(c, poll); /* the analyses' own sources, taken in time order below */
	/* 4. apply what is older than the window, in time order */
	queue_sort(c, r);
	cutoff = final ? UINT64_MAX : os_now_ns() - WINDOW_NS;
	for (done = 0; c->qh + done < c->qn && c->q[c->qh + done].time <= cutoff; done++) {
		struct os_qitem *q = &c->q[c->qh + done];

		if (q->kind == Q_EVENT) {
			OBS_EACH(c, event, &q->ev, q->time); /* before the objects change */
			os_attrib_event(&c->attrib, &q->ev);
			OBS_EACH(c, applied, &q->ev, q->time);
		} else {
			apply_sample(c, q);
		}
	}
	OBS_EACH(c, flush, cutoff);
	if (final)
		OBS_EACH(c, finish);
	/* the applied items leave by the head; the live ones are moved to the
	 * front only once they are fewer than the dead ones (or the queue is
	 * full, queue_push): each item is moved about once, where a move per
	 * round cost the rounds of an eager observer (replicas, every 5 ms) a
	 * copy of the whole 100 ms window each (the collector's largest cost on
	 * a fixture with 50,000 tracked allocations/s) */
	c->qh += done;
	if (c->qh == c->qn) {
		c->qh = c->qn = 0;
	} else if (c->qh > c->qn - c->qh) {
		memmove(c->q, c->q + c->qh, (c->qn - c->qh) * sizeof(*c->q));
		c->qn -= c->qh;
		c->qh = 0;
	}
	r->qsorted = c->qn - c->qh;
	if (r->oom)
		os_warn("out of memory while reading samples; some were dropped (counted as lost)");
	r->oom = false;
}

void os_collector_stop(struct os_collector *c)
{
	os_overhead_stop(c);
	if (c->perf_ready)
		os_perf_disable(c->perf);
	if (c->shm_ready)
		atomic_store(&c->shm.hdr->disarmed, 1);
	/* analyses let go of the target: nothing of theirs may hold a target
	 * thread past the stop (a seized thread, a watchpoint) */
	OBS_EACH(c, stop);
	if (!c->end_ns)
		c->end_ns = os_now_ns();
}

void os_collector_destroy(struct os_collector *c)
{
	os_ckpt_end(c); /* no checkpoint outlives its collector */
	os_bpf_filter_close(&c->jitf);
	if (c->perf)
		os_perf_close(c->perf);
	c->perf = NULL;
	c->perf_ready = false;
	if (c->shm_ready)
		os_shm_host_destroy(&c->shm);
	c->shm_ready = false;
	OBS_EACH(c, destroy);
	c->nobs = 0;
	os_sampler_destroy(&c->sampler);
	os_overhead_free(c);
	os_unwinder_free(c->unw);
	c->unw = NULL;
	os_code_cache_free(code_cache);
	code_cache = NULL;
	if (c->attrib.rt && c->attrib.rt->ops->destroy)
		c->attrib.rt->ops->destroy(c->attrib.rt);
	c->attrib.rt = NULL;
	os_attrib_destroy(&c->attrib);
	os_tasks_destroy(&c->tasks);
	if (c->sym)
		os_sym_free(c->sym);
	c->sym = NULL;
	free(c->q);
	c->q = NULL;
	c->qh = c->qn = c->qcap = 0;
	free(R.side);
	free(R.raw);
	free(R.chains);
	free(R.strs);
	free(R.stacks);
	free(R.qtmp);
	memset(&R, 0, sizeof(R));
}
