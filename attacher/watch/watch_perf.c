/* watch_perf.c - watchpoints as PERF_TYPE_BREAKPOINT events (see watch.h).
 *
 * One event per armed watchpoint, on its thread (pid = tid, cpu = -1),
 * created disabled and enabled with PERF_EVENT_IOC_REFRESH 1: the kernel
 * disables it itself after the first hit, so the target pays for one debug
 * exception per watchpoint however often it touches the address before we
 * collect the sample. The sample (IP, TID, TIME, ADDR) lands in a one-page
 * ring; nothing reaches the target. A thread's exit shows as POLLHUP.
 *
 * Events are reused: when a watchpoint is disarmed before its hit (disarm,
 * disarm_range, expiry) its event stays open, disabled, in its thread's
 * pool, and the next watch_arm on that thread moves it with
 * PERF_EVENT_IOC_MODIFY_ATTRIBUTES and re-enables it (its event_limit is
 * still 1) instead of opening a new one (bench_watch: about 1.5 us instead
 * of 8.5 us in watch_arm, and half the target-side cost of installing the
 * breakpoint). An event that hit is closed: see pool_put. A pooled event
 * keeps its debug-register slot; pooled events idle for WATCH_POOL_IDLE_NS
 * are closed.
 *
 * Pairs (watch_arm_pair): the event also reads its own time running
 * (PERF_SAMPLE_READ, PERF_FORMAT_TOTAL_TIME_RUNNING: the time the thread
 * was on a CPU since the event was enabled) in each sample and is enabled
 * with PERF_EVENT_IOC_REFRESH 2: the kernel disables it after the second
 * access; the hit is taken when both samples are in the ring. Pair events
 * are never pooled (their sample type differs). watch_move modifies an
 * armed event's address in place, keeping its ring, its remaining limit
 * and its time running.
 */
#include "attacher/watch/watch_int.h"

#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define WATCH_PERF_DATA_PAGES 1
#define WATCH_POOL_IDLE_NS 2000000000ULL

static size_t ring_bytes(const struct watch_set *w)
{
	return (1 + WATCH_PERF_DATA_PAGES) * w->page;
}

static void wp_perf_free(struct watch_set *w, struct watch_wp *wp)
{
	if (wp->ring)
		munmap(wp->ring, ring_bytes(w));
	if (wp->fd >= 0)
		close(wp->fd);
	wp->ring = NULL;
	wp->fd = -1;
}

int watch_fires(void)
{
	static int known = 1; /* 1: not probed yet */
	static volatile uint64_t cell;
	const char *e = getenv("OBJSCOPE_WATCH_FIRES");
	struct perf_event_attr a;
	uint64_t n = 0;
	int fd, r = __atomic_load_n(&known, __ATOMIC_RELAXED);

	if (e && !strcmp(e, "0")) /* said so (tests: a machine where they never do) */
		return -EIO;
	if (r <= 0)
		return r;
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_BREAKPOINT;
	a.size = sizeof(a);
	a.bp_type = HW_BREAKPOINT_RW;
	a.bp_addr = (uint64_t)(uintptr_t)&cell;
	a.bp_len = HW_BREAKPOINT_LEN_8;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno; /* not known: the routes say why when they arm */
	if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	for (int i = 0; i < 4; i++)
		cell = cell + 1;
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	r = read(fd, &n, sizeof(n)) == (ssize_t)sizeof(n) && n > 0 ? 0 : -EIO;
	close(fd);
	__atomic_store_n(&known, r, __ATOMIC_RELAXED);
	return r;
}

static void fill_attr(struct perf_event_attr *a, const struct watch_wp *wp)
{
	memset(a, 0, sizeof(*a));
	a->type = PERF_TYPE_BREAKPOINT;
	a->size = sizeof(*a);
	a->bp_type = HW_BREAKPOINT_RW;   /* x86 has no read-only data breakpoint */
	a->bp_addr = wp->addr;
	a->bp_len = wp->len;             /* HW_BREAKPOINT_LEN_n == n */
	a->sample_period = 1;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR;
	if (wp->pair) {
		a->sample_type |= PERF_SAMPLE_READ;
		a->read_format = PERF_FORMAT_TOTAL_TIME_RUNNING;
	}
	a->wakeup_events = 1;
	a->disabled = 1;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
}

static void ring_skip(void *ring)
{
	struct perf_event_mmap_page *mp = ring;

	__atomic_store_n(&mp->data_tail, __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE),
			 __ATOMIC_RELEASE);
}

static void pool_drop(struct watch_set *w, struct watch_thread *t, int k)
{
	if (t->pool[k].ring)
		munmap(t->pool[k].ring, ring_bytes(w));
	if (t->pool[k].fd >= 0)
		close(t->pool[k].fd);
	t->pool[k] = t->pool[--t->npool];
	memset(&t->pool[t->npool], 0, sizeof(t->pool[t->npool]));
}

