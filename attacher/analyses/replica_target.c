/* replica_target.c - the collector's side of in-target replica comparisons
 * (record --replicas; common/shm.h struct os_rep_entry, preload/replica.c,
 * docs/REPLICAS.md "Routes").
 *
 * OJXPerf arms the watchpoint of a comparison on a *later* object of the
 * context, when that object starts to be used. The collector's own
 * watchpoints (replica.c through attacher/watch/) are armed when a sample
 * is applied, tens of milliseconds late: objects that live a few
 * milliseconds are gone. Here the collector only publishes what to watch:
 * for a context with a remembered <off, V> (replica.c's references) an
 * entry "next object of allocation site key: offset off, width w" in the
 * shared header; the allocation hook of that next object arms its own
 * thread's breakpoint (preload/replica.c) and the hit leaves the value seen
 * in the entry. Each poll here takes the results (compared with V, which
 * never leaves the collector), reads the hit object's whole content for the
 * exact figure while it is still alive, frees the entries and publishes
 * new ones. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attacher/analyses/replica.h"
#include "common/shm.h"
#include "attacher/core/remote.h"
#include "common/clock.h"
#include "common/grow.h"

#define PER_CTX 2                              /* entries in flight per context */
#define CTX_GAP_NS 100000000ULL                /* between two publications of a context */
#define PER_SECOND 64                          /* publications per second, all contexts */
#define SCAN_PER_ROUND 128                     /* sites visited per round, round-robin */
#define PENDING_MAX_NS 1000000000ULL           /* no object of the site came: withdrawn */
#define BACKOFF_MIN_NS 1000000000ULL           /* a site withdrawn waits this long, */
#define BACKOFF_MAX_NS 32000000000ULL          /* doubled at each withdrawal up to this */
#define MAX_CONTENT (1u << 20)                 /* larger objects are not read whole */
#define JAVA_MARK 8                            /* the mark word is no content */
#define HOT 16                                 /* sites visited every round */
#define LAST 4                                 /* values seen by hits, per context */
#define RECENT 64                              /* contexts whose allocations were just drained */

struct seen {                  /* value a hit saw at off of an object of the context */
	uint32_t off;
	uint8_t width;         /* 0: none */
	uint64_t v;
};

struct site {
	uint64_t key;          /* 0: none seen */
	uint32_t pid;
	uint32_t asid;
	unsigned inflight;
	struct seen last[LAST];
	unsigned lastnext;
	uint64_t backoff, next_ok; /* sites that allocate rarely hold no entry */
	uint64_t last_pub;
	bool java;
};

struct shadow {
	bool used;
	bool calibrate;        /* the hit gives the reference, no comparison */
	uint32_t ctx, asid;
	uint64_t v, published;
	bool java;
};

struct os_rep_tgt {
	struct os_shm_header *h;
	struct site *site;     /* by context */
	uint32_t nsite;
	/* the contexts with a site key, in the order first seen: publish()
	 * visits these only (javac has thousands of contexts: visiting every one
	 * in every round cost more than the rest of the collector) */
	uint32_t *keyed;
	size_t nkeyed, capkeyed;
	/* sites whose object came (claimed an entry) lately: visited in every
	 * round before the round-robin, so that a site that allocates often
	 * gets an entry whenever its gap allows (javac: the round-robin alone
	 * cut its in-target comparisons to a third) */
	uint32_t hot[HOT];
	uint64_t hot_until[HOT];
	/* contexts whose allocation events were just drained, newest last:
	 * visited after the hot sites and before the round-robin, so that a
	 * site that allocates gets its entry while it allocates (publishing
	 * driven by allocations) */
	uint32_t recent[RECENT];
	uint32_t recent_head;  /* pushes so far; recent[(head - 1) % RECENT] the newest */
	struct shadow sh[OS_REP_SLOTS];
	uint64_t gen;
	uint32_t rr;
	uint64_t rng;
	uint64_t sec_start;    /* the current second of the PER_SECOND budget */
	unsigned sec_pub;
	uint64_t max_age_ns;
	bool stopped;
	uint8_t *buf;
	struct os_rep_tgt_stats st;
};

