/* Tests of the estimated allocation paths of native blocks below
 * --min-size (attacher/core/small_paths.c, docs/NATIVE.md) with synthetic
 * events and samples: weights, neighbour votes, the heat/bytes mix, one
 * count per sample. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>
#include <sys/mman.h>

#include "attacher/core/attrib.h"
#include "common/ring.h"
#include "tests/unit/unit_helpers.h"

#define PID 999999998u /* no such process: nothing is read from /proc */
#define MEAN 4096
#define HEAP 0x10000000ULL
#define SITE_A 0x400200
#define SITE_B 0x400300

static struct os_tasks tasks;
static struct os_attrib at;

static void setup(void)
{
	os_tasks_init(&tasks, NULL);
	cr_assert_eq(os_attrib_init(&at, &tasks), 0);
	at.min_size = 1024;
	at.small_sample = MEAN;
	at.small_hold = true;
	os_tasks_mmap(&tasks, PID, HEAP, 0x1000000, 0, PROT_READ | PROT_WRITE, "//anon");
}

static void teardown(void)
{
	os_attrib_destroy(&at);
	os_tasks_destroy(&tasks);
}

/* A block the malloc hooks sampled by bytes (aux2 tagged), or a FREE. */
static void event(uint16_t type, uint64_t addr, uint64_t size, uint64_t aux2, uint64_t site)
{
	ut_attrib_event(&at, PID, type, addr, size, 0, aux2, site);
}

static void small(uint64_t addr, uint64_t site)
{
	event(OS_EV_ALLOC, addr, 64, OS_SMALL_TAG | MEAN, site);
}

static void sample(uint64_t addr, uint64_t leaf)
{
	struct os_aspace *as = os_tasks_aspace(&tasks, PID);

	os_attrib_sample(&at, as->id, addr, 0, os_attrib_path(&at, as->id, &leaf, 1));
}

static struct os_ctx *ctx_of(uint64_t site)
{
	for (uint32_t i = 0; i < at.nctx; i++) {
		uint64_t pcs[8];
		uint32_t asid, n = os_attrib_unpath(&at, at.ctx[i].node, pcs, 8, &asid);

		if (n && pcs[0] == site)
			return &at.ctx[i];
	}
	return NULL;
}

TestSuite(small_paths, .init = setup, .fini = teardown);

Test(small_paths, weight_is_the_inverse_of_the_sampling_probability)
{
	double w = 1.0 / (1.0 - exp(-64.0 / MEAN));
	struct os_ctx *a;

	small(HEAP, SITE_A);
	small(HEAP + 0x1000, SITE_A);
	a = ctx_of(SITE_A);
	cr_assert_not_null(a);
	cr_expect_eq(a->small_seen, 2);
	cr_expect_eq(a->allocations, 2);
	cr_expect(fabs(a->est_allocations - 2 * w) < 0.01, "est_allocations %f, want %f",
		  a->est_allocations, 2 * w);
	cr_expect(fabs(a->est_bytes - 128 * w) < 1, "est_bytes %f", a->est_bytes);
	/* a sample on a sampled block counts its weight in the estimates */
	sample(HEAP + 8, 0x400500);
	cr_expect_eq(a->samples, 1);
	cr_expect(fabs(a->est_samples - w) < 0.01, "est_samples %f", a->est_samples);
	cr_expect(at.weighted);
	cr_expect_eq(os_small_weight_q(64, 0), OS_W_ONE);
}

/* Held samples go to the site of their nearest sampled neighbours. */
Test(small_paths, held_samples_go_to_the_nearest_sampled_site)
{
	struct os_ctx *a, *b, *h = NULL;
	double est = 0;

	small(HEAP, SITE_A);            /* a run of A's blocks ... */
	small(HEAP + 0x800, SITE_A);
	small(HEAP + 0x4000, SITE_B);   /* ... then one of B's */
	small(HEAP + 0x4800, SITE_B);
	for (int i = 0; i < 10; i++)    /* between A's blocks */
		sample(HEAP + 0x100 + 0x40 * (uint64_t)i, 0x400500);
	for (int i = 0; i < 4; i++)     /* between B's blocks */
		sample(HEAP + 0x4100 + 0x40 * (uint64_t)i, 0x400600);
	cr_expect_eq(at.small_held, 14);
	cr_expect_eq(at.c.samples_attributed, 14, "held samples count as attributed");
	os_small_estimate(&at);
	a = ctx_of(SITE_A);
	b = ctx_of(SITE_B);
	for (uint32_t i = 0; i < at.nctx; i++)
		if (at.ctx[i].path_kind == OS_PATH_CLASS)
			h = &at.ctx[i];
	cr_assert(a && b && h);
	cr_expect_eq(a->path_kind, OS_PATH_SITE);
	cr_expect(fabs(a->path_est - 10) < 1e-6, "A got %f, want 10", a->path_est);
	cr_expect(fabs(b->path_est - 4) < 1e-6, "B got %f, want 4", b->path_est);
	cr_expect(fabs(h->path_est + 14) < 1e-6, "holder gave %f", -h->path_est);
	cr_expect(fabs(at.small_voted - 14) < 1e-6);
	/* the access entries follow: A's share is on A's reading path */
	for (uint32_t i = 0; i < at.nacc; i++)
		if (at.acc[i].ctx == (uint32_t)(a - at.ctx))
			est += at.acc[i].path_est;
	cr_expect(fabs(est - 10) < 1e-6, "A's access paths got %f", est);
	/* one count per sample */
	cr_expect(fabs(at.est_attributed - 14) < 1e-6, "est_attributed %f", at.est_attributed);
	/* idempotent */
	os_small_estimate(&at);
	cr_expect(fabs(a->path_est - 10) < 1e-6, "A got %f after a second run", a->path_est);
}

