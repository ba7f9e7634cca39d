/* attach_abi.h - what `objscope attach` (attacher/cli/cmd_attach.c) and the
 * library it injects (preload/attach.c) tell each other about a runtime
 * found in the running target (a JVM), beyond
 * objscope_attach()/objscope_detach().
 *
 * After objscope_attach() returned, objscope_rt_plan() (exported, no
 * argument) returns the target address of a struct os_rt_plan, filled by
 * the in-target attach of the runtime that recognised the process
 * (preload/adapter.h, struct osp_runtime_attach). The collector reads it
 * (process_vm_readv). When `pending` > 0 the detours of the runtime's
 * allocation and GC entry points are prepared but not written: the
 * collector ptrace-stops every other thread, checks that no instruction
 * pointer lies in any [lo, hi) (the middle of the bytes the jumps
 * overwrite), calls objscope_rt_commit() on its injected thread (no
 * allocation, no lock inside) and lets the threads go. It returns the
 * number of detours written (>= 0) or -errno. The collector then hands the
 * plan to the collector side of the runtime named `runtime` (runtime.h ops
 * attached, detached).
 * All fields are target-native (x86_64) and little-endian.
 */
#ifndef OBJSCOPE_ATTACH_ABI_H
#define OBJSCOPE_ATTACH_ABI_H

#include <stdint.h>

#define OS_RT_PLAN_MAX 8
#define OS_RT_PLAN_NAME 16

struct os_rt_plan {
	uint32_t found;                  /* 1: a runtime was found and announced */
	uint32_t pending;                /* detours prepared, not written yet */
	uint32_t active;                 /* detours written (this or an earlier attach) */
	uint32_t refused;                /* detours that could not be prepared */
	uint32_t got_runtime;            /* GOT entries of the runtime's own library
					  * redirected (memcpy, ...) */
	uint32_t stacks;                 /* managed stacks through JIT frames: 2 complete (the
					  * runtime's frame walk), 1 complete (frame pointers
					  * kept), 0 truncated, -1 unknown */
	char runtime[OS_RT_PLAN_NAME];   /* the runtime's name in runtimes/registry.c,
					  * NUL-terminated */
	char what[OS_RT_PLAN_NAME];      /* how messages name the process ("JVM") */
	uint64_t lo[OS_RT_PLAN_MAX];     /* forbidden instruction pointers of pending[i] */
	uint64_t hi[OS_RT_PLAN_MAX];
};

#endif
