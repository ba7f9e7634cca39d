/* watch_ptrace.c - watchpoints through ptrace POKEUSER of DR0..DR3 / DR7
 * (see watch.h).
 *
 * A thread is PTRACE_SEIZEd (PTRACE_O_TRACEEXIT) when it gets its first
 * watchpoint and detached when its last one goes (hit, disarm, expiry), with
 * DR7 cleared first: no debug register stays armed on a thread we left.
 * Changing its registers needs it stopped: PTRACE_INTERRUPT, then waitpid
 * (__WALL) on that thread only (never waitpid(-1): the collector reaps its
 * own child). While seized the thread stops for every signal:
 *  - SIGTRAP with si_code TRAP_HWBKPT: ours. DR6 says which slot; the value
 *    is read while the thread is still stopped right after the access, the
 *    slot is cleared and the thread continues WITHOUT the signal (an
 *    unhandled SIGTRAP kills a JVM);
 *  - any other signal (a JVM's SIGSEGV of implicit null checks, SIGALRM...):
 *    continued with that signal, counted in signals_passed;
 *  - PTRACE_EVENT_EXIT: the thread is leaving; its watchpoints count as
 *    thread_gone and we detach.
 * Before detaching from a stop that was not the hit itself we look at the
 * thread's queued signals (PTRACE_PEEKSIGINFO): a hardware-breakpoint SIGTRAP
 * still queued is consumed first.
 * Only the thread that seized may make ptrace requests: one collector thread.
 */
#include "attacher/watch/watch_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef TRAP_HWBKPT
#define TRAP_HWBKPT 4
#endif

#define DR_OFF(i) (offsetof(struct user, u_debugreg) + (size_t)(i) * sizeof(long))
#define RIP_OFF (offsetof(struct user, regs) + offsetof(struct user_regs_struct, rip))

enum { PT_RUNNING, PT_STOPPED, PT_LEFT };   /* PT_LEFT: detached or gone; t is stale */

/* DR7: local enable of slot i, R/W = 11 (read or write), LEN 1/2/4/8 = 00/01/11/10. */
static uint64_t dr7_bits(int slot, unsigned len)
{
	uint64_t lenbits = len == 1 ? 0 : len == 2 ? 1 : len == 8 ? 2 : 3;

	return (1ULL << (slot * 2)) | ((3ULL | lenbits << 2) << (16 + slot * 4));
}

static uint64_t dr7_mask(int slot)
{
	return (3ULL << (slot * 2)) | (0xfULL << (16 + slot * 4));
}

static int poke_user(pid_t tid, size_t off, uint64_t v)
{
	if (ptrace(PTRACE_POKEUSER, tid, (void *)off, (void *)(uintptr_t)v))
		return -errno;
	return 0;
}

static int peek_user(pid_t tid, size_t off, uint64_t *v)
{
	long r;

	errno = 0;
	r = ptrace(PTRACE_PEEKUSER, tid, (void *)off, NULL);
	if (r == -1 && errno)
		return -errno;
	*v = (uint64_t)r;
	return 0;
}

/* waitpid on one thread; 1 with *st, 0 nothing (nohang), -errno. The main
 * thread of our own child is only peeked at when it has exited: that exit
 * status is the collector's to reap. */
static int wait_tid(struct watch_set *w, pid_t tid, bool block, int *st)
{
	int flags = __WALL | (block ? 0 : WNOHANG);
	pid_t r;

	if (tid == w->pid && w->target_is_child) {
		siginfo_t si;

		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)tid, &si, WEXITED | WNOWAIT | flags))
			return -errno;
		if (!si.si_pid)
			return 0;
		if (si.si_code == CLD_EXITED || si.si_code == CLD_KILLED ||
		    si.si_code == CLD_DUMPED) {
			*st = si.si_code == CLD_EXITED ? W_EXITCODE(si.si_status, 0) : si.si_status;
			return 1;
		}
	}
	do
		r = waitpid(tid, st, flags);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return r == tid ? 1 : 0;
}

static void thread_left(struct watch_set *w, struct watch_thread *t)
{
	t->seized = false;
	t->stopped = false;
	if (t->slots)
		watch_thread_gone(w, t);
	else
		memset(t, 0, sizeof(*t));
}

