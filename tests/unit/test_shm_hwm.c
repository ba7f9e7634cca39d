/* test_shm_hwm.c - the claimed-slot high-water mark of common/shm.h and the
 * collector's drain bounded by it (attacher/core/shm_host.c). */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attacher/core/shm_host.h"

static void put_event(struct os_shm_header *h, uint32_t idx, uint64_t addr)
{
	struct os_slot *s = os_shm_slot(h, idx);
	uint32_t len = os_event_len(0);
	struct os_event *ev = os_ring_reserve(s, h->ring_bytes, len);

	cr_assert_not_null(ev);
	memset(ev, 0, len);
	ev->type = OS_EV_ALLOC;
	ev->len = len;
	ev->addr = addr;
	os_ring_commit(s, ev);
}

static void count_ev(const struct os_event *ev, void *arg)
{
	uint64_t *sum = arg;

	*sum += ev->addr;
}

Test(shm_host, note_slot_is_a_max)
{
	struct os_shm_header h;

	memset(&h, 0, sizeof(h));
	h.nslots = 16;
	cr_expect_eq(os_shm_slots_used(&h), 0);
	os_shm_note_slot(&h, 3);
	cr_expect_eq(atomic_load(&h.slots_hwm), 4);
	os_shm_note_slot(&h, 1); /* never lowered */
	cr_expect_eq(atomic_load(&h.slots_hwm), 4);
	os_shm_note_slot(&h, 9);
	cr_expect_eq(os_shm_slots_used(&h), 10);
	atomic_store(&h.slots_hwm, 1000); /* a corrupt mark is clamped */
	cr_expect_eq(os_shm_slots_used(&h), 16);
}

struct racer {
	struct os_shm_header *h;
	uint32_t base;
};

static void *race(void *arg)
{
	struct racer *r = arg;

	for (uint32_t i = 0; i < 20000; i++)
		os_shm_note_slot(r->h, (i * 7 + r->base) % 4000);
	return NULL;
}

