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

/* The open breakpoints of every thread, process-wide (file descriptors
 * are), so that objscope_detach can close those of all threads: a cell
 * holds seq << 32 | (fd + 1) (0: free), seq from osp_rep_seq, so that a
 * token is never the same twice. Whoever takes a token out of its cell
 * (CAS or exchange) closes its fd, once: the arming thread (reap, thread
 * exit), its signal handler (the hit), detach, a fork child. */
#define OSP_REP_CELLS 1024
static uint64_t osp_rep_cells[OSP_REP_CELLS];
static uint32_t osp_rep_seq;

#define OSP_REP_FD(tok) ((int)(uint32_t)(tok) - 1)

/* Takes a free cell for tok: its index, or -1 when all are taken. */
static int osp_rep_cell_take(uint64_t tok)
{
	for (unsigned c = 0; c < OSP_REP_CELLS; c++) {
		uint64_t want = 0;

		if (__atomic_load_n(&osp_rep_cells[c], __ATOMIC_RELAXED) == 0 &&
		    __atomic_compare_exchange_n(&osp_rep_cells[c], &want, tok, 0, __ATOMIC_SEQ_CST,
						__ATOMIC_RELAXED))
			return (int)c;
	}
	return -1;
}

/* Takes tok out of cell c if it is still there: 1 when the caller now owns
 * (and must close) its fd. */
static int osp_rep_cell_drop(unsigned c, uint64_t tok)
{
	return __atomic_compare_exchange_n(&osp_rep_cells[c], &tok, 0, 0, __ATOMIC_SEQ_CST,
					   __ATOMIC_RELAXED);
}

static void osp_rep_fd_close(uint64_t tok, int disable)
{
	if (disable)
		ioctl(OSP_REP_FD(tok), PERF_EVENT_IOC_DISABLE, 0);
	close(OSP_REP_FD(tok));
}

/* Breakpoint k of t: closed if still open, and forgotten (thread only). */
static void osp_rep_close(struct osp_thread *t, unsigned k)
{
	uint64_t tok = t->rep_tok[k];

	if (!tok)
		return;
	if (osp_rep_cell_drop(t->rep_cell[k], tok))
		osp_rep_fd_close(tok, 1);
	__atomic_store_n(&t->rep_tok[k], 0, __ATOMIC_RELAXED);
}

static void osp_rep_signal(int sig, siginfo_t *si, void *uc)
{
	struct osp_thread *t = &osp_self;
	int saved = errno;

	(void)sig;
	(void)uc;
	if (si->si_code <= 0)
		return; /* sent by a process (kill, sigqueue), not by an event */
	for (unsigned k = 0; k < OSP_REP_PER_THREAD; k++) {
		uint64_t tok = __atomic_load_n(&t->rep_tok[k], __ATOMIC_ACQUIRE);
		struct os_shm_header *h;

		if (!tok || OSP_REP_FD(tok) != si->si_fd)
			continue;
		if (!osp_rep_cell_drop(t->rep_cell[k], tok))
			continue; /* closed meanwhile (detach, reap): nothing to report */
		ioctl(OSP_REP_FD(tok), PERF_EVENT_IOC_DISABLE, 0); /* before the read below */
		/* detached (osp_hdr then points at the disarmed static header):
		 * only the close. A header disarmed after this check is the
		 * placeholder (attach.c) or the unmapped-never shm: still memory,
		 * the CAS below fails there or lands in nothing read. */
		h = __atomic_load_n(&osp_hdr, __ATOMIC_ACQUIRE);
		if (h && !__atomic_load_n((const uint32_t *)&h->disarmed, __ATOMIC_ACQUIRE)) {
			struct os_rep_entry *e = &h->rep[t->rep_idx[k]];
			uint64_t sg = t->rep_sg[k], gen = sg >> 8;

			if (osp_rep_cas(e, sg, OS_REP_SG(gen, OS_REP_HITTING))) {
				e->value = osp_rep_read(t->rep_addr[k], e->width);
				e->time = os_now_ns();
				atomic_store_explicit(&e->sg, OS_REP_SG(gen, OS_REP_HIT),
						      memory_order_release);
			}
		}
		close(OSP_REP_FD(tok));
		break;
	}
	errno = saved;
}

/* Installs the hit handler once h asks for in-target comparisons. A handler
 * the program installed itself for OSP_REP_SIG is left in place (then
 * nothing is armed in the target: -EBUSY); SIG_DFL and SIG_IGN are
 * replaced (the handler ignores signals it did not ask for). Ours, from an
 * earlier attach, stays. */
int osp_rep_setup(struct os_shm_header *h)
{
	struct sigaction sa, old;

	if (!(h->flags & OS_SHM_F_REPLICAS))
		return 0;
	if (sigaction(OSP_REP_SIG, NULL, &old) != 0)
		return -errno;
	if ((old.sa_flags & SA_SIGINFO) && old.sa_sigaction == osp_rep_signal) {
		__atomic_store_n(&osp_rep_on, 1, __ATOMIC_RELEASE);
		return 0;
	}
	if ((old.sa_flags & SA_SIGINFO) ||
	    (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN)) {
		__atomic_store_n(&osp_rep_on, 0, __ATOMIC_RELEASE);
		return -EBUSY;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = osp_rep_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(OSP_REP_SIG, &sa, NULL) != 0)
		return -errno;
	__atomic_store_n(&osp_rep_on, 1, __ATOMIC_RELEASE);
	return 0;
}

