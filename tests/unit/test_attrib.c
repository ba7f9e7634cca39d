/* Tests of object attribution with synthetic events (attacher/core/attrib.h). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "attacher/core/attrib.h"
#include "attacher/core/slices.h"
#include "common/ring.h"
#include "tests/unit/unit_helpers.h"

#define PID 999999999u /* no such process: nothing is read from /proc */

static struct os_tasks tasks;
static struct os_attrib at;

static void setup(void)
{
	os_tasks_init(&tasks, NULL);
	cr_assert_eq(os_attrib_init(&at, &tasks), 0);
	/* an anonymous heap and a thread stack */
	os_tasks_mmap(&tasks, PID, 0x10000000, 0x1000000, 0, PROT_READ | PROT_WRITE, "//anon");
	os_tasks_mmap(&tasks, PID, 0x70000000, 0x100000, 0, PROT_READ | PROT_WRITE, "//anon");
}

static void teardown(void)
{
	os_attrib_destroy(&at);
	os_tasks_destroy(&tasks);
}

/* Feeds one ring event through prepare + apply, as the collector does. */
static void event(uint16_t type, uint64_t addr, uint64_t size, uint64_t aux, uint64_t site)
{
	ut_attrib_event(&at, PID, type, addr, size, aux, 0, site);
}

static void sample(uint64_t addr, uint64_t sp)
{
	struct os_aspace *as = os_tasks_aspace(&tasks, PID);
	uint64_t leaf = 0x400500;

	os_attrib_sample(&at, as->id, addr, sp, os_attrib_path(&at, as->id, &leaf, 1));
}

/* Samples charged to the context whose allocation site is `site`. */
static uint64_t samples_of(uint64_t site)
{
	for (uint32_t i = 0; i < at.nctx; i++) {
		uint64_t pcs[8];
		uint32_t asid, n = os_attrib_unpath(&at, at.ctx[i].node, pcs, 8, &asid);

		if (n && pcs[0] == site)
			return at.ctx[i].samples;
	}
	return 0;
}

TestSuite(attrib, .init = setup, .fini = teardown);

Test(attrib, sample_lands_on_the_enclosing_object)
{
	event(OS_EV_ALLOC, 0x10001000, 4096, 0, 0x400200);
	sample(0x10001000, 0x700ff000);        /* first byte */
	sample(0x10001fff, 0x700ff000);        /* last byte */
	sample(0x10002000, 0x700ff000);        /* one past: heap, not the object */
	cr_expect_eq(samples_of(0x400200), 2);
	cr_expect_eq(at.c.samples_attributed, 2);
	cr_expect_eq(at.c.samples_heap, 3);
}

Test(attrib, reused_address_goes_to_the_new_object)
{
	event(OS_EV_ALLOC, 0x10001000, 4096, 0, 0x400200);
	sample(0x10001800, 0);
	event(OS_EV_FREE, 0x10001000, 0, 0, 0);
	sample(0x10001800, 0);                 /* freed: heap, unattributed */
	event(OS_EV_ALLOC, 0x10001000, 8192, 0, 0x400300);
	sample(0x10001800, 0);
	cr_expect_eq(samples_of(0x400200), 1);
	cr_expect_eq(samples_of(0x400300), 1);
	cr_expect_eq(at.c.frees, 1);
	cr_expect_eq(at.c.samples_heap, 3);
}

Test(attrib, realloc_moves_and_munmap_kills)
{
	event(OS_EV_ALLOC, 0x10001000, 2048, 0, 0x400200);
	event(OS_EV_REALLOC, 0x10100000, 65536, 0x10001000, 0x400400);
	sample(0x10001100, 0);                 /* old place: no object */
	sample(0x10108000, 0);
	cr_expect_eq(samples_of(0x400400), 1);
	cr_expect_eq(samples_of(0x400200), 0);
	event(OS_EV_MMAP, 0x10400000, 1 << 20, 0, 0x400600);
	sample(0x10480000, 0);
	event(OS_EV_MUNMAP, 0x10400000, 1 << 20, 0, 0);
	sample(0x10480000, 0);
	cr_expect_eq(samples_of(0x400600), 1);
	cr_expect_eq(at.c.samples_attributed, 2);
}

