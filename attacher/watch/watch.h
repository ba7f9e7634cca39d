/* watch.h - hardware watchpoints (x86 debug registers) on a target's threads.
 *
 * Used by the replica analysis (OJXPerf method): arm a read/write
 * watchpoint on one address of one thread of the target, learn when that
 * thread next touches it, the value there right after the access and the
 * width of the access.
 *
 * Two routes, chosen at watch_open:
 *  - WATCH_ROUTE_PERF: one perf_event_open(PERF_TYPE_BREAKPOINT) event per
 *    armed watchpoint, on that thread; the hit is a sample in our ring. No
 *    signal reaches the target.
 *  - WATCH_ROUTE_PTRACE: the thread is PTRACE_SEIZEd while it has a watchpoint
 *    armed, DR0..DR3/DR7 are written with POKEUSER, the SIGTRAP of the hit is
 *    consumed by us (an unhandled SIGTRAP kills a JVM); every other signal
 *    the thread gets meanwhile is passed straight back to it (counted). The
 *    thread is detached (debug registers cleared first) as soon as it has no
 *    watchpoint left; max_age_ns bounds how long that can be.
 *
 * THREADING: a watch_set must only ever be used from ONE thread of the
 * collector (the one that called watch_open): ptrace requests are only
 * accepted from the thread that seized the tracee. Not thread-safe.
 *
 * DEBUG-REGISTER SLOTS: the kernel counts them per thread (perf breakpoint
 * events, ptrace's DR0-DR3, debuggers). perf route: a watchpoint disarmed
 * before its hit keeps its (disabled) event in a per-thread pool for reuse,
 * holding its slot until reused, closed after 2 s idle, or watch_close. ptrace
 * route: once DRn of a thread has been set, the kernel keeps that (disabled)
 * breakpoint and its slot until the thread exits or execs, even after we
 * detach - we always use the lowest free DRn, so a thread watched one at a
 * time pins one slot.
 *
 * COST (bench/bench_watch.c, docs/BENCHMARKS.md "Watchpoint routes"): with
 * the ptrace route a thread that hit stays stopped until the collector's
 * next watch_poll, so its cost per hit is the collector's polling interval;
 * the perf route's is fixed (kernel work on the thread's CPU) whenever the
 * hit is collected. Hence WATCH_ROUTE_PERF is the default.
 *
 * The hit's value is read with process_vm_readv from the target: in the
 * ptrace route while the thread is still stopped right after the access; in
 * the perf route when watch_poll collects the sample (the thread has run on
 * meanwhile, up to one collector round: the value may be newer than the
 * access - value_ok says it was read, not that it is the accessed value). The width comes from
 * decoding the instruction that ends at the reported IP (a data breakpoint
 * traps after the access) with attacher/core/decode.c.
 *
 * Return convention: 0 / counts on success, -errno on failure, as stated.
 */
#ifndef OBJSCOPE_WATCH_H
#define OBJSCOPE_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum watch_route { WATCH_ROUTE_PERF = 0, WATCH_ROUTE_PTRACE = 1 };

/* Debug registers per thread (x86_64). */
#define WATCH_SLOTS 4

struct watch_hit {
	pid_t tid;          /* thread that touched the watched address */
	uint64_t addr;      /* watched address (as armed) */
	unsigned len;       /* armed length: 1, 2, 4 or 8 */
	uint64_t cookie;    /* caller's value given to watch_arm */
	uint64_t ip;        /* user IP after the access (0 if unknown) */
	unsigned width;     /* access width decoded from the trapping instruction, 0 if unknown */
	bool is_write;      /* the decoded instruction writes memory (meaningful when width != 0) */
	bool value_ok;      /* value read */
	uint64_t value;     /* bytes at addr..addr+len read right after the trap (little endian) */
	uint64_t time_ns;   /* CLOCK_MONOTONIC */
	/* Pairs (watch_arm_pair): the hit is the SECOND access; the first: */
	bool pair;
	uint64_t first_time_ns, first_addr, first_ip;
	uint64_t run_ns;    /* the thread's CPU time from the first access to the second */
};

struct watch_stats {
	uint64_t armed;             /* successful watch_arm calls */
	uint64_t hits;              /* hits returned by watch_poll */
	uint64_t enospc;            /* watch_arm refused: no free debug register */
	uint64_t thread_gone;       /* armed watchpoints lost because their thread exited */
	uint64_t disarmed;          /* by watch_disarm / watch_disarm_range / watch_close */
	uint64_t expired;           /* max_age_ns passed without a hit */
	uint64_t sigtraps_consumed; /* ptrace: watchpoint SIGTRAPs taken away from the target */
	uint64_t signals_passed;    /* ptrace: other signals delivered back to the target */
	uint64_t errors;            /* anything else that failed (read errors, odd stops) */
};

struct watch_set;

/* Whether hardware breakpoints fire on this machine: one (perf, counting)
 * on a word of the calling thread, touched 8 times. Some virtual machines
 * accept breakpoints, by perf and by ptrace's DR7 alike, and never deliver
 * their traps (seen: a Firecracker guest, kernel 6.18, AMD EPYC host): every
 * watchpoint would then wait in vain. 0: they fire; -EIO: armed, never
 * fired (kept: asked again, the answer is the same); another -errno: the
 * probe could not be armed (no breakpoint PMU, perf_event_paranoid, all
 * debug registers of the thread busy): not known, asked again next time.
 * OBJSCOPE_WATCH_FIRES=0 in the environment: -EIO without a probe (tests
 * of what objscope does on such a machine, on any machine). */
