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
 * not return, -EFAULT when it crashed. err receives one line.
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

/* Address of `name` (.dynsym, defined) in the object mapped in pid whose
 * path ends with `suffix` (e.g. "/libc.so.6"). The file is read through
 * /proc/PID/map_files, else its path, else /proc/PID/root + path. */
int os_inject_symbol(pid_t pid, const char *suffix, const char *name, uint64_t *addr);

/* Reads a NUL-terminated string of the target (for dlerror()). */
int os_inject_read_str(pid_t pid, uint64_t addr, char *buf, size_t len);

#endif
