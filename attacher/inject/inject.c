/* inject.c - ptrace calls into a running process (see inject.h). */
#include "attacher/inject/inject.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attacher/core/remote.h"
#include "common/clock.h"
#include "common/grow.h"
#include "common/procmaps.h"
#include "symbolizer/elf_module.h"

#define STACK_GAP 512      /* bytes left below the interrupted rsp (red zone: 128) */
#define MAX_STR 4096
#define MAX_RANGES 32
#define SIGBIT(s) (1ULL << ((s) - 1))
/* unblocked during a call (see struct os_inject) */
#define SYNC_SIGS (SIGBIT(SIGSEGV) | SIGBIT(SIGBUS) | SIGBIT(SIGILL) | SIGBIT(SIGFPE) | \
		   SIGBIT(SIGTRAP))

/* ---- where a thread may be interrupted ------------------------------------- */

struct ranges {
	uint64_t lo[MAX_RANGES], hi[MAX_RANGES];
	int n;
};

/* Code that may hold the malloc or loader lock. */
static int collect_unsafe(const struct os_maps_entry *e, void *arg)
{
	struct ranges *r = arg;

	if (!os_maps_is_exec(e) || r->n == MAX_RANGES)
		return 0;
	if (strstr(e->path, "/libc.so") || strstr(e->path, "/libc-") ||
	    strstr(e->path, "/ld-linux") || strstr(e->path, "/libobjscope") ||
	    strstr(e->path, "/libpthread")) {
		r->lo[r->n] = e->start;
		r->hi[r->n++] = e->end;
	}
	return 0;
}

/* Blocking system calls that hold no libc lock when they sleep. */
static bool syscall_is_safe(long nr)
{
	switch (nr) {
	case SYS_read: case SYS_write: case SYS_poll: case SYS_ppoll: case SYS_select:
	case SYS_pselect6: case SYS_epoll_wait: case SYS_epoll_pwait: case SYS_nanosleep:
	case SYS_clock_nanosleep: case SYS_wait4: case SYS_waitid: case SYS_pause:
	case SYS_accept: case SYS_accept4: case SYS_recvfrom: case SYS_recvmsg:
	case SYS_rt_sigsuspend: case SYS_rt_sigtimedwait: case SYS_sched_yield:
		return true;
	default:
		return false;
	}
}

/* Cheap pre-check without ptrace: a thread blocked in a system call that
 * is not a safe one (a JVM has dozens parked in futex) is not worth
 * seizing. /proc/PID/task/TID/syscall says "running", or the number of the
 * call it is blocked in. The registers are checked again once seized. */
