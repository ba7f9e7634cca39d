/* Tests of the collector's side of in-target replica comparisons
 * (attacher/analyses/replica_target.c) on a shared header of the test's own:
 * the test plays the target (claims, arms, hits, kills entries as
 * preload/replica.c does) and checks what the collector publishes, compares
 * and counts. The hit objects live in this process (the exact figure reads
 * them with process_vm_readv on itself). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attacher/analyses/replica.h"
#include "common/replica_math.h"
#include "common/shm.h"

#define OBJ 256
#define CTX 3
#define GAP_US 110000 /* > the collector's 100 ms between publications of a context */

static struct os_shm_header *H;
static struct os_rep *R;
static struct os_rep_tgt *T;
static uint8_t *objs; /* target objects, OBJ bytes each */
static const uint64_t path[3] = { 0x401000, 0x402000, 0x403000 };

static int b_arm(void *a, pid_t p, pid_t t, uint64_t addr, unsigned len, uint64_t c, uint64_t m)
{
	(void)a, (void)p, (void)t, (void)addr, (void)len, (void)c, (void)m;
	return -ENOSPC; /* the collector's own watchpoints are not under test */
}

static int b_disarm(void *a, uint64_t c)
{
	(void)a, (void)c;
	return -ENOENT;
}

static int b_poll(void *a, struct watch_hit *h, int max)
{
	(void)a, (void)h, (void)max;
	return 0;
}

static ssize_t b_read(void *a, pid_t p, uint64_t addr, void *buf, size_t len)
{
	(void)a, (void)p, (void)addr;
	memset(buf, 0, len);
	return (ssize_t)len;
}

static void setup(void)
{
	struct os_rep_backend be = { .arm = b_arm, .disarm = b_disarm, .poll = b_poll,
				     .read = b_read };
	struct os_rep_sample s = { .time = 1, .pid = 1, .tid = 1, .ctx = CTX, .lo = 0x1000,
				   .hi = 0x1000 + OBJ, .addr = 0x1040, .width = 8,
				   .value_ok = true, .word8 = 0x1111 };

	H = calloc(1, sizeof(*H));
	objs = calloc(8, OBJ);
	cr_assert(H && objs);
	R = os_rep_new(NULL, &be);
	T = os_rep_tgt_new(H, 500000000ULL);
	cr_assert(R && T);
	os_rep_sample(R, &s); /* a reference of CTX: offset 0x40, 8 bytes */
	os_rep_tgt_site(T, CTX, 0, (uint32_t)getpid(), path, 3);
}

static void teardown(void)
{
	os_rep_tgt_free(T);
	os_rep_free(R);
	free(H);
	free(objs);
}

TestSuite(replica_target, .init = setup, .fini = teardown);

/* The one PENDING entry (its index), checked against what was published. */
static unsigned pending(void)
{
	unsigned n = 0, at = 0;

	for (unsigned i = 0; i < OS_REP_SLOTS; i++)
		if (OS_REP_ST(atomic_load(&H->rep[i].sg)) == OS_REP_PENDING) {
			n++;
			at = i;
		}
	cr_assert_eq(n, 1, "%u entries pending", n);
	cr_assert_eq(H->rep[at].key, os_rep_site_key(path, 3));
	cr_assert_eq(H->rep[at].pid, (uint32_t)getpid());
	cr_assert_eq(H->rep[at].off, 0x40);
	cr_assert_eq(H->rep[at].width, 8);
	cr_assert(os_rep_filter_has(H->rep_filter, H->rep[at].key), "site not in the filter");
	cr_assert_eq(atomic_load(&H->rep_live), 1);
	return at;
}

/* What the target does: claim, arm on object k, then (hit) leave value. */
static void arm(unsigned i, unsigned k)
{
	struct os_rep_entry *e = &H->rep[i];
	uint64_t sg = atomic_load(&e->sg);

	cr_assert(atomic_compare_exchange_strong(&e->sg, &sg, OS_REP_SG(sg >> 8, OS_REP_CLAIMED)));
	e->obj = (uint64_t)(uintptr_t)(objs + k * OBJ);
	e->size = OBJ;
	e->time = 0;
	atomic_store(&e->alive, 1);
	atomic_store(&e->sg, OS_REP_SG(sg >> 8, OS_REP_ARMED));
}

static void hit(unsigned i, uint64_t value)
{
	struct os_rep_entry *e = &H->rep[i];
	uint64_t sg = atomic_load(&e->sg);

	e->value = value;
	atomic_store(&e->sg, OS_REP_SG(sg >> 8, OS_REP_HIT));
}

static void counts(uint64_t eq, uint64_t diff)
{
	struct os_replica c;

	os_rep_counts(R, CTX, &c);
	cr_expect_eq(c.equivalent, eq, "equivalent %llu", (unsigned long long)c.equivalent);
	cr_expect_eq(c.different, diff, "different %llu", (unsigned long long)c.different);
}

/* A new offset first takes its reference from a hit, then later objects
 * are compared against it: equal, then different. Every hit object is
 * hashed for the exact figure (two copies and one different object); the
 * context's later samples are not hashed any more. */
