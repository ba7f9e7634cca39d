/* test_hotspot_scan.c - finding the object that holds a sampled Java-heap
 * address by reading headers (runtimes/hotspot/hotspot_scan.c), on a synthetic heap
 * and metaspace served by a fake memory reader. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/hotspot/hotspot_scan.h"
#include "runtimes/hotspot/hotspot_vm.h"

#define HEAP 0x40000000ULL
#define HEAP_LEN (2ULL << 20)
#define META 0x800000000ULL
#define META_LEN 0x10000ULL
#define K_LONG (META + 0x100)
#define K_NODE (META + 0x200)
#define K_BAD (META + 0x300)
#define LH_LONG ((int32_t)(0xC0000000u | 16u << 16 | 11u << 8 | 3u))
#define SEC 1000000000ULL

static uint8_t *heap, *meta;

static ssize_t rd(void *arg, uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	(void)arg;
	(void)pid;
	if (addr >= HEAP && addr + len <= HEAP + HEAP_LEN)
		memcpy(buf, heap + (addr - HEAP), len);
	else if (addr >= META && addr + len <= META + META_LEN)
		memcpy(buf, meta + (addr - META), len);
	else
		return -1;
	return (ssize_t)len;
}

static const struct os_hs_mem mem = { rd, NULL, NULL };

static void put(uint8_t *base, uint64_t off, const void *v, size_t n)
{
	memcpy(base + off, v, n);
}

static void klass(uint64_t k, int32_t lh, uint64_t sym, const char *name)
{
	uint16_t len = (uint16_t)strlen(name);

	put(meta, k - META + 8, &lh, 4);
	put(meta, k - META + 16, &sym, 8);
	put(meta, sym - META, &len, 2);
	put(meta, sym - META + 6, name, len);
}

/* A header at heap address a: unlocked mark, narrow klass, array length. */
static void header(uint64_t a, uint64_t k, int32_t len)
{
	uint64_t mark = 1;
	uint32_t nk = (uint32_t)((k - META) >> 3);

	put(heap, a - HEAP, &mark, 8);
	put(heap, a - HEAP + 8, &nk, 4);
	if (len >= 0)
		put(heap, a - HEAP + 12, &len, 4);
}

static struct os_hs_vm vm;
static struct os_hs_scan sc;

static void setup(void)
{
	heap = calloc(1, HEAP_LEN);
	meta = calloc(1, META_LEN);
	cr_assert(heap && meta);
	klass(K_LONG, LH_LONG, META + 0x1000, "[J");
	klass(K_NODE, 40, META + 0x1100, "pkg/Node");
	klass(K_BAD, 40, META + 0x1200, "no way!");
	memset(&vm, 0, sizeof(vm));
	cr_assert_eq(os_hs_vm_add(&vm, "Klass::_name", 16, false), 0);
	cr_assert_eq(os_hs_vm_add(&vm, "Klass::_layout_helper", 8, false), 0);
	cr_assert_eq(os_hs_vm_add(&vm, "Symbol::_length", 0, false), 0);
	cr_assert_eq(os_hs_vm_add(&vm, "Symbol::_body", 6, false), 0);
	cr_assert_eq(os_hs_vm_add(&vm, "oopDesc::_metadata._klass", 8, false), 0);
	cr_assert_eq(os_hs_vm_add(&vm, "oopDesc::_metadata._compressed_klass", 8, false), 0);
	cr_assert_eq(os_hs_vm_finish(&vm, &mem, 1), 0);
	vm.lay.narrow_klass_base = META;
	vm.lay.narrow_klass_shift = 3;
	os_hs_scan_init(&sc);
	/* long[100] at 0, Node at 816, long[1000] at 856 (its data holds a
	 * forged Node header at +4000), zeros from 8872 on, long[40000] at
	 * 1 MiB (larger than the window) */
	header(HEAP, K_LONG, 100);
	header(HEAP + 816, K_NODE, -1);
	header(HEAP + 856, K_LONG, 1000);
	for (uint64_t i = 0; i < 1000; i++) {
		uint64_t v = i * 31 + 7;

		put(heap, 856 + 16 + i * 8, &v, 8);
	}
	header(HEAP + 856 + 4000, K_NODE, -1);
	header(HEAP + (1 << 20), K_LONG, 40000);
}

static void teardown(void)
{
	os_hs_scan_destroy(&sc);
	os_hs_vm_free(&vm);
	free(heap);
	free(meta);
}

TestSuite(hotspot_scan, .init = setup, .fini = teardown);