static bool maybe_safe(pid_t pid, pid_t tid)
{
	char path[64], buf[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return true;
	buf[n] = 0;
	if (buf[0] < '0' || buf[0] > '9')
		return true; /* "running", or -1: not in a system call */
	return syscall_is_safe(strtol(buf, NULL, 10));
}

static bool regs_are_safe(const struct user_regs_struct *r, const struct ranges *unsafe)
{
	if ((long)r->orig_rax >= 0)
		return syscall_is_safe((long)r->orig_rax);
	for (int i = 0; i < unsafe->n; i++)
		if (r->rip >= unsafe->lo[i] && r->rip < unsafe->hi[i])
			return false;
	return true;
}

/* Unblocked signals queued for the thread itself (SigPnd & ~SigBlk of
 * /proc/PID/task/TID/status), 0 when none or unreadable. A thread that
 * faulted (a JVM's safepoint poll, implicit null check, SIGFPE of a
 * division) just as PTRACE_INTERRUPT arrived reports the interrupt stop
 * FIRST (the kernel handles the ptrace trap before dequeuing signals) with
 * its SIGSEGV still queued: a call started on it would take that signal at
 * the call's first instruction, in a context that is not the one that
 * faulted. Such a thread is let go (the signal stays queued, untouched).
 * Counted: what the call would receive (SYNC_SIGS are unblocked then). */
static uint64_t thread_pending(pid_t pid, pid_t tid)
{
	char path[64], buf[4096];
	unsigned long long pnd = 0, blk = 0;
	const char *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	if ((p = strstr(buf, "\nSigPnd:")))
		pnd = strtoull(p + 8, NULL, 16);
	if ((p = strstr(buf, "\nSigBlk:")))
		blk = strtoull(p + 8, NULL, 16);
	return pnd & ~(blk & ~SYNC_SIGS); /* what a call would receive */
}

/* ---- ptrace steps -------------------------------------------------------- */

/* Waits for the seized thread to stop, up to deadline (ms). Returns the
 * wait status, -ESRCH when it is gone, -ETIMEDOUT. */
static int wait_stop(pid_t tid, uint64_t deadline)
{
	int st;

	for (;;) {
		pid_t w = waitpid(tid, &st, __WALL | WNOHANG);

		if (w == tid)
			return (WIFEXITED(st) || WIFSIGNALED(st)) ? -ESRCH : st & 0x7fffffff;
		if (w < 0 && errno != EINTR)
			return -ESRCH;
		if ((os_now_ns() / 1000000) > deadline)
			return -ETIMEDOUT;
		usleep(100);
	}
}

static int ptrace_err(int e)
{
	return e == EPERM || e == EACCES ? -EPERM : -e;
}

/* Seizes tid and stops it. Returns 0 with regs filled, -ESRCH, -EPERM. */
static int seize_thread(struct os_inject *in, pid_t tid, uint64_t deadline)
{
	int st;

	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) != 0)
		return ptrace_err(errno);
	in->tid = tid;
	in->seized = true;
	in->pending_sig = 0;
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) != 0)
		goto gone;
	st = wait_stop(tid, deadline + 1000);
	if (st < 0)
		goto gone;
	/* a signal-delivery-stop came first: use it, hand the signal back */
	if ((st >> 16) == 0 && WSTOPSIG(st) != SIGTRAP)
		in->pending_sig = WSTOPSIG(st);
	if (ptrace(PTRACE_GETREGS, tid, NULL, &in->saved) != 0)
		goto gone;
	return 0;
gone:
	in->seized = false;
	ptrace(PTRACE_DETACH, tid, NULL, NULL);
	return -ESRCH;
}

/* Saves the thread's FPU/vector registers (restored by os_inject_end). */
static void save_xstate(struct os_inject *in)
{
	static const int types[] = { NT_X86_XSTATE, NT_PRFPREG };

	in->xstate_type = 0;
	for (size_t i = 0; i < sizeof(types) / sizeof(*types); i++) {
		struct iovec iov = { in->xstate, sizeof(in->xstate) };

		/* the kernel takes the state back only whole: a full buffer may
		 * mean a cut one */
		if (ptrace(PTRACE_GETREGSET, in->tid, (void *)(long)types[i], &iov) == 0 &&
		    iov.iov_len < sizeof(in->xstate)) {
			in->xstate_type = types[i];
			in->xstate_len = iov.iov_len;
			return;
		}
	}
}

static void restore_xstate(struct os_inject *in)
{
	struct iovec iov = { in->xstate, in->xstate_len };

	if (in->xstate_type)
		ptrace(PTRACE_SETREGSET, in->tid, (void *)(long)in->xstate_type, &iov);
	if (in->have_mask)
		ptrace(PTRACE_SETSIGMASK, in->tid, (void *)sizeof(in->sigmask), &in->sigmask);
}

/* Saves the thread's signal mask (restored with the xstate). */
static void save_sigmask(struct os_inject *in)
{
	in->have_mask = ptrace(PTRACE_GETSIGMASK, in->tid, (void *)sizeof(in->sigmask),
			       &in->sigmask) == 0;
}

static void release_thread(struct os_inject *in)
{
	if (!in->seized)
		return;
	ptrace(PTRACE_DETACH, in->tid, NULL, (void *)(long)in->pending_sig);
	in->seized = false;
}

