/* test_hotspot.c - the collector's HotSpot adapter with synthetic input:
 * names, weights, batch moves, dead-object removal through a fake memory
 * reader, vmStructs tables built in this process and read back with
 * process_vm_readv, and the whole event flow through os_attrib. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "attacher/core/attrib.h"
#define REPORT_Z90_UNIT 1.6448536269514722 /* a 90% interval, as report/view.h */
#include "runtimes/hotspot/hotspot.h"
#include "runtimes/hotspot/hotspot_gc.h"
#include "runtimes/hotspot/hotspot_int.h"
#include "runtimes/hotspot/hotspot_vm.h"
#include "runtimes/hotspot/hs_tlab.h"

static void check_class(const char *in, const char *want)
{
	char buf[128];

	os_hs_java_class(in, buf, sizeof(buf));
	cr_expect_str_eq(buf, want, "%s -> %s, want %s", in, buf, want);
}

Test(hotspot, class_names)
{
	check_class("[B", "byte[]");
	check_class("[[I", "int[][]");
	check_class("[J", "long[]");
	check_class("[Z", "boolean[]");
	check_class("Ljava/lang/String;", "java.lang.String");
	check_class("java/lang/String", "java.lang.String");
	check_class("[Ljava/lang/Object;", "java.lang.Object[]");
	check_class("[[Ljava/util/HashMap$Node;", "java.util.HashMap$Node[][]");
	check_class("Foo", "Foo");
}

Test(hotspot, class_name_truncated)
{
	char buf[6];

	os_hs_java_class("[Ljava/lang/Object;", buf, sizeof(buf));
	cr_expect_str_eq(buf, "java.");
}

static void check_jit(const char *in, const char *want)
{
	char buf[256];

	os_hs_jit_name(in, buf, sizeof(buf));
	cr_expect_str_eq(buf, want, "'%s' -> '%s', want '%s'", in, buf, want);
}

Test(hotspot, jit_names)
{
	check_jit("java.lang.Object java.util.HashMap.get(java.lang.Object)", "java.util.HashMap.get");
	check_jit("void Fixture.main(java.lang.String[])", "Fixture.main");
	check_jit("void java.util.HashMap$Node.<init>(int, java.lang.Object, java.lang.Object, "
		  "java.util.HashMap$Node)",
		  "java.util.HashMap$Node.<init>");
	check_jit("java.util.HashMap::get", "java.util.HashMap.get");
	check_jit("Lfoo/Bar;::baz", "foo.Bar.baz");
	check_jit("Interpreter", "Interpreter");
	check_jit("I2C/C2I adapters", "I2C/C2I adapters");
	check_jit("unwind_exception Runtime1 stub", "unwind_exception Runtime1 stub");
	check_jit("StubRoutines (1)", "StubRoutines (1)");
}

Test(hotspot, thread_kinds)
{
	cr_expect_eq(os_hs_thread_kind("GC Thread#0"), OS_THR_GC);
	cr_expect_eq(os_hs_thread_kind("G1 Conc#0"), OS_THR_GC);
	cr_expect_eq(os_hs_thread_kind("G1 Main Marker"), OS_THR_GC);
	cr_expect_eq(os_hs_thread_kind("ZWorker#1"), OS_THR_GC);
	cr_expect_eq(os_hs_thread_kind("VM Thread"), OS_THR_VM);
	cr_expect_eq(os_hs_thread_kind("VM Periodic Tas"), OS_THR_VM);
	cr_expect_eq(os_hs_thread_kind("Reference Handl"), OS_THR_VM);
	cr_expect_eq(os_hs_thread_kind("Common-Cleaner"), OS_THR_VM);
	cr_expect_eq(os_hs_thread_kind("Signal Dispatch"), OS_THR_VM);
	cr_expect_eq(os_hs_thread_kind("C2 CompilerThre"), OS_THR_JIT);
	cr_expect_eq(os_hs_thread_kind("C1 CompilerThread0"), OS_THR_JIT);
	cr_expect_eq(os_hs_thread_kind("java"), OS_THR_JAVA);
	cr_expect_eq(os_hs_thread_kind("worker-3"), OS_THR_JAVA);
}

/* Hybrid mode with TLAB lengths drawn from [T/2, 3T/2) (OS_JVM_F_TLAB_DITHER):
 * P(seen) = s/T up to T/2, (3Ts - s^2 - T^2/4) / (2T^2) up to 3T/2, then 1. */
Test(hotspot, weights_with_random_tlab_sizes)
{
	struct os_jvm_info info = { .mode = OS_JVM_MODE_HYBRID, .tlab_bytes = 16384,
				    .flags = OS_JVM_F_TLAB_DITHER };
	double w;

	cr_expect_eq(os_hs_weight_jvm(&info, 20480, 4096), 4 * OS_W_ONE);
	cr_expect_eq(os_hs_weight_jvm(&info, 16384, 8192), 2 * OS_W_ONE);
	/* outside any TLAB (refill bytes 0): hybrid mode's refill waste
	 * fraction of 1 keeps no rest, so it is there because the heap gave
	 * no TLAB (G1 at a region's end), and every such object is seen */
	cr_expect_eq(os_hs_weight_jvm(&info, 0, 4096), OS_W_ONE);
	cr_expect_eq(os_hs_weight_jvm(&info, 0, 40), OS_W_ONE);
	/* a thinned event below min-size (hotspot_abi.h OS_HS_THIN_BIT) was
	 * kept with probability 1 / OS_HS_SMALL_THIN besides */
	cr_expect_eq(os_hs_weight_jvm(&info, 16384 | OS_HS_THIN_BIT, 512),
		     32 * OS_HS_SMALL_THIN * OS_W_ONE);
	cr_expect_eq(os_hs_weight_jvm(&info, 12288 | OS_HS_THIN_BIT, 4096),
		     4 * OS_HS_SMALL_THIN * OS_W_ONE);
	/* s = T: P = (3 - 1 - 1/4) / 2 = 0.875 */
	w = (double)os_hs_weight_jvm(&info, 32768, 16384) / OS_W_ONE;
	cr_expect(w > 1.1428 && w < 1.1430, "weight at s = T: %f, want 1/0.875", w);
	/* continuous at 3T/2 and 1 beyond it */
	w = (double)os_hs_weight_jvm(&info, 40000, 24575) / OS_W_ONE;
	cr_expect(w >= 1.0 && w < 1.001, "weight just below 3T/2: %f", w);
	cr_expect_eq(os_hs_weight_jvm(&info, 40000, 24576), OS_W_ONE);
	cr_expect_eq(os_hs_weight_jvm(&info, 0, 1 << 20), OS_W_ONE);
	/* without the flag: the fixed-TLAB weight T / s (1 from T on) */
	info.flags = 0;
	cr_expect_eq(os_hs_weight_jvm(&info, 32768, 16384), OS_W_ONE);
	cr_expect_eq(os_hs_weight_jvm(&info, 20480, 4096), 4 * OS_W_ONE);
	cr_expect_eq(os_hs_weight_jvm(&info, 0, 4096), OS_W_ONE);
	/* other modes are not affected by the flag */
	info.flags = OS_JVM_F_TLAB_DITHER;
	info.mode = OS_JVM_MODE_EXACT;
	cr_expect_eq(os_hs_weight_jvm(&info, 20480, 4096), OS_W_ONE);
	/* a focus (OS_HS_FOCUS_BIT: the TLAB that ended was drawn around
	 * OS_HS_FOCUS_TLAB): weighed by that size, with or without thinning;
	 * never above T (a JVM whose T is smaller keeps its own) */
	info.mode = OS_JVM_MODE_HYBRID;
	cr_expect_eq(os_hs_weight_jvm(&info, 5000 | OS_HS_FOCUS_BIT, 64),
		     OS_HS_FOCUS_TLAB / 64 * OS_W_ONE);
	cr_expect_eq(os_hs_weight_jvm(&info, 5000 | OS_HS_FOCUS_BIT | OS_HS_THIN_BIT, 64),
		     OS_HS_FOCUS_TLAB / 64 * OS_HS_SMALL_THIN * OS_W_ONE);
	cr_expect_eq(os_hs_weight_jvm(&info, 0 | OS_HS_FOCUS_BIT, 64), OS_W_ONE, "outside TLABs");
	info.tlab_bytes = 2048;
	cr_expect_eq(os_hs_weight_jvm(&info, 5000 | OS_HS_FOCUS_BIT, 64), 32 * OS_W_ONE);
}

/* The next TLAB's free size (hs_tlab.h): uniform over [T/2, 3T/2) words,
 * shifted by the thread's correction (held within +-T/4), and never below
 * the JVM's MinTLABSize. Below it HotSpot made no TLAB again for the thread
 * and every later allocation went outside TLABs, unsampled (CI: T = 4 KiB,
 * MinTLABSize 2 KiB, a correction of a few words above zero). */
Test(hotspot, next_tlab_size_stays_above_min_tlab)
{
	const uint64_t lo = 4096 / 16, span = 4096 / 8, floor = 2048 / 8; /* words */
	uint64_t min = UINT64_MAX, max = 0, sum = 0, n = 0;

	/* no correction: the draw itself, lo + draw mod span */
	cr_expect_eq(os_hs_tlab_next(0, lo, span, 0, floor), 256);
	cr_expect_eq(os_hs_tlab_next(511, lo, span, 0, floor), 767);
	cr_expect_eq(os_hs_tlab_next(512 + 17, lo, span, 0, floor), 273);
	/* a correction moves it, held within +-span/4 */
	cr_expect_eq(os_hs_tlab_next(300, lo, span, -10, floor), 566);
	cr_expect_eq(os_hs_tlab_next(300, lo, span, 10000, floor), 428);
	cr_expect_eq(os_hs_tlab_next(300, lo, span, -10000, floor), 684);
	/* the failing case: the lowest draws less a positive correction went
	 * below MinTLABSize (256 words), now held at it */
	cr_expect_eq(os_hs_tlab_next(0, lo, span, 7, floor), floor);
	cr_expect_eq(os_hs_tlab_next(3, lo, span, 128, floor), floor);
	cr_expect_eq(os_hs_tlab_next(200, lo, span, 128, floor), 328);
	/* at the default T = 32 KiB the floor is far below T/4: untouched */
	cr_expect_eq(os_hs_tlab_next(0, 32768 / 16, 32768 / 8, 1 << 20, floor), 1024);
	/* a JVM run with a larger MinTLABSize (here 3 KiB) holds every draw
	 * at or above it */
	for (uint64_t x = 0; x < 4 * span; x += 3) {
		for (int64_t c = -200; c <= 200; c += 50) {
			uint64_t d = os_hs_tlab_next(x * 2654435761u, lo, span, c, 384);

			min = d < min ? d : min;
			max = d > max ? d : max;
			sum += d;
			n++;
		}
	}
	cr_expect_eq(min, 384, "smallest D %llu words, want the floor 384",
		     (unsigned long long)min);
	cr_expect_lt(max, lo + span + span / 4, "largest D %llu words", (unsigned long long)max);
	cr_expect(sum / n > 384 && sum / n < lo + span, "mean D %llu words", (unsigned long long)(sum / n));
	/* no span (no T known): lo, or the floor */
	cr_expect_eq(os_hs_tlab_next(5, 100, 0, 0, floor), floor);
	cr_expect_eq(os_hs_tlab_next(5, 300, 0, 0, floor), 300);
}