/* A hardware-breakpoint SIGTRAP queued for the (stopped) thread? */
static bool trap_pending(pid_t tid)
{
	struct __ptrace_peeksiginfo_args a = { .off = 0, .flags = 0, .nr = 16 };
	siginfo_t si[16];
	long n = ptrace(PTRACE_PEEKSIGINFO, tid, &a, si), i;

	for (i = 0; i < n; i++)
		if (si[i].si_signo == SIGTRAP && si[i].si_code == TRAP_HWBKPT)
			return true;
	return false;
}

/* Lets a stopped thread run on: detached when it has no watchpoint left
 * (and no breakpoint SIGTRAP queued), continued otherwise.
 * PT_RUNNING (still seized) or PT_LEFT. */
static int pt_resume(struct watch_set *w, struct watch_thread *t)
{
	pid_t tid = t->tid;
	int sig = t->resume_sig;

	if (!t->stopped)
		return PT_RUNNING;
	t->stopped = false;
	t->resume_sig = 0;
	if (!t->slots && !trap_pending(tid)) {
		if (t->dr7 && !poke_user(tid, DR_OFF(7), 0))
			t->dr7 = 0;
		if (t->dr7) {
			/* Could not clear DR7: do not leave it armed on a
			 * thread we no longer watch over. Keep it seized. */
			w->st.errors++;
		} else if (ptrace(PTRACE_DETACH, tid, NULL, (void *)(uintptr_t)sig) == 0 ||
			   errno == ESRCH) {
			thread_left(w, t);
			return PT_LEFT;
		} else {
			w->st.errors++;
		}
	}
	if (t->group_stop) {
		t->group_stop = false;
		if (ptrace(PTRACE_LISTEN, tid, NULL, NULL) == 0)
			return PT_RUNNING;
	}
	if (ptrace(PTRACE_CONT, tid, NULL, (void *)(uintptr_t)sig) && errno != ESRCH)
		w->st.errors++;
	return PT_RUNNING;
}

static struct watch_wp *wp_of_slot(struct watch_set *w, struct watch_thread *t, int slot)
{
	int i;

	for (i = 0; i < w->nwp; i++)
		if (w->wp[i].used && w->wp[i].t == t && w->wp[i].slot == slot)
			return &w->wp[i];
	return NULL;
}

/* The thread is in the signal-delivery-stop of a breakpoint SIGTRAP. */
static void pt_hit(struct watch_set *w, struct watch_thread *t)
{
	uint64_t dr6 = 0, ip = 0, now = os_now_ns(), dr7 = t->dr7;
	int slot;

	w->st.sigtraps_consumed++;
	if (peek_user(t->tid, DR_OFF(6), &dr6) || peek_user(t->tid, RIP_OFF, &ip))
		w->st.errors++;
	for (slot = 0; slot < WATCH_SLOTS; slot++) {
		struct watch_wp *wp;
		uint64_t v = 0;
		bool ok;

		if (!(dr6 & (1u << slot)) || !(t->slots & (1u << slot)))
			continue;
		wp = wp_of_slot(w, t, slot);
		dr7 &= ~dr7_mask(slot);
		if (!wp)
			continue;
		/* Stopped right after the access: the value it saw/left. */
		ok = watch_read_value(w, wp->addr, wp->len, &v) == 0;
		watch_hit_push(w, wp, t->tid, ip, now, ok, v);
	}
	if (dr7 != t->dr7) {
		if (poke_user(t->tid, DR_OFF(7), dr7))
			w->st.errors++;
		else
			t->dr7 = dr7;
	}
	if (dr6 & 0xf)
		poke_user(t->tid, DR_OFF(6), 0);
	t->resume_sig = 0;   /* consumed: never reaches the target */
}

/* Handles one waitpid status of t. keep: leave it stopped (PT_STOPPED) so
 * that the caller can change its registers; otherwise it is resumed. */