int os_inject_begin(struct os_inject *in, pid_t pid, unsigned timeout_ms, char *err,
		    size_t errlen)
{
	uint64_t deadline = (os_now_ns() / 1000000) + timeout_ms;
	struct ranges unsafe = { .n = 0 };
	char dir[64];
	int rc;

	memset(in, 0, sizeof(*in));
	in->pid = pid;
	rc = os_maps_foreach_pid(pid, collect_unsafe, &unsafe);
	if (rc < 0) {
		snprintf(err, errlen, "cannot read /proc/%d/maps: %s", (int)pid, strerror(-rc));
		return rc == -ENOENT ? -ESRCH : rc;
	}
	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	for (unsigned round = 0;; round++) {
		DIR *d = opendir(dir);
		struct dirent *de;
		bool any = false;

		if (!d) {
			snprintf(err, errlen, "process %d exited", (int)pid);
			return -ESRCH;
		}
		while ((de = readdir(d))) {
			pid_t tid = (pid_t)atoi(de->d_name);

			if (tid <= 0 || (round < 3 && !maybe_safe(pid, tid)))
				continue;
			if ((os_now_ns() / 1000000) > deadline)
				break; /* a process with ever more threads: checked below */
			rc = seize_thread(in, tid, deadline);
			if (rc == -EPERM) {
				closedir(d);
				snprintf(err, errlen, "ptrace of thread %d: %s", (int)tid,
					 strerror(EPERM));
				return rc;
			}
			if (rc < 0)
				continue;
			any = true;
			/* A thread that stopped for a signal first (a JVM takes
			 * SIGSEGV all the time: safepoint polls, implicit null
			 * checks) is let go at once, from that very stop, so the
			 * signal keeps its siginfo: after a call made on it, the
			 * last stop would be the call's own SIGSEGV at address 0,
			 * and handing the signal back from there would give the
			 * target's handler a fault address of 0. */
			if (!in->pending_sig && regs_are_safe(&in->saved, &unsafe) &&
			    !thread_pending(pid, tid)) {
				closedir(d);
				save_xstate(in);
				save_sigmask(in);
				return 0;
			}
			release_thread(in);
		}
		closedir(d);
		if (!any && kill(pid, 0) != 0) {
			snprintf(err, errlen, "process %d exited during injection", (int)pid);
			return -ESRCH;
		}
		if ((os_now_ns() / 1000000) > deadline) {
			snprintf(err, errlen,
				 "no thread of %d reached a point where it can call dlopen within "
				 "%u ms (all busy in libc or the loader)", (int)pid, timeout_ms);
			return -EBUSY;
		}
		usleep(round < 10 ? 200 : 2000);
	}
}

int os_inject_read_str(pid_t pid, uint64_t addr, char *buf, size_t len)
{
	size_t got = 0;

	/* page by page: the string may end just before an unmapped page */
	while (got + 1 < len) {
		size_t chunk = 4096 - ((addr + got) & 4095);
		int rc;

		if (chunk > len - 1 - got)
			chunk = len - 1 - got;
		rc = os_remote_read_all(pid, addr + got, buf + got, chunk);
		if (rc < 0)
			return rc;
		if (memchr(buf + got, 0, chunk))
			return 0;
		got += chunk;
	}
	buf[len - 1] = 0;
	return 0;
}

static void os_inject_end_sig(struct os_inject *in, int sig);

/* A signal-delivery-stop of the call that is a fault the thread took
 * before the call (see thread_pending): a kernel-generated SIGSEGV, SIGBUS,
 * SIGILL or SIGFPE while the registers are still exactly as the call set
 * them up (nothing of fn ran), and not a fault on fetching fn itself. */
static bool own_fault(struct os_inject *in, int st, uint64_t fn, uint64_t ret_slot)
{
	int sig = WSTOPSIG(st);
	struct user_regs_struct now;
	siginfo_t si;

	if (sig != SIGSEGV && sig != SIGBUS && sig != SIGILL && sig != SIGFPE)
		return false;
	memset(&si, 0, sizeof(si));
	if (ptrace(PTRACE_GETREGS, in->tid, NULL, &now) != 0 ||
	    ptrace(PTRACE_GETSIGINFO, in->tid, NULL, &si) != 0)
		return false;
	return si.si_code > 0 && now.rip == fn && now.rsp == ret_slot &&
	       (uint64_t)(uintptr_t)si.si_addr != fn;
}

/* The signal of the current signal-delivery-stop was raised by the kernel
 * (a fault), not sent with kill/tgkill (that one is the target's: it is
 * delivered). */
static bool kernel_sent(struct os_inject *in)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	return ptrace(PTRACE_GETSIGINFO, in->tid, NULL, &si) != 0 || si.si_code > 0;
}

/* The call is given up while the thread is stopped; st is that stop. A
 * signal-delivery-stop's signal is the target's: it is delivered when the
 * thread is let go (os_inject_end), or sent again when one is kept already. */
