/* run_loop.h - the collection loop that `record` and `attach` share: the
 * stop signals (SIGINT, SIGTERM, SIGHUP) caught and waking the loop through
 * a self-pipe, the perf rings and the target's pidfd polled, -d measured.
 * Each command keeps its own ending (record: the command runs on and its
 * status is passed on; attach: detach). One loop per process. */
#ifndef OBJSCOPE_RUN_LOOP_H
#define OBJSCOPE_RUN_LOOP_H

#include <stdbool.h>
#include <stdint.h>

#include "attacher/cli/options.h"
#include "attacher/core/collector.h"

/* The loop's poll timeout: the collector's apply cadence (APPLY_EVERY_NS in
 * collector.c). Perf rings still wake it at their watermark, the target's
 * exit through its pidfd and stop signals through the self-pipe. Once samples
 * were lost (perf buffer overflow, counted in c.lost) `record` falls back to
 * the short timeout for the rest of the run, which leaves more of the buffers
 * free when a round stalls (under load a 20 ms timeout lost samples on
 * javac where 5 ms mostly lost none).
 * Without a pidfd (old kernel) exit is found by polling: short timeout then.
 * --replicas keeps it short too: the ptrace route holds a hit thread stopped
 * until the next round. */
#define OS_RUN_POLL_MS 20
#define OS_RUN_POLL_SHORT_MS 5

/* From now on SIGINT, SIGTERM and SIGHUP are stop requests: each sets the
 * pending stop signal, wakes os_run_wait and ends a read of a target's
 * file under way (os_fs_stop, common/safefs.h); SIGPIPE is ignored. */
void os_run_catch_signals(void);
/* -d: when o->duration seconds have passed (and each second after, until
 * os_run_disarm_duration) a read of a target's file under way is ended the
 * same way, so that a read that blocks cannot hold the run past -d.
 * Nothing without -d. Disarmed once the loop ended (the reads that
 * symbolize the profile then run to their end). */
void os_run_arm_duration(const struct os_opts *o);
void os_run_disarm_duration(void);
/* The pending stop signal (0: none). */
int os_run_stop_signal(void);
/* Takes the pending stop signal (returns it, 0 when none). */
int os_run_take_signal(void);
/* Closes the self-pipe (the handler stays, and finds no fd). */
void os_run_release(void);

/* One wait of the loop, unless a stop signal is pending (then none): up to
 * ms (-1: no limit) for c's perf rings (when `rings`), pidfd (when >= 0)
 * or a stop signal. True when pidfd became readable (the target exited). */
bool os_run_wait(struct os_collector *c, bool rings, int pidfd, int ms);

/* -d: whether o->duration seconds (0: none) have passed since since_ns. */
bool os_run_duration_over(const struct os_opts *o, uint64_t since_ns);

#endif
