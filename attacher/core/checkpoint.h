/* checkpoint.h - a killed objscope keeps its data: while it samples, the
 * collector writes its profile as it stands to the output path every few
 * seconds, marked unfinished (common/profile.h OS_PROFILE_F_UNFINISHED,
 * docs/PROFILE-FORMAT.md "Checkpoints"), and the final profile replaces the
 * last checkpoint. A SIGKILL, the OOM killer or a crash of objscope then
 * loses the seconds since the last checkpoint, not the run.
 *
 * How: fork(). The child holds a copy-on-write snapshot of the collector,
 * builds the profile from it (as the final write does, less what would touch
 * state shared with the parent or the target: the JIT filter's BPF map is
 * not drained, the runtime adapters' before_symbolize, which reads and may
 * remove a JVM's perf map, is skipped: JIT frames of a checkpoint may stay
 * unnamed), writes it atomically (O_TMPFILE + rename, never a half-written
 * file at the path) and exits; the parent samples on at once and reaps it
 * later. The collector runs no other threads, so the child's copy is whole.
 *
 * Cost: the child's CPU (the build: what the final profile's build_s says
 * for the whole run) and the fork (page tables, copy-on-write faults),
 * measured per checkpoint. The next one is due after OS_CKPT_MIN_S, or after
 * OS_CKPT_COST_FACTOR times the last one's cost when that is longer, so
 * checkpoints take at most 1 / OS_CKPT_COST_FACTOR of one CPU. Their CPU is
 * charged to objscope (the overhead's collector_cpu_s, fixed costs), never
 * to the target (reaped children count in RUSAGE_CHILDREN), and the final
 * profile's note says how many were written and what they cost.
 *
 * Not taken when the output is not a regular file (a FIFO, /dev/null, a
 * terminal: written in place once), nor with OBJSCOPE_CHECKPOINT=0;
 * OBJSCOPE_CHECKPOINT_S sets the smallest interval (tests). */
#ifndef OBJSCOPE_CHECKPOINT_H
#define OBJSCOPE_CHECKPOINT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define OS_CKPT_MIN_S 5.0
#define OS_CKPT_COST_FACTOR 100.0

struct os_collector;
struct os_opts;

struct os_ckpt {
	bool off;            /* decided: no checkpoints (see above) */
	bool decided;        /* `off` is known */
	pid_t child;         /* the checkpoint being written, 0: none */
	uint64_t started_ns; /* when it was forked */
	uint64_t fork_ns;    /* the parent's CPU in fork() */
	uint64_t next_ns;    /* when the next one is due (0: one interval from the first poll) */
	double min_s;        /* the smallest interval */
	uint32_t written;    /* checkpoints written */
	uint32_t failed;     /* ... that failed (the child's exit status) or were cut */
	uint64_t cpu_ns;     /* their CPU: children's user + sys, and the forks */
};

/* From the collector's loop, between rounds: reaps a checkpoint that has
 * ended and forks the next when it is due. mode/argc/argv as
 * os_collector_profile. */
void os_ckpt_poll(struct os_collector *c, const struct os_opts *o, const char *mode, int argc,
		  char *const argv[]);
/* Before the final profile is written: a checkpoint still being written is
 * killed and reaped (it must not rename over the final profile). Returns
 * whether a checkpoint was written (then the final write replaces it and
 * keeps no "<path>.old" of it: the first checkpoint kept the file that was
 * there before). */
bool os_ckpt_end(struct os_collector *c);
/* The note of the final profile on the checkpoints ("" when none). */
void os_ckpt_note(const struct os_collector *c, char *buf, size_t len);

#endif