static int find(uint64_t addr, uint64_t now, struct os_hs_found *f)
{
	return os_hs_scan_find(&sc, &vm, &mem, 1, HEAP, HEAP + HEAP_LEN, addr, now, NULL, NULL, f);
}

Test(hotspot_scan, finds_arrays_and_instances)
{
	struct os_hs_found f;

	vm.lay.compressed_klass = -1; /* learnt from the first header */
	cr_assert_eq(find(HEAP + 400, SEC, &f), 1);
	cr_expect_eq(f.start, HEAP);
	cr_expect_eq(f.size, 816);
	cr_expect_eq(f.klass, K_LONG);
	cr_expect_eq(vm.lay.compressed_klass, 1);
	cr_assert_eq(find(HEAP + 816 + 20, SEC, &f), 1);
	cr_expect_eq(f.start, HEAP + 816);
	cr_expect_eq(f.size, 40);
	cr_expect_eq(f.klass, K_NODE);
	cr_assert_eq(find(HEAP + 816, SEC, &f), 1, "the header word itself");
	cr_expect_eq(f.start, HEAP + 816);
	cr_expect_eq(sc.found, 3);
	cr_expect_eq(sc.rejected, 0);
}

/* A word pair inside long[] data that looks like a Node header covering
 * the address is rejected (the word at its end is no header) and the walk
 * reaches the array's own header. */
Test(hotspot_scan, forged_header_in_array_data_rejected)
{
	struct os_hs_found f;

	vm.lay.compressed_klass = 1;
	cr_assert_eq(find(HEAP + 856 + 4000 + 24, SEC, &f), 1);
	cr_expect_eq(f.start, HEAP + 856);
	cr_expect_eq(f.size, 16 + 8000);
	cr_expect_eq(f.klass, K_LONG);
	cr_expect_eq(sc.rejected, 1);
}

/* The newest object of a TLAB is followed by old data (TLABs are not
 * zeroed): found all the same when nothing further down covers the
 * address, and counted as such. */
Test(hotspot_scan, newest_object_before_old_data)
{
	struct os_hs_found f;
	uint64_t junk = 0x123456789abcdef1ULL;

	vm.lay.compressed_klass = 1;
	header(HEAP + 20000, K_NODE, -1);
	put(heap, 20000 + 40, &junk, 8);
	cr_assert_eq(find(HEAP + 20010, SEC, &f), 1, "the newest object was not found");
	cr_expect_eq(f.start, HEAP + 20000);
	cr_expect_eq(f.size, 40);
	cr_expect_eq(f.klass, K_NODE);
	cr_expect_eq(sc.unverified_end, 1);
	cr_expect(!f.forwarded);
	cr_expect_eq(sc.rejected, 1);
}

/* What a collection leaves in from-space: the mark word is the forwarding
 * pointer (the copy's address | 3), the class word intact. GC threads'
 * samples fall there; the object is typed by its class all the same. */
Test(hotspot_scan, forwarded_object_typed)
{
	struct os_hs_found f;
	uint64_t fwd = (HEAP + 0x40000) | 3;

	vm.lay.compressed_klass = 1;
	header(HEAP + 30000, K_NODE, -1);
	put(heap, 30000, &fwd, 8);
	cr_assert_eq(find(HEAP + 30016, SEC, &f), 1, "a forwarded object was not found");
	cr_expect_eq(f.start, HEAP + 30000);
	cr_expect_eq(f.klass, K_NODE);
	cr_expect_eq(f.size, 40);
	cr_expect(f.forwarded, "not said to be a forwarded copy");
	fwd = 3; /* "forwarded" to nowhere: no object */
	put(heap, 30000, &fwd, 8);
	cr_expect_eq(find(HEAP + 30016, 3 * SEC, &f), 0, "a forwarding pointer to 0 was taken");
}

/* A header whose klass has no valid class name is no object. */
Test(hotspot_scan, bad_klass_is_no_object)
{
	struct os_hs_found f;

	vm.lay.compressed_klass = 1;
	header(HEAP + 856 + 2000, K_BAD, -1);
	cr_assert_eq(find(HEAP + 856 + 2010, SEC, &f), 1, "the walk goes on to the array below");
	cr_expect_eq(f.start, HEAP + 856);
	cr_expect_eq(f.size, 8016);
	cr_expect_eq(sc.rejected, 0);
	header(HEAP + 9000, K_BAD, -1);
	cr_expect_eq(find(HEAP + 9010, SEC, &f), 0, "only a bad header below");
}