Test(attrib, own_stack_is_not_heap)
{
	sample(0x700fff00, 0x700ff000);        /* same mapping as sp: the thread's stack */
	sample(0x20000000, 0x700ff000);        /* not mapped at all */
	cr_expect_eq(at.c.samples_heap, 0);
	sample(0x10800000, 0x700ff000);        /* anonymous heap without an object */
	cr_expect_eq(at.c.samples_heap, 1);
	cr_expect_eq(at.c.samples_attributed, 0);
}

Test(attrib, same_site_same_context_different_sites_differ)
{
	event(OS_EV_ALLOC, 0x10001000, 4096, 0, 0x400200);
	event(OS_EV_ALLOC, 0x10003000, 4096, 0, 0x400200);
	event(OS_EV_ALLOC, 0x10005000, 4096, 0, 0x400208);
	cr_expect_eq(at.nctx, 2);
	for (uint32_t i = 0; i < at.nctx; i++)
		cr_expect(at.ctx[i].allocations == 2 || at.ctx[i].allocations == 1);
}

Test(attrib, value_encoding)
{
	cr_expect_eq(os_val_make(7, OS_W_ONE), 7, "weight 1 keeps the bare context index");
	cr_expect_eq(os_val_make(7, 0), 7);
	cr_expect_eq(os_val_ctx(os_val_make(7, 5 * OS_W_ONE / 2)), 7);
	cr_expect_eq(os_val_wq(7), OS_W_ONE);
	cr_expect_float_eq(os_val_weight(os_val_make(7, 5 * OS_W_ONE / 2)), 2.5, 1e-12);
	cr_expect_eq(os_val_wq(os_val_make(1, 1ULL << 40)), OS_W_MAX, "capped");
}

/* Objects carry their weight in the interval value: samples add it to the
 * estimates of their context and access path; an mremap carries it. */
Test(attrib, weighted_objects_estimates)
{
	struct os_aspace *as = os_tasks_aspace(&tasks, PID);
	uint32_t ci;

	event(OS_EV_ALLOC, 0x10001000, 4096, 0, 0x400200);  /* weight 1 */
	event(OS_EV_MMAP, 0x10400000, 1 << 20, 0, 0x400600);
	cr_assert_eq(at.nctx, 2);
	ci = os_val_ctx(1);
	/* re-weigh the mapping as a runtime adapter would: 2.5 */
	os_iv_remove(as->objects, 0x10400000, NULL, NULL);
	os_iv_insert(as->objects, 0x10400000, 0x10500000, os_val_make(ci, 5 * OS_W_ONE / 2));
	sample(0x10001100, 0);
	sample(0x10480000, 0);
	sample(0x10480008, 0);
	event(OS_EV_MREMAP, 0x10800000, 1 << 20, 0x10400000, 0);
	sample(0x10880000, 0);
	cr_expect_eq(at.ctx[0].samples, 1);
	cr_expect_float_eq(at.ctx[0].est_samples, 1.0, 1e-12);
	cr_expect_eq(at.ctx[1].samples, 3);
	cr_expect_float_eq(at.ctx[1].est_samples, 7.5, 1e-12, "%f", at.ctx[1].est_samples);
	cr_expect_float_eq(at.est_attributed, 8.5, 1e-12);
	cr_expect_float_eq(at.est_java_attributed, 0, 1e-12, "no managed heap here");
	cr_assert_eq(at.nacc, 2, "one access path per context");
	for (uint32_t i = 0; i < at.nacc; i++)
		cr_expect_float_eq(at.acc[i].est_samples, at.acc[i].ctx == 1 ? 7.5 : 1.0, 1e-12);
	cr_expect_float_eq(at.ctx[0].est_allocations, 1.0, 1e-12, "native: counts");
	cr_expect_float_eq(at.ctx[0].est_bytes, 4096.0, 1e-12);
}