struct os_rep_tgt *os_rep_tgt_new(struct os_shm_header *h, uint64_t max_age_ns)
{
	struct os_rep_tgt *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->h = h;
	t->gen = 1;
	t->rng = 0x9e3779b97f4a7c15ULL;
	t->max_age_ns = max_age_ns;
	return t;
}

void os_rep_tgt_free(struct os_rep_tgt *t)
{
	if (!t)
		return;
	free(t->site);
	free(t->keyed);
	free(t->buf);
	free(t);
}

void os_rep_tgt_site(struct os_rep_tgt *t, uint32_t ctx, uint32_t asid, uint32_t pid,
		     const uint64_t *frames, uint32_t n)
{
	if (ctx == UINT32_MAX)
		return;
	if (ctx >= t->nsite) {
		uint32_t old = t->nsite;
		struct site *s = os_grow32(t->site, &t->nsite, (size_t)ctx + 1, sizeof(*s), 64,
					   UINT32_MAX);

		if (!s)
			return;
		memset(s + old, 0, (t->nsite - old) * sizeof(*s));
		t->site = s;
	}
	if (!t->site[ctx].key) {
		uint32_t *k = os_grow(t->keyed, &t->capkeyed, t->nkeyed + 1, sizeof(*k), 64);

		if (!k)
			return;
		t->keyed = k;
		t->keyed[t->nkeyed++] = ctx;
	}
	t->site[ctx].key = os_rep_site_key(frames, n);
	t->site[ctx].pid = pid;
	t->site[ctx].asid = asid;
	if (!t->recent_head || t->recent[(t->recent_head - 1) % RECENT] != ctx)
		t->recent[t->recent_head++ % RECENT] = ctx;
}

static void release(struct os_rep_tgt *t, unsigned i)
{
	struct os_rep_entry *e = &t->h->rep[i];

	if (t->sh[i].ctx < t->nsite && t->site[t->sh[i].ctx].inflight)
		t->site[t->sh[i].ctx].inflight--;
	t->sh[i].used = false;
	atomic_store_explicit(&t->h->rep_hash[i], 0, memory_order_relaxed);
	atomic_store_explicit(&e->sg, OS_REP_SG(t->gen++, OS_REP_FREE), memory_order_release);
	atomic_fetch_sub_explicit(&t->h->rep_live, 1, memory_order_release);
}

/* The hit object's content, read while it is alive (checked after the
 * read: a free or a collection clears `alive` before the memory is reused). */
static void exact(struct os_rep_tgt *t, struct os_rep *r, const struct shadow *s,
		  struct os_rep_entry *e, uint64_t sg)
{
	uint64_t skip = s->java ? JAVA_MARK : 0, n;
	_Atomic uint64_t *at_free = &t->h->rep_hash[e - t->h->rep];

	if (e->size <= skip || e->size > MAX_CONTENT) {
		t->st.exact_fail++;
		return;
	}
	n = e->size - skip;
	if (!t->buf && !(t->buf = malloc(MAX_CONTENT))) {
		t->st.exact_fail++;
		return;
	}
	if (atomic_load_explicit(&e->alive, memory_order_acquire) &&
	    os_remote_read((pid_t)e->pid, e->obj + skip, t->buf, n) == (ssize_t)n &&
	    atomic_load_explicit(&e->alive, memory_order_acquire) &&
	    atomic_load_explicit(&e->sg, memory_order_acquire) == sg) {
		os_rep_exact_content(r, s->ctx, s->asid, e->obj, t->buf, n);
		t->st.exact_hashed++;
		return;
	}
	/* freed since the hit: its free hook hashed it before the free
	 * (preload/replica.c osp_rep_dead; written before alive dropped) */
	if (!atomic_load_explicit(&e->alive, memory_order_acquire)) {
		uint64_t hash = atomic_load_explicit(at_free, memory_order_acquire);

		if (hash && atomic_load_explicit(&e->sg, memory_order_acquire) == sg) {
			os_rep_exact_hashed(r, s->ctx, s->asid, e->obj, hash);
			t->st.exact_at_free++;
			return;
		}
		t->st.exact_dead++;
		return;
	}
	t->st.exact_fail++;
}

