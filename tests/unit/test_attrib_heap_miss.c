/* test_attrib_heap_miss.c - the hook through which a runtime adapter finds
 * the object of a managed-heap sample that no tracked object holds
 * (os_attrib.heap_miss, attacher/core/attrib.c). */
#include <criterion/criterion.h>
#include <string.h>
#include <sys/mman.h>

#include "attacher/core/attrib.h"
#include "common/ivindex.h"

#define PID 999999998u /* no such process: nothing is read from /proc */
#define JHEAP 0x20000000ULL
#define JHEAP_LEN 0x1000000ULL

static struct os_tasks tasks;
static struct os_attrib at;
static unsigned calls;
static bool refuse;

static bool in_heap(struct os_runtime *rt, uint32_t asid, uint64_t addr)
{
	(void)rt;
	(void)asid;
	return addr >= JHEAP && addr < JHEAP + JHEAP_LEN;
}

static const struct os_runtime_ops ops = { .name = "fake", .in_heap = in_heap };
static struct os_runtime rt = { &ops, NULL };

/* "Finds" a 4 KiB object at the 4 KiB boundary below addr. */
static uint32_t miss(void *arg, struct os_aspace *as, uint64_t addr)
{
	uint64_t frame = 0x400900, start = addr & ~0xfffULL;
	uint32_t ci;

	(void)arg;
	calls++;
	if (refuse)
		return OS_NONE;
	ci = os_attrib_context(&at, as->id, os_attrib_path(&at, as->id, &frame, 1));
	os_iv_insert(as->objects, start, start + 0x1000, ci);
	return ci;
}

static void setup(void)
{
	os_tasks_init(&tasks, NULL);
	cr_assert_eq(os_attrib_init(&at, &tasks), 0);
	os_tasks_mmap(&tasks, PID, JHEAP, JHEAP_LEN, 0, PROT_READ | PROT_WRITE, "//anon");
	os_tasks_mmap(&tasks, PID, 0x10000000, 0x100000, 0, PROT_READ | PROT_WRITE, "//anon");
	at.rt = &rt;
	at.heap_miss = miss;
	calls = 0;
	refuse = false;
}

static void teardown(void)
{
	os_attrib_destroy(&at);
	os_tasks_destroy(&tasks);
}

TestSuite(attrib_heap_miss, .init = setup, .fini = teardown);

static void sample(uint64_t addr)
{
	struct os_aspace *as = os_tasks_aspace(&tasks, PID);
	uint64_t leaf = 0x400500;

	cr_assert_not_null(as);
	os_attrib_sample(&at, as->id, addr, 0x7fff0000, os_attrib_path(&at, as->id, &leaf, 1));
}

Test(attrib_heap_miss, found_object_is_charged_and_kept)
{
	sample(JHEAP + 0x2010);
	cr_expect_eq(calls, 1);
	cr_expect_eq(at.c.samples_java_heap, 1);
	cr_expect_eq(at.c.samples_java_attributed, 1);
	cr_assert_eq(at.nctx, 1);
	cr_expect_eq(at.ctx[0].samples, 1);
	sample(JHEAP + 0x2ff8); /* same object: a direct hit */
	cr_expect_eq(calls, 1, "the adapter was asked again for a tracked object");
	cr_expect_eq(at.ctx[0].samples, 2);
	cr_expect_eq(at.nacc, 1);
	cr_expect_eq(at.acc[0].samples, 2);
}

Test(attrib_heap_miss, not_found_counts_as_java_heap_only)
{
	refuse = true;
	sample(JHEAP + 0x10);
	cr_expect_eq(calls, 1);
	cr_expect_eq(at.c.samples_java_heap, 1);
	cr_expect_eq(at.c.samples_java_attributed, 0);
	cr_expect_eq(at.c.samples_attributed, 0);
}

Test(attrib_heap_miss, not_asked_outside_the_managed_heap)
{
	sample(0x10000010);
	cr_expect_eq(calls, 0);
	cr_expect_eq(at.c.samples_java_heap, 0);
}
