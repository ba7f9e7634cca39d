/* test_ring.c - the per-thread SPSC event ring of common/ring.h. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "common/ring.h"

static struct os_slot *slot_new(uint64_t ring_bytes)
{
	struct os_slot *s = aligned_alloc(64, OS_SLOT_HDR + ring_bytes);

	cr_assert_not_null(s);
	memset(s, 0, OS_SLOT_HDR + ring_bytes);
	return s;
}

/* Writes one event with `nframes` frames; returns false when it was dropped. */
static bool put(struct os_slot *s, uint64_t ring_bytes, uint64_t seq, uint16_t nframes)
{
	uint32_t len = os_event_len(nframes);
	struct os_event *ev = os_ring_reserve(s, ring_bytes, len);
	uint16_t i;

	if (!ev)
		return false;
	ev->type = OS_EV_ALLOC;
	ev->nframes = nframes;
	ev->len = len;
	ev->pid = 1;
	ev->tid = 2;
	ev->time = seq;
	ev->addr = seq;
	ev->size = seq * 3;
	ev->aux = 0;
	ev->aux2 = 0;
	for (i = 0; i < nframes; i++)
		ev->frames[i] = seq + i;
	os_ring_commit(s, ev);
	return true;
}

struct got {
	uint64_t n;
	uint64_t last;       /* last sequence number seen + 1, 0 before any */
	bool ok;             /* every record well formed and in order */
	uint64_t seqs[64];
};

static void on_event(const struct os_event *ev, void *arg)
{
	struct got *g = arg;
	uint16_t i;

	if (ev->type != OS_EV_ALLOC || ev->size != ev->addr * 3 || ev->len != os_event_len(ev->nframes))
		g->ok = false;
	for (i = 0; i < ev->nframes; i++)
		if (ev->frames[i] != ev->addr + i)
			g->ok = false;
	if (g->last && ev->addr < g->last)
		g->ok = false;
	g->last = ev->addr + 1;
	if (g->n < 64)
		g->seqs[g->n] = ev->addr;
	g->n++;
}

Test(ring, reserve_commit_drain)
{
	const uint64_t rb = 4096;
	struct os_slot *s = slot_new(rb);
	struct got g = { .ok = true };
	uint64_t bad = 0;

	cr_assert(put(s, rb, 1, 0));
	cr_assert(put(s, rb, 2, 3));
	cr_assert(put(s, rb, 3, 7));
	cr_assert_eq(atomic_load(&s->head), os_event_len(0) + os_event_len(3) + os_event_len(7));
	cr_assert_eq(os_ring_drain(s, rb, on_event, &g, &bad), 3);
	cr_assert(g.ok);
	cr_assert(g.seqs[0] == 1 && g.seqs[1] == 2 && g.seqs[2] == 3);
	cr_assert_eq(bad, 0);
	cr_assert_eq(atomic_load(&s->tail), atomic_load(&s->head));
	cr_assert_eq(os_ring_drain(s, rb, on_event, &g, &bad), 0, "nothing left");
	free(s);
}

Test(ring, pad_at_wrap)
{
	const uint64_t rb = 1024;
	const uint32_t len = os_event_len(8);
	const uint64_t before = rb / len; /* records that fit before the end */
	struct os_slot *s = slot_new(rb);
	struct got g = { .ok = true };
	const struct os_event *pad;
	uint64_t bad = 0, i, head;

	cr_assert_neq(rb % len, 0, "the test needs a short tail");
	for (i = 0; i < before; i++)
		cr_assert(put(s, rb, i, 8));
	cr_assert_eq(os_ring_drain(s, rb, on_event, &g, &bad), before);
	head = atomic_load(&s->head);
	cr_assert_eq(head, before * len);
	cr_assert(put(s, rb, before, 8));
	pad = (const struct os_event *)(os_slot_data(s) + head);
	cr_assert_eq(pad->type, OS_EV_PAD);
	cr_assert_eq(pad->len, rb - head);
	cr_assert_eq(((const struct os_event *)os_slot_data(s))->addr, before, "record restarts at 0");
	cr_assert_eq(atomic_load(&s->head), rb + len);
	cr_assert(put(s, rb, before + 1, 0));
	cr_assert_eq(os_ring_drain(s, rb, on_event, &g, &bad), 2, "the PAD is not handed out");
	cr_assert(g.ok);
	cr_assert_eq(g.n, before + 2);
	cr_assert_eq(g.seqs[before], before);
	cr_assert_eq(g.seqs[before + 1], before + 1);
	cr_assert_eq(bad, 0);
	free(s);
}