/* The value a hit saw at off: the reference of the next comparison at off
 * in that context (an earlier object, known exactly from its allocation
 * event, at its first access there). */
static void remember(struct os_rep_tgt *t, uint32_t ctx, uint32_t off, uint8_t width, uint64_t v)
{
	struct site *st = ctx < t->nsite ? &t->site[ctx] : NULL;
	unsigned k;

	if (!st)
		return;
	for (k = 0; k < LAST; k++)
		if (st->last[k].width == width && st->last[k].off == off)
			break;
	if (k == LAST) {
		k = st->lastnext;
		st->lastnext = (st->lastnext + 1) % LAST;
	}
	st->last[k] = (struct seen){ .off = off, .width = width, .v = v };
}

/* A site with no object in PENDING_MAX_NS: not published again for a
 * while (doubling), so that the entries serve the sites that allocate. */
static void backoff(struct os_rep_tgt *t, uint32_t ctx, uint64_t now)
{
	struct site *st = ctx < t->nsite ? &t->site[ctx] : NULL;

	if (!st)
		return;
	st->backoff = st->backoff ? st->backoff * 2 : BACKOFF_MIN_NS;
	if (st->backoff > BACKOFF_MAX_NS)
		st->backoff = BACKOFF_MAX_NS;
	st->next_ok = now + st->backoff;
}

/* Results of the entries in flight; expiry of the old ones. */
static void hot_add(struct os_rep_tgt *t, uint32_t ctx, uint64_t now)
{
	unsigned j, old = 0;

	for (j = 0; j < HOT; j++) {
		if (t->hot_until[j] && t->hot[j] == ctx) {
			t->hot_until[j] = now + 1000000000ULL;
			return;
		}
		if (t->hot_until[j] < t->hot_until[old])
			old = j;
	}
	t->hot[old] = ctx;
	t->hot_until[old] = now + 1000000000ULL;
}

static void harvest(struct os_rep_tgt *t, struct os_rep *r, uint64_t now)
{
	for (unsigned i = 0; i < OS_REP_SLOTS; i++) {
		struct os_rep_entry *e = &t->h->rep[i];
		struct shadow *s = &t->sh[i];
		uint64_t sg = atomic_load_explicit(&e->sg, memory_order_acquire);
		uint64_t gen = sg >> 8;

		if (!s->used)
			continue;
		if (OS_REP_ST(sg) != OS_REP_PENDING && s->ctx < t->nsite) {
			t->site[s->ctx].backoff = 0; /* an object of the site came */
			hot_add(t, s->ctx, now);
		}
		switch (OS_REP_ST(sg)) {
		case OS_REP_PENDING:
			if (t->stopped || now > s->published + PENDING_MAX_NS) {
				uint64_t want = sg;

				if (atomic_compare_exchange_strong(&e->sg, &want,
								   OS_REP_SG(gen, OS_REP_DEAD))) {
					t->st.withdrawn++;
					backoff(t, s->ctx, now);
					release(t, i);
				}
			}
			break;
		case OS_REP_ARMED:
			if (t->stopped || now > e->time + t->max_age_ns) {
				uint64_t want = sg;

				if (atomic_compare_exchange_strong(&e->sg, &want,
								   OS_REP_SG(gen, OS_REP_DEAD))) {
					t->st.expired++;
					release(t, i);
				}
			}
			break;
		case OS_REP_HIT:
			if (s->calibrate) {
				t->st.calibrated++;
			} else {
				t->st.hits++;
				os_rep_compared(r, s->ctx, e->value, s->v, e->width);
			}
			remember(t, s->ctx, e->off, e->width, e->value);
			exact(t, r, s, e, sg);
			release(t, i);
			break;
		case OS_REP_DEAD:
			t->st.dead++;
			release(t, i);
			break;
		case OS_REP_FAILED:
			if (e->err == -ENOSPC) {
				t->st.enospc++;
			} else {
				t->st.failed++;
				t->st.last_err = -e->err;
			}
			release(t, i);
			break;
		default: /* CLAIMED, HITTING: the target is at it */
			break;
		}
	}
}