Test(hotspot, weights_and_zgc_mask)
{
	/* fixed point: OS_W_ONE == 1.0 */
	cr_expect_eq(os_hs_weight(OS_JVM_MODE_EXACT, 16384, 300000, 3000), OS_W_ONE);
	cr_expect_eq(os_hs_weight(OS_JVM_MODE_SAMPLED, 0, 300000, 3000), 100 * OS_W_ONE);
	cr_expect_eq(os_hs_weight(OS_JVM_MODE_SAMPLED, 0, 0, 3000), OS_W_ONE); /* outside a TLAB */
	cr_expect_eq(os_hs_weight(OS_JVM_MODE_SAMPLED, 0, 1000, 3000), OS_W_ONE); /* never below 1 */
	cr_expect_eq(os_hs_weight(OS_JVM_MODE_SAMPLED, 0, 16384, 4096), 4 * OS_W_ONE);
	/* hybrid: T / size for refills, 1 outside a TLAB (seen for sure) */
	cr_expect_eq(os_hs_weight(OS_JVM_MODE_HYBRID, 16384, 16384, 4096), 4 * OS_W_ONE);
	cr_expect_eq(os_hs_weight(OS_JVM_MODE_HYBRID, 16384, 0, 4096), OS_W_ONE); /* outside */
	cr_expect_eq(os_hs_weight(OS_JVM_MODE_HYBRID, 16384, 16384, 16384), OS_W_ONE); /* >= T: seen */
	cr_expect_eq(os_hs_weight(OS_JVM_MODE_HYBRID, 16384, 16384, 100000), OS_W_ONE);
	/* fractional, not truncated: 16384 / 4120 = 3.9767, not 3 */
	{
		double w = (double)os_hs_weight(OS_JVM_MODE_HYBRID, 16384, 20480, 4120) / OS_W_ONE;
		double ws = (double)os_hs_weight(OS_JVM_MODE_SAMPLED, 0, 16384, 4120) / OS_W_ONE;

		cr_expect(w > 3.976 && w < 3.977, "hybrid weight %f", w);
		cr_expect(ws > 3.976 && ws < 3.977, "sampled weight %f", ws);
	}
	/* capped, never 0 */
	cr_expect_eq(os_hs_weight(OS_JVM_MODE_HYBRID, 1ULL << 40, 16384, 1), OS_W_MAX);
	cr_expect_eq(os_hs_weight(OS_JVM_MODE_HYBRID, 16384, 16384, 0), OS_W_ONE);
	cr_expect_eq(os_hs_zgc_mask(0x40000001000ULL, 0), 0x1000);
	cr_expect_eq(os_hs_zgc_mask(0x80000001000ULL, 0), 0x1000);
	cr_expect_eq(os_hs_zgc_mask(0x100000001000ULL, 0), 0x1000);
	cr_expect_eq(os_hs_zgc_mask(0x7f0000001000ULL, 0), 0x7f0000001000ULL); /* native */
	cr_expect_eq(os_hs_zgc_mask(0x1000, 0), 0x1000);                     /* colorless */
	/* 44 offset bits (a larger heap): views at 16, 32 and 64 TiB */
	cr_expect_eq(os_hs_zgc_mask(0x200000001000ULL, (1ULL << 44) - 1), 0x1000);
	cr_expect_eq(os_hs_zgc_mask(0x400000001000ULL, (1ULL << 44) - 1), 0x1000);
	cr_expect_eq(os_hs_zgc_mask(0x40000001000ULL, (1ULL << 44) - 1), 0x40000001000ULL);
}

static uint64_t ctx_at(struct os_ivindex *iv, uint64_t addr)
{
	uint64_t v;

	return os_iv_lookup(iv, addr, NULL, NULL, &v) ? v : UINT64_MAX;
}

/* Sliding compaction: [100,200) died, [200,300) slides to 100 and
 * [300,400) to 200; the batch lists the second move first, so a one-by-one
 * application would remove the object still at 200. */
Test(hotspot, batch_moves_sliding)
{
	struct os_ivindex *iv = os_iv_new();
	struct os_hmap moved;
	struct os_hs_move mv[] = { { 300, 200, 100, 0 }, { 200, 100, 100, 0 },
				   { 5000, 6000, 100, 0 } };

	os_hmap_init(&moved);
	os_iv_insert(iv, 100, 200, 1);
	os_iv_insert(iv, 200, 300, 2);
	os_iv_insert(iv, 300, 400, 3);
	cr_assert_eq(os_hs_apply_moves(iv, mv, 3, &moved), 2, "two tracked objects moved");
	cr_expect_eq(ctx_at(iv, 150), 2);
	cr_expect_eq(ctx_at(iv, 250), 3);
	cr_expect_eq(ctx_at(iv, 350), UINT64_MAX, "the old place of the last object is empty");
	cr_expect_eq(os_iv_count(iv), 2, "the dead object under a destination is gone");
	{
		uint64_t one;

		cr_expect(os_hmap_get(&moved, 100, &one));
		cr_expect(os_hmap_get(&moved, 200, &one));
		cr_expect(!os_hmap_get(&moved, 300, &one));
	}
	os_hmap_destroy(&moved);
	os_iv_free(iv);
}

/* A swap through the batch: two objects exchange places. */
Test(hotspot, batch_moves_swap)
{
	struct os_ivindex *iv = os_iv_new();
	struct os_hmap moved;
	struct os_hs_move mv[] = { { 1000, 2000, 64, 0 }, { 2000, 1000, 64, 0 } };

	os_hmap_init(&moved);
	os_iv_insert(iv, 1000, 1064, 7);
	os_iv_insert(iv, 2000, 2064, 8);
	cr_assert_eq(os_hs_apply_moves(iv, mv, 2, &moved), 2);
	cr_expect_eq(ctx_at(iv, 1010), 8);
	cr_expect_eq(ctx_at(iv, 2010), 7);
	os_hmap_destroy(&moved);
	os_iv_free(iv);
}

/* ParallelCompact's shadow regions, one region reused twice: a worker
 * compacts A into the free region S, another copies S back to R1; then B and
 * C go to S and S is copied to R2. Buffers are per thread, so the batch
 * arrives grouped by thread; the sequence numbers (starting at `seq0`,
 * modulo 2^24) give the order. D, dead and never moved, lay in S. */
static void shadow_reuse(uint32_t seq0)
{
	const uint64_t S = 0x100000, R1 = 0x200000, R2 = 0x280000, RS = 0x80000;
	struct os_ivindex *iv = os_iv_new();
	struct os_hmap moved;
	uint32_t m = (1U << OS_HS_MOVE_SEQ_BITS) - 1;
	struct os_hs_move mv[] = {
		/* thread 1: A into S, later B and C into S */
		{ 0x10000, S + 0x100, 0x1000, (seq0 + 0) & m },
		{ 0x20000, S + 0x100, 0x1000, (seq0 + 2) & m },
		{ 0x30000, S + 0x2000, 0x1000, (seq0 + 3) & m },
		/* thread 2: both copy-backs */
		{ S, R1, RS, (seq0 + 1) & m },
		{ S, R2, RS, (seq0 + 4) & m },
	};
	uint64_t one;

	os_hmap_init(&moved);
	os_iv_insert(iv, 0x10000, 0x11000, 1);
	os_iv_insert(iv, 0x20000, 0x21000, 2);
	os_iv_insert(iv, 0x30000, 0x31000, 3);
	os_iv_insert(iv, S + 0x4000, S + 0x5000, 4);
	cr_assert_eq(os_hs_apply_moves(iv, mv, 5, &moved), 3, "seq0 %u: three objects moved", seq0);
	cr_expect_eq(ctx_at(iv, R1 + 0x100), 1, "seq0 %u: A is where the first copy-back put it",
		     seq0);
	cr_expect_eq(ctx_at(iv, R2 + 0x100), 2, "seq0 %u: B is in the second destination", seq0);
	cr_expect_eq(ctx_at(iv, R2 + 0x2000), 3, "seq0 %u: C is in the second destination", seq0);
	cr_expect_eq(ctx_at(iv, S + 0x100), UINT64_MAX, "seq0 %u: nothing left in the shadow", seq0);
	cr_expect_eq(ctx_at(iv, 0x20000), UINT64_MAX, "seq0 %u: B left its source", seq0);
	cr_expect_eq(ctx_at(iv, S + 0x4000), 4, "seq0 %u: the dead object is not carried", seq0);
	cr_expect(!os_hmap_get(&moved, S + 0x4000, &one), "seq0 %u: ... and left to the check",
		  seq0);
	cr_expect(os_hmap_get(&moved, R1 + 0x100, &one));
	cr_expect(os_hmap_get(&moved, R2 + 0x2000, &one));
	cr_expect_eq(os_iv_count(iv), 4);
	os_hmap_destroy(&moved);
	os_iv_free(iv);
}

Test(hotspot, batch_moves_shadow_region_reused)
{
	shadow_reuse(1);
}

Test(hotspot, batch_moves_sequence_wraps)
{
	shadow_reuse((1U << OS_HS_MOVE_SEQ_BITS) - 2);
}

Test(hotspot, move_word_decodes)
{
	uint64_t bytes;
	uint32_t seq;

	os_hs_move_decode(4112 | (0xabcdefULL << OS_HS_MOVE_SEQ_SHIFT), &bytes, &seq);
	cr_expect_eq(bytes, 4112);
	cr_expect_eq(seq, 0xabcdef);
	os_hs_move_decode(524288, &bytes, &seq);
	cr_expect_eq(bytes, 524288);
	cr_expect_eq(seq, 0, "a word without a number (older target)");
}

/* Fake target memory: word-sized cells at given addresses. */
struct fake_mem {
	struct os_hmap cells;
};

static ssize_t fake_read(void *arg, uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct fake_mem *f = arg;
	uint64_t v;

	(void)pid;
	if (len != 8 || !os_hmap_get(&f->cells, addr, &v))
		return -1;
	memcpy(buf, &v, 8);
	return 8;
}

static uint64_t klass_by_ctx(void *arg, uint64_t ctx)
{
	const uint64_t *k = arg;

	return ctx < 3 ? k[ctx] : 0;
}

static bool refuse(void *arg)
{
	(void)arg;
	return false;
}