/* The preload announces a thread with the name it had when it first used
 * its ring (often the launcher's "java", before the JVM names it); the
 * kernel's COMM record has the later name. The collector reads the two in
 * different orders: the later name must win either way. */
static void announce(uint32_t tid, const char *name, uint64_t time)
{
	uint64_t buf[8];
	struct os_event *ev = (struct os_event *)buf;
	struct os_obj_event oe;
	size_t n = strlen(name);

	memset(buf, 0, sizeof(buf));
	ev->type = OS_EV_THREAD;
	ev->pid = PID;
	ev->tid = tid;
	ev->time = time;
	ev->size = n;
	ev->nframes = (uint16_t)((n + 7) / 8);
	memcpy(ev->frames, name, n);
	ev->len = os_event_len(ev->nframes);
	cr_assert_not(os_attrib_prepare(&at, ev, &oe));
}

Test(attrib, thread_name_of_the_later_time_wins)
{
	/* COMM (time 200) applied before the older announcement (time 100) */
	os_tasks_thread_named(&tasks, PID, 1001, "C2 CompilerThre", 200);
	announce(1001, "java", 100);
	cr_assert_str_eq(os_tasks_thread(&tasks, PID, 1001, NULL)->name, "C2 CompilerThre");
	/* the other order */
	announce(1002, "java", 100);
	os_tasks_thread_named(&tasks, PID, 1002, "GC Thread#0", 200);
	cr_assert_str_eq(os_tasks_thread(&tasks, PID, 1002, NULL)->name, "GC Thread#0");
	/* a later rename still applies; an undated name (attach: /proc) is
	 * replaced by any dated one */
	os_tasks_thread_named(&tasks, PID, 1001, "renamed", 300);
	cr_assert_str_eq(os_tasks_thread(&tasks, PID, 1001, NULL)->name, "renamed");
	os_tasks_thread(&tasks, PID, 1003, "from-proc");
	announce(1003, "worker", 50);
	cr_assert_str_eq(os_tasks_thread(&tasks, PID, 1003, NULL)->name, "worker");
}

/* One sample charged to the attribution, then counted in the slices as
 * the collector's slices observer does (attacher/core/slices.h). */
static void sample_at(struct os_slices *sl, uint32_t asid, uint64_t addr, uint32_t node,
		      uint32_t tid, uint64_t since_ns)
{
	uint32_t acc, ci = os_attrib_charge(&at, asid, addr, 0x70001000, node, &acc);

	os_slices_count(sl, ci, acc, PID, tid, since_ns);
}

/* Samples by thread and time (OS_SEC_SLICES): one per (path, thread,
 * 100 ms bucket), samples without an attribution in none; past
 * OS_SLICE_CAP the buckets double in width and no count is lost. */