static void keep_signal(struct os_inject *in, int st)
{
	int sig;

	if (st < 0 || (st >> 16) != 0 || !WIFSTOPPED(st))
		return;
	sig = WSTOPSIG(st);
	if (!in->pending_sig)
		in->pending_sig = sig;
	else if (sig != in->pending_sig)
		syscall(SYS_tgkill, (int)in->pid, (int)in->tid, sig);
}

int os_inject_call(struct os_inject *in, uint64_t fn, const char *str, uint64_t a1, uint64_t a2,
		   unsigned timeout_ms, uint64_t *ret, char *err, size_t errlen)
{
	struct user_regs_struct r = in->saved;
	uint8_t saved_mem[MAX_STR + 32], frame[MAX_STR + 32];
	size_t slen = str ? strlen(str) + 1 : 0, flen;
	uint64_t top, ret_slot, deadline = (os_now_ns() / 1000000) + timeout_ms;
	int rc, st;

	if (!in->seized)
		return -ESRCH;
	if (slen > MAX_STR)
		return -ENAMETOOLONG;
	/* [ret_slot] = 0, then the string; rsp = ret_slot is 8 mod 16 as
	 * after a call instruction */
	top = (r.rsp - STACK_GAP) & ~15ULL;
	ret_slot = top - ((slen + 15) & ~15ULL) - 8;
	flen = top - ret_slot;
	memset(frame, 0, flen);
	if (str)
		memcpy(frame + 8, str, slen);
	rc = os_remote_read_all(in->pid, ret_slot, saved_mem, flen);
	if (rc == 0)
		rc = os_remote_write_all(in->pid, ret_slot, frame, flen);
	if (rc < 0) {
		snprintf(err, errlen, "cannot write the target's stack: %s", strerror(-rc));
		return rc;
	}
	r.rsp = ret_slot;
	r.rip = fn;
	r.rdi = str ? ret_slot + 8 : 0;
	r.rsi = a1;
	r.rdx = a2;
	r.rax = 0;
	r.orig_rax = (unsigned long long)-1; /* no system call restart on the way in */
	if (in->have_mask && (in->sigmask & SYNC_SIGS)) {
		uint64_t m = in->sigmask & ~SYNC_SIGS;

		ptrace(PTRACE_SETSIGMASK, in->tid, (void *)sizeof(m), &m);
	}
	if (ptrace(PTRACE_SETREGS, in->tid, NULL, &r) != 0 ||
	    ptrace(PTRACE_CONT, in->tid, NULL, NULL) != 0) {
		rc = -ESRCH;
		goto gone;
	}
	for (;;) {
		st = wait_stop(in->tid, deadline);
		if (st == -ETIMEDOUT) {
			snprintf(err, errlen, "the call in the target did not return within %u ms",
				 timeout_ms);
			/* stop it again so that end() can put the registers back */
			ptrace(PTRACE_INTERRUPT, in->tid, NULL, NULL);
			keep_signal(in, wait_stop(in->tid, (os_now_ns() / 1000000) + 1000));
			return -ETIMEDOUT;
		}
		if (st < 0) {
			rc = st;
			goto gone;
		}
		if ((st >> 16) == 0 && own_fault(in, st, fn, ret_slot)) {
			/* the thread's own fault from before the call (queued at the
			 * interruption): put everything back and hand the signal to
			 * the target's handler from this very stop, its siginfo
			 * intact, as if never interrupted */
			int sig = WSTOPSIG(st);

			os_remote_write_all(in->pid, ret_slot, saved_mem, flen);
			os_inject_end_sig(in, sig);
			snprintf(err, errlen, "thread %d took its own signal %d when the call "
				 "started (handed back to it; nothing was run)", (int)in->tid, sig);
			return -EAGAIN;
		}
		if ((st >> 16) == 0 && WSTOPSIG(st) == SIGSEGV && kernel_sent(in)) {
			struct user_regs_struct now;
			siginfo_t si;

			if (ptrace(PTRACE_GETREGS, in->tid, NULL, &now) != 0) {
				rc = -ESRCH;
				goto gone;
			}
			if (now.rip != 0) {
				memset(&si, 0, sizeof(si));
				ptrace(PTRACE_GETSIGINFO, in->tid, NULL, &si);
				snprintf(err, errlen,
					 "the call in the target crashed at 0x%llx (thread %d, "
					 "signal %d code %d addr %p%s)",
					 (unsigned long long)now.rip, (int)in->tid, WSTOPSIG(st),
					 si.si_code, si.si_addr,
					 now.rip == fn ? ", before its first instruction" : "");
				return -EFAULT;
			}
			*ret = now.rax;
			break;
		}
		/* wait_stop returns at once while stops keep coming (a target
		 * that signals itself without pause): the deadline is checked
		 * here too. The thread is stopped: end() can put it back. */
		if ((os_now_ns() / 1000000) > deadline) {
			snprintf(err, errlen, "the call in the target did not return within %u ms",
				 timeout_ms);
			keep_signal(in, st);
			return -ETIMEDOUT;
		}
		/* event stops (our interrupt, group stop): go on; other signals are
		 * the target's: deliver them */
		if (ptrace(PTRACE_CONT, in->tid, NULL,
			   (void *)(long)((st >> 16) == 0 ? WSTOPSIG(st) : 0)) != 0) {
			rc = -ESRCH;
			goto gone;
		}
	}
	os_remote_write_all(in->pid, ret_slot, saved_mem, flen);
	return 0;
gone:
	in->seized = false;
	snprintf(err, errlen, "process %d exited during injection", (int)in->pid);
	return rc;
}