Test(shm_host, note_slot_concurrent_max)
{
	struct os_shm_header h;
	struct racer r[4];
	pthread_t t[4];

	memset(&h, 0, sizeof(h));
	h.nslots = 4096;
	for (int i = 0; i < 4; i++) {
		r[i] = (struct racer){ &h, (uint32_t)i };
		cr_assert_eq(pthread_create(&t[i], NULL, race, &r[i]), 0);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	cr_expect_eq(atomic_load(&h.slots_hwm), 4000); /* the largest index noted + 1 */
}

Test(shm_host, drain_stops_at_the_mark)
{
	struct os_shm_host host;
	struct os_shm_header *h;
	uint64_t sum = 0;

	cr_assert_eq(os_shm_host_create(&host, 8, 4096, 0, 0), 0);
	h = host.hdr;
	cr_expect_eq(h->version, OS_SHM_VERSION);
	cr_expect_eq(atomic_load(&h->slots_hwm), 0);
	/* slot 0 claimed the regular way, slot 5 made ACTIVE without a note */
	atomic_store(&os_shm_slot(h, 0)->state, OS_SLOT_ACTIVE);
	os_shm_note_slot(h, 0);
	put_event(h, 0, 1);
	atomic_store(&os_shm_slot(h, 5)->state, OS_SLOT_ACTIVE);
	put_event(h, 5, 100);
	cr_expect_eq(os_shm_host_drain(&host, count_ev, &sum), 1);
	cr_expect_eq(sum, 1);
	/* above the mark: not visited, the event waits in its ring */
	cr_expect_eq(atomic_load(&os_shm_slot(h, 5)->tail), 0);
	os_shm_note_slot(h, 5);
	cr_expect_eq(os_shm_host_drain(&host, count_ev, &sum), 1);
	cr_expect_eq(sum, 101);
	/* an exited slot below the mark is still recycled */
	put_event(h, 5, 1000);
	atomic_store(&os_shm_slot(h, 5)->state, OS_SLOT_EXITED);
	cr_expect_eq(os_shm_host_drain(&host, count_ev, &sum), 1);
	cr_expect_eq(sum, 1101);
	cr_expect_eq(atomic_load(&os_shm_slot(h, 5)->state), OS_SLOT_FREE);
	os_shm_host_destroy(&host);
}

/* A JIT compiler thread asked for blocks without paths (os_slot.quiet):
 * only its own slot, active, of its pid and tid, for its current claim; a
 * slot claimed again (generation bumped) is not quiet. */
Test(shm_host, quiet_thread_is_one_claim)
{
	struct os_shm_host host;
	struct os_shm_header *h;
	struct os_slot *a, *b;

	cr_assert_eq(os_shm_host_create(&host, 8, 4096, 0, 0), 0);
	h = host.hdr;
	a = os_shm_slot(h, 0);
	b = os_shm_slot(h, 1);
	a->pid = b->pid = 100;
	a->tid = 101;
	b->tid = 102;
	a->generation = 3;
	b->generation = 7;
	atomic_store(&a->state, OS_SLOT_ACTIVE);
	atomic_store(&b->state, OS_SLOT_ACTIVE);
	os_shm_note_slot(h, 1);
	cr_expect_eq(os_shm_host_quiet_thread(&host, 100, 103), 0, "no slot of tid 103");
	cr_expect_eq(os_shm_host_quiet_thread(&host, 99, 101), 0, "another pid");
	cr_expect_eq(os_shm_host_quiet_thread(&host, 100, 101), 1);
	cr_expect_eq(atomic_load(&a->quiet), a->generation, "quiet for this claim");
	cr_expect_eq(atomic_load(&b->quiet), 0, "the other thread untouched");
	a->generation++; /* exited, claimed again by another thread */
	cr_expect_neq(atomic_load(&a->quiet), a->generation, "a new claim is not quiet");
	atomic_store(&b->state, OS_SLOT_EXITED);
	cr_expect_eq(os_shm_host_quiet_thread(&host, 100, 102), 0, "an exited slot");
	os_shm_host_destroy(&host);
}

/* The target's user may write the header: the drain keeps to the geometry
 * it created the rings with. Rewritten between drains, then by a second
 * thread while draining. */
Test(shm_host, header_scribbled_geometry_ignored)
{
	struct os_shm_host host;
	struct os_shm_header *h;
	uint64_t sum = 0;
	struct os_slot_stats_total t;

	cr_assert_eq(os_shm_host_create(&host, 4, 4096, 0, 0), 0);
	h = host.hdr;
	for (uint32_t i = 0; i < 4; i++) {
		atomic_store(&os_shm_slot(h, i)->state, OS_SLOT_ACTIVE);
		os_shm_note_slot(h, i);
		put_event(h, i, 1u << i);
	}
	h->ring_bytes = 1ULL << 62; /* os_shm_slot(h, 1) would be far outside */
	h->nslots = UINT32_MAX;
	atomic_store(&h->slots_hwm, UINT32_MAX);
	cr_expect_eq(os_shm_host_drain(&host, count_ev, &sum), 4);
	cr_expect_eq(sum, 15);
	cr_expect_eq(host.bad_bytes, 0);
	os_shm_host_thread_gone(&host, 0, 0);
	os_shm_host_totals(&host, &t);
	h->ring_bytes = 3;
	h->nslots = 0;
	atomic_store(&h->slots_hwm, 2);
	cr_expect_eq(os_shm_host_drain(&host, count_ev, &sum), 0);
	os_shm_host_destroy(&host);
}

struct scribbler {
	struct os_shm_header *h;
	_Atomic bool stop;
};

static void *scribble(void *arg)
{
	struct scribbler *sc = arg;
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	while (!atomic_load_explicit(&sc->stop, memory_order_relaxed)) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		__atomic_store_n(&sc->h->ring_bytes, x, __ATOMIC_RELAXED);
		__atomic_store_n(&sc->h->nslots, (uint32_t)(x >> 32), __ATOMIC_RELAXED);
		atomic_store_explicit(&sc->h->slots_hwm, (uint32_t)x, memory_order_relaxed);
		/* slot 1's head and tail, and the first word of its records */
		struct os_slot *s = (struct os_slot *)((uint8_t *)sc->h + OS_SHM_HDR +
						       (OS_SLOT_HDR + 4096));
		if (x & 1)
			atomic_store_explicit(&s->head, x >> 8, memory_order_relaxed);
		else
			atomic_store_explicit(&s->tail, x >> 9, memory_order_relaxed);
		__atomic_store_n((uint64_t *)(os_slot_data(s) + (x & 4095 & ~7ULL)), x,
				 __ATOMIC_RELAXED);
	}
	return NULL;
}