Test(attrib, slices_count_by_thread_and_bucket_and_stay_bounded, .timeout = 60)
{
	struct os_aspace *as;
	struct os_slices sl;
	uint64_t leaf = 0x400500, sum = 0;
	uint32_t node, acc;

	os_slices_init(&sl);
	event(OS_EV_ALLOC, 0x10001000, 4096, 0, 0x400200);
	as = os_tasks_aspace(&tasks, PID);
	node = os_attrib_path(&at, as->id, &leaf, 1);
	sample_at(&sl, as->id, 0x10001010, node, 7, 50000000);  /* b 0 */
	sample_at(&sl, as->id, 0x10001020, node, 7, 90000000);  /* b 0 */
	sample_at(&sl, as->id, 0x10001020, node, 8, 90000000);  /* b 0 */
	sample_at(&sl, as->id, 0x10001020, node, 7, 250000000); /* b 2 */
	sample_at(&sl, as->id, 0x10005000, node, 7, 250000000); /* none */
	cr_assert_eq(sl.nslices, 3);
	cr_assert_eq(sl.slices[0].samples, 2);
	cr_assert_eq(sl.slices[0].entry, 0, "access entry 0");
	cr_assert_eq(sl.tb[sl.slices[2].tb] & (OS_SLICE_BUCKETS - 1), 2);
	cr_assert_eq((sl.tb[sl.slices[1].tb] >> 20) & 0x3fffff, 8);
	cr_assert_eq((sl.tb[sl.slices[1].tb] >> 42), PID & 0x3fffff);
	cr_assert_eq(at.ctx[0].samples, 4);
	/* charged: the context and the access entry; not attributed: OS_NONE */
	cr_assert_eq(os_attrib_charge(&at, as->id, 0x10001010, 0x70001000, OS_CCT_NONE, &acc), 0);
	cr_assert_eq(acc, OS_NONE);
	cr_assert_eq(os_attrib_charge(&at, as->id, 0x10005000, 0x70001000, node, &acc), OS_NONE);
	cr_assert_eq(acc, OS_NONE);
	os_slices_count(&sl, 0, OS_NONE, PID, 7, 0); /* ... counted by context */
	cr_assert_eq(sl.nslices, 4);
	cr_assert_eq(sl.slices[3].entry, OS_SLICE_CTX | 0);

	/* 64 threads x 40000 buckets: the cap is reached, buckets widen */
	for (uint32_t b = 0; b < 40000; b++)
		for (uint32_t t = 100; t < 164; t++)
			sample_at(&sl, as->id, 0x10001010, node, t, (uint64_t)b * 100000000 + 1000);
	cr_assert_eq(sl.k, 2);
	cr_assert(!sl.off);
	cr_assert_leq(sl.nslices, 64 * 20000 + 4);
	for (uint32_t i = 0; i < sl.nslices; i++)
		sum += sl.slices[i].samples;
	cr_assert_eq(sum, 5 + 64 * 40000, "no sample lost by widening");
	cr_assert_eq(sl.lost, 0);
	os_slices_destroy(&sl);
}

/* A runtime whose managed heap is [0x10400000, 0x10800000). */
static bool heap_only_in(struct os_runtime *rt, uint32_t asid, uint64_t addr)
{
	(void)rt;
	(void)asid;
	return addr >= 0x10400000 && addr < 0x10800000;
}

/* The heap is not an object: the mappings a managed heap is
 * made of are not tracked, so a heap sample that no runtime object holds is
 * counted as a managed-heap sample and charged to no mapping; a mapping
 * outside the heap is an object as before. */
Test(attrib, managed_heap_mappings_are_no_objects)
{
	static const struct os_runtime_ops ops = { .name = "heapy", .in_heap = heap_only_in };
	struct os_runtime rt = { .ops = &ops };

	at.rt = &rt;
	event(OS_EV_MMAP, 0x10400000, 0x200000, 0, 0x400200);   /* a commit of the heap */
	event(OS_EV_MMAP, 0x103f0000, 0x20000, 0, 0x400210);    /* straddles its start */
	event(OS_EV_MMAP, 0x10900000, 0x100000, 0, 0x400300);   /* not the heap */
	sample(0x10500000, 0x70080000);
	sample(0x103f8000, 0x70080000);
	sample(0x10900100, 0x70080000);
	cr_assert_eq(samples_of(0x400200), 0, "a heap mapping took a sample");
	cr_assert_eq(samples_of(0x400210), 0, "a mapping reaching into the heap took a sample");
	cr_assert_eq(samples_of(0x400300), 1);
	cr_assert_eq(at.c.samples_java_heap, 1, "the heap sample is counted as one");
	cr_assert_eq(at.c.samples_java_attributed, 0);
	cr_assert_eq(at.c.samples_attributed, 1);
	at.rt = NULL;
}