Test(ring, full_ring_drops)
{
	const uint64_t rb = 1024;
	const uint32_t len = os_event_len(4);
	struct os_slot *s = slot_new(rb);
	struct got g = { .ok = true };
	uint64_t bad = 0, i, head;

	for (i = 0; put(s, rb, i, 4); i++)
		cr_assert_lt(i, 100, "the ring never fills");
	cr_assert_eq(i, rb / len);
	head = atomic_load(&s->head);
	cr_assert_null(os_ring_reserve(s, rb, len));
	cr_assert_eq(atomic_load(&s->head), head, "a failed reserve changes nothing");
	cr_assert_null(os_ring_reserve(s, rb, rb / 2 + 8), "larger than half the ring");
	cr_assert_eq(os_ring_drain(s, rb, on_event, &g, &bad), i);
	cr_assert(g.ok);
	cr_assert(put(s, rb, i, 4), "space is reusable after a drain");
	free(s);
}

Test(ring, malformed_record_skipped)
{
	const uint64_t rb = 4096;
	struct os_slot *s = slot_new(rb);
	struct got g = { .ok = true };
	struct os_event *ev;
	uint64_t bad = 0, head_before;

	cr_assert(put(s, rb, 1, 2));
	head_before = atomic_load(&s->head);
	/* A record claiming more frames than its length holds. */
	ev = os_ring_reserve(s, rb, os_event_len(1));
	cr_assert_not_null(ev);
	ev->type = OS_EV_ALLOC;
	ev->nframes = 50;
	ev->len = os_event_len(1);
	os_ring_commit(s, ev);
	cr_assert(put(s, rb, 2, 0));

	cr_assert_eq(os_ring_drain(s, rb, on_event, &g, &bad), 1);
	cr_assert_eq(g.seqs[0], 1);
	cr_assert_eq(bad, atomic_load(&s->head) - head_before, "skipped bytes counted");
	cr_assert_eq(atomic_load(&s->tail), atomic_load(&s->head), "resynchronised");
	/* The ring keeps working afterwards. */
	cr_assert(put(s, rb, 3, 1));
	cr_assert_eq(os_ring_drain(s, rb, on_event, &g, &bad), 1);
	cr_assert(g.ok);
	cr_assert_eq(g.seqs[1], 3);
	free(s);
}

Test(ring, bad_length_zero)
{
	const uint64_t rb = 4096;
	struct os_slot *s = slot_new(rb);
	struct got g = { .ok = true };
	uint64_t bad = 0;

	/* A foreign writer advanced head over a zeroed area. */
	atomic_store(&s->head, 256);
	cr_assert_eq(os_ring_drain(s, rb, on_event, &g, &bad), 0);
	cr_assert_eq(bad, 256);
	cr_assert_eq(atomic_load(&s->tail), 256);
	free(s);
}

/* Producer/consumer on two threads: committed records arrive exactly once
 * and in order; dropped ones never arrive. */
#define STRESS_N 400000u
#define STRESS_RB (1u << 14)

struct stress {
	struct os_slot *s;
	_Atomic bool done;
	uint8_t *dropped;  /* per sequence number, written by the producer */
	uint64_t drops;
};

static void *producer(void *arg)
{
	struct stress *st = arg;
	uint64_t seq;

	for (seq = 0; seq < STRESS_N; seq++) {
		if (!put(st->s, STRESS_RB, seq, (uint16_t)(seq % 13))) {
			st->dropped[seq] = 1;
			st->drops++;
			if (st->drops % 64 == 0)
				sched_yield();
		}
	}
	atomic_store_explicit(&st->done, true, memory_order_release);
	return NULL;
}

struct stress_got {
	uint64_t n;
	int64_t last;
	uint64_t errors;
	const uint8_t *dropped;
};

