/* ptrace_refusal.h - why the kernel refused `objscope attach` ptrace
 * access to a process, in one line that names the actual cause: another
 * uid without CAP_SYS_PTRACE, a process that is not dumpable, Yama's
 * ptrace_scope (only where Yama exists), a tracer already attached, or
 * else a security module.
 */
#ifndef OBJSCOPE_PTRACE_REFUSAL_H
#define OBJSCOPE_PTRACE_REFUSAL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct os_ptrace_facts {
	uid_t fsuid;          /* ours (the kernel compares the file-system ids) */
	gid_t fsgid;
	uid_t uid[3];         /* the target's real, effective, saved ids */
	gid_t gid[3];
	bool ids_known;       /* the target's status could be read */
	bool cap_sys_ptrace;  /* in our effective set */
	bool dumpable;        /* /proc/PID belongs to its effective uid */
	int yama;             /* kernel.yama.ptrace_scope; -1: no Yama */
	pid_t tracer;         /* TracerPid; 0: none */
};

/* Collects the facts about process pid and ourselves. */
void os_ptrace_facts(pid_t pid, struct os_ptrace_facts *f);

/* The one line (without "attach: ") explaining the refusal, from f. */
void os_ptrace_refusal(pid_t pid, const struct os_ptrace_facts *f, char *out, size_t len);

#endif