static int pt_event(struct watch_set *w, struct watch_thread *t, int st, bool keep)
{
	int sig, ev;

	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		thread_left(w, t);
		return PT_LEFT;
	}
	if (!WIFSTOPPED(st))
		return PT_RUNNING;
	sig = WSTOPSIG(st);
	ev = (st >> 16) & 0xff;
	t->stopped = true;
	t->resume_sig = 0;
	t->group_stop = false;
	if (ev == PTRACE_EVENT_EXIT) {
		/* Leaving: detach so that it is reaped normally. */
		if (ptrace(PTRACE_DETACH, t->tid, NULL, NULL) && errno != ESRCH)
			w->st.errors++;
		thread_left(w, t);
		return PT_LEFT;
	}
	if (ev == PTRACE_EVENT_STOP) {
		/* PTRACE_INTERRUPT (SIGTRAP) or a group-stop. */
		if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)
			t->group_stop = true;
	} else if (ev == 0 && sig == SIGTRAP) {
		siginfo_t si;

		memset(&si, 0, sizeof(si));
		if (ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si) == 0 && si.si_code == TRAP_HWBKPT) {
			pt_hit(w, t);
		} else {
			t->resume_sig = sig;
			w->st.signals_passed++;
		}
	} else if (ev == 0) {
		t->resume_sig = sig;
		w->st.signals_passed++;
	}
	if (keep)
		return PT_STOPPED;
	return pt_resume(w, t);
}

/* Brings t into a ptrace stop (handling whatever it reports meanwhile).
 * 0, or -ESRCH when it left (t is then stale). */
static int pt_stop(struct watch_set *w, struct watch_thread *t)
{
	if (t->stopped)
		return 0;
	if (ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL) && errno != ESRCH)
		w->st.errors++;
	for (;;) {
		int st = 0, r = wait_tid(w, t->tid, true, &st);

		if (r < 0) {
			/* ECHILD: not ours any more (exited and reaped). */
			thread_left(w, t);
			return -ESRCH;
		}
		if (r == 0)
			continue;
		r = pt_event(w, t, st, true);
		if (r == PT_LEFT)
			return -ESRCH;
		if (r == PT_STOPPED)
			return 0;
	}
}

/* After EPERM from PTRACE_SEIZE: a live thread traced by someone else, or
 * one that has exited (a zombie main thread)? */
static bool thread_alive(struct watch_set *w, pid_t tid)
{
	char path[64], buf[256], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)w->pid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

static int pt_arm(struct watch_set *w, struct watch_wp *wp)
{
	struct watch_thread *t = wp->t;
	uint64_t dr7;
	int slot, ret;

	if (!t->seized) {
		if (ptrace(PTRACE_SEIZE, t->tid, NULL, (void *)(uintptr_t)PTRACE_O_TRACEEXIT))
			return errno == EPERM ? (thread_alive(w, t->tid) ? -EBUSY : -ESRCH) : -errno;
		t->seized = true;
		t->stopped = false;
	}
	if (pt_stop(w, t))
		return -ESRCH;
	for (slot = 0; slot < WATCH_SLOTS; slot++)
		if (!(t->slots & (1u << slot)))
			break;
	if (slot == WATCH_SLOTS) {
		ret = -ENOSPC;
		goto out;
	}
	/* The address first: the kernel reserves a breakpoint slot for it
	 * (ENOSPC when perf or someone else holds the thread's registers). */
	ret = poke_user(t->tid, DR_OFF(slot), wp->addr);
	if (ret)
		goto out;
	dr7 = (t->dr7 & ~dr7_mask(slot)) | dr7_bits(slot, wp->len);
	ret = poke_user(t->tid, DR_OFF(7), dr7);
	if (ret)
		goto out;
	t->dr7 = dr7;
	t->slots |= (uint8_t)(1u << slot);
	wp->slot = slot;
out:
	if (pt_resume(w, t) == PT_LEFT && !ret)
		ret = -ESRCH;   /* not reachable: it has a slot now */
	return ret;
}

static void pt_leave_idle(struct watch_set *w, struct watch_thread *t, uint64_t end_ns);

static void pt_disarm(struct watch_set *w, struct watch_thread *t, struct watch_wp **wps, int n)
{
	uint64_t dr7;
	int i;

	if (!t->seized)
		return;
	if (pt_stop(w, t))
		return;   /* gone: its records were released */
	dr7 = t->dr7;
	for (i = 0; i < n; i++)
		if (wps[i]->used && wps[i]->t == t && wps[i]->slot >= 0)
			dr7 &= ~dr7_mask(wps[i]->slot);
	if (dr7 != t->dr7) {
		if (poke_user(t->tid, DR_OFF(7), dr7))
			w->st.errors++;
		else
			t->dr7 = dr7;
	}
	for (i = 0; i < n; i++)
		if (wps[i]->used && wps[i]->t == t)
			watch_wp_release(w, wps[i]);
	if (pt_resume(w, t) == PT_RUNNING && !t->slots && t->seized)
		pt_leave_idle(w, t, os_now_ns() + 2000000000ULL);
}