Test(hotspot, drop_dead_objects)
{
	struct fake_mem f;
	struct os_hs_mem m = { fake_read, NULL, &f };
	struct os_hs_layout lay = { .oop_klass = 8, .oop_cklass = 8, .compressed_klass = 1,
				    .narrow_klass_base = 0x800000000ULL, .narrow_klass_shift = 3 };
	uint64_t klass[3] = { 0x800001000ULL, 0x800002000ULL, 0 };
	struct os_ivindex *iv = os_iv_new();
	struct os_hmap moved;

	os_hmap_init(&f.cells);
	os_hmap_init(&moved);
	/* live: header names its class (narrow, upper half is something else) */
	os_hmap_put(&f.cells, 0x10000 + 8, 0xdead000000000000ULL | (0x1000 >> 3));
	os_iv_insert(iv, 0x10000, 0x10400, 0);
	/* dead: its memory now holds an object of another class */
	os_hmap_put(&f.cells, 0x20000 + 8, 0x2000 >> 3);
	os_iv_insert(iv, 0x20000, 0x20400, 0);
	/* dead: unreadable (uncommitted) */
	os_iv_insert(iv, 0x30000, 0x30400, 1);
	/* moved here in this collection: not checked although unreadable */
	os_iv_insert(iv, 0x40000, 0x40400, 1);
	os_hmap_put(&moved, 0x40000, 1);
	/* no class expectation (not a Java object): kept */
	os_iv_insert(iv, 0x50000, 0x50400, 2);
	/* outside the heap range: not checked */
	os_iv_insert(iv, 0x900000, 0x900400, 1);

	cr_assert_eq(os_hs_drop_dead(iv, 0x10000, 0x800000, &moved, klass_by_ctx, klass, &m, 1,
				     &lay, refuse),
		     0, "a later collection began during the reads: nothing dropped");
	cr_assert_eq(os_hs_drop_dead(iv, 0x10000, 0x800000, &moved, klass_by_ctx, klass, &m, 1,
				     &lay, NULL),
		     2);
	cr_expect_eq(ctx_at(iv, 0x10010), 0);
	cr_expect_eq(ctx_at(iv, 0x20010), UINT64_MAX);
	cr_expect_eq(ctx_at(iv, 0x30010), UINT64_MAX);
	cr_expect_eq(ctx_at(iv, 0x40010), 1);
	cr_expect_eq(ctx_at(iv, 0x50010), 2);
	cr_expect_eq(ctx_at(iv, 0x900010), 1);
	os_hmap_destroy(&f.cells);
	os_hmap_destroy(&moved);
	os_iv_free(iv);
}

/* ---- a synthetic JVM in this process, read back with process_vm_readv ---- */

struct s_ent { const char *type, *field, *tstr; int32_t is_static; uint64_t offset; void *addr; };
struct t_ent { const char *type, *super; int32_t oop, integer, unsig; uint64_t size; };
struct i_ent { const char *name; int32_t value; };
struct l_ent { const char *name; uint64_t value; };

struct f_symbol { uint32_t hash; uint16_t length; uint8_t body[64]; };
struct f_klass { uint64_t pad[2]; struct f_symbol *name; struct f_klass *super; int32_t lh; };
struct f_cpool { uint64_t pad[3]; struct f_klass *holder; struct f_symbol *slots[8]; };
struct f_constm { uint64_t pad; struct f_cpool *constants; uint16_t name_index, sig_index; };
struct f_method { uint64_t pad; struct f_constm *cm; };

static uint64_t narrow_base = 0;
static int32_t narrow_shift = 0;

struct f_heap { uint64_t pad; uint32_t total; uint8_t active; };
static struct f_heap fheap = { 0, 1, 0 };
static struct f_heap *universe_heap = &fheap;

static struct s_ent S[] = {
	{ "Klass", "_name", "Symbol*", 0, offsetof(struct f_klass, name), NULL },
	{ "Klass", "_super", "Klass*", 0, offsetof(struct f_klass, super), NULL },
	{ "Klass", "_layout_helper", "jint", 0, offsetof(struct f_klass, lh), NULL },
	{ "Symbol", "_length", "u2", 0, offsetof(struct f_symbol, length), NULL },
	{ "Symbol", "_body[0]", "u1", 0, offsetof(struct f_symbol, body), NULL },
	{ "Method", "_constMethod", "ConstMethod*", 0, offsetof(struct f_method, cm), NULL },
	{ "ConstMethod", "_constants", "ConstantPool*", 0, offsetof(struct f_constm, constants),
	  NULL },
	{ "ConstMethod", "_name_index", "u2", 0, offsetof(struct f_constm, name_index), NULL },
	{ "ConstMethod", "_signature_index", "u2", 0, offsetof(struct f_constm, sig_index), NULL },
	{ "ConstantPool", "_pool_holder", "InstanceKlass*", 0, offsetof(struct f_cpool, holder),
	  NULL },
	{ "oopDesc", "_metadata._klass", "Klass*", 0, 8, NULL },
	{ "oopDesc", "_metadata._compressed_klass", "narrowKlass", 0, 8, NULL },
	{ "CompressedKlassPointers", "_narrow_klass._base", "address", 1, 0, &narrow_base },
	{ "CompressedKlassPointers", "_narrow_klass._shift", "int", 1, 0, &narrow_shift },
	{ "Universe", "_collectedHeap", "CollectedHeap*", 1, 0, &universe_heap },
	{ "CollectedHeap", "_total_collections", "unsigned int", 0,
	  offsetof(struct f_heap, total), NULL },
	{ "CollectedHeap", "_is_gc_active", "bool", 0, offsetof(struct f_heap, active), NULL },
	{ NULL, NULL, NULL, 0, 0, NULL },
};
static struct t_ent T[] = {
	{ "ConstantPool", "Metadata", 0, 0, 0, offsetof(struct f_cpool, slots) },
	{ "Klass", "Metadata", 0, 0, 0, sizeof(struct f_klass) },
	{ NULL, NULL, 0, 0, 0, 0 },
};
static struct i_ent I[] = { { "oopSize", 8 }, { NULL, 0 } };
static struct l_ent L[] = { { "markWord::hash_mask", 0x7fffffff }, { NULL, 0 } };

static struct f_symbol sym_long_arr = { 0, 2, "[J" };
static struct f_symbol sym_string = { 0, 16, "java/lang/String" };
static struct f_symbol sym_holder = { 0, 11, "pkg/Fixture" };
static struct f_symbol sym_meth = { 0, 8, "makeData" };
static struct f_klass k_long_arr = { { 0, 0 }, &sym_long_arr, NULL, 0 };
static struct f_klass k_string = { { 0, 0 }, &sym_string, NULL, 0 };
static struct f_klass k_holder = { { 0, 0 }, &sym_holder, NULL, 0 };
/* an enum, a constant of it with a body of its own, and their root */
static struct f_symbol sym_enum = { 0, 14, "java/lang/Enum" };
static struct f_symbol sym_color = { 0, 9, "pkg/Color" };
static struct f_symbol sym_color1 = { 0, 11, "pkg/Color$1" };
static struct f_klass k_enum = { { 0, 0 }, &sym_enum, NULL, 0 };
static struct f_klass k_color = { { 0, 0 }, &sym_color, &k_enum, 0 };
static struct f_klass k_color1 = { { 0, 0 }, &sym_color1, &k_color, 0 };
static struct f_cpool cpool = { { 0, 0, 0 }, &k_holder, { NULL, NULL, NULL, &sym_meth } };
static struct f_constm constm = { 0, &cpool, 3, 0 };
static struct f_method method = { 0, &constm };

static void fill_info(struct os_jvm_info *info, uint64_t heap_lo, uint64_t heap_hi)
{
	memset(info, 0, sizeof(*info));
	info->tables[OS_JVM_STRUCTS] = (struct os_jvm_table){
		(uint64_t)(uintptr_t)S, sizeof(S[0]),
		{ offsetof(struct s_ent, type), offsetof(struct s_ent, field),
		  offsetof(struct s_ent, tstr), offsetof(struct s_ent, is_static),
		  offsetof(struct s_ent, offset), offsetof(struct s_ent, addr) } };
	info->tables[OS_JVM_TYPES] = (struct os_jvm_table){
		(uint64_t)(uintptr_t)T, sizeof(T[0]),
		{ offsetof(struct t_ent, type), offsetof(struct t_ent, super),
		  offsetof(struct t_ent, oop), offsetof(struct t_ent, integer),
		  offsetof(struct t_ent, unsig), offsetof(struct t_ent, size) } };
	info->tables[OS_JVM_INTS] = (struct os_jvm_table){
		(uint64_t)(uintptr_t)I, sizeof(I[0]),
		{ offsetof(struct i_ent, name), offsetof(struct i_ent, value), 0, 0, 0, 0 } };
	info->tables[OS_JVM_LONGS] = (struct os_jvm_table){
		(uint64_t)(uintptr_t)L, sizeof(L[0]),
		{ offsetof(struct l_ent, name), offsetof(struct l_ent, value), 0, 0, 0, 0 } };
	info->heap_start = heap_lo;
	info->heap_end = heap_hi;
	info->mode = OS_JVM_MODE_EXACT;
	snprintf(info->gc, sizeof(info->gc), "G1");
}

/* Symbol names are read with their length in one read of up to 96 bytes:
 * a symbol just before an unmapped page (the read stops there) and one
 * longer than that read (the length first, then the body) still give the
 * whole name. */
