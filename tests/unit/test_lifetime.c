/* Tests of the lifetime analysis (docs/LIFETIMES.md): the engine
 * (attacher/analyses/lifetime.h) driven by synthetic births, frees, moves
 * and collections with planted answers; the figures and advice
 * (common/lifetime_math.h); the LIFETIMES section written, read and
 * merged. */
#include <criterion/criterion.h>
#include <string.h>
#include <unistd.h>

#include "attacher/analyses/lifetime.h"
#include "attacher/cli/options.h"
#include "common/lifetime_math.h"
#include "common/profile.h"

#define ASID 3
#define MS 1000000ULL

/* A fake index: the objects the "collector" still holds, by start. */
static uint64_t held_start[64], held_end[64];
static uint32_t held_gen[64];
static size_t nheld;

static void hold(uint64_t start, uint64_t size, uint32_t gen)
{
	held_start[nheld] = start;
	held_end[nheld] = start + size;
	held_gen[nheld++] = gen;
}

static bool held(void *arg, uint32_t asid, uint64_t start, uint64_t end)
{
	(void)arg;
	(void)asid;
	for (size_t i = 0; i < nheld; i++)
		if (held_start[i] == start && held_end[i] == end)
			return true;
	return false;
}

static uint32_t gen(void *arg, uint32_t asid, uint64_t addr)
{
	(void)arg;
	(void)asid;
	for (size_t i = 0; i < nheld; i++)
		if (held_start[i] <= addr && addr < held_end[i])
			return held_gen[i];
	return OS_GEN_UNKNOWN;
}

/* Moves held object `from` to `to` in the fake index. */
static void rehold(uint64_t from, uint64_t to, uint32_t g)
{
	for (size_t i = 0; i < nheld; i++)
		if (held_start[i] == from) {
			held_end[i] = to + (held_end[i] - from);
			held_start[i] = to;
			held_gen[i] = g;
		}
}

static void collect(struct os_lt *t, const struct os_obj_move *mv, size_t n, bool gens)
{
	struct os_gc_report r = { .asid = ASID, .gens_known = gens, .nmoves = n, .moves = mv };

	os_lt_collected(t, &r, held, gen, NULL);
}

/* Native: time bins, the leak, the peak. */
Test(lifetime, native_bins_leak_peak)
{
	struct os_lt t;
	const struct os_lifetime *l;
	struct os_lt_figures f;

	os_lt_init(&t);
	for (uint64_t i = 0; i < 2000; i++) { /* context 1: freed after 100 ns */
		os_lt_born(&t, ASID, 0x10000, 4096, 1, 1.0, false, i * MS);
		os_lt_end(&t, ASID, 0x10000, i * MS + 100);
	}
	os_lt_born(&t, ASID, 0x20000, 8192, 2, 1.0, false, 0); /* context 2: a leak */
	for (uint64_t i = 0; i < 10; i++) /* context 3: a peak of 10 x 64 KiB at 5 s */
		os_lt_born(&t, ASID, 0x100000 + i * 0x10000, 65536, 3, 1.0, false, 5000 * MS + i);
	for (uint64_t i = 0; i < 10; i++)
		os_lt_end(&t, ASID, 0x100000 + i * 0x10000, 7000 * MS);
	os_lt_finish(&t, 9000 * MS, NULL, NULL);

	l = os_lt_context(&t, 1);
	cr_assert_not_null(l);
	cr_expect_eq(l->kind, OS_LT_NATIVE);
	cr_expect_eq(l->ended[0], 2000);
	os_lt_figures(l, &f);
	cr_expect_eq(f.advice, OS_LT_ADV_DIES_YOUNG, "%s", f.why);
	cr_expect(f.has_median && f.median_bin == 0);
	l = os_lt_context(&t, 2);
	cr_expect_eq(l->live[os_lt_time_bin(9000 * MS)], 1);
	cr_expect_eq(l->live_bytes[os_lt_time_bin(9000 * MS)], 8192);
	os_lt_figures(l, &f);
	cr_expect(!f.has_median, "nothing freed: no median");
	cr_expect_eq(f.advice, OS_LT_ADV_NONE);
	l = os_lt_context(&t, 3);
	cr_expect_eq(l->peak_bytes, 10 * 65536);
	cr_expect_eq(l->peak_ns, 5000 * MS + 9);
	cr_expect_eq(l->ended[os_lt_time_bin(2000 * MS)], 10, "2 s lifetimes");
	cr_expect_eq(t.peak_bytes, 10 * 65536 + 8192);
	os_lt_destroy(&t);
}

