/* watch.c - hardware watchpoints: the book-keeping shared by both routes
 * (watch_perf.c, watch_ptrace.c). See watch.h. */
#include "attacher/watch/watch_int.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "attacher/core/decode.h"
#include "attacher/core/remote.h"
#include "common/grow.h"

const char *watch_route_name(enum watch_route r)
{
	switch (r) {
	case WATCH_ROUTE_PERF:
		return "perf";
	case WATCH_ROUTE_PTRACE:
		return "ptrace";
	}
	return "?";
}

int watch_route_parse(const char *name)
{
	if (!name)
		return -1;
	if (!strcmp(name, "perf"))
		return WATCH_ROUTE_PERF;
	if (!strcmp(name, "ptrace"))
		return WATCH_ROUTE_PTRACE;
	return -1;
}

/* Is pid a child of ours? Then the exit status of its main thread belongs to
 * our own waitpid(pid) (the collector's), not to the tracer code. */
static bool is_our_child(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	int ppid = -1;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f)) {
		p = strrchr(buf, ')');
		if (p && sscanf(p + 1, " %*c %d", &ppid) != 1)
			ppid = -1;
	}
	fclose(f);
	return ppid == (int)getpid();
}

struct watch_set *watch_open(pid_t pid, enum watch_route route, char *err, size_t errlen)
{
	struct watch_set *w;

	if (route != WATCH_ROUTE_PERF && route != WATCH_ROUTE_PTRACE) {
		snprintf(err, errlen, "watchpoints: unknown route %d", (int)route);
		return NULL;
	}
	if (pid <= 0 || (kill(pid, 0) && errno == ESRCH)) {
		snprintf(err, errlen, "watchpoints: no process %d", (int)pid);
		return NULL;
	}
	if (watch_fires() == -EIO) {
		snprintf(err, errlen, "watchpoints: %s", WATCH_NO_FIRE_REASON);
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		goto nomem;
	w->pid = pid;
	w->route = route;
	w->ops = route == WATCH_ROUTE_PERF ? &watch_perf_ops : &watch_ptrace_ops;
	w->target_is_child = is_our_child(pid);
	w->page = (size_t)sysconf(_SC_PAGESIZE);
	w->dec = os_decoder_new();
	if (!w->dec) {
		snprintf(err, errlen, "watchpoints: capstone decoder could not be created");
		free(w);
		return NULL;
	}
	return w;
nomem:
	snprintf(err, errlen, "watchpoints: out of memory");
	return NULL;
}

struct watch_thread *watch_thread_find(struct watch_set *w, pid_t tid)
{
	int i;

	for (i = 0; i < w->nthr; i++)
		if (w->thr[i].used && w->thr[i].tid == tid)
			return &w->thr[i];
	return NULL;
}

/* Thread records are addressed by pointer from wp records: the array only
 * grows by reallocating when no pointer is live (no thread record in use). */
static struct watch_thread *thread_get(struct watch_set *w, pid_t tid)
{
	struct watch_thread *t = watch_thread_find(w, tid);
	int i, n;

	if (t)
		return t;
	for (i = 0; i < w->nthr; i++)
		if (!w->thr[i].used)
			goto found;
	/* Grow: rebase the wp -> thread pointers. */
	n = w->nthr ? w->nthr * 2 : 16;
	{
		struct watch_thread *old = w->thr, *nt = calloc((size_t)n, sizeof(*nt));
		int j;

		if (!nt)
			return NULL;
		if (old)
			memcpy(nt, old, (size_t)w->nthr * sizeof(*nt));
		for (j = 0; j < w->nwp; j++)
			if (w->wp[j].used && w->wp[j].t)
				w->wp[j].t = nt + (w->wp[j].t - old);
		free(old);
		w->thr = nt;
		i = w->nthr;
		w->nthr = n;
	}
found:
	t = &w->thr[i];
	memset(t, 0, sizeof(*t));
	t->used = true;
	t->tid = tid;
	return t;
}

static void thread_put_if_unused(struct watch_set *w, struct watch_thread *t)
{
	(void)w;
	if (t && t->used && !t->slots && !t->seized && !t->npool)
		memset(t, 0, sizeof(*t));
}

static struct watch_wp *wp_new(struct watch_set *w)
{
	int i;