/* Samples under the overhead budget carry a time weight (1 / the sampled
 * share of their interval): a stretch sampled a quarter of the time counts
 * as much as one sampled in full. The estimates carry the weight, the
 * counts stay raw, and the normalization scales the estimates to the count
 * of attributed samples, repeatably (samples after it keep one scale). */
Test(attrib, time_weighted_samples)
{
	double sum = 0;

	event(OS_EV_ALLOC, 0x10001000, 4096, 0, 0x400200); /* site A */
	event(OS_EV_ALLOC, 0x10100000, 4096, 0, 0x400300); /* site B */
	cr_assert_eq(at.nctx, 2);
	/* A: 4 samples in full; B: 1 sample in a stretch sampled 1/4 */
	for (int i = 0; i < 4; i++)
		sample(0x10001100, 0);
	at.tw = 4;
	sample(0x10100100, 0);
	at.tw = 1;
	cr_expect_eq(at.ctx[0].samples, 4);
	cr_expect_eq(at.ctx[1].samples, 1, "counts stay raw");
	cr_assert(at.time_weighted);
	cr_expect_float_eq(at.ctx[1].tsamples, 4.0, 1e-12);
	cr_expect_float_eq(at.ctx[1].est_samples, 4.0, 1e-12);
	os_attrib_time_normalize(&at);
	cr_assert(at.weighted, "the profile has estimates");
	/* scaled by 5 / 8: A and B have one share each, summing to the count */
	cr_expect_float_eq(at.ctx[0].est_samples, 2.5, 1e-12);
	cr_expect_float_eq(at.ctx[1].est_samples, 2.5, 1e-12);
	cr_expect_float_eq(at.ctx[1].tsamples, 2.5, 1e-12);
	cr_expect_float_eq(at.est_attributed, 5.0, 1e-12);
	for (uint32_t i = 0; i < at.nacc; i++)
		sum += at.acc[i].est_samples;
	cr_expect_float_eq(sum, 5.0, 1e-12, "the access paths carry the weights too");
	/* a later sample in full and a second build: one scale */
	sample(0x10001100, 0);
	os_attrib_time_normalize(&at);
	cr_expect_float_eq(at.est_attributed, 6.0, 1e-9);
	cr_expect_float_eq(at.ctx[0].est_samples + at.ctx[1].est_samples, 6.0, 1e-9);
	cr_expect_float_eq(at.ctx[0].est_samples / at.ctx[1].est_samples, 5.0 / 4.0, 1e-9,
			   "A: 5 samples in full, B: 1 standing for 4");
}

/* How settled the answer is (os_attrib_top_se, the overhead budget's
 * settled answers): the largest standard error of a top context's share,
 * p(1 - p) / n with samples of one weight; the same estimate from fewer
 * samples of a larger time weight has the larger error; the normalization
 * leaves it alone. */
Test(attrib, top_share_standard_error)
{
	double top, se;

	cr_assert(isnan(os_attrib_top_se(&at, 10, &top)), "no sample yet");
	cr_assert(isnan(top));
	event(OS_EV_ALLOC, 0x10001000, 4096, 0, 0x400200); /* site A */
	event(OS_EV_ALLOC, 0x10100000, 4096, 0, 0x400300); /* site B */
	for (int i = 0; i < 300; i++)
		sample(0x10001100, 0);
	for (int i = 0; i < 600; i++)
		sample(0x10100100, 0);
	se = os_attrib_top_se(&at, 10, &top);
	cr_expect_float_eq(top, 2.0 / 3, 1e-12);
	/* both shares: sqrt((1/3)(2/3) / 900) */
	cr_expect_float_eq(se, sqrt(2.0 / 9 / 900), 1e-9, "se %.6f", se);
	/* k = 1: B alone, the same error for a two-way split */
	cr_expect_float_eq(os_attrib_top_se(&at, 1, NULL), se, 1e-9);
	os_attrib_time_normalize(&at);
	cr_expect_float_eq(os_attrib_top_se(&at, 10, NULL), se, 1e-9, "normalization moved it");
}