/* Bins: under 1 us in 0, [2^(k-1), 2^k) us in k, the last open. */
Test(lifetime, time_bins)
{
	uint64_t lo, hi;

	cr_expect_eq(os_lt_time_bin(999), 0);
	cr_expect_eq(os_lt_time_bin(1000), 1);
	cr_expect_eq(os_lt_time_bin(1999), 1);
	cr_expect_eq(os_lt_time_bin(2000), 2);
	cr_expect_eq(os_lt_time_bin(UINT64_MAX), OS_LT_BINS - 1);
	for (uint32_t b = 1; b < OS_LT_BINS - 1; b++) {
		os_lt_bin_ns(b, &lo, &hi);
		cr_expect_eq(os_lt_time_bin(lo), b);
		cr_expect_eq(os_lt_time_bin(hi - 1000), b);
	}
}

/* Managed: a kept object moves at every young collection, then is
 * promoted and stays; a young object left behind died; an object the index
 * lost died at that collection; weights count. */
Test(lifetime, managed_ages_promotion_death)
{
	struct os_lt t;
	const struct os_lifetime *l;
	struct os_obj_move mv[2];
	struct os_lt_figures f;

	nheld = 0;
	os_lt_init(&t);
	/* context 1: one kept object (weight 2); context 2: two that die young */
	os_lt_born(&t, ASID, 0x1000, 2048, 1, 2.0, true, 0);
	hold(0x1000, 2048, OS_GEN_YOUNG);
	os_lt_born(&t, ASID, 0x2000, 2048, 2, 1.0, true, 0);
	hold(0x2000, 2048, OS_GEN_YOUNG);
	os_lt_born(&t, ASID, 0x3000, 2048, 2, 1.0, true, 0);
	/* collection 1: the kept one moves to a survivor space; 0x2000 is
	 * still held (stale eden) but young and not moved: dead; 0x3000 is
	 * not held: dead */
	mv[0] = (struct os_obj_move){ 0x1000, 0x9000, OS_GEN_YOUNG };
	rehold(0x1000, 0x9000, OS_GEN_YOUNG);
	collect(&t, mv, 1, true);
	/* collection 2: promoted; collection 3: not moved, old: survives */
	mv[0] = (struct os_obj_move){ 0x9000, 0x80000, OS_GEN_OLD };
	rehold(0x9000, 0x80000, OS_GEN_OLD);
	collect(&t, mv, 1, true);
	collect(&t, NULL, 0, true);
	os_lt_finish(&t, 0, NULL, NULL);

	l = os_lt_context(&t, 1);
	cr_assert_not_null(l);
	cr_expect_eq(l->kind, OS_LT_MANAGED);
	cr_expect_eq(l->live[3], 2.0, "weight 2, age 3, live at the end");
	cr_expect_eq(l->live_bytes[3], 4096.0);
	cr_expect_eq(l->promoted, 2.0);
	cr_expect(l->flags & OS_LT_F_PROMOTION);
	cr_expect_eq(os_lt_surviving_bytes(l, 3), 4096.0);
	l = os_lt_context(&t, 2);
	cr_expect_eq(l->ended[0], 2.0, "both died before their first collection");
	os_lt_figures(l, &f);
	cr_expect(f.has_young && f.young_share == 1.0);
	cr_expect_eq(t.collections, 3);
	os_lt_destroy(&t);
}

/* Generations not known at a collection: a promotion then is counted at
 * the next collection that knows; without any, promotions are not
 * measured and an object left behind after its last move died. */
Test(lifetime, generations_unknown)
{
	struct os_lt t;
	struct os_obj_move mv = { 0x1000, 0x80000, OS_GEN_UNKNOWN };
	const struct os_lifetime *l;

	nheld = 0;
	os_lt_init(&t);
	os_lt_born(&t, ASID, 0x1000, 2048, 1, 1.0, true, 0);
	hold(0x80000, 2048, OS_GEN_OLD);
	collect(&t, &mv, 1, false); /* moved, generation unknown */
	collect(&t, NULL, 0, true); /* not moved, old: survived, promoted */
	os_lt_finish(&t, 0, NULL, NULL);
	l = os_lt_context(&t, 1);
	cr_expect_eq(l->live[2], 1.0);
	cr_expect_eq(l->promoted, 1.0);
	cr_expect(l->flags & OS_LT_F_PROMOTION);
	os_lt_destroy(&t);

	nheld = 0;
	os_lt_init(&t);
	os_lt_born(&t, ASID, 0x1000, 2048, 1, 1.0, true, 0);
	hold(0x80000, 2048, OS_GEN_OLD);
	collect(&t, &mv, 1, false);
	collect(&t, NULL, 0, false); /* not moved, generation unknown: left young */
	os_lt_finish(&t, 0, NULL, NULL);
	l = os_lt_context(&t, 1);
	cr_expect_eq(l->ended[1], 1.0);
	cr_expect(!(l->flags & OS_LT_F_PROMOTION));
	os_lt_destroy(&t);
}