static void filter_set(uint64_t *f, uint64_t key)
{
	unsigned b = (unsigned)(key >> 56);

	f[b >> 6] |= 1ULL << (b & 63);
}

/* The target's filter: the keys of the PENDING entries (a bit is set
 * before its entry becomes PENDING, cleared only here). */
static void filter_store(struct os_rep_tgt *t, const uint64_t *f)
{
	for (unsigned i = 0; i < 4; i++)
		atomic_store_explicit(&t->h->rep_filter[i], f[i], memory_order_release);
}

static void filter_rebuild(struct os_rep_tgt *t)
{
	uint64_t f[4] = { 0, 0, 0, 0 };

	for (unsigned i = 0; i < OS_REP_SLOTS; i++) {
		struct os_rep_entry *e = &t->h->rep[i];

		if (t->sh[i].used &&
		    OS_REP_ST(atomic_load_explicit(&e->sg, memory_order_acquire)) == OS_REP_PENDING)
			filter_set(f, e->key);
	}
	filter_store(t, f);
}

static uint64_t rnd(struct os_rep_tgt *t)
{
	t->rng ^= t->rng >> 12;
	t->rng ^= t->rng << 25;
	t->rng ^= t->rng >> 27;
	return t->rng * 0x2545F4914F6CDD1DULL;
}

/* What the next entry of st watches: 3 times in 4 an offset an earlier hit
 * saw (its value the reference: a comparison), else the offset of a
 * sampled reference (the hit gives its value: a calibration). False when
 * the context has neither. */
static bool choose(struct os_rep_tgt *t, struct os_rep *r, uint32_t ci, struct site *st,
		   uint32_t *off, unsigned *width, uint64_t *v, bool *calibrate)
{
	unsigned n = 0, k;
	bool java;

	for (k = 0; k < LAST; k++)
		n += st->last[k].width != 0;
	if (n && rnd(t) % 4 != 0) {
		unsigned j = (unsigned)(rnd(t) % n);

		for (k = 0; k < LAST; k++)
			if (st->last[k].width && j-- == 0)
				break;
		*off = st->last[k].off;
		*width = st->last[k].width;
		*v = st->last[k].v;
		*calibrate = false;
		return true;
	}
	if (!os_rep_ref_pick(r, ci, off, width, v, &java))
		return false;
	st->java = java;
	/* a value seen there already: compare with it */
	for (k = 0; k < LAST; k++)
		if (st->last[k].width == *width && st->last[k].off == *off) {
			*v = st->last[k].v;
			*calibrate = false;
			return true;
		}
	*calibrate = true;
	return true;
}

/* One entry for context ci if it may have one now. 1: published; 0: not
 * (no key, gap, backoff, no reference); -1: the round is over (the
 * per-second bound, or every entry in flight). */