/* The settled rule's second way (os_attrib_top_settle): the top figures'
 * 90% intervals apart, each from the next. 600 against 300 samples: apart
 * (600 - 1.645 x 24.5 > 300 + 1.645 x 17.3); 310 against 300: not. */
Test(attrib, top_figures_apart)
{
	bool apart = true;

	event(OS_EV_ALLOC, 0x10001000, 4096, 0, 0x400200); /* site A */
	event(OS_EV_ALLOC, 0x10100000, 4096, 0, 0x400300); /* site B */
	event(OS_EV_ALLOC, 0x10200000, 4096, 0, 0x400400); /* site C */
	for (int i = 0; i < 300; i++)
		sample(0x10001100, 0);
	os_attrib_top_settle(&at, 10, 3, NULL, &apart);
	cr_expect_not(apart, "one figure: no ranking to tell apart");
	for (int i = 0; i < 600; i++)
		sample(0x10100100, 0);
	os_attrib_top_settle(&at, 10, 3, NULL, &apart);
	cr_expect(apart, "600 against 300");
	for (int i = 0; i < 310; i++)
		sample(0x10200100, 0);
	os_attrib_top_settle(&at, 10, 3, NULL, &apart);
	cr_expect_not(apart, "310 against 300");
	os_attrib_top_settle(&at, 10, 1, NULL, &apart);
	cr_expect(apart, "the first apart from the next is enough for apart_k 1");
}

Test(attrib, top_share_error_of_weighted_samples)
{
	double se_w;

	event(OS_EV_ALLOC, 0x10001000, 4096, 0, 0x400200); /* site A */
	event(OS_EV_ALLOC, 0x10100000, 4096, 0, 0x400300); /* site B */
	/* A: 75 samples from stretches sampled a quarter of the time: the same
	 * estimate (a third) as 300 in full, from a quarter of the samples */
	at.tw = 4;
	for (int i = 0; i < 75; i++)
		sample(0x10001100, 0);
	at.tw = 1;
	for (int i = 0; i < 600; i++)
		sample(0x10100100, 0);
	se_w = os_attrib_top_se(&at, 10, NULL);
	/* (Q_A (1 - 2p) + p^2 Q) / W^2 with Q_A = 1200, Q = 1800, W = 900 */
	cr_expect_float_eq(se_w, sqrt((1200.0 / 3 + 1800.0 / 9) / 810000), 1e-9, "se %.6f", se_w);
	cr_expect_gt(se_w, sqrt(2.0 / 9 / 900) * 1.5, "fewer samples, same error");
}

/* A block of a JIT compiler thread (shm.h os_slot.quiet): path OS_QUIET_WORD. */
static void quiet_event(uint16_t type, uint64_t addr, uint64_t size)
{
	uint64_t buf[64];
	struct os_event *ev = (struct os_event *)buf;
	struct os_obj_event oe;

	memset(buf, 0, sizeof(buf));
	ev->type = type;
	ev->pid = PID;
	ev->tid = PID + 1;
	ev->addr = addr;
	ev->size = size;
	ev->nframes = 1;
	ev->frames[0] = OS_QUIET_WORD;
	ev->len = os_event_len(ev->nframes);
	if (os_attrib_prepare(&at, ev, &oe))
		os_attrib_event(&at, &oe);
}

/* Memory is charged to what holds it: a compiler thread's commit inside a
 * runtime's reservation (code cache, metaspace) is the reservation's, also
 * after another thread's commit cut the reservation; a compiler thread's
 * block elsewhere stays the pseudo-object; and the managed heap never goes
 * to it, even when a stale compiler-thread mapping lies there. */