Test(hotspot, symbol_names_near_unmapped_pages_and_long)
{
	struct os_jvm_info info;
	struct os_hs_vm vm;
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *m = mmap(NULL, (size_t)(2 * pg), PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *sym;
	static uint8_t big[sizeof(struct f_symbol) + 200];
	struct f_klass k = { { 0, 0 }, NULL, NULL, 0 };
	const char *shortname = "endOfPage";
	uint16_t len = (uint16_t)strlen(shortname);
	char buf[300], want[201];
	uint32_t pid = (uint32_t)getpid();

	cr_assert(m != MAP_FAILED);
	cr_assert_eq(mprotect(m + pg, (size_t)pg, PROT_NONE), 0);
	sym = m + pg - offsetof(struct f_symbol, body) - len - 3;
	memcpy(sym + offsetof(struct f_symbol, length), &len, 2);
	memcpy(sym + offsetof(struct f_symbol, body), shortname, len);
	fill_info(&info, 0, 0);
	cr_assert_eq(os_hs_vm_load(&vm, &os_hs_mem_proc, pid, &info), 0);
	k.name = (struct f_symbol *)(void *)sym;
	cr_assert_eq(os_hs_klass_name(&vm, &os_hs_mem_proc, pid, (uintptr_t)&k, buf, sizeof(buf)),
		     0);
	cr_expect_str_eq(buf, shortname);

	memset(want, 'q', 200);
	want[200] = 0;
	len = 200;
	memcpy(big + offsetof(struct f_symbol, length), &len, 2);
	memcpy(big + offsetof(struct f_symbol, body), want, 200);
	k.name = (struct f_symbol *)(void *)big;
	cr_assert_eq(os_hs_klass_name(&vm, &os_hs_mem_proc, pid, (uintptr_t)&k, buf, sizeof(buf)),
		     0);
	cr_expect_str_eq(buf, want);
	/* a buffer shorter than the name: cut, terminated */
	cr_assert_eq(os_hs_klass_name(&vm, &os_hs_mem_proc, pid, (uintptr_t)&k, buf, 50), 0);
	cr_expect_eq(strlen(buf), 49);
	os_hs_vm_free(&vm);
	munmap(m, (size_t)(2 * pg));
}

Test(hotspot, vmstructs_from_target)
{
	struct os_jvm_info info;
	struct os_hs_vm vm;
	uint64_t v;
	char buf[128];
	uint32_t pid = (uint32_t)getpid();

	narrow_base = 0x800000000ULL;
	narrow_shift = 3;
	fill_info(&info, 0, 0);
	cr_assert_eq(os_hs_vm_load(&vm, &os_hs_mem_proc, pid, &info), 0);
	cr_expect_eq(vm.lay.klass_name, (int64_t)offsetof(struct f_klass, name));
	cr_expect_eq(vm.lay.symbol_body, (int64_t)offsetof(struct f_symbol, body));
	cr_expect_eq(vm.lay.cpool_size, (int64_t)offsetof(struct f_cpool, slots));
	cr_expect_eq(vm.lay.narrow_klass_base, 0x800000000ULL);
	cr_expect_eq(vm.lay.narrow_klass_shift, 3);
	cr_expect_eq(os_hs_vm_get(&vm, "oopSize", &v), 0);
	cr_expect_eq(v, 8);
	cr_expect_eq(os_hs_vm_get(&vm, "markWord::hash_mask", &v), 0);
	cr_expect_eq(v, 0x7fffffff);
	cr_expect_eq(os_hs_vm_get(&vm, "Klass", &v), 0);
	cr_expect_eq(v, sizeof(struct f_klass));
	cr_expect_eq(os_hs_vm_get(&vm, "Nope::_x", &v), -ENOENT);
	cr_assert_eq(os_hs_klass_name(&vm, &os_hs_mem_proc, pid, (uintptr_t)&k_string, buf,
				      sizeof(buf)),
		     0);
	cr_expect_str_eq(buf, "java/lang/String");
	cr_assert_eq(os_hs_method_name(&vm, &os_hs_mem_proc, pid, (uintptr_t)&method, buf,
				       sizeof(buf)),
		     0);
	cr_expect_str_eq(buf, "pkg.Fixture.makeData");
	cr_expect_eq(os_hs_klass_name(&vm, &os_hs_mem_proc, pid, 8, buf, sizeof(buf)), -EFAULT);
	/* compressed class pointers learnt from a header */
	{
		uint64_t hdr[2] = { 1, 0 };
		uint64_t k = 0x800000000ULL + (0x1230ULL << 3);

		hdr[1] = 0xabcd000000000000ULL | 0x1230;
		cr_expect_eq(os_hs_learn_header(&vm, &os_hs_mem_proc, pid, (uintptr_t)hdr, k), 0);
		cr_expect_eq(vm.lay.compressed_klass, 1);
		cr_expect_eq(os_hs_decode_klass(&vm.lay, hdr[1]), k);
	}
	os_hs_vm_free(&vm);
	narrow_base = 0;
	narrow_shift = 0;
}

Test(hotspot, vmstructs_bad_layout)
{
	struct os_jvm_info info;
	struct os_hs_vm vm;

	fill_info(&info, 0, 0);
	info.tables[OS_JVM_STRUCTS].stride = 4096; /* larger than any entry we accept */
	cr_expect_lt(os_hs_vm_load(&vm, &os_hs_mem_proc, (uint32_t)getpid(), &info), 0);
	fill_info(&info, 0, 0);
	info.tables[OS_JVM_STRUCTS].addr = 8; /* unreadable */
	cr_expect_eq(os_hs_vm_load(&vm, &os_hs_mem_proc, (uint32_t)getpid(), &info), -EFAULT);
}

/* The entry of S[] for "type::field". */
static struct s_ent *s_entry(const char *type, const char *field)
{
	for (struct s_ent *e = S; e->type; e++)
		if (!strcmp(e->type, type) && !strcmp(e->field, field))
			return e;
	cr_assert_fail("no %s::%s in S[]", type, field);
	return NULL;
}

/* Offsets a hostile target may put in its vmStructs: negative ones that
 * wrap a signed bounds check, huge ones that wrap an unsigned one. */
static const uint64_t absurd[] = {
	(uint64_t)INT64_MIN, (uint64_t)INT64_MIN + 8, (uint64_t)-2, (uint64_t)-4096,
	1ULL << 40, (uint64_t)INT64_MAX, UINT64_MAX - 3, OS_HS_FIELD_MAX + 1,
};

/* A required field out of range: the load is refused (no crash, nothing
 * read at the offset); an optional one: that feature is off. */
Test(hotspot, vmstructs_absurd_offsets)
{
	static const char *const required[][2] = {
		{ "Klass", "_name" }, { "Symbol", "_length" }, { "Symbol", "_body[0]" },
	};
	uint32_t pid = (uint32_t)getpid();
	struct os_jvm_info info;
	struct os_hs_vm vm;
	uint32_t total = 0;
	bool active;
	char buf[128];

	fill_info(&info, 0, 0);
	for (size_t r = 0; r < 3; r++) {
		struct s_ent *e = s_entry(required[r][0], required[r][1]);
		uint64_t keep = e->offset;

		for (size_t i = 0; i < sizeof(absurd) / sizeof(*absurd); i++) {
			e->offset = absurd[i];
			cr_expect_eq(os_hs_vm_load(&vm, &os_hs_mem_proc, pid, &info), -EINVAL,
				     "%s::%s = %#llx", required[r][0], required[r][1],
				     (unsigned long long)absurd[i]);
		}
		e->offset = keep;
	}
	for (size_t i = 0; i < sizeof(absurd) / sizeof(*absurd); i++) {
		struct s_ent *mc = s_entry("Method", "_constMethod");
		struct s_ent *tc = s_entry("CollectedHeap", "_total_collections");
		struct s_ent *ga = s_entry("CollectedHeap", "_is_gc_active");
		uint64_t keep[3] = { mc->offset, tc->offset, ga->offset };

		mc->offset = absurd[i];
		tc->offset = absurd[i];
		ga->offset = absurd[(i + 1) % (sizeof(absurd) / sizeof(*absurd))];
		cr_assert_eq(os_hs_vm_load(&vm, &os_hs_mem_proc, pid, &info), 0);
		cr_expect_eq(vm.lay.method_const, -1);
		cr_expect_eq(os_hs_method_name(&vm, &os_hs_mem_proc, pid, (uintptr_t)&method, buf,
					       sizeof(buf)),
			     -ENOENT);
		cr_expect_eq(os_hs_gc_state(&vm, &os_hs_mem_proc, pid, &total, &active), -ENOENT);
		cr_expect_eq(os_hs_klass_name(&vm, &os_hs_mem_proc, pid, (uintptr_t)&k_string, buf,
					      sizeof(buf)),
			     0, "what is sound still works");
		cr_expect_str_eq(buf, "java/lang/String");
		os_hs_vm_free(&vm);
		mc->offset = keep[0];
		tc->offset = keep[1];
		ga->offset = keep[2];
	}
}

/* A layout changed after the load (or made by hand) with wild offsets: the
 * readers refuse it before any arithmetic on a local buffer. */
Test(hotspot, vmstructs_layout_checked_again_by_readers)
{
	uint32_t pid = (uint32_t)getpid();
	struct os_jvm_info info;
	struct os_hs_vm vm;
	uint32_t total = 0;
	bool active;
	char buf[128];

	fill_info(&info, 0, 0);
	cr_assert_eq(os_hs_vm_load(&vm, &os_hs_mem_proc, pid, &info), 0);
	cr_assert_eq(os_hs_gc_state(&vm, &os_hs_mem_proc, pid, &total, &active), 0);
	cr_expect_eq(total, 1);
	for (size_t i = 0; i < sizeof(absurd) / sizeof(*absurd); i++) {
		struct os_hs_layout keep = vm.lay;

		vm.lay.symbol_length = (int64_t)absurd[i];
		cr_expect_lt(os_hs_klass_name(&vm, &os_hs_mem_proc, pid, (uintptr_t)&k_string, buf,
					      sizeof(buf)),
			     0);
		vm.lay = keep;
		vm.lay.symbol_body = (int64_t)absurd[i];
		cr_expect_lt(os_hs_klass_name(&vm, &os_hs_mem_proc, pid, (uintptr_t)&k_string, buf,
					      sizeof(buf)),
			     0);
		vm.lay = keep;
		vm.lay.heap_total_coll = (int64_t)absurd[i];
		cr_expect_lt(os_hs_gc_state(&vm, &os_hs_mem_proc, pid, &total, &active), 0);
		vm.lay = keep;
		vm.lay.const_name_index = (int64_t)absurd[i];
		cr_expect_lt(os_hs_method_name(&vm, &os_hs_mem_proc, pid, (uintptr_t)&method, buf,
					       sizeof(buf)),
			     0);
		vm.lay = keep;
	}
	os_hs_vm_free(&vm);
}

/* The tables' own geometry (entry field offsets, stride) is checked against
 * the width read at each offset, without wrapping. */
Test(hotspot, vmstructs_table_geometry)
{
	uint32_t pid = (uint32_t)getpid();
	struct os_jvm_info info;
	struct os_hs_vm vm;

	for (int k = 0; k < OS_JVM_NTABLES; k++) {
		static const uint64_t bad[] = { UINT64_MAX - 2, UINT64_MAX - 7, 1ULL << 63 };

		for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
			fill_info(&info, 0, 0);
			info.tables[k].off[0] = bad[i];
			if (k == OS_JVM_STRUCTS || k == OS_JVM_TYPES) {
				cr_expect_eq(os_hs_vm_load(&vm, &os_hs_mem_proc, pid, &info),
					     -EINVAL, "table %d off[0] %#llx", k,
					     (unsigned long long)bad[i]);
			} else {
				/* the optional constants are left out, the load goes on */
				cr_assert_eq(os_hs_vm_load(&vm, &os_hs_mem_proc, pid, &info), 0);
				const char *c = k == OS_JVM_INTS ? "oopSize"
								 : "markWord::hash_mask";

				cr_expect_eq(os_hs_vm_get(&vm, c, &(uint64_t){ 0 }), -ENOENT);
				os_hs_vm_free(&vm);
			}
		}
	}
	/* an 8-byte value whose offset leaves 4 bytes in the entry */
	fill_info(&info, 0, 0);
	info.tables[OS_JVM_STRUCTS].off[4] = info.tables[OS_JVM_STRUCTS].stride - 4;
	cr_expect_eq(os_hs_vm_load(&vm, &os_hs_mem_proc, pid, &info), -EINVAL);
	fill_info(&info, 0, 0);
	info.tables[OS_JVM_TYPES].off[5] = info.tables[OS_JVM_TYPES].stride - 4;
	cr_expect_eq(os_hs_vm_load(&vm, &os_hs_mem_proc, pid, &info), -EINVAL);
	/* a compressed-class shift no shift can take: compressed words off */
	narrow_shift = 200;
	fill_info(&info, 0, 0);
	cr_assert_eq(os_hs_vm_load(&vm, &os_hs_mem_proc, pid, &info), 0);
	cr_expect_eq(vm.lay.oop_cklass, -1);
	cr_expect_eq(vm.lay.narrow_klass_shift, 0);
	os_hs_vm_free(&vm);
	narrow_shift = 0;
}

