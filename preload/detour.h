/* detour.h - x86-64 inline function detours (runs inside the target, at
 * install time only).
 *
 * osp_detour_install() overwrites the first whole instructions (>= 5 bytes)
 * of `target` with a `jmp rel32` to a stub in a trampoline page mapped within
 * +-2 GB of the target. The stub jumps (absolute, `jmp [rip+0]`) to the
 * replacement. The overwritten instructions are decoded with capstone and
 * relocated into the trampoline (RIP-relative displacements and rel8/rel32
 * jmp/jcc/call targets re-encoded), followed by a jump back to the first
 * untouched instruction: the trampoline is the original function, callable
 * by the replacement.
 *
 * Refused (and counted): functions shorter than 5 bytes (from the ELF symbol
 * size), prologues with instructions that cannot be moved (loop/jrcxz,
 * branches into the overwritten bytes, targets out of rel32 reach), and
 * functions whose body branches back into the overwritten bytes.
 *
 * No trap instructions are written: the bytes after the 5-byte jmp are NOPs.
 *
 * Thread safety: the patch is not atomic with respect to other threads
 * executing the target's first bytes. Callers must install while no other
 * thread can run the target (a runtime adapter installs from the
 * launcher's dlopen of the runtime's library, before the runtime has
 * created any thread; an attach holds every other thread).
 * Installing is serialised by the caller (one installer at a time).
 *
 * In a process whose threads run (attach mode) the work is split in two:
 * osp_detour_prepare() does everything that may allocate or take locks
 * (capstone, trampoline pages) while the other threads run, and leaves the
 * target's code untouched; osp_detour_commit() only writes the jump
 * (mprotect + byte stores, no allocation, no lock), so it can run while
 * every other thread is ptrace-stopped by the collector, which first checks
 * that no stopped thread's instruction pointer lies inside
 * [start + 1, start + stolen) (a thread resumed there would execute the
 * middle of the new jump). A prologue holding a call (has_call) must not be
 * committed that way: a return address may point into it.
 *
 * Return convention: 0 on success, -errno on failure:
 *   -EINVAL  bad arguments or undecodable bytes
 *   -ENOSPC  function shorter than the 5-byte jump
 *   -ENOTSUP prologue that cannot be relocated
 *   -ENOMEM  no trampoline page within reach
 *   other    mprotect failure
 */
#ifndef OBJSCOPE_PRELOAD_DETOUR_H
#define OBJSCOPE_PRELOAD_DETOUR_H

#include <stddef.h>
#include <stdint.h>

/* Memory functions capstone uses while decoding (install time only); NULL
 * fields keep libc's. Pass the real (un-hooked) allocator from inside the
 * preload library so decoding never records allocations. */
struct osp_detour_mem {
	void *(*malloc)(size_t);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void (*free)(void *);
};

struct osp_detour_stats {
	uint64_t installed;
	uint64_t refused_short;   /* symbol smaller than the 5-byte jump */
	uint64_t refused_reloc;   /* prologue that cannot be relocated */
	uint64_t refused_other;   /* no trampoline in reach, mprotect failure, bad code */
};

/* Sets capstone's allocator; call once before the first install. 0 or -EINVAL. */
int osp_detour_init(const struct osp_detour_mem *mem);

/* Detours `target` (whose ELF symbol size is `size`; 0 = unknown: the body
 * scan for branches into the prologue is skipped) to `replacement`. On
 * success *original is the trampoline that runs the original function. */
int osp_detour_install(void *target, size_t size, void *replacement, void **original);

/* A prepared, not yet written detour. */
struct osp_detour_patch {
	uintptr_t start;     /* first byte of the target */
	uint32_t stolen;     /* bytes the jump overwrites (whole instructions, >= 5) */
	int has_call;        /* the overwritten instructions hold a call */
	uintptr_t stub;      /* where the jump goes */
};

/* Builds the trampoline of `target` without writing the target; on success
 * *original runs the original function and *p describes the write. Same
 * errors as osp_detour_install. */
int osp_detour_prepare(void *target, size_t size, void *replacement, void **original,
		       struct osp_detour_patch *p);

/* Writes the jump described by p (see "Thread safety" above). 0 or -errno. */
int osp_detour_commit(const struct osp_detour_patch *p);

/* Counters since start (install time only, not atomic). */
void osp_detour_get_stats(struct osp_detour_stats *out);

#endif