/* Moves a pooled event of wp's thread onto wp; 0, 1 (none usable), -ESRCH. */
static int pool_take(struct watch_set *w, struct watch_wp *wp, struct perf_event_attr *a)
{
	struct watch_thread *t = wp->t;

	while (t->npool) {
		struct watch_pooled *p = &t->pool[t->npool - 1];
		int e;

		if (ioctl(p->fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, a) == 0) {
			ring_skip(p->ring);   /* anything left from its last use */
			/* Its event_limit is still 1 (REFRESH 1, no hit). */
			if (ioctl(p->fd, PERF_EVENT_IOC_ENABLE, 0) == 0) {
				wp->fd = p->fd;
				wp->ring = p->ring;
				t->npool--;
				memset(p, 0, sizeof(*p));
				return 0;
			}
		}
		e = errno;
		pool_drop(w, t, t->npool - 1);
		if (e == ESRCH)
			return -ESRCH;
	}
	return 1;
}

/* wp's event goes to its thread's pool, or is closed. hit: its sample
 * arrived. An event disabled by its event_limit (the hit) does not fire
 * again on this kernel (6.18), whatever ENABLE/REFRESH/MODIFY follow
 * (checked by hand): only events disarmed before their hit are reused. */
static void pool_put(struct watch_set *w, struct watch_wp *wp, bool hit)
{
	struct watch_thread *t = wp->t;
	struct perf_event_mmap_page *mp = wp->ring;

	if (hit || wp->pair || wp->fd < 0 || !t || t->npool >= WATCH_SLOTS)
		goto close;
	/* Synchronous: no sample can come after it. A sample that came
	 * meanwhile means the hit happened (and used the limit up). */
	if (ioctl(wp->fd, PERF_EVENT_IOC_DISABLE, 0) ||
	    __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE) != mp->data_tail)
		goto close;
	t->pool[t->npool].fd = wp->fd;
	t->pool[t->npool].ring = wp->ring;
	t->pool[t->npool].since_ns = os_now_ns();
	t->npool++;
	wp->fd = -1;
	wp->ring = NULL;
	return;
close:
	wp_perf_free(w, wp);
}