/* ---- the adapter behind os_attrib ---- */

static struct os_event *mk_event(uint16_t type, uint64_t addr, uint64_t size, uint64_t aux,
				 uint64_t aux2, const void *frames, uint32_t nbytes)
{
	uint32_t nwords = (nbytes + 7) / 8;
	struct os_event *ev = calloc(1, OS_EVENT_FIXED + nwords * 8);

	ev->type = type;
	ev->nframes = (uint16_t)nwords;
	ev->len = OS_EVENT_FIXED + nwords * 8;
	ev->pid = ev->tid = (uint32_t)getpid();
	ev->addr = addr;
	ev->size = size;
	ev->aux = aux;
	ev->aux2 = aux2;
	if (nbytes)
		memcpy(ev->frames, frames, nbytes);
	return ev;
}

static void feed(struct os_attrib *a, struct os_event *ev)
{
	struct os_obj_event oe;

	if (os_attrib_prepare(a, ev, &oe))
		os_attrib_event(a, &oe);
	free(ev);
}

/* Sets up attribution with the HotSpot adapter over a fake heap. */
static void hs_test_begin(struct os_attrib *a, struct os_tasks *tasks, void *heap)
{
	cr_assert_not_null(heap);
	os_tasks_init(tasks, NULL);
	cr_assert_eq(os_attrib_init(a, tasks), 0);
	a->rt = os_hotspot_new(a, NULL, NULL);
}

/* Frees what a HotSpot attribution test set up: adapter, attribution,
 * tasks and the fake heap. */
static void hs_test_end(struct os_attrib *a, struct os_tasks *tasks, void *heap)
{
	a->rt->ops->destroy(a->rt);
	a->rt = NULL;
	os_attrib_destroy(a);
	os_tasks_destroy(tasks);
	free(heap);
}

/* hs_test_begin, then a hybrid JVM (T = 16 KiB, --min-size 1024) whose
 * 64 KiB heap is `heap` (8192 words). */
static void hs_test_hybrid_jvm(struct os_attrib *a, struct os_tasks *tasks, uint64_t *heap)
{
	uint64_t base = (uintptr_t)heap;
	struct os_jvm_info info;

	hs_test_begin(a, tasks, heap);
	a->min_size = 1024;
	fill_info(&info, base, base + 8192 * 8);
	info.mode = OS_JVM_MODE_HYBRID;
	info.tlab_bytes = 16384;
	feed(a, mk_event(OS_EV_JVM, base, 8192 * 8, (uintptr_t)S, 0, &info, sizeof(info)));
}

static const char *ctx_type(struct os_attrib *a, uint32_t ci)
{
	uint64_t frames[OS_MAX_FRAMES];
	uint32_t asid, n = os_attrib_unpath(a, a->ctx[ci].node, frames, OS_MAX_FRAMES, &asid);
	const char *name = NULL;

	cr_assert_gt(n, 0);
	cr_assert_eq(a->rt->ops->name_word(a->rt, asid, frames[0], &name, NULL, NULL), OS_RT_WORD_TYPE);
	return name;
}

Test(hotspot, adapter_flow)
{
	struct os_tasks tasks;
	struct os_attrib a;
	struct os_jvm_info info;
	uint64_t *heap = calloc(4096, 8);
	uint64_t base = (uintptr_t)heap, frames[3], f0;
	uint64_t kl = (uintptr_t)&k_long_arr, ks = (uintptr_t)&k_string;
	uint64_t mv[6];
	const char *name;
	struct os_aspace *as;

	hs_test_begin(&a, &tasks, heap);
	cr_assert_not_null(a.rt);
	fill_info(&info, base, base + 4096 * 8);
	feed(&a, mk_event(OS_EV_JVM, base, 4096 * 8, (uintptr_t)S, 0, &info, sizeof(info)));

	/* headers: mark word, then the (uncompressed) class pointer */
	heap[1] = kl;          /* A: long[] at +0 */
	heap[128 + 1] = ks;    /* B: String at +1024 */
	frames[0] = OS_FRAME_METHOD | (uintptr_t)&method;
	frames[1] = 0x401000;
	frames[2] = 0x402000;
	feed(&a, mk_event(OS_EV_JALLOC, base, 1024, 0, kl, frames, sizeof(frames)));
	feed(&a, mk_event(OS_EV_JALLOC, base + 1024, 1024, 0, ks, frames, sizeof(frames)));
	cr_assert_eq(a.nctx, 2, "one path, two classes: two contexts");
	cr_expect_str_eq(ctx_type(&a, 0), "long[]");
	cr_expect_str_eq(ctx_type(&a, 1), "java.lang.String");
	cr_expect_eq(a.c.objects_seen, 2);
	cr_expect_eq(a.c.objects_estimated, 0, "exact mode estimates nothing");
	f0 = OS_FRAME_METHOD | (uintptr_t)&method;
	cr_expect_eq(a.rt->ops->name_word(a.rt, 1, f0, &name, NULL, NULL), OS_RT_WORD_FRAME);
	cr_expect_str_eq(name, "pkg.Fixture.makeData");
	as = os_tasks_aspace(&tasks, (uint32_t)getpid());
	cr_assert_not_null(as);

	/* a collection: A moves to +2048 (its copy keeps the header); B stays */
	fheap.total = 1;
	feed(&a, mk_event(OS_EV_GC_BEGIN, 0, 0, 1, 0, NULL, 0));
	heap[256 + 1] = kl;
	heap[1] = 0;
	mv[0] = base;
	mv[1] = base + 2048;
	mv[2] = 1024;
	feed(&a, mk_event(OS_EV_MOVES, 0, 0, 1, 0, mv, 3 * 8));
	feed(&a, mk_event(OS_EV_GC_END, 0, 0, 1, 0, NULL, 0));
	cr_expect_eq(a.c.gc_count, 1);
	cr_expect_eq(a.c.moves, 1);
	os_attrib_sample(&a, as->id, base + 2048 + 100, 0, OS_CCT_NONE);
	os_attrib_sample(&a, as->id, base + 1024 + 8, 0, OS_CCT_NONE);
	os_attrib_sample(&a, as->id, base + 100, 0, OS_CCT_NONE);
	cr_expect_eq(a.ctx[0].samples, 1, "sample after the GC lands on the moved object");
	cr_expect_eq(a.ctx[1].samples, 1, "the unmoved survivor keeps its samples");
	cr_expect_eq(a.c.samples_attributed, 2, "nothing left at the old address");

	/* a second collection: B died, its memory holds a long[] now; its
	 * end is applied after a third collection began: no check yet */
	heap[128 + 1] = kl;
	fheap.total = 3;
	feed(&a, mk_event(OS_EV_GC_BEGIN, 0, 0, 2, 0, NULL, 0));
	feed(&a, mk_event(OS_EV_GC_END, 0, 0, 2, 0, NULL, 0));
	cr_expect_eq(a.c.gc_count, 2);
	os_attrib_sample(&a, as->id, base + 1024 + 8, 0, OS_CCT_NONE);
	cr_expect_eq(a.ctx[1].samples, 2, "not checked while a later collection runs");
	/* the third one's end, with the heap quiet: B is dropped now */
	feed(&a, mk_event(OS_EV_GC_BEGIN, 0, 0, 3, 0, NULL, 0));
	feed(&a, mk_event(OS_EV_GC_END, 0, 0, 3, 0, NULL, 0));
	os_attrib_sample(&a, as->id, base + 1024 + 8, 0, OS_CCT_NONE);
	cr_expect_eq(a.ctx[1].samples, 2, "the dead object was dropped");
	os_attrib_sample(&a, as->id, base + 2048 + 8, 0, OS_CCT_NONE);
	cr_expect_eq(a.ctx[0].samples, 2, "the survivor was kept");
	/* the JVM is gone (its state unreadable): an end applied late drops
	 * nothing, although A's header no longer names its class */
	heap[256 + 1] = 0;
	universe_heap = NULL;
	feed(&a, mk_event(OS_EV_GC_BEGIN, 0, 0, 4, 0, NULL, 0));
	feed(&a, mk_event(OS_EV_GC_END, 0, 0, 4, 0, NULL, 0));
	universe_heap = &fheap;
	os_attrib_sample(&a, as->id, base + 2048 + 8, 0, OS_CCT_NONE);
	cr_expect_eq(a.ctx[0].samples, 3, "kept when the heap cannot be read");

	hs_test_end(&a, &tasks, heap);
}

/* A GC_END record whose G1 region types (after the OS_HS_FWD_WORDS) give
 * every 64 KiB region from lo on the type `kind`. */
static struct os_event *g1_end(uint32_t total, uint64_t lo, unsigned kind)
{
	uint64_t w[OS_HS_FWD_WORDS + OS_HS_GENS_HDR + 1] = { 0 };
	uint64_t *g = w + OS_HS_FWD_WORDS;

	g[0] = OS_HS_GENS_MAGIC | 16ULL << 8;
	g[1] = lo;
	g[2] = OS_HS_GENS_PER_WORD;
	for (unsigned r = 0; r < OS_HS_GENS_PER_WORD; r++)
		g[OS_HS_GENS_HDR] |= (uint64_t)kind << (4 * r);
	return mk_event(OS_EV_GC_END, 0, 0, total, total, w, sizeof(w));
}

/* G1: a tracked object a collection left unmoved in a region it freed is
 * dead, even when a new object of its class already sits at its address
 * by the time the end is applied (the header check alone kept it, and the
 * new object's samples went to it); one in an old region stays. */
