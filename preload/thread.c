/* thread.c - per-thread state of the preload library: the recursion guard,
 * the lazily claimed ring slot, thread exit (pthread key destructor) and
 * fork (the child forgets the parent's slot and ids). Allocation-free. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "preload/preload.h"

OSP_TLS struct osp_thread osp_self;
static pthread_key_t osp_exit_key;
static int osp_setup_done;

struct osp_thread *osp_enter(void)
{
	struct osp_thread *t;

	if (!osp_armed())
		return NULL;
	t = &osp_self;
	if (osp_unlikely(t->busy)) {
		if (t->slot)
			osp_stat_add(&t->slot->stats.reentered, 1);
		return NULL;
	}
	t->busy = 1;
	t->hook_t0 = os_ticks();
	return t;
}

uint64_t osp_rng_next(struct osp_thread *t)
{
	uint64_t x = t->rng;

	if (osp_unlikely(!x)) {
		x = ((uint64_t)(uintptr_t)t * 0x9e3779b97f4a7c15ULL) ^ os_ticks() ^
		    ((uint64_t)t->tid << 32 | (uint64_t)t->pid);
		if (!x)
			x = 0x2545f4914f6cdd1dULL;
	}
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	t->rng = x;
	return x;
}

static uint64_t osp_thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

struct osp_thread *osp_enter_heavy(void)
{
	struct osp_thread *t = osp_enter();

	if (t)
		t->hook_cpu0 = osp_thread_cpu_ns();
	return t;
}

/* The hook's time into its slot's counters (os_slot_stats.hook_*). */
void osp_leave(struct osp_thread *t)
{
	struct os_slot *s = t->slot;

	if (s && t->hook_cpu0) {
		uint64_t now = osp_thread_cpu_ns();

		if (now > t->hook_cpu0)
			osp_stat_add(&s->stats.hook_cpu_ns, now - t->hook_cpu0);
		osp_stat_add(&s->stats.hook_calls, 1);
	} else if (s) {
		uint64_t d = os_ticks() - t->hook_t0;

		if (d > OS_HOOK_CLIP_TICKS) {
			d = OS_HOOK_CLIP_TICKS;
			osp_stat_add(&s->stats.hook_clipped, 1);
		}
		osp_stat_add(&s->stats.hook_ticks, d);
		osp_stat_add(&s->stats.hook_calls, 1);
	}
	t->hook_cpu0 = 0;
	t->busy = 0;
}

/* Thread exit: keep our value alive through the destructor rounds so frees
 * made by other keys' destructors are still recorded, then retire the slot.
 * An event after that (glibc's own exit path unmaps malloc heaps) claims a
 * fresh slot, which the collector retires when perf reports the exit. */
static void osp_thread_exit(void *arg)
{
	struct osp_thread *t = &osp_self;

	if (t->exit_rounds++ < PTHREAD_DESTRUCTOR_ITERATIONS - 1) {
		pthread_setspecific(osp_exit_key, arg);
		return;
	}
	t->exited = 1;
	osp_rep_thread_gone(t);
	if (t->slot) {
		atomic_store_explicit(&t->slot->state, OS_SLOT_EXITED, memory_order_release);
		t->slot = NULL;
	}
}

/* Scans for a FREE slot, lowest index first, and claims it with a CAS.
 * Head and tail are kept: they are monotonic, and a slot the collector set
 * FREE is drained. Lowest first keeps the claimed slots packed below
 * slots_hwm, which bounds the collector's drain (a rotating start would push
 * the mark to nslots after nslots thread starts). */
static struct os_slot *osp_claim(struct osp_thread *t)
{
	struct os_shm_header *h = osp_hdr;
	uint32_t n = h->nslots;

	for (uint32_t idx = 0; idx < n; idx++) {
		struct os_slot *s = os_shm_slot(h, idx);
		uint32_t expect = OS_SLOT_FREE;

		if (atomic_load_explicit(&s->state, memory_order_relaxed) != OS_SLOT_FREE)
			continue;
		if (!atomic_compare_exchange_strong_explicit(&s->state, &expect, OS_SLOT_ACTIVE,
							     memory_order_acq_rel,
							     memory_order_relaxed))
			continue;
		/* before the first event: the collector drains only below it */
		os_shm_note_slot(h, idx);
		s->pid = t->pid;
		s->tid = t->tid;
		s->generation++;
		return s;
	}
	return NULL;
}

struct os_slot *osp_slot(struct osp_thread *t)
{
	struct os_slot *s = t->slot;

	if (osp_likely(s != NULL))
		return s;
	if (t->no_slot)
		return NULL;
	if (t->pid == 0) {
		t->pid = (uint32_t)getpid();
		t->tid = (uint32_t)syscall(SYS_gettid);
	}
	s = osp_claim(t);
	if (!s) {
		t->no_slot = 1;
		return NULL;
	}
	t->slot = s;
	if (osp_setup_done && !t->exited)
		pthread_setspecific(osp_exit_key, t);
	osp_record_thread(t, s);
	return s;
}

void osp_thread_after_fork(void)
{
	struct osp_thread *t = &osp_self;

	/* The parent still owns the slot; the child must never write to it. */
	osp_rep_after_fork(t); /* copies of the parent threads' breakpoints */
	t->slot = NULL;
	t->no_slot = 0;
	t->pid = 0;
	t->tid = 0;
	if (osp_hdr)
		__atomic_fetch_add((uint32_t *)&osp_hdr->processes, 1, __ATOMIC_RELAXED);
}

int osp_thread_setup(void)
{
	int err;

	if (osp_setup_done)
		return 0;
	err = pthread_key_create(&osp_exit_key, osp_thread_exit);
	if (err)
		return -err;
	err = pthread_atfork(NULL, NULL, osp_thread_after_fork);
	if (err) {
		pthread_key_delete(osp_exit_key);
		return -err;
	}
	osp_setup_done = 1;
	return 0;
}