/* A sampled small block of a JIT compiler thread (path OS_QUIET_WORD). */
static void quiet_small(uint64_t addr)
{
	uint64_t buf[64];
	struct os_event *ev = (struct os_event *)buf;
	struct os_obj_event oe;

	memset(buf, 0, sizeof(buf));
	ev->type = OS_EV_ALLOC;
	ev->pid = PID;
	ev->tid = PID + 1;
	ev->addr = addr;
	ev->size = 64;
	ev->aux2 = OS_SMALL_TAG | MEAN;
	ev->nframes = 1;
	ev->frames[0] = OS_QUIET_WORD;
	ev->len = os_event_len(ev->nframes);
	if (os_attrib_prepare(&at, ev, &oe))
		os_attrib_event(&at, &oe);
}

/* Held samples (other threads': the compilers' own are not attributed) go
 * to no JIT compiler thread's blocks, even the nearest: they go on to the
 * next sampled neighbour. */
Test(small_paths, held_samples_skip_compiler_threads_blocks)
{
	struct os_ctx *a, *q = NULL;

	small(HEAP, SITE_A);
	quiet_small(HEAP + 0x200);
	quiet_small(HEAP + 0x400);
	small(HEAP + 0x800, SITE_A);
	for (int i = 0; i < 6; i++)
		sample(HEAP + 0x240 + 0x40 * (uint64_t)i, 0x400500);
	os_small_estimate(&at);
	a = ctx_of(SITE_A);
	for (uint32_t i = 0; i < at.nctx; i++)
		if (at.ctx[i].quiet)
			q = &at.ctx[i];
	cr_assert(a && q);
	cr_expect(fabs(a->path_est - 6) < 1e-6, "A got %f, want 6", a->path_est);
	cr_expect(q->path_est == 0, "the compiler threads' blocks got %f", q->path_est);
}

/* Without a neighbour in reach, the shares follow the sites' unseen bytes
 * (no heat evidence) ... and a freed sampled block is no neighbour. */
Test(small_paths, far_samples_share_by_bytes)
{
	struct os_ctx *a, *b;

	small(HEAP, SITE_A);
	small(HEAP + 0x100, SITE_A);
	small(HEAP + 0x200, SITE_A);
	small(HEAP + 0x300, SITE_B);
	event(OS_EV_FREE, HEAP, 0, 0, 0);
	event(OS_EV_FREE, HEAP + 0x100, 0, 0, 0);
	event(OS_EV_FREE, HEAP + 0x200, 0, 0, 0);
	event(OS_EV_FREE, HEAP + 0x300, 0, 0, 0);
	for (int i = 0; i < 8; i++)
		sample(HEAP + 0x800000 + 0x40 * (uint64_t)i, 0x400500);
	os_small_estimate(&at);
	a = ctx_of(SITE_A);
	b = ctx_of(SITE_B);
	cr_assert(a && b);
	cr_expect(at.small_voted == 0, "voted %f", at.small_voted);
	cr_expect(fabs(a->path_est - 6) < 1e-6, "A (3 of 4 sampled blocks) got %f", a->path_est);
	cr_expect(fabs(b->path_est - 2) < 1e-6, "B got %f", b->path_est);
}

/* No sampled small block in the process: the held samples keep no path. */
Test(small_paths, no_evidence_is_counted)
{
	for (int i = 0; i < 5; i++)
		sample(HEAP + 0x40 * (uint64_t)i, 0x400500);
	os_small_estimate(&at);
	cr_expect(fabs(at.small_no_evidence - 5) < 1e-6, "no evidence %f", at.small_no_evidence);
	cr_expect(at.small_given == 0);
}

/* --small-sample 0 (or attach mode): heap samples outside any block stay
 * unattributed. */
Test(small_paths, off_holds_nothing)
{
	at.small_hold = false;
	sample(HEAP + 0x40, 0x400500);
	cr_expect_eq(at.small_held, 0);
	cr_expect_eq(at.c.samples_attributed, 0);
	cr_expect_eq(at.c.samples_heap, 1);
}