Test(hotspot, unmoved_in_a_freed_region_is_dead)
{
	struct os_tasks tasks;
	struct os_attrib a;
	struct os_jvm_info info;
	uint64_t *heap = aligned_alloc(65536, 65536);
	uint64_t base = (uintptr_t)heap, frames[1];
	uint64_t kl = (uintptr_t)&k_long_arr;
	struct os_aspace *as;
	struct hs_jvm *j;

	cr_assert_not_null(heap);
	memset(heap, 0, 65536);
	hs_test_begin(&a, &tasks, heap);
	fill_info(&info, base, base + 65536);
	feed(&a, mk_event(OS_EV_JVM, base, 65536, (uintptr_t)S, 0, &info, sizeof(info)));
	as = os_tasks_aspace(&tasks, (uint32_t)getpid());
	cr_assert_not_null(as);
	j = hs_jvm_get(hs_of(a.rt), as);
	cr_assert_not_null(j);
	j->gens.kind = HS_GENS_G1; /* as g1_layout finds it in a G1 JVM */

	heap[1] = kl; /* A: long[] at +0, and B at +1024 */
	heap[128 + 1] = kl;
	frames[0] = OS_FRAME_METHOD | (uintptr_t)&method;
	feed(&a, mk_event(OS_EV_JALLOC, base, 1024, 0, kl, frames, sizeof(frames)));
	feed(&a, mk_event(OS_EV_JALLOC, base + 1024, 1024, 0, kl, frames, sizeof(frames)));

	/* collection 1 moves nothing and leaves the region free: both died;
	 * a new long[] already sits at each address (headers unchanged) */
	fheap.total = 1;
	feed(&a, mk_event(OS_EV_GC_BEGIN, 0, 0, 1, 1, NULL, 0));
	feed(&a, g1_end(1, base, OS_HS_GENS_FREE));
	os_attrib_sample(&a, as->id, base + 100, 0, OS_CCT_NONE);
	os_attrib_sample(&a, as->id, base + 1024 + 100, 0, OS_CCT_NONE);
	cr_expect_eq(a.ctx[0].samples, 0, "samples charged to a dead object");

	/* the same in a region the collection left old: alive, kept */
	feed(&a, mk_event(OS_EV_JALLOC, base + 2048, 1024, 0, kl, frames, sizeof(frames)));
	heap[256 + 1] = kl;
	fheap.total = 2;
	feed(&a, mk_event(OS_EV_GC_BEGIN, 0, 0, 2, 2, NULL, 0));
	feed(&a, g1_end(2, base, OS_HS_GENS_OLD));
	os_attrib_sample(&a, as->id, base + 2048 + 100, 0, OS_CCT_NONE);
	cr_expect_eq(a.ctx[0].samples, 1, "an unmoved object of an old region was dropped");
	hs_test_end(&a, &tasks, heap);
}

/* Attach mode: objects a collection moved that were never seen allocated
 * are added at their new place with their class when the header's size
 * (Klass::_layout_helper, an array's length) is the move's; the first one
 * teaches the header layout, the others are read in a batch. */
Test(hotspot, objects_born_before_attach_from_moves)
{
	struct os_tasks tasks;
	struct os_attrib a;
	struct os_jvm_info info;
	uint64_t *heap = calloc(4096, 8);
	uint64_t base = (uintptr_t)heap, mv[5 * 3];
	struct f_symbol s_arr = { 0, 2, "[J" }, s_str = { 0, 16, "java/lang/String" };
	/* long[]: a type array (tag 0xC0), 16 header bytes, 8-byte elements */
	struct f_klass k_arr = { { 0, 0 }, &s_arr, NULL, (int32_t)0xC0100003u };
	struct f_klass k_str = { { 0, 0 }, &s_str, NULL, 1040 }; /* instance bytes */
	struct os_aspace *as;
	const uint64_t at[5] = { 512, 1024, 1536, 2048, 2560 }; /* word offsets */
	const uint64_t bytes[5] = { 1040, 16 + 100 * 8, 1040, 1040, 816 };

	hs_test_begin(&a, &tasks, heap);
	os_hotspot_attached(a.rt, (uint32_t)getpid(), NULL, false, 0, 0);
	fill_info(&info, base, base + 4096 * 8);
	feed(&a, mk_event(OS_EV_JVM, base, 4096 * 8, (uintptr_t)S, 0, &info, sizeof(info)));
	/* uncompressed headers at their new places: mark word, class, length;
	 * the first (a String) teaches the layout, the rest go in a batch */
	heap[at[0] + 1] = (uintptr_t)&k_str;
	heap[at[1] + 1] = (uintptr_t)&k_arr; /* long[100] */
	heap[at[1] + 2] = 100;
	heap[at[2] + 1] = (uintptr_t)&k_str;
	heap[at[3] + 1] = (uintptr_t)&k_str;
	heap[at[4] + 1] = (uintptr_t)&k_arr; /* long[] whose length says 50: not 816 */
	heap[at[4] + 2] = 50;
	for (int i = 0; i < 5; i++) {
		mv[3 * i] = base + 8 * (3000 + (uint64_t)i * 100);
		mv[3 * i + 1] = base + 8 * at[i];
		mv[3 * i + 2] = bytes[i];
	}
	mv[3 * 3 + 2] = 1048; /* the third String's move is larger than its header says */
	fheap.total = 1;
	feed(&a, mk_event(OS_EV_GC_BEGIN, 0, 0, 1, 0, NULL, 0));
	feed(&a, mk_event(OS_EV_MOVES, 0, 0, 1, 0, mv, sizeof(mv)));
	feed(&a, mk_event(OS_EV_GC_END, 0, 0, 1, 0, NULL, 0));
	as = os_tasks_aspace(&tasks, (uint32_t)getpid());
	cr_assert_not_null(as);
	cr_assert_eq(a.nctx, 2, "one context per class: %u", a.nctx);
	for (int i = 0; i < 3; i++) /* on the objects added (the others: a heap miss) */
		os_attrib_sample(&a, as->id, base + 8 * at[i] + 16, 0, OS_CCT_NONE);
	cr_expect_str_eq(ctx_type(&a, 0), "java.lang.String");
	cr_expect_str_eq(ctx_type(&a, 1), "long[]");
	cr_expect_eq(a.ctx[0].allocations, 2, "the Strings whose moves match their headers");
	cr_expect_eq(a.ctx[0].bytes, 2080);
	cr_expect_eq(a.ctx[1].allocations, 1, "the long[] whose length matches, not the other");
	cr_expect_eq(a.ctx[1].bytes, 816);
	cr_expect_eq(a.ctx[0].samples, 2);
	cr_expect_eq(a.ctx[1].samples, 1);
	fheap.total = 0;
	hs_test_end(&a, &tasks, heap);
}

/* A sampled-mode JVM over `heap` (1024 words) announced with the first
 * info_bytes of its os_jvm_info; the heap's first word's klass is long[]. */
static void sampled_jvm(struct os_attrib *a, struct os_tasks *tasks, uint64_t *heap,
			size_t info_bytes)
{
	struct os_jvm_info info;
	uint64_t base = (uintptr_t)heap;

	hs_test_begin(a, tasks, heap);
	fill_info(&info, base, base + 1024 * 8);
	info.mode = OS_JVM_MODE_SAMPLED;
	feed(a, mk_event(OS_EV_JVM, base, 1024 * 8, (uintptr_t)S, 0, &info, info_bytes));
	heap[1] = (uintptr_t)&k_long_arr;
}

Test(hotspot, sampled_weights)
{
	struct os_tasks tasks;
	struct os_attrib a;
	uint64_t *heap = calloc(1024, 8), base = (uintptr_t)heap, frames[1] = { 0x401000 };

	sampled_jvm(&a, &tasks, heap, sizeof(struct os_jvm_info));
	feed(&a, mk_event(OS_EV_JALLOC, base, 2000, 400000, (uintptr_t)&k_long_arr, frames, 8));
	feed(&a, mk_event(OS_EV_JALLOC, base + 4096, 2000, 0, (uintptr_t)&k_long_arr, frames, 8));
	cr_assert_eq(a.nctx, 1);
	cr_expect_eq(a.ctx[0].allocations, 201, "200 for the TLAB refill, 1 outside a TLAB");
	cr_expect_eq(a.ctx[0].bytes, 201 * 2000);
	cr_expect_eq(a.c.objects_seen, 2);
	cr_expect_eq(a.c.objects_estimated, 201);
	hs_test_end(&a, &tasks, heap);
}

/* Hybrid mode (fixed TLAB T = 16 KiB): 4 KiB objects weigh 4, so each
 * sample on them counts 4 in the estimates, whatever context; a native
 * object weighs 1; a GC move keeps the weight; dead-object removal still
 * finds the context under the weight bits. */
Test(hotspot, hybrid_weights_in_attribution)
{
	struct os_tasks tasks;
	struct os_attrib a;
	struct os_jvm_info info;
	uint64_t *heap = calloc(8192, 8), base = (uintptr_t)heap, frames[1] = { 0x401000 };
	uint64_t kl = (uintptr_t)&k_long_arr, ks = (uintptr_t)&k_string, mv[3];
	static char native[8192];
	uint64_t nat = ((uintptr_t)native + 4095) & ~4095ULL, nframes[1] = { 0x402000 };
	struct os_aspace *as;

	hs_test_begin(&a, &tasks, heap);
	cr_assert_not_null(a.rt);
	fill_info(&info, base, base + 8192 * 8);
	info.mode = OS_JVM_MODE_HYBRID;
	info.tlab_bytes = 16384;
	feed(&a, mk_event(OS_EV_JVM, base, 8192 * 8, (uintptr_t)S, 0, &info, sizeof(info)));
	heap[1] = kl;        /* A: long[] at +0, seen at a refill */
	heap[512 + 1] = ks;  /* B: String at +4096, made outside a TLAB (aux 0): weight 1 */
	heap[1024 + 1] = kl; /* C: long[] at +8192, 16 KiB: always seen */
	feed(&a, mk_event(OS_EV_JALLOC, base, 4096, 16384, kl, frames, 8));
	feed(&a, mk_event(OS_EV_JALLOC, base + 4096, 4096, 0, ks, frames, 8));
	feed(&a, mk_event(OS_EV_JALLOC, base + 8192, 16384, 16384, kl, frames, 8));
	cr_assert_eq(a.nctx, 2, "two classes: two contexts");
	cr_expect_eq(a.ctx[0].allocations, 5, "long[]: 4 for A, 1 for C");
	cr_expect_eq(a.ctx[0].bytes, 4 * 4096 + 16384);
	cr_expect_eq(a.ctx[1].allocations, 1, "String: the outside-TLAB event weighs 1");
	cr_expect_eq(a.c.objects_seen, 3);
	cr_expect_eq(a.c.objects_estimated, 6);
	cr_expect(a.weighted);
	/* a native object, outside the Java heap */
	as = os_tasks_aspace(&tasks, (uint32_t)getpid());
	cr_assert_not_null(as);
	feed(&a, mk_event(OS_EV_ALLOC, nat, 4096, 0, 0, nframes, 8));
	cr_assert_eq(a.nctx, 3);

	for (int i = 0; i < 3; i++)
		os_attrib_sample(&a, as->id, base + 64 + (uint64_t)i, 0, OS_CCT_NONE);
	for (int i = 0; i < 5; i++)
		os_attrib_sample(&a, as->id, base + 4096 + 64 + (uint64_t)i, 0, OS_CCT_NONE);
	os_attrib_sample(&a, as->id, base + 8192 + 64, 0, OS_CCT_NONE);
	os_attrib_sample(&a, as->id, nat + 8, 0, OS_CCT_NONE);
	os_attrib_sample(&a, as->id, nat + 16, 0, OS_CCT_NONE);
	cr_expect_eq(a.ctx[0].samples, 4);
	cr_expect_float_eq(a.ctx[0].est_samples, 3 * 4.0 + 1, 1e-9, "%f", a.ctx[0].est_samples);
	cr_expect_eq(a.ctx[1].samples, 5);
	cr_expect_float_eq(a.ctx[1].est_samples, 5, 1e-9, "%f", a.ctx[1].est_samples);
	cr_expect_eq(a.ctx[2].samples, 2);
	cr_expect_float_eq(a.ctx[2].est_samples, 2.0, 1e-9, "native objects weigh 1");
	cr_expect_eq(a.c.samples_attributed, 11);
	cr_expect_float_eq(a.est_attributed, 13 + 5 + 2, 1e-9, "%f", a.est_attributed);
	cr_expect_eq(a.c.samples_java_attributed, 9);
	cr_expect_float_eq(a.est_java_attributed, 18, 1e-9, "%f", a.est_java_attributed);

	/* a collection moves A to +32768 (header copied); B died: its
	 * header no longer names String, so it is dropped */
	fheap.total = 1;
	feed(&a, mk_event(OS_EV_GC_BEGIN, 0, 0, 1, 0, NULL, 0));
	heap[4096 + 1] = kl;
	heap[1] = 0;
	heap[512 + 1] = kl;
	mv[0] = base;
	mv[1] = base + 32768;
	mv[2] = 4096;
	feed(&a, mk_event(OS_EV_MOVES, 0, 0, 1, 0, mv, 3 * 8));
	feed(&a, mk_event(OS_EV_GC_END, 0, 0, 1, 0, NULL, 0));
	cr_expect_eq(a.c.moves, 1);
	os_attrib_sample(&a, as->id, base + 32768 + 8, 0, OS_CCT_NONE);
	cr_expect_eq(a.ctx[0].samples, 5, "the moved object keeps its context");
	cr_expect_float_eq(a.ctx[0].est_samples, 17, 1e-9, "... and its weight 4 (%f)",
			   a.ctx[0].est_samples);
	os_attrib_sample(&a, as->id, base + 4096 + 64, 0, OS_CCT_NONE);
	cr_expect_eq(a.ctx[1].samples, 5, "the dead weighted object was dropped");

	hs_test_end(&a, &tasks, heap);
}