/* Breakpoints whose entry is no longer armed by this thread (dead,
 * expired, another shm since) are closed; those closed by their hit or by
 * a detach are forgotten. */
static void osp_rep_reap(struct osp_thread *t, struct os_shm_header *h)
{
	for (unsigned k = 0; k < OSP_REP_PER_THREAD; k++) {
		uint64_t tok = t->rep_tok[k];

		if (!tok)
			continue;
		if (__atomic_load_n(&osp_rep_cells[t->rep_cell[k]], __ATOMIC_ACQUIRE) != tok)
			__atomic_store_n(&t->rep_tok[k], 0, __ATOMIC_RELAXED);
		else if (osp_rep_load_sg(&h->rep[t->rep_idx[k]]) != t->rep_sg[k])
			osp_rep_close(t, k);
	}
}

/* A breakpoint on addr for this thread, enabled: its fd or -errno. */
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
	/* enabled while the fd is ours alone (no cell yet: nobody else can
	 * close it); no access to the object can trap before the hook
	 * returns */
	if (fcntl(fd, F_SETOWN_EX, &own) != 0 || fcntl(fd, F_SETSIG, OSP_REP_SIG) != 0 ||
	    fcntl(fd, F_SETFL, O_ASYNC) != 0 || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

static void osp_rep_fail(struct os_rep_entry *e, uint64_t gen, int err)
{
	e->err = (int16_t)err;
	atomic_store_explicit(&e->sg, OS_REP_SG(gen, OS_REP_FAILED), memory_order_release);
}

void osp_rep_alloc(struct osp_thread *t, uint64_t addr, uint64_t size, const uint64_t *frames,
		   uint32_t n)
{
	struct os_shm_header *h = __atomic_load_n(&osp_hdr, __ATOMIC_ACQUIRE);
	uint64_t key;
	unsigned k;

	if (!__atomic_load_n(&osp_rep_on, __ATOMIC_RELAXED) || !h)
		return;
	osp_rep_reap(t, h);
	if (!atomic_load_explicit(&h->rep_live, memory_order_acquire))
		return;
	for (k = 0; k < OSP_REP_PER_THREAD && t->rep_tok[k]; k++)
		;
	if (k == OSP_REP_PER_THREAD)
		return; /* the entry waits for another object of the site */
	key = os_rep_site_key(frames, n);
	if (!os_rep_filter_has(h->rep_filter, key))
		return; /* the common case: no comparison pending for this site */
	for (unsigned i = 0; i < OS_REP_SLOTS; i++) {
		struct os_rep_entry *e = &h->rep[i];
		uint64_t sg = osp_rep_load_sg(e), gen = sg >> 8, tok;
		int fd, c;

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
			osp_rep_fail(e, gen, fd);
			return;
		}
		tok = (uint64_t)(__atomic_add_fetch(&osp_rep_seq, 1, __ATOMIC_RELAXED)) << 32 |
		      (uint32_t)(fd + 1);
		c = osp_rep_cell_take(tok);
		if (c < 0) {
			osp_rep_fd_close(tok, 1);
			osp_rep_fail(e, gen, -EMFILE);
			return;
		}
		/* from here detach may close it. A detach that began before the
		 * cell was taken is seen now (both sequentially consistent: the
		 * detach's osp_hdr store comes before its sweep of the cells),
		 * and the breakpoint is closed here; else its sweep finds it. */
		if (__atomic_load_n(&osp_hdr, __ATOMIC_SEQ_CST) != h) {
			if (osp_rep_cell_drop((unsigned)c, tok))
				osp_rep_fd_close(tok, 1);
			return;
		}
		t->rep_cell[k] = (uint16_t)c;
		t->rep_sg[k] = OS_REP_SG(gen, OS_REP_ARMED);
		t->rep_idx[k] = (uint8_t)i;
		t->rep_addr[k] = addr + e->off;
		/* last: the signal handler (this thread) matches the token */
		__atomic_store_n(&t->rep_tok[k], tok, __ATOMIC_RELEASE);
		atomic_store_explicit(&e->alive, 1, memory_order_relaxed);
		atomic_store_explicit(&e->sg, t->rep_sg[k], memory_order_release);
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

void osp_rep_after_fork(struct osp_thread *t)
{
	for (unsigned c = 0; c < OSP_REP_CELLS; c++) {
		uint64_t tok = __atomic_exchange_n(&osp_rep_cells[c], 0, __ATOMIC_SEQ_CST);

		if (tok)
			osp_rep_fd_close(tok, 0);
	}
	for (unsigned k = 0; k < OSP_REP_PER_THREAD; k++)
		t->rep_tok[k] = 0;
}

unsigned osp_rep_detach(void)
{
	unsigned n = 0;

	for (unsigned c = 0; c < OSP_REP_CELLS; c++) {
		uint64_t tok = __atomic_exchange_n(&osp_rep_cells[c], 0, __ATOMIC_SEQ_CST);

		if (tok) {
			osp_rep_fd_close(tok, 1);
			n++;
		}
	}
	return n;
}
