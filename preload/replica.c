/* replica.c - in-target arming of replica comparisons (record --replicas,
 * docs/REPLICAS.md "Routes", common/shm.h struct os_rep_entry).
 *
 * The collector publishes in the shm header "watch offset off (width bytes)
 * of the next object of allocation site key". The allocation hook of that
 * next object, on the allocating thread, claims the entry and arms a
 * hardware breakpoint (perf_event_open, PERF_TYPE_BREAKPOINT, read/write, on
 * the calling thread only: pid 0, cpu -1, user space only) at that offset of
 * the object it has just returned: the object is alive and not used yet.
 * The breakpoint's overflow sends OSP_REP_SIG (a real-time signal no JVM
 * uses; F_SETOWN_EX to this thread, F_SETSIG) right after the trapping
 * access; the handler disables the event, reads the value at the watched
 * offset (the access done: a write's new value, a read's value), writes it
 * into the entry and closes the event. A free of the object, or a
 * collection (HotSpot hook), marks the entry dead first: a later hit is not
 * reported.
 *
 * Each thread arms at most OSP_REP_PER_THREAD breakpoints (x86 has 4 debug
 * registers per thread; the rest stay for the collector's own watchpoints).
 * Everything here: no malloc, no locks, no stdio; syscalls only; the signal
 * handler keeps errno and touches only its thread's state and the entry it
 * wins by CAS. */
#include <errno.h>
#include <fcntl.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/clock.h"
#include "preload/preload.h"

static int osp_rep_on;

static inline uint64_t osp_rep_load_sg(struct os_rep_entry *e)
{
	return atomic_load_explicit(&e->sg, memory_order_acquire);
}

static inline int osp_rep_cas(struct os_rep_entry *e, uint64_t from, uint64_t to)
{
	return atomic_compare_exchange_strong_explicit(&e->sg, &from, to, memory_order_acq_rel,
						       memory_order_relaxed);
}

static uint64_t osp_rep_read(uint64_t a, unsigned width)
{
	switch (width) {
	case 1:
		return *(volatile const uint8_t *)a;
	case 2:
		return *(volatile const uint16_t *)a;
	case 4:
		return *(volatile const uint32_t *)a;
	default:
		return *(volatile const uint64_t *)a;
	}
}

/* Closes breakpoint k of t if it is still open (whoever takes the fd out
 * of the slot first closes it: the thread or its signal handler). */
static void osp_rep_close(struct osp_thread *t, unsigned k)
{
	int fd1 = __atomic_exchange_n(&t->rep_fd[k], 0, __ATOMIC_ACQ_REL);

	if (fd1) {
		ioctl(fd1 - 1, PERF_EVENT_IOC_DISABLE, 0);
		close(fd1 - 1);
	}
}

static void osp_rep_signal(int sig, siginfo_t *si, void *uc)
{
	struct osp_thread *t = &osp_self;
	struct os_shm_header *h = osp_hdr;
	int saved = errno;

	(void)sig;
	(void)uc;
	for (unsigned k = 0; k < OSP_REP_PER_THREAD; k++) {
		struct os_rep_entry *e;
		uint64_t sg = t->rep_sg[k], gen;
		int fd1;

		if (__atomic_load_n(&t->rep_fd[k], __ATOMIC_ACQUIRE) != si->si_fd + 1)
			continue;
		fd1 = __atomic_exchange_n(&t->rep_fd[k], 0, __ATOMIC_ACQ_REL);
		if (!fd1)
			break;
		ioctl(fd1 - 1, PERF_EVENT_IOC_DISABLE, 0); /* before the read below */
		if (h) {
			e = &h->rep[t->rep_idx[k]];
			gen = sg >> 8;
			if (osp_rep_cas(e, sg, OS_REP_SG(gen, OS_REP_HITTING))) {
				e->value = osp_rep_read(t->rep_addr[k], e->width);
				e->time = os_now_ns();
				atomic_store_explicit(&e->sg, OS_REP_SG(gen, OS_REP_HIT),
						      memory_order_release);
			}
		}
		close(fd1 - 1);
		break;
	}
	errno = saved;
}

int osp_rep_setup(struct os_shm_header *h)
{
	struct sigaction sa;

	if (!(h->flags & OS_SHM_F_REPLICAS) || osp_rep_on)
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = osp_rep_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(OSP_REP_SIG, &sa, NULL) != 0)
		return -errno;
	osp_rep_on = 1;
	return 0;
}

/* Breakpoints whose entry is no longer armed by this thread (dead,
 * expired): closed. */
static void osp_rep_reap(struct osp_thread *t, struct os_shm_header *h)
{
	for (unsigned k = 0; k < OSP_REP_PER_THREAD; k++)
		if (__atomic_load_n(&t->rep_fd[k], __ATOMIC_ACQUIRE) &&
		    osp_rep_load_sg(&h->rep[t->rep_idx[k]]) != t->rep_sg[k])
			osp_rep_close(t, k);
}