	for (i = 0; i < w->nwp; i++)
		if (!w->wp[i].used)
			goto found;
	{
		size_t n = (size_t)w->nwp;
		struct watch_wp *nw = os_grow_max(w->wp, &n, n + 1, sizeof(*nw), 32, INT_MAX);

		if (!nw)
			return NULL;
		memset(nw + w->nwp, 0, (n - (size_t)w->nwp) * sizeof(*nw));
		w->wp = nw;
		i = w->nwp;
		w->nwp = (int)n;
	}
found:
	memset(&w->wp[i], 0, sizeof(w->wp[i]));
	w->wp[i].fd = -1;
	w->wp[i].slot = -1;
	return &w->wp[i];
}

static struct watch_wp *wp_find(struct watch_set *w, uint64_t cookie)
{
	int i;

	for (i = 0; i < w->nwp; i++)
		if (w->wp[i].used && w->wp[i].cookie == cookie)
			return &w->wp[i];
	return NULL;
}

void watch_wp_release(struct watch_set *w, struct watch_wp *wp)
{
	struct watch_thread *t = wp->t;

	if (!wp->used)
		return;
	if (t && wp->slot >= 0)
		t->slots &= (uint8_t)~(1u << wp->slot);
	/* What others hold is learned again when none of ours is armed. */
	if (t && !t->slots)
		t->kernel_busy = 0;
	wp->used = false;
	w->narmed--;
	thread_put_if_unused(w, t);
}

/* ---- hit queue ---------------------------------------------------------- */

static int q_push(struct watch_set *w, const struct watch_hit *h)
{
	if (w->qlen == w->qcap) {
		int n = w->qcap ? w->qcap * 2 : 64, i;
		struct watch_hit *nq = malloc((size_t)n * sizeof(*nq));

		if (!nq)
			return -ENOMEM;
		for (i = 0; i < w->qlen; i++)
			nq[i] = w->q[(w->qhead + i) % w->qcap];
		free(w->q);
		w->q = nq;
		w->qhead = 0;
		w->qcap = n;
	}
	w->q[(w->qhead + w->qlen) % w->qcap] = *h;
	w->qlen++;
	return 0;
}

/* Drops queued hits matching (cookie) or intersecting [lo, hi); returns how
 * many. Order of the others is kept. */
static int q_drop(struct watch_set *w, bool by_cookie, uint64_t cookie, uint64_t lo, uint64_t hi)
{
	int i, kept = 0, dropped = 0;

	for (i = 0; i < w->qlen; i++) {
		struct watch_hit *h = &w->q[(w->qhead + i) % w->qcap];
		bool drop = by_cookie ? h->cookie == cookie : (h->addr < hi && h->addr + h->len > lo);

		if (drop) {
			dropped++;
			continue;
		}
		w->q[(w->qhead + kept) % w->qcap] = *h;
		kept++;
	}
	w->qlen = kept;
	return dropped;
}

int watch_read_value(struct watch_set *w, uint64_t addr, unsigned len, uint64_t *value)
{
	uint8_t buf[8] = { 0 };
	int rc = os_remote_read_all(w->pid, addr, buf, len);
	uint64_t v = 0;
	unsigned i;

	if (rc < 0)
		return rc;
	for (i = 0; i < len; i++)
		v |= (uint64_t)buf[i] << (8 * i);
	*value = v;
	return 0;
}

unsigned watch_insn_width(struct watch_set *w, uint64_t ip, bool *is_write)
{
	struct watch_width_entry *e = &w->wcache[(ip ^ (ip >> 9)) % WATCH_WIDTH_CACHE];
	uint8_t code[OS_DEC_BACK_MAX];
	struct os_mem_insn m;
	uint64_t start;
	ssize_t n;

	*is_write = false;
	if (!ip || ip < sizeof(code))
		return 0;
	if (e->ip == ip) {
		*is_write = e->is_write;
		return e->width;
	}
	start = ip - sizeof(code);
	for (;;) {
		n = os_remote_read(w->pid, start, code, (size_t)(ip - start));
		if (n == (ssize_t)(ip - start))
			break;
		/* The bytes before ip may cross into an unmapped page: retry
		 * from ip's own page. */
		if (start >= (ip & ~(uint64_t)(w->page - 1)))
			return 0;
		start = ip & ~(uint64_t)(w->page - 1);
		if (start == ip)
			return 0;
	}
	os_decode_prev(w->dec, code, (size_t)(ip - start), start, ip, 0, &m);
	/* The width is known whenever the instruction and its memory operand
	 * were found, also when it overwrote its own address registers
	 * (mov rax,[rax+8]): that only matters for an address, not here. */
	e->ip = ip;
	e->width = (m.status == OS_DEC_OK || m.status == OS_DEC_CLOBBERED) ? m.width : 0;
	e->is_write = e->width && m.is_write;
	*is_write = e->is_write;
	return e->width;
}

void watch_hit_push(struct watch_set *w, struct watch_wp *wp, pid_t tid, uint64_t ip,
		    uint64_t time_ns, bool value_known, uint64_t value)
{
	struct watch_hit h;

	memset(&h, 0, sizeof(h));
	h.tid = tid;
	h.addr = wp->addr;
	h.len = wp->len;
	h.cookie = wp->cookie;
	h.ip = ip;
	h.time_ns = time_ns ? time_ns : os_now_ns();
	if (value_known) {
		h.value_ok = true;
		h.value = value;
	} else if (watch_read_value(w, wp->addr, wp->len, &h.value) == 0) {
		h.value_ok = true;
	} else {
		w->st.errors++;
	}
	h.width = watch_insn_width(w, ip, &h.is_write);
	watch_wp_release(w, wp);
	if (q_push(w, &h))
		w->st.errors++;
}

void watch_hit_push_pair(struct watch_set *w, struct watch_wp *wp, pid_t tid, uint64_t ip,
			 uint64_t time_ns, uint64_t addr, const uint64_t first[3], uint64_t run_ns)
{
	struct watch_hit h;

	memset(&h, 0, sizeof(h));
	h.tid = tid;
	h.addr = addr;
	h.len = wp->len;
	h.cookie = wp->cookie;
	h.ip = ip;
	h.time_ns = time_ns ? time_ns : os_now_ns();
	h.pair = true;
	h.first_time_ns = first[0];
	h.first_addr = first[1];
	h.first_ip = first[2];
	h.run_ns = run_ns;
	h.width = watch_insn_width(w, ip, &h.is_write);
	watch_wp_release(w, wp);
	if (q_push(w, &h))
		w->st.errors++;
}

void watch_thread_gone(struct watch_set *w, struct watch_thread *t)
{
	int i;

	for (i = 0; i < w->nwp; i++) {
		struct watch_wp *wp = &w->wp[i];

		if (wp->used && wp->t == t) {
			w->st.thread_gone++;
			watch_wp_release(w, wp);
		}
	}
	t->seized = false;
	t->stopped = false;
	t->slots = 0;
	thread_put_if_unused(w, t);
}

/* ---- API ------------------------------------------------------------------ */

static int arm(struct watch_set *w, pid_t tid, uint64_t addr, unsigned len, uint64_t cookie,
	       uint64_t max_age_ns, bool pair)
{
	struct watch_thread *t;
	struct watch_wp *wp;
	int ret, ours;

	if (!w)
		return -EINVAL;
	if ((len != 1 && len != 2 && len != 4 && len != 8) || (addr & (len - 1)) || !addr)
		return -EINVAL;
	if (tid <= 0)
		return -ESRCH;
	if (wp_find(w, cookie))
		return -EEXIST;
	t = thread_get(w, tid);
	if (!t)
		return -ENOMEM;
	ours = __builtin_popcount(t->slots);
	if (ours + t->kernel_busy >= WATCH_SLOTS) {
		w->st.enospc++;
		return -ENOSPC;
	}
	wp = wp_new(w);
	if (!wp) {
		thread_put_if_unused(w, t);
		return -ENOMEM;
	}
	/* Not 'used' until the route armed it: a thread that exits while
	 * being armed must not count it as thread_gone. */
	wp->tid = tid;
	wp->addr = addr;
	wp->len = len;
	wp->cookie = cookie;
	wp->pair = pair;
	wp->t = t;
	wp->deadline_ns = max_age_ns ? os_now_ns() + max_age_ns : 0;
	ret = w->ops->arm(w, wp);
	if (ret) {
		/* t may be stale now (the thread left): look it up again. */
		t = watch_thread_find(w, tid);
		if (ret == -ENOSPC) {
			w->st.enospc++;
			/* Someone else (the kernel, a debugger, perf) holds
			 * the rest of this thread's debug registers. */
			if (t)
				t->kernel_busy =
					(uint8_t)(WATCH_SLOTS - __builtin_popcount(t->slots));
		} else if (ret != -ESRCH) {
			w->st.errors++;
		}
		thread_put_if_unused(w, t);
		return ret;
	}
	wp->used = true;
	w->narmed++;
	w->st.armed++;
	return 0;
}

int watch_arm(struct watch_set *w, pid_t tid, uint64_t addr, unsigned len, uint64_t cookie,
	      uint64_t max_age_ns)
{
	return arm(w, tid, addr, len, cookie, max_age_ns, false);
}

int watch_arm_pair(struct watch_set *w, pid_t tid, uint64_t addr, unsigned len, uint64_t cookie,
		   uint64_t max_age_ns)
{
	if (w && w->route != WATCH_ROUTE_PERF)
		return -EOPNOTSUPP;
	return arm(w, tid, addr, len, cookie, max_age_ns, true);
}

/* Disarms the listed records (any threads), grouped per thread. */
static void disarm_list(struct watch_set *w, struct watch_wp **list, int n)
{
	int i, j;

	for (i = 0; i < n; i++) {
		struct watch_wp *group[WATCH_SLOTS * 2];
		struct watch_thread *t;
		int ng = 0;

		if (!list[i] || !list[i]->used)
			continue;
		t = list[i]->t;
		for (j = i; j < n && ng < (int)(sizeof(group) / sizeof(group[0])); j++) {
			if (list[j] && list[j]->used && list[j]->t == t) {
				group[ng++] = list[j];
				list[j] = NULL;
			}
		}
		w->ops->disarm(w, t, group, ng);
		/* The route may have seen the thread go (records released). */
		for (j = 0; j < ng; j++)
			if (group[j]->used)
				watch_wp_release(w, group[j]);
	}
}

int watch_disarm(struct watch_set *w, uint64_t cookie)
{
	struct watch_wp *wp;

	if (!w)
		return -EINVAL;
	wp = wp_find(w, cookie);
	if (!wp) {
		/* Hit already collected from the kernel but not handed out:
		 * the caller no longer wants it. */
		if (q_drop(w, true, cookie, 0, 0)) {
			w->st.disarmed++;
			return 0;
		}
		return -ENOENT;
	}
	disarm_list(w, &wp, 1);
	w->st.disarmed++;
	/* A hit taken while the thread was being stopped is dropped as well. */
	q_drop(w, true, cookie, 0, 0);
	return 0;
}

int watch_move(struct watch_set *w, uint64_t cookie, uint64_t new_addr)
{
	struct watch_wp *wp;
	uint64_t old;
	int ret;

	if (!w)
		return -EINVAL;
	if (!w->ops->move)
		return -EOPNOTSUPP;
	wp = wp_find(w, cookie);
	if (!wp)
		return -ENOENT;
	if (!new_addr || (new_addr & (wp->len - 1)))
		return -EINVAL;
	old = wp->addr;
	wp->addr = new_addr;
	ret = w->ops->move(w, wp);
	if (ret) {
		wp->addr = old;
		w->st.errors++;
		watch_disarm(w, cookie);
	}
	return ret;
}

int watch_disarm_range(struct watch_set *w, uint64_t lo, uint64_t hi)
{
	struct watch_wp **list;
	int i, n = 0, dropped;

	if (!w || hi <= lo)
		return 0;
	list = malloc((size_t)(w->nwp ? w->nwp : 1) * sizeof(*list));
	if (!list) {
		w->st.errors++;
		return -ENOMEM;
	}
	for (i = 0; i < w->nwp; i++) {
		struct watch_wp *wp = &w->wp[i];

		if (wp->used && wp->addr < hi && wp->addr + wp->len > lo)
			list[n++] = wp;
	}
	if (n)
		disarm_list(w, list, n);
	free(list);
	dropped = q_drop(w, false, 0, lo, hi);
	w->st.disarmed += (uint64_t)(n + dropped);
	return n + dropped;
}

static void expire(struct watch_set *w)
{
	struct watch_wp *list[64];
	uint64_t now = os_now_ns();
	int i, n = 0;

	for (i = 0; i < w->nwp; i++) {
		struct watch_wp *wp = &w->wp[i];

		if (!wp->used || !wp->deadline_ns || wp->deadline_ns > now)
			continue;
		list[n++] = wp;
		w->st.expired++;
		if (n == (int)(sizeof(list) / sizeof(list[0]))) {
			disarm_list(w, list, n);
			n = 0;
		}
	}
	if (n)
		disarm_list(w, list, n);
}

static int drain(struct watch_set *w, struct watch_hit *hits, int max)
{
	int n = 0;

	while (n < max && w->qlen) {
		hits[n++] = w->q[w->qhead];
		w->qhead = (w->qhead + 1) % w->qcap;
		w->qlen--;
	}
	w->st.hits += (uint64_t)n;
	return n;
}

int watch_poll_wait(struct watch_set *w, struct watch_hit *hits, int max, int timeout_ms)
{
	int ret;

	if (!w || max < 0)
		return -EINVAL;
	if (w->qlen >= max || (w->qlen && timeout_ms))
		timeout_ms = 0;
	/* Also with nothing armed: the perf route closes idle pooled events. */
	ret = w->ops->poll(w, w->narmed ? timeout_ms : 0);
	if (ret < 0 && ret != -EINTR)
		w->st.errors++;
	expire(w);
	return drain(w, hits, max);
}

int watch_poll(struct watch_set *w, struct watch_hit *hits, int max)
{
	return watch_poll_wait(w, hits, max, 0);
}

int watch_free_slots(struct watch_set *w, pid_t tid)
{
	struct watch_thread *t;
	int n;

	if (!w)
		return 0;
	t = watch_thread_find(w, tid);
	if (!t)
		return WATCH_SLOTS;
	n = WATCH_SLOTS - __builtin_popcount(t->slots) - t->kernel_busy;
	return n < 0 ? 0 : n;
}

unsigned watch_access_width(struct watch_set *w, uint64_t ip, bool *is_write)
{
	*is_write = false;
	return w ? watch_insn_width(w, ip, is_write) : 0;
}

int watch_armed(const struct watch_set *w)
{
	return w ? w->narmed : 0;
}

void watch_get_stats(const struct watch_set *w, struct watch_stats *out)
{
	if (w)
		*out = w->st;
	else
		memset(out, 0, sizeof(*out));
}

void watch_close(struct watch_set *w)
{
	int i;

	if (!w)
		return;
	w->ops->close(w);
	for (i = 0; i < w->nwp; i++) {
		if (w->wp[i].used) {
			w->st.disarmed++;
			watch_wp_release(w, &w->wp[i]);
		}
	}
	os_decoder_free(w->dec);
	free(w->wp);
	free(w->thr);
	free(w->q);
	free(w);
}
