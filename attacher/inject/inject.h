/* inject.h - calling functions inside a running process with ptrace (the
 * `objscope attach` injection; x86_64 only).
 *
 * os_inject_begin() seizes ONE thread of the target (PTRACE_SEIZE +
 * PTRACE_INTERRUPT; the other threads keep running) at a point where calling
 * into libc is safe: not inside libc, the loader or libobjscope (where it
 * could hold the malloc or loader lock), or blocked in a system call that
 * holds no such lock (sleep, poll, read, wait, ...). Other threads are tried,
 * then the same ones again, for a bounded time. Its registers are saved.
 *
 * os_inject_call() runs fn(args) on that thread: a string argument is
 * written below the stack's red zone (the bytes it covers are saved and
 * restored), the return address is 0, and the SIGSEGV at address 0 ends the
 * call. Signals that arrive meanwhile are delivered to the target.
 *
 * os_inject_end() restores the registers (an interrupted system call is
 * restarted) and detaches.
 *
 * os_inject_symbol() finds the run-time address of a dynamic symbol of an
 * object mapped in the target, reading the file through /proc/PID/root (so
 * targets in other mount namespaces work).
 *
 * Return convention: 0 on success, -errno on failure; -ESRCH when the target
 * (or the seized thread) exited, -EPERM when ptrace is not allowed, -EBUSY
 * when no thread reached a safe point in time, -ETIMEDOUT when a call did
 * not return, -EFAULT when it crashed, -EAGAIN when a fault the thread took
 * before the interruption arrived before the call ran (handed back to the
 * target, nothing run, the thread let go: begin again). A thread with a
 * signal queued is not chosen; during a call SIGSEGV, SIGBUS, SIGILL, SIGFPE
 * and SIGTRAP are unblocked (see struct os_inject). err receives one line.
 */
#ifndef OBJSCOPE_INJECT_H
#define OBJSCOPE_INJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

struct os_inject {
	pid_t pid;
	pid_t tid;                     /* the seized thread */
	bool seized;
	int pending_sig;               /* signal to hand back at detach */
	struct user_regs_struct saved; /* registers at the interruption */
	/* FPU/SSE/AVX state at the interruption (NT_X86_XSTATE, else the
	 * 512-byte fxsave of NT_PRFPREG): code interrupted anywhere (JIT code)
	 * keeps live values in vector registers, and the call clobbers them */
	uint8_t xstate[32768] __attribute__((aligned(64))); /* AMX tiles: ~11 KiB */
	size_t xstate_len;
	int xstate_type;               /* 0 = not saved */
	/* signal mask at the interruption: during a call SIGSEGV, SIGBUS,
	 * SIGILL, SIGFPE and SIGTRAP are unblocked (a fault while blocked,
	 * such as the call's own return to 0 on a thread interrupted inside a
	 * SIGSEGV handler, makes the kernel reset the target's handler to the
	 * default: the target would die on its next fault) */
	uint64_t sigmask;
	bool have_mask;
};

int os_inject_begin(struct os_inject *in, pid_t pid, unsigned timeout_ms, char *err,
		    size_t errlen);
/* Calls fn(a0, a1, a2) in the target; when str is not NULL, a copy of it is
 * placed in the target's stack and passed as a0. *ret gets rax. The call
 * may take up to timeout_ms. */
int os_inject_call(struct os_inject *in, uint64_t fn, const char *str, uint64_t a1, uint64_t a2,
		   unsigned timeout_ms, uint64_t *ret, char *err, size_t errlen);
/* Restores and detaches; safe to call when begin failed. */
void os_inject_end(struct os_inject *in);

/* Address of the function `name` (.dynsym, defined) in the object mapped in
 * pid whose path ends with `suffix` (e.g. "/libc.so.6"), read by the
 * symbolizer's ELF reader (os_elfmod_dynsym_addr). The file is read through
 * /proc/PID/map_files, else /proc/PID/root + path, else its path: those two
 * only when they open (never blocking) a regular file with the mapping's
 * device (but for overlayfs) and inode. */
int os_inject_symbol(pid_t pid, const char *suffix, const char *name, uint64_t *addr);

/* Reads a NUL-terminated string of the target (for dlerror()). */
int os_inject_read_str(pid_t pid, uint64_t addr, char *buf, size_t len);
/* Reads len bytes of the target at addr: 0, -EFAULT, -ESRCH. */
int os_inject_read(pid_t pid, uint64_t addr, void *buf, size_t len);

/* ---- holding every other thread (writing code the JVM may run) ----------
 * os_inject_stop_others() seizes and interrupts every thread of pid except
 * `except` (the injected one), re-reading /proc/PID/task until a pass finds
 * no new thread (a thread can only be created by a running one), within
 * timeout_ms. A thread that exits meanwhile is forgotten; a signal that
 * stopped a thread first is handed back when it is let go. rip[i] is where
 * thread tids[i] stopped. os_inject_resume_others() detaches all of them.
 * Return: 0, -ESRCH (process gone), -EPERM, -ETIMEDOUT (not all stopped in
 * time: everything was let go again), -ENOMEM. */
struct os_inject_group {
	pid_t *tids;
	int *sig;
	uint64_t *rip;
	size_t n, cap;
};

int os_inject_stop_others(struct os_inject_group *g, pid_t pid, pid_t except,
			  unsigned timeout_ms);
void os_inject_resume_others(struct os_inject_group *g);
void os_inject_group_free(struct os_inject_group *g);

#endif
