/* ptrace_refusal.c - why ptrace access was refused (see ptrace_refusal.h).
 * The kernel's order (kernel/ptrace.c __ptrace_may_access): the caller's
 * fsuid/fsgid must equal the target's real, effective and saved uids/gids,
 * or the caller needs CAP_SYS_PTRACE; a process that is not dumpable needs
 * CAP_SYS_PTRACE; then the security modules (Yama, SELinux, AppArmor) have
 * their say; PTRACE_SEIZE also fails while another tracer is attached. */
#include "attacher/inject/ptrace_refusal.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/safefs.h"

#define OS_CAP_SYS_PTRACE 19

static bool read_ids(pid_t pid, const char *key, unsigned long v[4])
{
	char line[128];

	return os_proc_status_field(pid, key, line, sizeof(line)) == 0 &&
	       sscanf(line, "%lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3]) == 4;
}

void os_ptrace_facts(pid_t pid, struct os_ptrace_facts *f)
{
	unsigned long u[4], g[4], ours[4];
	char line[128], path[64];
	struct stat st;
	int fd;

	memset(f, 0, sizeof(*f));
	f->dumpable = true;
	f->yama = -1;
	if (read_ids(0, "Uid", ours))
		f->fsuid = (uid_t)ours[3];
	if (read_ids(0, "Gid", ours))
		f->fsgid = (gid_t)ours[3];
	if (os_proc_status_field(0, "CapEff", line, sizeof(line)) == 0)
		f->cap_sys_ptrace = (strtoull(line, NULL, 16) >> OS_CAP_SYS_PTRACE) & 1;
	if (read_ids(pid, "Uid", u) && read_ids(pid, "Gid", g)) {
		f->ids_known = true;
		for (int i = 0; i < 3; i++) {
			f->uid[i] = (uid_t)u[i];
			f->gid[i] = (gid_t)g[i];
		}
		/* /proc/PID of a process that is not dumpable belongs to root */
		snprintf(path, sizeof(path), "/proc/%d", (int)pid);
		if (stat(path, &st) == 0 && st.st_uid != f->uid[1])
			f->dumpable = false;
	}
	if (os_proc_status_field(pid, "TracerPid", line, sizeof(line)) == 0)
		f->tracer = (pid_t)atoi(line);
	fd = open("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, line, sizeof(line) - 1);

		if (n > 0) {
			line[n] = 0;
			f->yama = atoi(line);
		}
		close(fd);
	}
}

void os_ptrace_refusal(pid_t pid, const struct os_ptrace_facts *f, char *out, size_t len)
{
	bool same = f->ids_known;
	int n = snprintf(out, len, "not allowed to ptrace process %d", (int)pid);
	size_t at = n > 0 && (size_t)n < len ? (size_t)n : 0;
	char *p = out + at;

	len -= at;
	for (int i = 0; i < 3 && same; i++)
		same = f->uid[i] == f->fsuid && f->gid[i] == f->fsgid;
	if (f->ids_known && !same && !f->cap_sys_ptrace) {
		if (f->uid[0] == f->uid[1] && f->uid[1] == f->uid[2] && f->uid[1] != f->fsuid)
			snprintf(p, len, ": it runs as uid %u, objscope as uid %u without "
				 "CAP_SYS_PTRACE — run objscope as root (or with CAP_SYS_PTRACE) "
				 "or as uid %u", (unsigned)f->uid[1], (unsigned)f->fsuid,
				 (unsigned)f->uid[1]);
		else
			snprintf(p, len, ": its real, effective and saved ids (uids %u/%u/%u, gids "
				 "%u/%u/%u) are not all objscope's (%u/%u), as for a setuid or "
				 "setgid program, and objscope lacks CAP_SYS_PTRACE — run objscope "
				 "as root", (unsigned)f->uid[0], (unsigned)f->uid[1],
				 (unsigned)f->uid[2], (unsigned)f->gid[0], (unsigned)f->gid[1],
				 (unsigned)f->gid[2], (unsigned)f->fsuid, (unsigned)f->fsgid);
	} else if (!f->dumpable && !f->cap_sys_ptrace) {
		snprintf(p, len, ": it is not dumpable (a setuid program, or "
			 "prctl(PR_SET_DUMPABLE, 0)) and objscope lacks CAP_SYS_PTRACE — run "
			 "objscope as root");
	} else if (f->yama == 3) {
		snprintf(p, len, ": kernel.yama.ptrace_scope = 3 forbids ptrace on this system "
			 "until the next boot");
	} else if ((f->yama == 1 || f->yama == 2) && !f->cap_sys_ptrace) {
		snprintf(p, len, ": kernel.yama.ptrace_scope = %d allows ptrace %s — run objscope "
			 "as root (or with CAP_SYS_PTRACE)%s", f->yama,
			 f->yama == 1 ? "of descendants only" : "only with CAP_SYS_PTRACE",
			 f->yama == 1 ? ", or set kernel.yama.ptrace_scope to 0" : "");
	} else if (f->tracer > 0) {
		snprintf(p, len, ": it is already traced by process %d (a debugger or strace) — "
			 "detach that first", (int)f->tracer);
	} else {
		snprintf(p, len, " although %s — a security module (SELinux, AppArmor) or the "
			 "container's policy refuses", f->cap_sys_ptrace
			 ? "objscope has CAP_SYS_PTRACE" : same ? "the ids match"
			 : "its ids could not be read");
	}
}
