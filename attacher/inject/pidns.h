/* pidns.h - process and thread ids of an attached target that lives in
 * another PID namespace (a container): the preload library writes the ids it
 * sees (getpid/gettid inside the namespace), perf reports the collector's
 * view. The map is learnt from the NSpid lines of /proc/PID/task/TID/status.
 * Return convention: 0 / -errno; lookups return 0 when unknown.
 */
#ifndef OBJSCOPE_PIDNS_H
#define OBJSCOPE_PIDNS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct os_pidns {
	uint32_t host_pid, ns_pid;
	struct os_pidns_tid { uint32_t host, ns; } *tids;
	size_t n, cap;
};

/* Reads pid's ids; -ENOENT when pid is gone, -EINVAL when it lives in our
 * own PID namespace (nothing to translate). */
int os_pidns_init(struct os_pidns *m, pid_t host_pid);
void os_pidns_destroy(struct os_pidns *m);
/* Our id of the target's thread ns_tid (rescans the threads on a miss). */
uint32_t os_pidns_host_tid(struct os_pidns *m, uint32_t ns_tid);
/* The target's id of our thread host_tid (only threads seen before). */
uint32_t os_pidns_ns_tid(const struct os_pidns *m, uint32_t host_tid);

#endif
