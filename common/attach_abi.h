/* attach_abi.h - what `objscope attach` (attacher/cli/cmd_attach.c) and the
 * library it injects (preload/attach.c) tell each other about a running JVM,
 * beyond objscope_attach()/objscope_detach().
 *
 * After objscope_attach() returned, objscope_jvm_plan() (exported, no
 * argument) returns the target address of a struct os_jvm_plan. The
 * collector reads it (process_vm_readv). When `pending` > 0 the detours of
 * the JVM's allocation and GC entry points are prepared but not written:
 * the collector ptrace-stops every other thread, checks that no
 * instruction pointer lies in any [lo, hi) (the middle of the bytes the
 * jumps overwrite), calls objscope_jvm_commit() on its injected thread
 * (no allocation, no lock inside) and lets the threads go. It returns the
 * number of detours written (>= 0) or -errno.
 * All fields are target-native (x86_64) and little-endian.
 */
#ifndef OBJSCOPE_ATTACH_ABI_H
#define OBJSCOPE_ATTACH_ABI_H

#include <stdint.h>

#define OS_JVM_PLAN_MAX 8

struct os_jvm_plan {
	uint32_t jvm;                    /* 1: a HotSpot JVM was found and announced */
	uint32_t pending;                /* detours prepared, not written yet */
	uint32_t active;                 /* detours written (this or an earlier attach) */
	uint32_t refused;                /* detours that could not be prepared */
	uint32_t got_jvm;                /* libjvm GOT entries redirected (memcpy, ...) */
	uint32_t preserve_fp;            /* Java stacks through JIT frames: 2 complete (code-heap
					  * walk, runtimes/hotspot/hs_frames.h), 1 complete (the JVM runs
					  * with -XX:+PreserveFramePointer), 0 truncated, -1 unknown */
	uint64_t lo[OS_JVM_PLAN_MAX];    /* forbidden instruction pointers of pending[i] */
	uint64_t hi[OS_JVM_PLAN_MAX];
};

#endif
