/* adapter.h - the plug for runtime adapters (HotSpot, ...) inside the target.
 *
 * memcpy/memmove are interposed. For native programs they are a plain jump to
 * libc. When the collector sets OS_SHM_F_MOVES in the shm header, every copy
 * made outside objscope's own code, after it has been done, is shown to
 * osp_move_filter; a non-zero answer logs an OS_EV_MOVE event
 * (aux = src, addr = dst, size = n, aux2 = *tag). The filter runs inside a
 * memcpy: it must not allocate, lock, print or call memcpy expecting a
 * move to be logged (re-entered copies pass straight through).
 *
 * Default: NULL, meaning "never a move". An adapter compiled into
 * libobjscope.so installs its filter from its own start-up code.
 */
#ifndef OBJSCOPE_PRELOAD_ADAPTER_H
#define OBJSCOPE_PRELOAD_ADAPTER_H

#include <stddef.h>
#include <stdint.h>

enum osp_copy_kind {
	OSP_COPY_MEMCPY = 0,
	OSP_COPY_MEMMOVE = 1,
};

/* Returns 1 when the copy dst <- src of n bytes is an object move to log
 * (optionally setting *tag, e.g. to the object's Klass*), 0 otherwise. */
typedef int (*osp_move_filter_fn)(const void *dst, const void *src, size_t n,
				  enum osp_copy_kind kind, uint64_t *tag);

extern osp_move_filter_fn osp_move_filter;

/* Native allocation paths (record.c) are unwound with libunwind's
 * unw_backtrace. Where a JIT runs, its code has no unwind information and
 * (a JVM without -XX:+PreserveFramePointer) no frame pointer: libunwind
 * then guesses callers from rbp, a general register there, reads wild
 * addresses and can crash the process. A runtime adapter that finds its
 * runtime loaded installs osp_path_jit before any of the runtime's code
 * runs under the hooks; record.c then uses it for every native path: it
 * returns the frames from `caller` (the hook's return address): pcs, and
 * the runtime's own words for frames it names (OS_FRAME_METHOD | Method*
 * of an interpreted Java method); *truncated is set when max cut it. It
 * never lets libunwind step from a frame without unwind information.
 * Default: NULL. */
typedef int (*osp_path_jit_fn)(uint64_t *frames, int max, const void *caller, int *truncated);

extern osp_path_jit_fn osp_path_jit;

#endif