/* Nothing below: not found, the page is left alone for a while, and the
 * scans per second are capped. */
Test(hotspot_scan, negative_cache_and_rate_cap)
{
	struct os_hs_found f;
	uint64_t empty = HEAP + 200000;

	vm.lay.compressed_klass = 1;
	cr_expect_eq(find(empty, SEC, &f), 0);
	cr_expect_eq(find(empty + 8, SEC + 1000, &f), -EAGAIN, "same page, just after");
	cr_expect_eq(find(empty + 8, SEC + OS_HS_SCAN_NEG_NS + 1, &f), 0, "scanned again later");
	cr_expect_eq(sc.not_found, 2);
	cr_expect_eq(sc.skipped, 1);
	sc.max_per_sec = 2;
	cr_expect_eq(find(HEAP + 100, 5 * SEC, &f), 1);
	cr_expect_eq(find(HEAP + 200, 5 * SEC + 1, &f), 1);
	cr_expect_eq(find(HEAP + 300, 5 * SEC + 2, &f), -EAGAIN, "third scan in one second");
	cr_expect_eq(find(HEAP + 300, 6 * SEC + 3, &f), 1, "next second");
	cr_expect_eq(sc.scans, 5);
}

/* An object larger than the window that starts at an aligned address
 * (G1 humongous) is found from its region start. */
Test(hotspot_scan, large_object_at_region_start)
{
	struct os_hs_found f;

	vm.lay.compressed_klass = 1;
	cr_assert_eq(find(HEAP + (1 << 20) + 200000, SEC, &f), 1);
	cr_expect_eq(f.start, HEAP + (1 << 20));
	cr_expect_eq(f.size, 16 + 320000);
	cr_expect_eq(find(HEAP + (1 << 20) + 400000, SEC, &f), 0, "past its end");
}

static bool all_tracked(void *arg, uint64_t start, uint64_t end)
{
	(void)arg;
	(void)start;
	(void)end;
	return true;
}

/* A candidate overlapping tracked objects is rejected. */
Test(hotspot_scan, overlap_with_tracked_rejected)
{
	struct os_hs_found f;

	vm.lay.compressed_klass = 1;
	cr_expect_eq(os_hs_scan_find(&sc, &vm, &mem, 1, HEAP, HEAP + HEAP_LEN, HEAP + 400, SEC,
				     all_tracked, NULL, &f),
		     0);
	cr_expect_geq(sc.rejected, 1);
}

/* Launch mode looks only for objects smaller than --min-size: the window
 * reaches `back` bytes below the address and no large object is looked for
 * at aligned starts. */
Test(hotspot_scan, window_limited_by_back)
{
	struct os_hs_found f;

	vm.lay.compressed_klass = 1;
	sc.back = 64;
	cr_assert_eq(find(HEAP + 816 + 20, SEC, &f), 1, "a Node 20 bytes below");
	cr_expect_eq(f.start, HEAP + 816);
	cr_expect_eq(f.size, 40);
	/* long[1000]'s header is 3,000 bytes below: out of reach */
	cr_expect_eq(find(HEAP + 856 + 3000, SEC, &f), 0);
	/* the humongous long[40000] starts 200,000 bytes below at 1 MiB */
	cr_expect_eq(find(HEAP + (1 << 20) + 200000, 2 * SEC, &f), 0);
	sc.back = 0;
	cr_assert_eq(find(HEAP + 856 + 3000, 3 * SEC, &f), 1, "found with the full window");
	cr_expect_eq(f.start, HEAP + 856);
}

/* Class names a found header must carry: binary names and array
 * descriptors; single bytes of garbage (seen as types ";", "\x80") are not. */
Test(hotspot_scan, class_names_checked)
{
	const char *good[] = { "java/lang/String", "[J", "[[I", "[Ljava/lang/Object;", "Y",
			       "ObjFixture$Cell", "java/lang/invoke/LambdaForm$MH/0x0000000800c0c800",
			       "caf\xc3\xa9/Cr\xc3\xa8me" };
	const char *bad[] = { ";", "\x80", "\xc3", "[", "[L;", "[Q", "[Ljava/lang/Object",
			      "java//lang", "/x", "x/", "9abc", "a b", "a;b", "[[", "\xc3(" };

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		cr_expect(os_hs_class_name_ok(good[i], (uint16_t)strlen(good[i])), "%s refused",
			  good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect(!os_hs_class_name_ok(bad[i], (uint16_t)strlen(bad[i])), "%s taken",
			  bad[i]);
	cr_expect(!os_hs_class_name_ok("", 0));
}