int watch_fires(void);

/* The one-line reason watch_open gives when watch_fires() is -EIO. */
#define WATCH_NO_FIRE_REASON                                                          \
	"hardware breakpoints do not fire on this machine (one armed on a word of "     \
	"objscope's own thread, touched 8 times: no trap; a virtual machine that does " \
	"not pass debug registers through?)"

/* pid: the target process (the collector already has the right to ptrace /
 * perf it). NULL on failure with a one-line reason in err; among them
 * WATCH_NO_FIRE_REASON, asked of watch_fires() first. */
struct watch_set *watch_open(pid_t pid, enum watch_route route, char *err, size_t errlen);

/* Arms a read/write watchpoint of len bytes (1, 2, 4, 8; addr aligned to len)
 * on thread tid (a thread of pid). cookie identifies it for the caller (must
 * be unique among armed watchpoints: -EEXIST otherwise).
 * 0, -ENOSPC (all 4 debug registers of that thread busy, from us or the
 * kernel), -ESRCH (thread gone), -EINVAL (bad len/alignment), -EEXIST
 * (cookie in use), -EBUSY (ptrace: another tracer, a debugger, holds the
 * thread), other -errno. tid must be a thread of the watch_set's pid (the
 * value is read from pid's memory).
 * max_age_ns: auto-disarm (counted as expired) if no hit by then; 0 = never
 * (avoid with the ptrace route: the thread stays seized while armed). */
int watch_arm(struct watch_set *w, pid_t tid, uint64_t addr, unsigned len, uint64_t cookie,
	      uint64_t max_age_ns);

/* Reuse pairs (perf route only, -EOPNOTSUPP otherwise; docs/REUSE.md): as
 * watch_arm, but the hit is reported at the SECOND access to the address
 * after arming, with the first one's time, address and IP and the thread's
 * CPU time between the two (the event's time running, read by the kernel
 * in each sample: descheduling does not count). A pair whose second access
 * does not come in max_age_ns expires as any watchpoint. Not pooled. */
int watch_arm_pair(struct watch_set *w, pid_t tid, uint64_t addr, unsigned len, uint64_t cookie,
		   uint64_t max_age_ns);

/* Moves the armed watchpoint `cookie` to new_addr (aligned to its length),
 * in place (perf: PERF_EVENT_IOC_MODIFY_ATTRIBUTES): a pair keeps its first
 * access and its CPU time. For a moving collector: the watched object moved.
 * 0, -ENOENT (not armed: hit or gone), -EINVAL, -EOPNOTSUPP (ptrace route),
 * other -errno (the watchpoint is then disarmed). */
int watch_move(struct watch_set *w, uint64_t cookie, uint64_t new_addr);

/* 0, or -ENOENT if no watchpoint with that cookie is armed. A hit of it
 * already taken from the kernel but not yet returned by watch_poll is
 * dropped too (its value may describe memory the caller no longer means). */
int watch_disarm(struct watch_set *w, uint64_t cookie);

/* Disarms every watchpoint whose range intersects [lo, hi) - used when the
 * GC moves or frees objects; returns the number disarmed (not yet returned
 * hits in the range included, and dropped, as for watch_disarm). */
int watch_disarm_range(struct watch_set *w, uint64_t lo, uint64_t hi);

/* Non-blocking: collects up to max hits (a hit disarms its watchpoint),
 * handles thread exits and passes other signals on (ptrace), expires old
 * watchpoints. Returns the number of hits written to hits[] (>= 0), or
 * -errno. Hits beyond max stay queued for the next call. */
int watch_poll(struct watch_set *w, struct watch_hit *hits, int max);

/* Like watch_poll, but waits up to timeout_ms for a first event (-1: no
 * limit). For tests and benchmarks; the collector calls watch_poll from its
 * loop. */
int watch_poll_wait(struct watch_set *w, struct watch_hit *hits, int max, int timeout_ms);

/* Free debug-register slots we could still use on tid (0..4): 4 minus ours
 * armed on tid, minus those the kernel refused us (learned from ENOSPC). */
int watch_free_slots(struct watch_set *w, pid_t tid);

/* Access width (1..64 bytes, 0 unknown) of the instruction of the target
 * that ends at ip, decoded (cached); *is_write: it writes memory. */
unsigned watch_access_width(struct watch_set *w, uint64_t ip, bool *is_write);

/* Watchpoints currently armed. */
int watch_armed(const struct watch_set *w);

void watch_get_stats(const struct watch_set *w, struct watch_stats *out);

/* "perf" / "ptrace". */
const char *watch_route_name(enum watch_route r);

/* "perf" / "ptrace" -> route; -1 if unknown. */
int watch_route_parse(const char *name);

/* For a collector that launched the target (pid is its child) and uses the
 * ptrace route: waitpid(pid, WNOHANG) there would also return - and consume
 * - the ptrace stops of the target's main thread while it is seized (a
 * tracer that is the real parent sees them), which then never reach the
 * watch_set (the thread stays stopped) and look like "the child changed
 * state". This reaps pid only when it has really exited or been killed.
 * 1 (reaped, *status as from waitpid), 0 (still running), -errno. */
int watch_reap_child(pid_t pid, int *status);

/* Disarms everything, detaches, frees; the target runs on unharmed. NULL ok. */
void watch_close(struct watch_set *w);

#endif