/* Lost moves or a concurrent collector: the heap's objects are not aged
 * (counted), never guessed. */
Test(lifetime, lost_moves_unaged)
{
	struct os_lt t;
	struct os_gc_report r = { .asid = ASID, .moves_lost = true };

	os_lt_init(&t);
	os_lt_born(&t, ASID, 0x1000, 2048, 1, 1.0, true, 0);
	os_lt_born(&t, ASID, 0x2000, 2048, 1, 1.0, true, 0);
	os_lt_collected(&t, &r, held, gen, NULL);
	os_lt_finish(&t, 0, NULL, NULL);
	cr_expect_eq(t.unaged, 2);
	cr_expect_eq(t.unjudged, 1);
	cr_expect_null(os_lt_context(&t, 1));
	os_lt_destroy(&t);
}

/* A survivor moving onto the place of another survivor that moves on in
 * the same collection keeps both. */
Test(lifetime, moves_swap_places)
{
	struct os_lt t;
	struct os_obj_move mv[2] = { { 0x1000, 0x2000, OS_GEN_YOUNG },
				     { 0x2000, 0x3000, OS_GEN_YOUNG } };

	nheld = 0;
	os_lt_init(&t);
	os_lt_born(&t, ASID, 0x1000, 0x800, 1, 1.0, true, 0);
	os_lt_born(&t, ASID, 0x2000, 0x800, 2, 1.0, true, 0);
	hold(0x2000, 0x800, OS_GEN_YOUNG);
	hold(0x3000, 0x800, OS_GEN_YOUNG);
	collect(&t, mv, 2, true);
	os_lt_finish(&t, 0, NULL, NULL);
	cr_expect_eq(os_lt_context(&t, 1)->live[1], 1.0);
	cr_expect_eq(os_lt_context(&t, 2)->live[1], 1.0);
	os_lt_destroy(&t);
}

/* The advice rules and their thresholds. */
Test(lifetime, advice_rules)
{
	struct os_lifetime l;
	struct os_lt_figures f;

	memset(&l, 0, sizeof(l));
	l.kind = OS_LT_MANAGED;
	l.live[5] = 95;
	l.ended[0] = 5;
	os_lt_figures(&l, &f);
	cr_expect_eq(f.advice, OS_LT_ADV_PRETENURE, "%s", f.why);
	cr_expect(strstr(f.why, "pretenure"));
	l.live[5] = 85;
	l.ended[0] = 15;
	os_lt_figures(&l, &f);
	cr_expect_eq(f.advice, OS_LT_ADV_NONE, "85%% is under the rule");
	memset(&l, 0, sizeof(l));
	l.kind = OS_LT_MANAGED;
	l.ended[0] = 999;
	os_lt_figures(&l, &f);
	cr_expect_eq(f.advice, OS_LT_ADV_NONE, "too few objects");
	l.ended[0] = 1000;
	os_lt_figures(&l, &f);
	cr_expect_eq(f.advice, OS_LT_ADV_DIES_YOUNG);
	cr_expect_eq(f.median_bin, 0);
}

/* Written, read back, merged (the same context twice sums, the peak is
 * the larger). */