Test(replica_target, reference_then_comparisons)
{
	struct os_rep_tgt_stats st;
	struct os_replica c;
	unsigned i;

	os_rep_tgt_poll(T, R);
	i = pending();
	arm(i, 0);
	memset(objs, 7, OBJ);
	hit(i, 0x7777);
	os_rep_tgt_poll(T, R); /* the reference: no comparison */
	counts(0, 0);
	usleep(GAP_US);
	os_rep_tgt_poll(T, R);
	i = pending();
	arm(i, 1);
	memset(objs + OBJ, 7, OBJ);
	hit(i, 0x7777);
	os_rep_tgt_poll(T, R);
	counts(1, 0);
	usleep(GAP_US);
	os_rep_tgt_poll(T, R);
	i = pending();
	arm(i, 2);
	memset(objs + 2 * OBJ, 9, OBJ);
	hit(i, 0x1234);
	os_rep_tgt_poll(T, R);
	counts(1, 1);
	os_rep_tgt_get_stats(T, &st);
	cr_expect_eq(st.calibrated, 1);
	cr_expect_eq(st.hits, 2);
	cr_expect_eq(st.exact_hashed, 3);
	{
		struct os_rep_sample s = { .time = 2, .pid = 1, .tid = 1, .ctx = CTX, .lo = 0x2000,
					   .hi = 0x2000 + OBJ, .addr = 0x2040, .width = 8,
					   .value_ok = true, .word8 = 0x1111 };
		struct os_rep_stats rs;

		os_rep_sample(R, &s);
		os_rep_get_stats(R, &rs);
		cr_expect_eq(rs.exact_by_target, 1);
	}
	os_rep_finish(R);
	os_rep_counts(R, CTX, &c);
	/* and the sampled object (zeros, hashed from its sample before the
	 * target hashed any object of the context): no twin */
	cr_expect_eq(c.exact_objects, 4);
	cr_expect_eq(c.exact_twins, 2, "the two copies are twins");
}

/* An object that died before its hit is counted, not compared; one that
 * died while the collector read it is not hashed. */
Test(replica_target, dead_objects_counted)
{
	struct os_rep_tgt_stats st;
	unsigned i;

	os_rep_tgt_poll(T, R);
	i = pending();
	arm(i, 0);
	{ /* the free hook: not alive, ARMED -> DEAD */
		uint64_t sg = atomic_load(&H->rep[i].sg);

		atomic_store(&H->rep[i].alive, 0);
		cr_assert(atomic_compare_exchange_strong(&H->rep[i].sg, &sg,
							 OS_REP_SG(sg >> 8, OS_REP_DEAD)));
	}
	os_rep_tgt_poll(T, R);
	usleep(GAP_US);
	os_rep_tgt_poll(T, R);
	i = pending();
	arm(i, 1);
	hit(i, 0x1111);
	atomic_store(&H->rep[i].alive, 0); /* freed after the hit */
	os_rep_tgt_poll(T, R);
	os_rep_tgt_get_stats(T, &st);
	cr_expect_eq(st.dead, 1);
	cr_expect_eq(st.calibrated, 1);
	cr_expect_eq(st.exact_dead, 1);
	cr_expect_eq(st.exact_hashed, 0);
	counts(0, 0);
}

/* A failed arm and an entry still claimed at the stop are counted; after
 * the stop nothing is published and pending entries are withdrawn. */
Test(replica_target, stop_and_failures_counted)
{
	struct os_rep_tgt_stats st;
	unsigned i;
	uint64_t sg;

	os_rep_tgt_poll(T, R);
	i = pending();
	sg = atomic_load(&H->rep[i].sg);
	H->rep[i].err = -EACCES;
	atomic_store(&H->rep[i].sg, OS_REP_SG(sg >> 8, OS_REP_FAILED));
	os_rep_tgt_poll(T, R);
	usleep(GAP_US);
	os_rep_tgt_poll(T, R);
	i = pending();
	os_rep_tgt_stop(T, R);
	os_rep_tgt_get_stats(T, &st);
	cr_expect_eq(st.failed, 1);
	cr_expect_eq(st.last_err, EACCES);
	cr_expect_eq(st.withdrawn, 1);
	cr_expect_eq(st.published, 2);
	cr_expect_eq(st.left_in_flight, 0);
	cr_expect_eq(atomic_load(&H->rep_live), 0);
	usleep(GAP_US);
	os_rep_tgt_poll(T, R);
	os_rep_tgt_get_stats(T, &st);
	cr_expect_eq(st.published, 2, "published after the stop");
}

/* Publishing driven by allocations: of 600 keyed sites, the one whose
 * allocation was just drained gets its entry in the first round, although
 * the round-robin (128 sites a round) would reach it in the third. */
Test(replica_target, just_allocated_site_first)
{
	struct os_rep_tgt_stats st;
	uint64_t p400[3] = { 0x500000 + 400 * 16, 0x402000, 0x403000 }, key400;
	struct os_rep_sample s = { .time = 3, .pid = 1, .tid = 1, .ctx = 400, .lo = 0x3000,
				   .hi = 0x3000 + OBJ, .addr = 0x3040, .width = 8,
				   .value_ok = true, .word8 = 0x2222 };
	unsigned found = 0, n = 0;

	for (uint32_t c = 100; c < 700; c++) {
		uint64_t p[3] = { 0x500000 + c * 16, 0x402000, 0x403000 };

		os_rep_tgt_site(T, c, 0, (uint32_t)getpid(), p, 3);
	}
	os_rep_sample(R, &s); /* a reference of context 400 only */
	os_rep_tgt_site(T, 400, 0, (uint32_t)getpid(), p400, 3); /* its allocation, drained now */
	key400 = os_rep_site_key(p400, 3);
	os_rep_tgt_poll(T, R);
	for (unsigned i = 0; i < OS_REP_SLOTS; i++)
		if (OS_REP_ST(atomic_load(&H->rep[i].sg)) == OS_REP_PENDING) {
			n++;
			found += H->rep[i].key == key400;
		}
	cr_expect_eq(found, 1, "context 400 not published in the first round (%u pending)", n);
	os_rep_tgt_get_stats(T, &st);
	cr_expect_eq(st.after_alloc, 1, "%llu published after an allocation",
		     (unsigned long long)st.after_alloc);
}
