/* collector_jit.h - the collector's policy for a runtime's JIT compiler
 * threads (internal to attacher/core/collector*.c).
 *
 * A JIT compiler thread (runtime.h thread_kind OS_THR_JIT, by its name)
 * touches the compiler's own arenas: its samples are counted, never
 * attributed, unless --jit-threads. What they cost is cut three ways:
 *   - launch (inherited events): its samples are dropped in the kernel by a
 *     BPF filter (bpf_filter.h), counted there;
 *   - attach (per-thread events): its own sampling events are switched off
 *     for good (os_perf_mute_thread);
 *   - its tracked native blocks come without allocation paths (shm.h
 *     os_slot.quiet): its hooks walk no stack, the collector expands none.
 * The kind (jit, gc) is decided for good at the thread's first sample; a
 * name read before (COMM record, a block) is asked without deciding it. */
#ifndef OBJSCOPE_COLLECTOR_JIT_H
#define OBJSCOPE_COLLECTOR_JIT_H

#include <stdbool.h>
#include <stdint.h>

#include "attacher/core/collector.h"

/* The BPF filter on every sampling event, where a runtime names such
 * threads and --jit-threads is not given (else c->jitf_why says why not). */
void os_jit_filter_open(struct os_collector *c);
/* A filtered thread's samples dropped in the kernel so far into its counts,
 * and out of the filter's map (its id may be given to another thread). */
void os_jit_filter_take(struct os_collector *c, uint32_t pid, uint32_t tid);
/* th was (re)named: a JIT compiler thread's blocks go without paths. */
void os_jit_named(struct os_collector *c, struct os_thread_info *th);
/* A sample of th: true when th is a JIT compiler thread (decided for good
 * here, with th->gc) and the sample was counted only. */
bool os_jit_sample(struct os_collector *c, struct os_thread_info *th);
/* A tracked block's event from a ring: a JIT compiler thread not told yet
 * (it had no ring when its name was read) is told now. */
void os_jit_block(struct os_collector *c, const struct os_event *ev);

#endif