/* Restores and detaches, delivering sig (0: in->pending_sig). */
static void os_inject_end_sig(struct os_inject *in, int sig)
{
	if (!in->seized)
		return;
	ptrace(PTRACE_SETREGS, in->tid, NULL, &in->saved);
	restore_xstate(in);
	if (sig)
		in->pending_sig = sig;
	release_thread(in);
}

void os_inject_end(struct os_inject *in)
{
	os_inject_end_sig(in, 0);
}

int os_inject_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	int rc = os_remote_read_all(pid, addr, buf, len);

	return rc == -ESRCH ? -ESRCH : rc < 0 ? -EFAULT : 0;
}

/* ---- holding every other thread ------------------------------------------------ */

static bool group_has(const struct os_inject_group *g, pid_t tid)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->tids[i] == tid)
			return true;
	return false;
}

static int group_add(struct os_inject_group *g, pid_t tid)
{
	/* three arrays of one capacity: g->cap moves when all three have grown */
	size_t ct = g->cap, cs = g->cap, cr = g->cap;
	pid_t *t = os_grow(g->tids, &ct, g->n + 1, sizeof(*t), 64);
	int *s;
	uint64_t *r;

	if (!t)
		return -ENOMEM;
	g->tids = t;
	s = os_grow(g->sig, &cs, g->n + 1, sizeof(*s), 64);
	if (!s)
		return -ENOMEM;
	g->sig = s;
	r = os_grow(g->rip, &cr, g->n + 1, sizeof(*r), 64);
	if (!r)
		return -ENOMEM;
	g->rip = r;
	g->cap = ct;
	g->tids[g->n] = tid;
	g->sig[g->n] = 0;
	g->rip[g->n] = 0;
	g->n++;
	return 0;
}

static void group_drop(struct os_inject_group *g, size_t i)
{
	g->n--;
	g->tids[i] = g->tids[g->n];
	g->sig[i] = g->sig[g->n];
	g->rip[i] = g->rip[g->n];
}

void os_inject_resume_others(struct os_inject_group *g)
{
	for (size_t i = 0; i < g->n; i++)
		ptrace(PTRACE_DETACH, g->tids[i], NULL, (void *)(long)g->sig[i]);
	g->n = 0;
}

void os_inject_group_free(struct os_inject_group *g)
{
	os_inject_resume_others(g);
	free(g->tids);
	free(g->sig);
	free(g->rip);
	memset(g, 0, sizeof(*g));
}