/* One sweep over the seized threads without blocking; the number of
 * events handled. */
static int pt_sweep(struct watch_set *w)
{
	int i, n = 0;

	for (i = 0; i < w->nthr; i++) {
		struct watch_thread *t = &w->thr[i];

		while (t->used && t->seized && !t->stopped) {
			int st = 0, r = wait_tid(w, t->tid, false, &st);

			if (r < 0) {
				thread_left(w, t);
				break;
			}
			if (r == 0)
				break;
			n++;
			if (pt_event(w, t, st, false) == PT_LEFT)
				break;
		}
	}
	return n;
}

static bool any_seized(const struct watch_set *w)
{
	int i;

	for (i = 0; i < w->nthr; i++)
		if (w->thr[i].used && w->thr[i].seized)
			return true;
	return false;
}

static int pt_poll(struct watch_set *w, int timeout_ms)
{
	uint64_t end = timeout_ms > 0 ? os_now_ns() + (uint64_t)timeout_ms * 1000000ULL : 0;
	struct timespec nap = { 0, 20000 };

	for (;;) {
		int q0 = w->qlen;

		pt_sweep(w);
		if (w->qlen > q0 || !timeout_ms || !any_seized(w))
			return 0;
		if (timeout_ms > 0 && os_now_ns() >= end)
			return 0;
		nanosleep(&nap, NULL);
	}
}

/* t has no watchpoint left but stayed seized: a breakpoint SIGTRAP was
 * still queued when it was resumed (pt_resume). Takes that stop (pt_event
 * lets it go) so that no thread stays seized without a watchpoint: the
 * attach's detach must be able to seize every thread (e2e_replicas
 * attach_java_ptrace saw EPERM there once, on a busy machine). Bounded by
 * end_ns; past it the thread is stopped and detached as it is. */
static void pt_leave_idle(struct watch_set *w, struct watch_thread *t, uint64_t end_ns)
{
	while (t->used && t->seized && os_now_ns() < end_ns) {
		struct timespec nap = { 0, 50000 };
		int st = 0, r = wait_tid(w, t->tid, false, &st);

		if (r < 0) {
			thread_left(w, t);
			return;
		}
		if (r == 0) {
			nanosleep(&nap, NULL);
			continue;
		}
		pt_event(w, t, st, false);
	}
	if (t->used && t->seized) {
		w->st.errors++;
		if (!pt_stop(w, t)) {
			t->slots = 0;
			ptrace(PTRACE_DETACH, t->tid, NULL, NULL);
			thread_left(w, t);
		}
	}
}

static void pt_close(struct watch_set *w)
{
	int i;

	for (i = 0; i < w->nthr; i++) {
		struct watch_thread *t = &w->thr[i];

		if (!t->used || !t->seized)
			continue;
		if (pt_stop(w, t))
			continue;
		if (!poke_user(t->tid, DR_OFF(7), 0))
			t->dr7 = 0;
		else
			w->st.errors++;
		t->slots = 0;   /* records are released by watch_close */
		if (pt_resume(w, t) == PT_LEFT)
			continue;
		pt_leave_idle(w, t, os_now_ns() + 2000000000ULL);
	}
}

int watch_reap_child(pid_t pid, int *status)
{
	siginfo_t si;
	pid_t r;

	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT))
		return -errno;
	if (si.si_pid != pid)
		return 0;
	if (si.si_code != CLD_EXITED && si.si_code != CLD_KILLED && si.si_code != CLD_DUMPED)
		return 0;   /* a ptrace stop: the watch_set's to take */
	do
		r = waitpid(pid, status, WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return r == pid;
}

const struct watch_route_ops watch_ptrace_ops = {
	.arm = pt_arm,
	.disarm = pt_disarm,
	.poll = pt_poll,
	.close = pt_close,
};