/* Estimated allocation paths (hotspot_paths.c): long[] from two sites,
 * one sampled object each (weight 4); the first got 3 samples from access
 * path X, the second 1 from Y. 20 samples on long[]s not seen at
 * allocation are held by the class-only context: 15 read from X, 5 from
 * Y. Each path's samples go where the evidence on that path points (with
 * the class-level mix as a prior); each sample counts once. */
Test(hotspot, estimated_paths_share_held_samples)
{
	struct os_tasks tasks;
	struct os_attrib a;
	uint64_t *heap = calloc(8192, 8), base = (uintptr_t)heap, kl = (uintptr_t)&k_long_arr;
	uint64_t f1[1] = { 0x401000 }, f2[1] = { 0x402000 }, wx[1] = { 0x403000 },
		 wy[1] = { 0x404000 };
	struct hotspot *h;
	struct hs_jvm *j;
	struct os_aspace *as;
	uint32_t hd, nx, ny, ax, ay;
	double sum = 0, x1, y1;

	hs_test_hybrid_jvm(&a, &tasks, heap);
	feed(&a, mk_event(OS_EV_JALLOC, base, 4096, 16384, kl, f1, 8));
	feed(&a, mk_event(OS_EV_JALLOC, base + 8192, 4096, 16384, kl, f2, 8));
	cr_assert_eq(a.nctx, 2);
	as = os_tasks_aspace(&tasks, (uint32_t)getpid());
	cr_assert_not_null(as);
	nx = os_attrib_path(&a, as->id, wx, 1);
	ny = os_attrib_path(&a, as->id, wy, 1);
	for (int i = 0; i < 3; i++)
		os_attrib_sample(&a, as->id, base + 64, 0, nx);
	os_attrib_sample(&a, as->id, base + 8192 + 64, 0, ny);
	h = (struct hotspot *)a.rt;
	j = hs_jvm_find(h, as->id);
	cr_assert(hs_lookups_on(h, j), "vmStructs read, lookups on");
	hd = hs_class_ctx(h, j, as, kl, HS_WORD_SMALL);
	cr_assert_eq(hd, 2);
	ax = os_attrib_acc(&a, hd, nx);
	ay = os_attrib_acc(&a, hd, ny);
	a.acc[ax].samples = 15;
	a.acc[ax].tsamples = 15;
	a.acc[ay].samples = 5;
	a.acc[ay].tsamples = 5;
	a.ctx[hd].samples = 20;
	a.ctx[hd].tsamples = 20;
	a.c.samples_attributed += 20;
	a.c.samples_java_attributed += 20;
	a.tw_attributed += 20;
	a.tw_java_attributed += 20;
	hs_paths_estimate(h);
	cr_expect_eq(a.ctx[0].path_kind, OS_PATH_SITE);
	cr_expect_eq(a.ctx[hd].path_kind, OS_PATH_CLASS);
	cr_expect_float_eq(a.ctx[hd].path_est, -20, 1e-9, "launch mode: all held samples shared");
	for (uint32_t i = 0; i < a.nctx; i++)
		sum += (double)a.ctx[i].samples + a.ctx[i].path_est;
	cr_expect_float_eq(sum, (double)a.c.samples_attributed, 1e-9, "one count per sample");
	cr_expect_float_eq(a.est_attributed, (double)a.c.samples_attributed, 1e-9);
	/* unseen samples H1 = 12 - 3 = 9, H2 = 4 - 1 = 3; unseen bytes equal;
	 * evidence m = 4: r = 4 / 6; class shares q1 = 2/3 * 0.75 + 1/3 * 0.5
	 * = 2/3, q2 = 1/3. Path X: evidence 3 samples at site 1 (r = 3/5):
	 * 15 * (0.6 + 0.4 * 2/3) = 13 */
	x1 = a.acc[ax].path_est;
	cr_expect_float_eq(x1, -15, 1e-9);
	{
		uint64_t idx;

		cr_assert(os_hmap_get(&a.acc_map, (uint64_t)0 << 32 | nx, &idx));
		x1 = a.acc[idx].path_est;
		cr_assert(os_hmap_get(&a.acc_map, (uint64_t)1 << 32 | ny, &idx));
		y1 = a.acc[idx].path_est;
	}
	cr_expect_float_eq(x1, 13, 1e-9, "site 1's share of path X: %f", x1);
	/* path Y: evidence 1 sample at site 2 (r = 1/3): 5 * (1/3 + 2/3 * 1/3) */
	cr_expect_float_eq(y1, 5 * (1.0 / 3 + 2.0 / 9), 1e-9, "site 2, path Y: %f", y1);
	cr_expect_float_eq(a.ctx[0].path_est + a.ctx[1].path_est, 20, 1e-9);
	cr_expect_eq(a.ctx[0].class_seen, 2);
	cr_expect_eq(a.ctx[0].class_sites, 2);
	hs_paths_estimate(h); /* again: the same */
	cr_expect_float_eq(a.ctx[hd].path_est, -20, 1e-9);
	hs_test_end(&a, &tasks, heap);
}

/* ---- intervals of the estimated paths: replays of synthetic streams ---- */

static uint64_t rng_next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static double rng_unit(uint64_t *x)
{
	return (double)(rng_next(x) >> 11) / 9007199254740992.0;
}

/* One replay: two sites of long[] (32 seen objects each, weight w, equal
 * allocation volume); a Poisson stream of samples of mean n, each on site
 * 1 with chance p1, on an object seen at allocation with chance 1 / w
 * (charged to it), else held by the class-only context. Returns site 1's
 * figure (samples) and its standard error (*se); *ev: the split's
 * evidence. */
static double pe_replay(uint64_t *rng, double n_mean, double p1, double w, double *se,
			double *ev)
{
	unsigned n = 0;
	struct os_tasks tasks;
	struct os_attrib a;
	uint64_t *heap = calloc(8192, 8), base = (uintptr_t)heap, kl = (uintptr_t)&k_long_arr;
	uint64_t f[2][1] = { { 0x401000 }, { 0x402000 } };
	struct hotspot *h;
	struct os_aspace *as;
	uint32_t hd, held = 0;
	double f1;

	hs_test_hybrid_jvm(&a, &tasks, heap);
	for (int s = 0; s < 2; s++)
		for (int i = 0; i < 32; i++)
			feed(&a, mk_event(OS_EV_JALLOC, base + (uint64_t)(s * 32 + i) * 1024, 1024,
					  (uint64_t)(w * OS_W_ONE), kl, f[s], 8));
	cr_assert_eq(a.nctx, 2);
	as = os_tasks_aspace(&tasks, (uint32_t)getpid());
	for (double t = -log1p(-rng_unit(rng)) / n_mean; t < 1; t += -log1p(-rng_unit(rng)) / n_mean)
		n++;
	for (unsigned i = 0; i < n; i++) {
		int s = rng_unit(rng) < p1 ? 0 : 1;

		if (rng_unit(rng) < 1 / w)
			os_attrib_sample(&a, as->id,
					 base + (uint64_t)(s * 32 + rng_next(rng) % 32) * 1024 + 64, 0,
					 OS_CCT_NONE);
		else
			held++;
	}
	h = (struct hotspot *)a.rt;
	hd = hs_class_ctx(h, hs_jvm_find(h, as->id), as, kl, HS_WORD_SMALL);
	cr_assert_neq(hd, OS_NONE);
	a.ctx[hd].samples = held;
	a.ctx[hd].tsamples = held;
	a.ctx[hd].tw_sq = held;
	a.c.samples_attributed += held;
	a.c.samples_java_attributed += held;
	a.tw_attributed += held;
	a.tw_java_attributed += held;
	hs_paths_estimate(h);
	f1 = a.ctx[0].tsamples + a.ctx[0].path_est;
	*se = sqrt(os_ctx_var(&a.ctx[0]));
	*ev = a.ctx[0].evidence;
	hs_test_end(&a, &tasks, heap);
	return f1;
}

/* P(X <= k), X ~ Binomial(n, p). */
static double binom_cdf(unsigned k, unsigned n, double p)
{
	double s = 0;

	for (unsigned i = 0; i <= k; i++)
		s += exp(lgamma(n + 1.0) - lgamma(i + 1.0) - lgamma(n - i + 1.0) + i * log(p) +
			 (n - i) * log1p(-p));
	return s;
}

/* The stated 90% intervals of the estimated paths cover the truth at
 * their rate: 1,000 replays of a 4:1 split (site 1 read 0.8 of the time,
 * objects seen with chance 1/10, 300 samples each on average: about 30
 * of evidence). The truth: site 1's expected samples, 240. Covered
 * (|figure - 240| <= 1.645 se) must fall in the central range of
 * Binomial(1000, 0.9) that holds all but 1e-4 of it (5e-5 each side):
 * the chance that a right interval fails this is at most 1e-4. Replays are
 * seeded (reproducible); the bound is stated for any seed. */