Test(attrib, compiler_thread_commits_are_charged_to_their_range)
{
	static const struct os_runtime_ops ops = { .name = "heapy", .in_heap = heap_only_in };
	struct os_runtime rt = { .ops = &ops };
	uint64_t quiet = 0;

	event(OS_EV_MMAP, 0x10000000, 0x100000, 0, 0x400400);  /* a reservation */
	event(OS_EV_MMAP, 0x10010000, 0x10000, 0, 0x400410);   /* another thread's commit */
	quiet_event(OS_EV_MMAP, 0x10040000, 0x10000);           /* the compiler's commit */
	quiet_event(OS_EV_MMAP, 0x10200000, 0x10000);           /* a mapping of its own */
	quiet_event(OS_EV_ALLOC, 0x10300000, 0x1000);           /* a block of its own */
	sample(0x10040100, 0x70080000);
	sample(0x10048000, 0x70080000);
	sample(0x10010100, 0x70080000);
	sample(0x10080000, 0x70080000); /* the reservation beyond both commits */
	sample(0x10200100, 0x70080000);
	sample(0x10300100, 0x70080000);
	cr_assert_eq(samples_of(0x400400), 3, "the commit and the reservation's rest");
	cr_assert_eq(samples_of(0x400410), 1);
	for (uint32_t i = 0; i < at.nctx; i++)
		if (at.ctx[i].quiet)
			quiet += at.ctx[i].samples;
	cr_assert_eq(quiet, 2, "the compiler's own mapping and block");
	cr_assert_eq(at.quiet_blocks, 3);
	cr_assert_eq(at.quiet_commits, 1);

	/* a compiler-thread mapping over what later is the managed heap */
	quiet_event(OS_EV_MMAP, 0x10400000, 0x10000);
	at.rt = &rt;
	sample(0x10400100, 0x70080000);
	at.rt = NULL;
	quiet = 0;
	for (uint32_t i = 0; i < at.nctx; i++)
		if (at.ctx[i].quiet)
			quiet += at.ctx[i].samples;
	cr_assert_eq(quiet, 2, "a managed-heap sample went to the compiler threads");
	cr_assert_eq(at.c.samples_java_heap, 1);
	cr_assert_eq(at.c.samples_java_attributed, 0);
}

/* Attach mode: a heap sample that no seen block holds is charged to the
 * born-before-attach context, whose bytes are the mappings holding such
 * samples, each counted once; a seen block keeps its own; a process a
 * runtime knows keeps them unattributed (its adapter's to name). */
static int knows_every_process(struct os_runtime *rt, uint32_t pid, const char *name)
{
	(void)rt;
	(void)pid;
	(void)name;
	return 0;
}

Test(attrib, heap_samples_born_before_attach_get_a_row)
{
	static const struct os_runtime_ops ops = { .name = "jvmish",
						   .thread_kind = knows_every_process };
	struct os_runtime rt = { .ops = &ops };
	uint64_t w = OS_BEFORE_WORD;
	struct os_aspace *as = os_tasks_aspace(&tasks, PID);
	uint32_t ci;

	at.before_attach = true;
	event(OS_EV_ALLOC, 0x10000100, 0x1000, 0, 0x400500);
	sample(0x10000200, 0x70080000);                         /* the seen block */
	sample(0x10800000, 0x70080000);                         /* born before */
	sample(0x10900000, 0x70080000);                         /* same mapping */
	sample(0x70000100, 0x70080000);                         /* the own stack: no heap */
	cr_assert_eq(samples_of(0x400500), 1);
	ci = os_attrib_context(&at, as->id, os_attrib_path(&at, as->id, &w, 1));
	cr_assert_eq(at.ctx[ci].samples, 2);
	cr_assert_eq(at.ctx[ci].bytes, 0x1000000, "the mapping's size, once");
	cr_assert_eq(at.ctx[ci].allocations, 1);
	cr_assert_eq(at.before_samples, 2);
	cr_assert_eq(at.before_nmaps, 1);
	at.rt = &rt;
	sample(0x10a00000, 0x70080000);
	at.rt = NULL;
	cr_assert_eq(at.ctx[ci].samples, 2, "a runtime's process took the native row");
	cr_assert_eq(at.c.samples_attributed, 3);
	cr_assert_eq(at.c.samples_heap, 4);
}