Test(lifetime, section_round_trip_and_merge)
{
	struct os_profile *p = os_profile_new(), *q = NULL, *m = os_profile_new();
	struct os_context c = { .type = OS_NONE, .stack = OS_NONE };
	struct os_lifetime *l;
	char err[256], path[] = "/tmp/objscope-lt-XXXXXX";
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	close(fd);
	c.type = os_profile_string(p, "byte[]");
	os_profile_add_context(p, &c);
	c.type = os_profile_string(p, "native");
	os_profile_add_context(p, &c);
	l = os_profile_lifetime(p, 0);
	cr_assert_not_null(l);
	l->kind = OS_LT_MANAGED;
	l->flags = OS_LT_F_PROMOTION;
	l->ended[0] = 1234.5;
	l->live[3] = 7;
	l->live_bytes[3] = 7 * 4096;
	l->promoted = 7;
	l = os_profile_lifetime(p, 1);
	l->kind = OS_LT_NATIVE;
	l->peak_bytes = 1e6;
	l->peak_ns = 42;
	p->lt.collections = 9;
	p->lt.flags = OS_LTP_F_ATTACH;
	cr_assert_eq(os_profile_write(p, path, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(os_profile_read(path, &q, err, sizeof(err)), 0, "%s", err);
	unlink(path);
	cr_assert(q->analyses & OS_AN_LIFETIMES);
	cr_expect_eq(q->lt.collections, 9);
	cr_expect(q->lt.flags & OS_LTP_F_ATTACH);
	cr_assert_geq(q->lt.nctx, 2);
	cr_expect_eq(q->lt.ctx[0].kind, OS_LT_MANAGED);
	cr_expect_eq(q->lt.ctx[0].ended[0], 1234.5);
	cr_expect_eq(q->lt.ctx[0].live_bytes[3], 7 * 4096);
	cr_expect_eq(q->lt.ctx[0].promoted, 7);
	cr_expect_eq(q->lt.ctx[1].peak_bytes, 1e6);
	cr_expect_eq(q->lt.ctx[1].peak_ns, 42);
	cr_assert_eq(os_profile_merge(m, q), 0);
	cr_assert_eq(os_profile_merge(m, p), 0);
	cr_assert_eq(m->ncontexts, 2);
	cr_expect_eq(m->lt.ctx[0].ended[0], 2469);
	cr_expect_eq(m->lt.ctx[0].promoted, 14);
	cr_expect_eq(m->lt.ctx[1].peak_bytes, 1e6, "a peak is not summed");
	cr_expect_eq(m->lt.collections, 18);
	os_profile_free(p);
	os_profile_free(q);
	os_profile_free(m);
}

/* --lifetimes enables the observer. */
Test(lifetime, option_enables_observer)
{
	const struct os_observer_ops *ops[OS_OBS_MAX];
	struct os_opts o;
	size_t n;
	bool found = false;

	memset(&o, 0, sizeof(o));
	n = os_observers_enabled(&o, false, ops, OS_OBS_MAX);
	for (size_t i = 0; i < n; i++)
		cr_expect_neq(ops[i], &os_lifetime_observer);
	o.lifetimes = true;
	n = os_observers_enabled(&o, false, ops, OS_OBS_MAX);
	for (size_t i = 0; i < n; i++)
		found |= ops[i] == &os_lifetime_observer;
	cr_expect(found);
}

/* A move whose destination's generation was not known: moved again at
 * the next collection, it had been left young (HotSpot's age table counts
 * it at age 1); a young move counts at once. */
Test(lifetime, pending_young_resolved_by_next_move)
{
	struct os_lt t;
	struct os_obj_move a = { 0x1000, 0x2000, OS_GEN_UNKNOWN };
	struct os_obj_move b = { 0x2000, 0x3000, OS_GEN_YOUNG };

	nheld = 0;
	os_lt_init(&t);
	os_lt_born(&t, ASID, 0x1000, 0x800, 1, 1.0, true, 0);
	hold(0x3000, 0x800, OS_GEN_YOUNG);
	collect(&t, &a, 1, true);
	cr_expect_eq(t.survivor_bytes[1], 0, "not known yet");
	collect(&t, &b, 1, true);
	cr_expect_eq(t.survivor_bytes[1], 0x800, "age 1: left young by the first");
	cr_expect_eq(t.survivor_bytes[2], 0x800, "age 2: young at once");
	os_lt_finish(&t, 0, NULL, NULL);
	cr_expect_eq(os_lt_context(&t, 1)->live[2], 1.0);
	os_lt_destroy(&t);
}

/* An object born old (not moved: a humongous region) survives while its
 * memory is old heap; once the heap says it is free (a dead humongous
 * object reclaimed) it died, although the index still holds it. */
Test(lifetime, free_heap_is_death)
{
	struct os_lt t;

	nheld = 0;
	os_lt_init(&t);
	os_lt_born(&t, ASID, 0x100000, 0x80000, 1, 1.0, true, 0);
	hold(0x100000, 0x80000, OS_GEN_OLD_DIRECT);
	collect(&t, NULL, 0, true);
	held_gen[0] = OS_GEN_FREE;
	collect(&t, NULL, 0, true);
	os_lt_finish(&t, 0, NULL, NULL);
	cr_expect_eq(os_lt_context(&t, 1)->ended[1], 1.0, "died at age 1");
	cr_expect_eq(os_lt_context(&t, 1)->promoted, 0, "born old: not a promotion");
	os_lt_destroy(&t);
}

/* A young object that a collection leaves in place in a region it made old
 * (G1 full collections compact into the regions they collect) was
 * promoted by it. */
Test(lifetime, promoted_in_place)
{
	struct os_lt t;

	nheld = 0;
	os_lt_init(&t);
	os_lt_born(&t, ASID, 0x1000, 0x800, 1, 1.0, true, 0);
	hold(0x1000, 0x800, OS_GEN_OLD);
	collect(&t, NULL, 0, true);
	os_lt_finish(&t, 0, NULL, NULL);
	cr_expect_eq(os_lt_context(&t, 1)->live[1], 1.0);
	cr_expect_eq(os_lt_context(&t, 1)->promoted, 1.0);
	os_lt_destroy(&t);
}
