/* adapter.h - the plug for runtime adapters inside the target:
 * the in-target half of the contract whose collector half is
 * runtimes/runtime.h. A runtime's in-target side lives in
 * runtimes/<name>/target/ (linked into libobjscope.so) and installs itself
 * from its own start-up code (constructors, its dlopen interposition); the
 * attach of a running process reaches it through osp_runtime_attaches
 * (runtimes/target/registry.c).
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
 * (optionally setting *tag, e.g. to the object's type word), 0 otherwise. */
typedef int (*osp_move_filter_fn)(const void *dst, const void *src, size_t n,
				  enum osp_copy_kind kind, uint64_t *tag);

extern osp_move_filter_fn osp_move_filter;

/* A test made before the filter and the hook's own bookkeeping (its guard,
 * its clock readings: ~150 ns a copy, most of a JVM's 2.5 million copies
 * a javac run are its compilers' and not moves): a copy of at most
 * osp_move_min bytes, or whose source lies outside [osp_move_lo,
 * osp_move_hi), is no move. An adapter sets them before installing its
 * filter. Default: every copy is shown to the filter. */
extern size_t osp_move_min;
extern uintptr_t osp_move_lo, osp_move_hi;

/* Native allocation paths (record.c) are unwound with libunwind's
 * unw_backtrace. Where a JIT runs, its code has no unwind information and
 * (often) no frame pointer: libunwind
 * then guesses callers from rbp, a general register there, reads wild
 * addresses and can crash the process. A runtime adapter that finds its
 * runtime loaded installs osp_path_jit before any of the runtime's code
 * runs under the hooks; record.c then uses it for every native path: it
 * returns the frames from `caller` (the hook's return address): pcs, and
 * the runtime's own words for frames it names (OS_FRAME_METHOD | the
 * runtime's word for an interpreted method); *truncated is set when max cut it. It
 * never lets libunwind step from a frame without unwind information.
 * Default: NULL. */
typedef int (*osp_path_jit_fn)(uint64_t *frames, int max, const void *caller, int *truncated);

extern osp_path_jit_fn osp_path_jit;

/* A runtime's step when the process loads a library (preload/loaded.c:
 * the process's dlopen interposer, and at start-up for the libraries named
 * in `preloaded` that the program is linked against). Every entry of
 * osp_runtime_loads (runtimes/target/registry.c) sees every load, in
 * order: a runtime that builds on another comes before it and prepares
 * what the other then installs. loaded() runs on the loading thread,
 * outside any hook, after the real dlopen; it keeps its own "done" state. */
struct osp_runtime_load {
	const char *name;       /* as in runtimes/registry.c */
	void (*loaded)(void *handle);
	const char *preloaded;  /* a soname looked up (RTLD_NOLOAD) at start-up, or NULL */
};

extern const struct osp_runtime_load *const osp_runtime_loads[];
extern const size_t osp_nruntime_loads;

/* Shows handle to every osp_runtime_loads entry, in order (when armed). */
void osp_runtimes_loaded(void *handle);

struct os_rt_plan;

/* A runtime's steps when the library is injected into a running process
 * (`objscope attach`, preload/attach.c; on the thread the collector
 * hijacked, never from a hook; protocol: common/attach_abi.h). */
struct osp_runtime_attach {
	const char *name;  /* as in runtimes/registry.c */
	/* Finds the runtime (already loaded), announces it, prepares (does not
	 * write) its detours; fills *plan (name included). Returns 1 when the
	 * runtime was found and announced, 0 when the process has none. */
	int (*prepare)(struct os_rt_plan *plan);
	/* Writes the prepared detours; the caller guarantees that no other
	 * thread runs. No allocation, no lock. Returns the number written, or
	 * -errno when the first one failed. */
	int (*commit)(void);
	/* Imports redirected to the hooks in the runtime's own library alone
	 * (the object whose name contains got_object), once prepare said yes:
	 * e.g. memcpy/memmove, the copies of its GC. */
	const char *const *got_imports;
	size_t ngot_imports;
	const char *got_object;
};

/* The in-target attach of every runtime (runtimes/target/registry.c), asked
 * in order; the first whose prepare says yes is the process's runtime. */
extern const struct osp_runtime_attach *const osp_runtime_attaches[];
extern const size_t osp_nruntime_attaches;

#endif