Test(hotspot, estimated_paths_intervals_cover_the_truth)
{
	const unsigned R = 1000;
	uint64_t rng = 0x9e3779b97f4a7c15ULL;
	unsigned covered = 0, lo = 0, hi = R;
	double mean = 0, se, ev, mean_se = 0;

	for (unsigned r = 0; r < R; r++) {
		double s = pe_replay(&rng, 300, 0.8, 10, &se, &ev);

		mean += s / R;
		mean_se += se / R;
		covered += fabs(s - 240) <= REPORT_Z90_UNIT * se;
	}
	while (binom_cdf(lo, R, 0.9) <= 5e-5)
		lo++;
	while (hi > 0 && 1 - binom_cdf(hi - 1, R, 0.9) <= 5e-5)
		hi--;
	cr_expect(covered >= lo && covered <= hi,
		  "90%% intervals covered the truth %u times of %u (accepted %u..%u); mean "
		  "figure %.1f, mean se %.1f", covered, R, lo, hi, mean, mean_se);
	cr_expect(fabs(mean - 240) < 8, "mean figure %.1f", mean);
}

/* No single sample decides a split: one sample on an object of weight
 * 1,000 at site 1 among 20 held samples gives site 1 at most what a
 * single sample of evidence is worth (r = 1/3 of the held samples beyond
 * the volume's half), and its interval spans most of the held samples;
 * with no evidence at all the split is the volume's, its interval near
 * [0, 1] of them, and the evidence 0 says so. */
Test(hotspot, estimated_paths_no_single_sample_decides)
{
	struct os_tasks tasks;
	struct os_attrib a;
	uint64_t *heap = calloc(8192, 8), base = (uintptr_t)heap, kl = (uintptr_t)&k_long_arr;
	uint64_t f1[1] = { 0x401000 }, f2[1] = { 0x402000 };
	struct hotspot *h;
	struct os_aspace *as;
	uint32_t hd;
	double s1, se1;

	hs_test_hybrid_jvm(&a, &tasks, heap);
	feed(&a, mk_event(OS_EV_JALLOC, base, 4096, 1000 * OS_W_ONE, kl, f1, 8));
	feed(&a, mk_event(OS_EV_JALLOC, base + 8192, 4096, 1000 * OS_W_ONE, kl, f2, 8));
	as = os_tasks_aspace(&tasks, (uint32_t)getpid());
	h = (struct hotspot *)a.rt;
	hd = hs_class_ctx(h, hs_jvm_find(h, as->id), as, kl, HS_WORD_SMALL);
	a.ctx[hd].samples = 20;
	a.ctx[hd].tsamples = 20;
	a.ctx[hd].tw_sq = 20;
	a.c.samples_attributed += 20;
	a.tw_attributed += 20;
	hs_paths_estimate(h);
	cr_expect_eq(a.ctx[0].evidence, 0);
	cr_expect_float_eq(a.ctx[0].path_est, 10, 1e-9, "volume alone: halves");
	se1 = sqrt(os_ctx_var(&a.ctx[0]));
	cr_expect_gt(REPORT_Z90_UNIT * se1, 0.4 * 20, "interval near [0, 1] of the held: %f", se1);

	os_attrib_sample(&a, as->id, base + 64, 0, OS_CCT_NONE);
	a.ctx[hd].samples = 20; /* the sample above is not held */
	hs_paths_estimate(h);
	s1 = a.ctx[0].tsamples + a.ctx[0].path_est;
	cr_expect_float_eq(a.ctx[0].evidence, 1, 1e-9, "one sample is one of evidence");
	cr_expect_lt(s1, 1 + 20 * (0.5 + 0.5 / 3) + 1e-6, "site 1: %f of 21", s1);
	se1 = sqrt(os_ctx_var(&a.ctx[0]));
	cr_expect_gt(REPORT_Z90_UNIT * se1, 0.3 * 20, "interval still wide: %f", se1);
	hs_test_end(&a, &tasks, heap);
}

/* A collector reading the OS_EV_JVM of an older preload (struct without
 * tlab_bytes) still takes the info: hybrid is then weighed as T = 0, i.e. 1. */
Test(hotspot, jvm_info_shorter_struct)
{
	struct os_tasks tasks;
	struct os_attrib a;
	uint64_t *heap = calloc(1024, 8), base = (uintptr_t)heap, frames[1] = { 0x401000 };

	sampled_jvm(&a, &tasks, heap, offsetof(struct os_jvm_info, tlab_bytes));
	feed(&a, mk_event(OS_EV_JALLOC, base, 2000, 400000, (uintptr_t)&k_long_arr, frames, 8));
	cr_assert_eq(a.nctx, 1);
	cr_expect_eq(a.ctx[0].allocations, 200, "sampled mode taken from the short struct");
	hs_test_end(&a, &tasks, heap);
}

/* The JVM's own native memory is labelled by the first frame (leaf first)
 * naming a HotSpot subsystem; a native program's paths are not. */
Test(hotspot, native_memory_labels)
{
	const char *meta[] = { "os::pd_commit_memory", "os::commit_memory", NULL,
			       "metaspace::VirtualSpaceNode::commit_range", "Arena::grow" };
	const char *arena[] = { "os::malloc", "Arena::grow", "Compile::Compile" };
	const char *marena[] = { "os::malloc", "MetaspaceArena::allocate" };
	const char *gc[] = { "os::pd_commit_memory", "G1RegionToSpaceMapper::commit_regions" };
	const char *plain[] = { "malloc", "alloc_random_block", "main" };
	/* G1's card table committed with the heap's regions (javac: accessed
	 * from g1_post_barrier_slow) */
	const char *cards[] = { "os::pd_commit_memory_or_exit", "os::commit_memory_or_exit",
				"G1PageBasedVirtualSpace::commit",
				"G1RegionsLargerThanCommitSizeMapper::commit_regions",
				"HeapRegionManager::commit_regions", "HeapRegionManager::expand" };
	const char *heap[] = { "os::reserve_memory", "ReservedHeapSpace::ReservedHeapSpace" };
	const char *oopmaps[] = { "os::malloc", "AllocateHeap", "ImmutableOopMapSet::build_from",
				  "CodeBlob::CodeBlob", "nmethod::nmethod" };
	const char *dict[] = { "os::malloc", "AllocateHeap", "Hashtable::new_entry",
			       "PlaceholderTable::find_and_add", "SystemDictionary::find_or_define_helper" };
	const char *thr[] = { "os::malloc", "AllocateHeap", "Thread::allocate(unsigned long, bool, MEMFLAGS)",
			      "Threads::create_vm(JavaVMInitArgs*, bool*)" };

	cr_expect_str_eq(hs_native_type_of(meta, 5), HS_NATIVE_METASPACE);
	cr_expect_str_eq(hs_native_type_of(arena, 3), "[JVM arena: compiler and runtime scratch]");
	cr_expect_str_eq(hs_native_type_of(marena, 2), HS_NATIVE_METASPACE,
			 "MetaspaceArena is metaspace, not a compiler arena");
	cr_expect_str_eq(hs_native_type_of(gc, 2), HS_NATIVE_GC);
	cr_expect_null(hs_native_type_of(plain, 3));
	cr_expect_null(hs_native_type_of(meta, 0));
	cr_expect_str_eq(hs_native_type_of(cards, 6), HS_NATIVE_GC,
			 "the heap's auxiliary tables are GC data, not the heap");
	cr_expect_str_eq(hs_native_type_of(heap, 2), "[JVM: Java heap reservation]");
	cr_expect_str_eq(hs_native_type_of(thr, 4), "[JVM thread: its C++ Thread object]");
	cr_expect_str_eq(hs_native_type_of(oopmaps, 5), "[JVM code cache: compiled code]");
	cr_expect_str_eq(hs_native_type_of(dict, 5), "[JVM class loading: dictionaries]");
}

/* An enum constant found at a sample (not seen at its allocation) gets
 * the path its language gives it: its enum's class initializer (JLS 8.9),
 * "pkg.Color.<clinit>", marked inferred; a constant with a body of its own
 * (pkg.Color$1) too; any other class stays with the class-only context. */
Test(hotspot, enum_constants_get_their_class_initializer_path)
{
	struct os_tasks tasks;
	struct os_attrib a;
	uint64_t *heap = calloc(8192, 8), base = (uintptr_t)heap, fr[3];
	struct hotspot *h;
	struct hs_jvm *j;
	struct os_aspace *as;
	uint32_t c1, c2, c3, asid;
	const char *name = NULL;

	hs_test_hybrid_jvm(&a, &tasks, heap);
	as = os_tasks_aspace(&tasks, (uint32_t)getpid());
	cr_assert_not_null(as);
	h = (struct hotspot *)a.rt;
	j = hs_jvm_find(h, as->id);
	cr_assert(j && j->vm_ok, "vmStructs read");
	c1 = hs_class_ctx(h, j, as, (uintptr_t)&k_color, HS_WORD_SMALL);
	c2 = hs_class_ctx(h, j, as, (uintptr_t)&k_color1, HS_WORD_SMALL);
	c3 = hs_class_ctx(h, j, as, (uintptr_t)&k_string, HS_WORD_SMALL);
	cr_assert_neq(c1, OS_NONE);
	cr_assert_neq(c2, OS_NONE);
	cr_assert_neq(c1, c2, "one context per class");
	cr_assert_eq(os_attrib_unpath(&a, a.ctx[c1].node, fr, 3, &asid), 3);
	cr_expect_eq(fr[1], HS_TAG_CLINIT | (uintptr_t)&k_color);
	cr_assert_eq(a.rt->ops->name_word(a.rt, asid, fr[1], &name, NULL, NULL), OS_RT_WORD_FRAME);
	cr_expect_str_eq(name, "pkg.Color.<clinit>");
	cr_assert_eq(a.rt->ops->name_word(a.rt, asid, fr[2], &name, NULL, NULL),
		     OS_RT_WORD_SYNTHETIC, "then the mark: inferred, callers not known");
	cr_expect_str_eq(name, HS_ENUM_NAME);
	cr_assert_eq(os_attrib_unpath(&a, a.ctx[c2].node, fr, 3, &asid), 3);
	cr_expect_eq(fr[1], HS_TAG_CLINIT | (uintptr_t)&k_color, "a constant's body: its enum's");
	cr_assert_eq(os_attrib_unpath(&a, a.ctx[c3].node, fr, 3, &asid), 2);
	cr_expect_eq(fr[1], HS_WORD_SMALL, "not an enum: class only");
	cr_expect_eq(j->enum_found, 2);
	/* the estimator keeps their samples as exact ones of their site */
	os_attrib_sample(&a, as->id, base + 64, 0, OS_CCT_NONE); /* nothing there: not charged */
	a.ctx[c1].samples = a.ctx[c1].tsamples = 3;
	a.ctx[c1].est_samples = 3;
	a.c.samples_attributed += 3;
	a.c.samples_java_attributed += 3;
	a.tw_attributed += 3;
	a.tw_java_attributed += 3;
	hs_paths_estimate(h);
	cr_expect_neq(a.ctx[c1].path_kind, OS_PATH_CLASS, "an enum constant has its path");
	cr_expect_eq(a.ctx[c3].path_kind, OS_PATH_CLASS);
	hs_test_end(&a, &tasks, heap);
}