static void on_stress(const struct os_event *ev, void *arg)
{
	struct stress_got *g = arg;
	uint16_t i;

	if ((int64_t)ev->addr <= g->last || ev->addr >= STRESS_N || g->dropped[ev->addr] ||
	    ev->nframes != ev->addr % 13 || ev->size != ev->addr * 3)
		g->errors++;
	for (i = 0; i < ev->nframes; i++)
		if (ev->frames[i] != ev->addr + i)
			g->errors++;
	g->last = (int64_t)ev->addr;
	g->n++;
}

Test(ring, two_thread_stress, .timeout = 60)
{
	struct stress st = { 0 };
	struct stress_got g = { .last = -1 };
	uint64_t bad = 0;
	pthread_t th;

	st.s = slot_new(STRESS_RB);
	st.dropped = calloc(STRESS_N, 1);
	cr_assert_not_null(st.dropped);
	g.dropped = st.dropped;
	cr_assert_eq(pthread_create(&th, NULL, producer, &st), 0);
	for (;;) {
		bool done = atomic_load_explicit(&st.done, memory_order_acquire);

		os_ring_drain(st.s, STRESS_RB, on_stress, &g, &bad);
		if (done)
			break;
	}
	pthread_join(th, NULL);
	cr_assert_eq(bad, 0);
	cr_assert_eq(g.errors, 0, "%lu duplicated, reordered or corrupt records", g.errors);
	cr_assert_eq(g.n + st.drops, STRESS_N, "received %lu + dropped %lu != %u", g.n, st.drops,
		     STRESS_N);
	/* Received: strictly increasing, never a dropped one, and as many as
	 * were committed, hence exactly the committed ones. */
	cr_assert_gt(g.n, 0);
	free(st.dropped);
	free(st.s);
}

struct released {
	uint64_t off[8], len[8];
	int n;
	uint64_t tail_seen[8]; /* the tail the producer could see meanwhile */
};

static void on_release(struct os_slot *s, uint64_t off, uint64_t len, void *arg)
{
	struct released *r = arg;

	if (r->n < 8) {
		r->off[r->n] = off;
		r->len[r->n] = len;
		r->tail_seen[r->n] = atomic_load(&s->tail);
		r->n++;
	}
}

/* The consumed bytes are reported before the producer may reuse them, and a
 * range crossing the end of the buffer is reported in two pieces. */
Test(ring, drain_reports_consumed_ranges)
{
	const uint64_t rb = 4096;
	struct os_slot *s = slot_new(rb);
	struct got g = { .ok = true };
	struct released r = { .n = 0 };
	uint64_t bad = 0, seq = 1;

	while (put(s, rb, seq, 20)) /* 224-byte records until full */
		seq++;
	struct os_ring_copy *copy = malloc(sizeof(*copy));

	cr_assert_not_null(copy);
	cr_assert_eq(os_ring_drain_ex(s, rb, on_event, &g, &bad, on_release, &r, copy), seq - 1);
	cr_assert_eq(r.n, 1);
	cr_expect_eq(r.off[0], 0);
	cr_expect_eq(r.len[0], atomic_load(&s->tail));
	cr_expect_eq(r.tail_seen[0], 0, "released before the tail was published");
	/* now wrap: fill again, the records start near the end of the buffer */
	while (put(s, rb, seq, 20))
		seq++;
	r.n = 0;
	uint64_t tail0 = atomic_load(&s->tail);

	os_ring_drain_ex(s, rb, on_event, &g, &bad, on_release, &r, copy);
	cr_assert(g.ok);
	cr_assert_eq(bad, 0);
	cr_assert_eq(r.n, 2, "a wrapped range comes in two pieces");
	cr_expect_eq(r.off[0], tail0 & (rb - 1));
	cr_expect_eq(r.off[0] + r.len[0], rb);
	cr_expect_eq(r.off[1], 0);
	cr_expect_eq(r.len[0] + r.len[1], atomic_load(&s->tail) - tail0);
	free(copy);
	free(s);
}

/* ---- a ring written by someone hostile (attach mode: the target's user
 * owns the ring file and may write anything, at any time) -------------- */

struct copy_seen {
	const struct os_ring_copy *copy;
	uint64_t n, not_copy, inconsistent, sum;
};