static int osp_rep_open(uint64_t addr, unsigned width, uint32_t tid)
{
	struct perf_event_attr a;
	struct f_owner_ex own = { .type = F_OWNER_TID, .pid = (pid_t)tid };
	int fd;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_BREAKPOINT;
	a.size = sizeof(a);
	a.bp_type = HW_BREAKPOINT_RW;
	a.bp_addr = addr;
	a.bp_len = width;
	a.sample_period = 1;
	a.wakeup_events = 1;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fcntl(fd, F_SETOWN_EX, &own) != 0 || fcntl(fd, F_SETSIG, OSP_REP_SIG) != 0 ||
	    fcntl(fd, F_SETFL, O_ASYNC) != 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

void osp_rep_alloc(struct osp_thread *t, uint64_t addr, uint64_t size, const uint64_t *frames,
		   uint32_t n)
{
	struct os_shm_header *h = osp_hdr;
	uint64_t key;
	unsigned k;

	if (!osp_rep_on || !h)
		return;
	osp_rep_reap(t, h);
	if (!atomic_load_explicit(&h->rep_live, memory_order_acquire))
		return;
	for (k = 0; k < OSP_REP_PER_THREAD && t->rep_fd[k]; k++)
		;
	if (k == OSP_REP_PER_THREAD)
		return; /* the entry waits for another object of the site */
	key = os_rep_site_key(frames, n);
	if (!os_rep_filter_has(h->rep_filter, key))
		return; /* the common case: no comparison pending for this site */
	for (unsigned i = 0; i < OS_REP_SLOTS; i++) {
		struct os_rep_entry *e = &h->rep[i];
		uint64_t sg = osp_rep_load_sg(e), gen = sg >> 8;
		int fd;

		if (OS_REP_ST(sg) != OS_REP_PENDING || e->pid != t->pid)
			continue;
		if (e->key != key || (uint64_t)e->off + e->width > size)
			continue;
		if (!osp_rep_cas(e, sg, OS_REP_SG(gen, OS_REP_CLAIMED)))
			continue;
		e->tid = t->tid;
		e->obj = addr;
		e->size = size < UINT32_MAX ? (uint32_t)size : UINT32_MAX;
		e->time = os_now_ns();
		fd = osp_rep_open(addr + e->off, e->width, t->tid);
		if (fd < 0) {
			e->err = (int16_t)fd;
			atomic_store_explicit(&e->sg, OS_REP_SG(gen, OS_REP_FAILED),
					      memory_order_release);
			return;
		}
		atomic_store_explicit(&e->alive, 1, memory_order_relaxed);
		t->rep_sg[k] = OS_REP_SG(gen, OS_REP_ARMED);
		t->rep_idx[k] = (uint8_t)i;
		t->rep_addr[k] = addr + e->off;
		atomic_store_explicit(&e->sg, t->rep_sg[k], memory_order_release);
		__atomic_store_n(&t->rep_fd[k], fd + 1, __ATOMIC_RELEASE);
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
		return;
	}
}

/* A hit object that dies before the collector read its content (a block
 * freed within ~1 ms of its hit: churn): its content hashed here, on the
 * freeing thread, before the block goes back to malloc, for the exact
 * figure (common/shm.h rep_hash). Blocks above OSP_REP_HASH_MAX are left
 * to the collector (counted there as freed unhashed). */
#define OSP_REP_HASH_MAX 65536

static void osp_rep_hash_dying(struct os_shm_header *h, unsigned i, uint64_t sg, uint64_t addr)
{
	struct os_rep_entry *e = &h->rep[i];
	uint64_t hash, want;

	if (!atomic_load_explicit(&e->alive, memory_order_acquire) || e->size == 0 ||
	    e->size > OSP_REP_HASH_MAX)
		return;
	hash = os_rep_content_hash((const unsigned char *)(uintptr_t)addr, e->size);
	atomic_store_explicit(&h->rep_hash[i], hash, memory_order_release);
	if (osp_rep_load_sg(e) != sg) { /* the entry was reused meanwhile: not ours */
		want = hash;
		atomic_compare_exchange_strong(&h->rep_hash[i], &want, 0);
	}
}

/* The object at addr dies (free, realloc's old block): not alive any more,
 * and an armed breakpoint on it no longer counts (the memory will hold
 * something else). Before the memory is given back. */
void osp_rep_dead(uint64_t addr, uint32_t pid)
{
	struct os_shm_header *h = osp_hdr;

	if (!osp_rep_on || !h || !atomic_load_explicit(&h->rep_live, memory_order_acquire))
		return;
	for (unsigned i = 0; i < OS_REP_SLOTS; i++) {
		struct os_rep_entry *e = &h->rep[i];
		uint64_t sg = osp_rep_load_sg(e);
		unsigned st = OS_REP_ST(sg);

		if ((st != OS_REP_ARMED && st != OS_REP_HITTING && st != OS_REP_HIT) ||
		    (addr && e->obj != addr) || (pid && e->pid != pid))
			continue;
		if (st == OS_REP_HIT && addr)
			osp_rep_hash_dying(h, i, sg, addr);
		atomic_store_explicit(&e->alive, 0, memory_order_release);
		if (st == OS_REP_ARMED)
			osp_rep_cas(e, sg, OS_REP_SG(sg >> 8, OS_REP_DEAD));
	}
}

void osp_rep_thread_gone(struct osp_thread *t)
{
	for (unsigned k = 0; k < OSP_REP_PER_THREAD; k++)
		osp_rep_close(t, k);
}