static int perf_arm(struct watch_set *w, struct watch_wp *wp)
{
	struct perf_event_attr a;
	int fd, e, slot;

	fill_attr(&a, wp);
	e = wp->pair ? 1 : pool_take(w, wp, &a);
	if (e < 0)
		return e;
	if (e == 0)
		goto armed;
	fd = (int)syscall(SYS_perf_event_open, &a, wp->tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		/* A thread that is gone gives ESRCH; ENOSPC: its debug
		 * registers are all taken. */
		return -errno;
	}
	wp->fd = fd;
	wp->ring = mmap(NULL, ring_bytes(w), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (wp->ring == MAP_FAILED) {
		e = errno;
		wp->ring = NULL;
		wp_perf_free(w, wp);
		return -e;
	}
	if (ioctl(fd, PERF_EVENT_IOC_REFRESH, wp->pair ? 2 : 1)) {
		e = errno;
		wp_perf_free(w, wp);
		return -e;
	}
armed:
	/* The kernel picks the physical register; we only count ours. */
	for (slot = 0; slot < WATCH_SLOTS; slot++)
		if (!(wp->t->slots & (1u << slot)))
			break;
	wp->slot = slot;
	wp->t->slots |= (uint8_t)(1u << slot);
	return 0;
}

static void perf_disarm(struct watch_set *w, struct watch_thread *t, struct watch_wp **wps, int n)
{
	int i;

	(void)t;
	for (i = 0; i < n; i++)
		pool_put(w, wps[i], false);
}

/* One sample as read from a ring: IP, PID|TID, TIME, ADDR in sample_type
 * bit order, then (pairs) the READ part: value, time running. */
struct ring_rec {
	uint64_t ip, tid, time, addr, value, running;
};

/* The first `want` PERF_RECORD_SAMPLEs of wp's ring: when that many are
 * there they are consumed (with anything before them) and true returned;
 * else the ring is left as it is. */
static bool ring_samples(struct watch_set *w, struct watch_wp *wp, struct ring_rec *out,
			 unsigned want)
{
	struct perf_event_mmap_page *mp = wp->ring;
	uint8_t *data = (uint8_t *)wp->ring + w->page;
	uint64_t size = (uint64_t)WATCH_PERF_DATA_PAGES * w->page;
	uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = mp->data_tail;
	size_t words = wp->pair ? 6 : 4;
	unsigned got = 0;

	while (tail < head && got < want) {
		struct perf_event_header hdr;
		uint64_t off = tail % size;
		unsigned k;

		for (k = 0; k < sizeof(hdr); k++)
			((uint8_t *)&hdr)[k] = data[(off + k) % size];
		if (hdr.size < sizeof(hdr))
			break;
		if (hdr.type == PERF_RECORD_SAMPLE &&
		    hdr.size >= sizeof(hdr) + words * sizeof(uint64_t)) {
			memset(&out[got], 0, sizeof(out[got]));
			for (k = 0; k < words * sizeof(uint64_t); k++)
				((uint8_t *)&out[got])[k] = data[(off + sizeof(hdr) + k) % size];
			got++;
		}
		tail += hdr.size;
	}
	if (got < want)
		return false;
	__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
	return true;
}

/* Takes the hits already in the rings (no system call: a ring is read
 * directly, which does not wait for the kernel's deferred wakeup). */
static int scan_rings(struct watch_set *w)
{
	int i, n = 0;

	for (i = 0; i < w->nwp; i++) {
		struct watch_wp *wp = &w->wp[i];
		struct ring_rec r[2];

		if (!wp->used || !wp->ring || !ring_samples(w, wp, r, wp->pair ? 2 : 1))
			continue;
		if (wp->pair) {
			uint64_t first[3] = { r[0].time, r[0].addr, r[0].ip };
			uint32_t tid = (uint32_t)(r[1].tid >> 32);

			pool_put(w, wp, true);
			watch_hit_push_pair(w, wp, tid ? (pid_t)tid : wp->tid, r[1].ip, r[1].time,
					    r[1].addr, first,
					    r[1].running > r[0].running ? r[1].running - r[0].running : 0);
		} else {
			uint32_t tid = (uint32_t)(r[0].tid >> 32);

			/* Value read now: the thread has run on since the hit. */
			pool_put(w, wp, true);
			watch_hit_push(w, wp, tid ? (pid_t)tid : wp->tid, r[0].ip, r[0].time, false, 0);
		}
		n++;
	}
	return n;
}

/* In place: the event keeps its ring (a pair's first sample), its limit
 * and its time running. */
static int perf_move(struct watch_set *w, struct watch_wp *wp)
{
	struct perf_event_attr a;

	(void)w;
	if (wp->fd < 0)
		return -EBADF;
	fill_attr(&a, wp);
	if (ioctl(wp->fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &a) ||
	    ioctl(wp->fd, PERF_EVENT_IOC_ENABLE, 0))
		return -errno;
	return 0;
}

/* Closes pooled events unused for WATCH_POOL_IDLE_NS (their threads may
 * be gone; they hold debug-register slots). */
static void pool_age(struct watch_set *w)
{
	uint64_t now = os_now_ns();
	int i, k;

	for (i = 0; i < w->nthr; i++) {
		struct watch_thread *t = &w->thr[i];

		if (!t->used || !t->npool)
			continue;
		for (k = t->npool - 1; k >= 0; k--)
			if (now - t->pool[k].since_ns > WATCH_POOL_IDLE_NS)
				pool_drop(w, t, k);
		if (!t->npool && !t->slots)
			memset(t, 0, sizeof(*t));
	}
}

static int perf_poll(struct watch_set *w, int timeout_ms)
{
	struct pollfd *pfd;
	struct watch_wp **who;
	int i, n = 0, ret;

	pool_age(w);
	if (scan_rings(w) && timeout_ms)
		timeout_ms = 0;
	if (!w->narmed)
		return 0;
	pfd = malloc((size_t)w->narmed * sizeof(*pfd));
	who = malloc((size_t)w->narmed * sizeof(*who));
	if (!pfd || !who) {
		free(pfd);
		free(who);
		return -ENOMEM;
	}
	for (i = 0; i < w->nwp && n < w->narmed; i++) {
		if (!w->wp[i].used || w->wp[i].fd < 0)
			continue;
		pfd[n].fd = w->wp[i].fd;
		pfd[n].events = POLLIN;
		pfd[n].revents = 0;
		who[n++] = &w->wp[i];
	}
	/* Also how a thread's exit shows: POLLHUP (event state EXIT). */
	ret = poll(pfd, (nfds_t)n, timeout_ms);
	if (ret < 0) {
		ret = -errno;
		goto out;
	}
	scan_rings(w);
	for (i = 0; i < n && ret > 0; i++) {
		struct watch_wp *wp = who[i];

		if (!wp->used || !(pfd[i].revents & (POLLHUP | POLLERR)))
			continue;
		wp_perf_free(w, wp);
		while (wp->t && wp->t->npool)   /* the thread's pool is dead too */
			pool_drop(w, wp->t, wp->t->npool - 1);
		w->st.thread_gone++;
		watch_wp_release(w, wp);
	}
	ret = 0;
out:
	free(pfd);
	free(who);
	return ret;
}

static void perf_close(struct watch_set *w)
{
	int i;

	for (i = 0; i < w->nwp; i++)
		if (w->wp[i].used)
			wp_perf_free(w, &w->wp[i]);
	for (i = 0; i < w->nthr; i++)
		while (w->thr[i].used && w->thr[i].npool)
			pool_drop(w, &w->thr[i], w->thr[i].npool - 1);
}

const struct watch_route_ops watch_perf_ops = {
	.arm = perf_arm,
	.disarm = perf_disarm,
	.poll = perf_poll,
	.move = perf_move,
	.close = perf_close,
};