/* What a consumer does: reads len and nframes, then every frame, then len
 * and nframes again. With the private copy nothing moves meanwhile. */
static void on_copy(const struct os_event *ev, void *arg)
{
	struct copy_seen *c = arg;
	uint32_t len = ev->len;
	uint16_t nf = ev->nframes;

	if ((const void *)ev != (const void *)c->copy->w)
		c->not_copy++;
	if (len < OS_EVENT_FIXED || len > sizeof(*c->copy) || os_event_len(nf) > len)
		c->inconsistent++;
	for (uint32_t i = 0; i < nf; i++)
		c->sum += ev->frames[i];
	if (ev->len != len || ev->nframes != nf)
		c->inconsistent++;
	c->n++;
}

/* Writes a record's first word (type, nframes, len) in one store. */
static void set_first(struct os_event *ev, uint16_t type, uint16_t nframes, uint32_t len)
{
	struct os_event h = { .type = type, .nframes = nframes, .len = len };
	uint64_t w;

	memcpy(&w, &h, sizeof(w));
	__atomic_store_n((uint64_t *)ev, w, __ATOMIC_RELAXED);
}

/* Puts one ALLOC record of `nframes` at data offset `off`, head past it. */
static struct os_event *plant(struct os_slot *s, uint64_t off, uint16_t nframes)
{
	struct os_event *ev = (struct os_event *)(os_slot_data(s) + off);

	memset(ev, 0, os_event_len(nframes));
	set_first(ev, OS_EV_ALLOC, nframes, os_event_len(nframes));
	for (uint16_t i = 0; i < nframes; i++)
		ev->frames[i] = i + 1;
	atomic_store(&s->tail, off);
	atomic_store(&s->head, off + os_event_len(nframes));
	return ev;
}

Test(ring, hostile_records_are_counted_not_read)
{
	const uint64_t rb = 4096;
	struct os_slot *s = slot_new(rb);
	struct os_ring_copy *copy = malloc(sizeof(*copy));
	struct copy_seen c = { .copy = copy };
	struct os_event *ev;
	uint64_t bad = 0;

	cr_assert_not_null(copy);
	/* len past the end of the buffer, past head, unaligned, tiny, huge */
	static const uint32_t lens[] = { 0, 4, 12, 56 + 4, 4096 + 64, 0xfffffff8u, 1u << 31 };
	for (size_t i = 0; i < sizeof(lens) / sizeof(*lens); i++) {
		ev = plant(s, rb - 64, 1);
		set_first(ev, OS_EV_ALLOC, 1, lens[i]);
		bad = 0;
		cr_expect_eq(os_ring_drain_ex(s, rb, on_copy, &c, &bad, NULL, NULL, copy), 0,
			     "len %u", lens[i]);
		cr_expect_eq(bad, 64, "len %u: the rest of the ring is counted", lens[i]);
		cr_expect_eq(atomic_load(&s->tail), atomic_load(&s->head), "resynchronised");
	}
	/* more frames than the length holds (65535 frames: 512 KiB) */
	ev = plant(s, 0, 2);
	set_first(ev, OS_EV_ALLOC, 65535, os_event_len(2));
	bad = 0;
	cr_expect_eq(os_ring_drain_ex(s, rb, on_copy, &c, &bad, NULL, NULL, copy), 0);
	cr_expect_eq(bad, os_event_len(2));
	/* a record longer than the consumer takes, consistent otherwise: the
	 * ring is large enough to hold it */
	{
		const uint64_t big = 1 << 16;
		struct os_slot *b = slot_new(big);

		ev = plant(b, 0, OS_EVENT_MAX_FRAMES + 1);
		bad = 0;
		cr_expect_eq(os_ring_drain_ex(b, big, on_copy, &c, &bad, NULL, NULL, copy), 0);
		cr_expect_eq(bad, os_event_len(OS_EVENT_MAX_FRAMES + 1));
		ev = plant(b, 0, OS_EVENT_MAX_FRAMES); /* the longest taken */
		cr_expect_eq(os_ring_drain_ex(b, big, on_copy, &c, &bad, NULL, NULL, copy), 1);
		free(b);
	}
	/* head and tail: far apart, reversed, a misaligned tail */
	plant(s, 0, 1);
	atomic_store(&s->head, UINT64_MAX - 7);
	bad = 0;
	cr_expect_eq(os_ring_drain_ex(s, rb, on_copy, &c, &bad, NULL, NULL, copy), 0);
	cr_expect_eq(bad, UINT64_MAX - 7, "the whole impossible range is counted");
	cr_expect_eq(atomic_load(&s->tail), UINT64_MAX - 7);
	plant(s, 64, 1);
	atomic_store(&s->tail, 64 + 3);
	bad = 0;
	cr_expect_eq(os_ring_drain_ex(s, rb, on_copy, &c, &bad, NULL, NULL, copy), 0);
	cr_expect_gt(bad, 0);
	/* a tail that wrapped around 2^64 with head just past it: still read */
	ev = (struct os_event *)(os_slot_data(s) + (UINT64_MAX - 63) % rb);
	memset(ev, 0, 64);
	set_first(ev, OS_EV_ALLOC, 1, os_event_len(1));
	atomic_store(&s->tail, UINT64_MAX - 63);
	atomic_store(&s->head, UINT64_MAX - 63 + os_event_len(1));
	bad = 0;
	cr_expect_eq(os_ring_drain_ex(s, rb, on_copy, &c, &bad, NULL, NULL, copy), 1);
	cr_expect_eq(bad, 0);
	cr_expect_eq(c.not_copy, 0);
	cr_expect_eq(c.inconsistent, 0);
	free(copy);
	free(s);
}