int os_inject_stop_others(struct os_inject_group *g, pid_t pid, pid_t except,
			  unsigned timeout_ms)
{
	uint64_t deadline = (os_now_ns() / 1000000) + timeout_ms;
	char dir[64];
	int rc = 0;

	g->n = 0;
	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	for (;;) {
		size_t first = g->n;
		struct dirent *de;
		DIR *d = opendir(dir);
		bool late = false;

		if (!d) {
			rc = -ESRCH;
			goto fail;
		}
		/* seize and interrupt the new ones first, then wait for them */
		while ((de = readdir(d))) {
			pid_t tid = (pid_t)atoi(de->d_name);

			if (tid <= 0 || tid == except || group_has(g, tid))
				continue;
			if ((os_now_ns() / 1000000) > deadline) {
				late = true; /* ever more threads: the ones seized are
					      * waited for, then it fails below */
				break;
			}
			if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) != 0) {
				if (errno == EPERM || errno == EACCES) {
					closedir(d);
					rc = -EPERM;
					goto fail;
				}
				continue; /* exited */
			}
			if (group_add(g, tid) < 0) {
				ptrace(PTRACE_DETACH, tid, NULL, NULL);
				closedir(d);
				rc = -ENOMEM;
				goto fail;
			}
			ptrace(PTRACE_INTERRUPT, tid, NULL, NULL);
		}
		closedir(d);
		if (g->n == first && !late)
			return 0; /* a pass with no new thread: all are held */
		for (size_t i = first; i < g->n;) {
			struct user_regs_struct r;
			int st = wait_stop(g->tids[i], deadline);

			if (st == -ETIMEDOUT) {
				rc = -ETIMEDOUT;
				goto fail;
			}
			if (st < 0 || ptrace(PTRACE_GETREGS, g->tids[i], NULL, &r) != 0) {
				ptrace(PTRACE_DETACH, g->tids[i], NULL, NULL);
				group_drop(g, i); /* exited */
				continue;
			}
			if ((st >> 16) == 0 && WSTOPSIG(st) != SIGTRAP)
				g->sig[i] = WSTOPSIG(st);
			g->rip[i] = r.rip;
			i++;
		}
		if ((os_now_ns() / 1000000) > deadline) {
			rc = -ETIMEDOUT;
			goto fail;
		}
	}
fail:
	os_inject_resume_others(g);
	return rc;
}

/* ---- symbols ----------------------------------------------------------------- */

struct find_obj {
	const char *suffix;
	uint64_t start, end, offset, inode;
	uint32_t dev_major, dev_minor;
	char path[PATH_MAX];
	bool found;
};

static int find_mapping(const struct os_maps_entry *e, void *arg)
{
	struct find_obj *f = arg;
	size_t pl = strlen(e->path), sl = strlen(f->suffix);

	if (pl < sl || strcmp(e->path + pl - sl, f->suffix) != 0)
		return 0;
	if (!f->found || e->offset < f->offset) {
		f->start = e->start;
		f->end = e->end;
		f->offset = e->offset;
		f->inode = e->inode;
		f->dev_major = e->dev_major;
		f->dev_minor = e->dev_minor;
		snprintf(f->path, sizeof(f->path), "%s", e->path);
		f->found = true;
	}
	return 0;
}

/* Each of the three ways to open the file (inject.h) in turn, until one
 * opens the mapped file. */
int os_inject_symbol(pid_t pid, const char *suffix, const char *name, uint64_t *addr)
{
	struct find_obj f = { .suffix = suffix };
	char mf[96], root[PATH_MAX + 64];
	const char *paths[3] = { mf, root, f.path };
	int rc;

	rc = os_maps_foreach_pid(pid, find_mapping, &f);
	if (rc < 0)
		return rc == -ENOENT ? -ESRCH : rc;
	if (!f.found)
		return -ENOENT;
	snprintf(mf, sizeof(mf), "/proc/%d/map_files/%llx-%llx", (int)pid,
		 (unsigned long long)f.start, (unsigned long long)f.end);
	snprintf(root, sizeof(root), "/proc/%d/root%s", (int)pid, f.path);
	for (size_t i = 0; i < 3; i++) {
		struct os_elfmod *m = os_elfmod_new(f.path);

		if (!m)
			return -ENOMEM;
		os_elfmod_expect_id(m, f.dev_major, f.dev_minor, f.inode);
		rc = os_elfmod_dynsym_addr(m, paths[i], f.start, f.offset, name, addr);
		os_elfmod_free(m);
		if (rc == 0 || rc == -ENOEXEC || rc == -ENOMEM)
			return rc;
	}
	return rc == -ESTALE ? -ENOENT : rc; /* another file by that name */
}