static int publish_one(struct os_rep_tgt *t, struct os_rep *r, uint32_t nctx, uint32_t ci,
		       unsigned *free_i, uint64_t now)
{
	struct site *st;
	struct os_rep_entry *e;
	uint32_t off;
	unsigned width;
	uint64_t v, f[4];
	bool calibrate;

	if (ci >= t->nsite || ci >= nctx)
		return 0;
	st = &t->site[ci];
	if (!st->key || st->inflight >= PER_CTX || now < st->next_ok ||
	    now < st->last_pub + CTX_GAP_NS)
		return 0;
	if (now >= t->sec_start + 1000000000ULL) {
		t->sec_start = now;
		t->sec_pub = 0;
	}
	if (t->sec_pub >= PER_SECOND) {
		t->st.rate_bound++;
		return -1;
	}
	/* the samples give where (off, width); the reference value is the one
	 * an earlier hit saw there: both values are then taken at an object's
	 * first access at off, from objects whose bounds came from their
	 * allocation events */
	if (!choose(t, r, ci, st, &off, &width, &v, &calibrate)) {
		/* no reference yet (no sample of the context): look again in
		 * CTX_GAP_NS */
		if (st->next_ok < now + CTX_GAP_NS)
			st->next_ok = now + CTX_GAP_NS;
		return 0;
	}
	while (*free_i < OS_REP_SLOTS && t->sh[*free_i].used)
		(*free_i)++;
	if (*free_i == OS_REP_SLOTS) {
		t->st.table_full++;
		return -1;
	}
	e = &t->h->rep[*free_i];
	e->key = st->key;
	e->pid = st->pid;
	e->off = off;
	e->width = (uint8_t)width;
	e->err = 0;
	e->obj = 0;
	e->time = 0;
	atomic_store_explicit(&e->alive, 0, memory_order_relaxed);
	t->sh[*free_i] = (struct shadow){ .used = true, .calibrate = calibrate, .ctx = ci,
					  .asid = st->asid, .v = v, .published = now,
					  .java = st->java };
	for (unsigned b = 0; b < 4; b++)
		f[b] = atomic_load_explicit(&t->h->rep_filter[b], memory_order_relaxed);
	filter_set(f, st->key);
	filter_store(t, f);
	st->inflight++;
	st->last_pub = now;
	t->sec_pub++;
	t->st.published++;
	atomic_fetch_add_explicit(&t->h->rep_live, 1, memory_order_release);
	atomic_store_explicit(&e->sg, OS_REP_SG(t->gen++, OS_REP_PENDING), memory_order_release);
	return 1;
}

/* The sites visited in a round, in this order: the hot ones (their objects
 * came lately), those whose allocations were just drained (newest first),
 * then at most SCAN_PER_ROUND of the others, round-robin from where the
 * last round stopped (with thousands of sites a visit of each in every
 * round cost more than everything else of --replicas: javac, 17-39% of the
 * collector), for at most PER_SECOND publications a second. */
static void publish(struct os_rep_tgt *t, struct os_rep *r, uint64_t now)
{
	uint32_t nctx = os_rep_nctx(r), n = (uint32_t)t->nkeyed, k, m;
	unsigned free_i = 0;
	int rc;

	for (k = 0; k < HOT; k++)
		if (t->hot_until[k] >= now &&
		    publish_one(t, r, nctx, t->hot[k], &free_i, now) < 0)
			return;
	m = t->recent_head < RECENT ? t->recent_head : RECENT;
	for (k = 0; k < m; k++) {
		rc = publish_one(t, r, nctx, t->recent[(t->recent_head - 1 - k) % RECENT], &free_i,
				 now);
		if (rc < 0)
			return;
		t->st.after_alloc += (uint64_t)rc;
	}
	for (k = 0; k < n && k < SCAN_PER_ROUND; k++) {
		uint32_t ki = (t->rr + k) % n;

		if (publish_one(t, r, nctx, t->keyed[ki], &free_i, now) < 0) {
			t->rr = ki; /* this context first next time */
			return;
		}
	}
	if (n)
		t->rr = (t->rr + (k ? k : 1)) % n;
}

void os_rep_tgt_poll(struct os_rep_tgt *t, struct os_rep *r)
{
	uint64_t now = os_now_ns();

	harvest(t, r, now);
	filter_rebuild(t);
	if (!t->stopped)
		publish(t, r, now);
}

void os_rep_tgt_stop(struct os_rep_tgt *t, struct os_rep *r)
{
	t->stopped = true;
	harvest(t, r, os_now_ns());
}

void os_rep_tgt_get_stats(const struct os_rep_tgt *t, struct os_rep_tgt_stats *out)
{
	*out = t->st;
	out->left_in_flight = 0;
	for (unsigned i = 0; i < OS_REP_SLOTS; i++)
		if (t->sh[i].used)
			out->left_in_flight++; /* e.g. CLAIMED / HITTING when it stopped */
}