Test(shm_host, header_scribbled_while_draining, .timeout = 60)
{
	struct os_shm_host host;
	struct scribbler sc = { 0 };
	uint64_t sum = 0, handed = 0;
	pthread_t th;

	cr_assert_eq(os_shm_host_create(&host, 4, 4096, 0, 0), 0);
	for (uint32_t i = 0; i < 4; i++)
		atomic_store(&os_shm_slot(host.hdr, i)->state, OS_SLOT_ACTIVE);
	sc.h = host.hdr;
	cr_assert_eq(pthread_create(&th, NULL, scribble, &sc), 0);
	/* 200000 rounds at least, and until the scribbles were seen (a while) */
	for (long r = 0; r < 200000 || (!host.bad_bytes && r < 200000000); r++) {
		handed += os_shm_host_drain(&host, count_ev, &sum);
		if (r % 1024 == 0)
			sched_yield();
	}
	atomic_store(&sc.stop, true);
	pthread_join(th, NULL);
	cr_expect_gt(host.bad_bytes, 0, "the scribbles were seen and counted");
	os_shm_host_destroy(&host);
}

/* The rings' file cut short under the mapping (the target's user owns it in
 * attach mode): the collector reads zeros there instead of taking SIGBUS. */
Test(shm_host, file_cut_short_reads_as_empty)
{
	struct os_shm_host host;
	struct os_slot_stats_total t;
	uint64_t sum = 0;

	cr_assert_eq(os_shm_host_create(&host, 4, 4096, 0, 0), 0);
	for (uint32_t i = 0; i < 4; i++) {
		atomic_store(&os_shm_slot(host.hdr, i)->state, OS_SLOT_ACTIVE);
		os_shm_note_slot(host.hdr, i);
		put_event(host.hdr, i, 1u << i);
	}
	/* slot 0 stays whole, the others are cut off */
	cr_assert_eq(ftruncate(host.fd, OS_SHM_HDR + OS_SLOT_HDR + 4096), 0);
	cr_expect_eq(os_shm_host_drain(&host, count_ev, &sum), 1);
	cr_expect_eq(sum, 1);
	cr_expect(host.cut);
	/* all of it, header too */
	cr_assert_eq(ftruncate(host.fd, 0), 0);
	cr_expect_eq(os_shm_host_drain(&host, count_ev, &sum), 0);
	os_shm_host_totals(&host, &t);
	os_shm_host_thread_gone(&host, 1, 0);
	cr_expect_eq(atomic_load(&host.hdr->processes), 0);
	os_shm_host_destroy(&host);
}

/* A SIGBUS elsewhere is not swallowed: the process dies of it (or of the
 * sanitizer's report, in the ASan build). */
Test(shm_host, other_sigbus_still_fatal)
{
	int st = 0;
	pid_t child = fork();

	cr_assert_geq(child, 0);
	if (child == 0) {
		struct os_shm_host host;
		char path[] = "/tmp/objscope-test-bus-XXXXXX";
		int fd = mkstemp(path);
		volatile uint8_t *p;

		if (fd < 0 || os_shm_host_create(&host, 1, 4096, 0, 0) != 0)
			_exit(2);
		unlink(path);
		if (ftruncate(fd, 8192) != 0)
			_exit(2);
		p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED || ftruncate(fd, 0) != 0)
			_exit(2);
		(void)p[4096];
		_exit(0);
	}
	cr_assert_eq(waitpid(child, &st, 0), child);
	cr_expect(WIFSIGNALED(st), "the child %s %d", WIFEXITED(st) ? "exited" : "?",
		  WIFEXITED(st) ? WEXITSTATUS(st) : st);
}