struct flipper {
	struct os_event *ev;
	_Atomic bool stop;
	uint64_t flips;
};

/* Keeps rewriting the record's first word and frames, as a hostile target
 * would while the collector drains. */
static void *flip(void *arg)
{
	struct flipper *f = arg;
	static const struct { uint16_t nf; uint32_t len; } v[] = {
		{ 4, 56 + 32 }, { 65535, 56 + 32 }, { 4, 0xfffffff8u }, { 2000, 56 + 16000 },
		{ 0, 56 }, { 4, 4096 }, { 65535, 0 }, { 4, 56 + 32 + 4 },
	};
	uint64_t i = 0;

	while (!atomic_load_explicit(&f->stop, memory_order_relaxed)) {
		set_first(f->ev, OS_EV_ALLOC, v[i % 8].nf, v[i % 8].len);
		f->ev->frames[i % 4] = i;
		i++;
	}
	f->flips = i;
	return NULL;
}

/* A second thread flips len and nframes while the drain runs: every record
 * handed out is the private copy, consistent with itself, and stays so
 * while the consumer reads it (no second read of the shared ring). Under
 * ASan a read past the copy or the ring fails the test too. */
Test(ring, record_flipped_during_drain, .timeout = 60)
{
	const uint64_t rb = 4096;
	struct os_slot *s = slot_new(rb);
	struct os_ring_copy *copy = malloc(sizeof(*copy));
	struct copy_seen c = { .copy = copy };
	struct flipper f = { 0 };
	uint64_t bad = 0, handed = 0, rounds = 0;
	pthread_t th;

	cr_assert_not_null(copy);
	/* the record ends 64 bytes before the end of the ring's allocation */
	f.ev = plant(s, rb - 64 - os_event_len(4), 4);
	cr_assert_eq(pthread_create(&th, NULL, flip, &f), 0);
	/* at least 300000 rounds, and until both outcomes were seen (10 s at most) */
	for (rounds = 0; rounds < 300000 || ((!handed || !bad) && rounds < 300000000); rounds++) {
		atomic_store(&s->tail, rb - 64 - os_event_len(4));
		atomic_store(&s->head, rb - 64);
		handed += os_ring_drain_ex(s, rb, on_copy, &c, &bad, NULL, NULL, copy);
		if (rounds % 1024 == 0)
			sched_yield();
	}
	atomic_store(&f.stop, true);
	pthread_join(th, NULL);
	cr_expect_eq(c.not_copy, 0);
	cr_expect_eq(c.inconsistent, 0, "%lu records changed under the consumer", c.inconsistent);
	cr_expect_gt(handed, 0, "the record was never handed out");
	cr_expect_gt(bad, 0, "the flips were never seen");
	cr_expect_gt(f.flips, 0);
	free(copy);
	free(s);
}
