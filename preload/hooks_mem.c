/* hooks_mem.c - memcpy/memmove. For native programs (no OS_SHM_F_MOVES) the
 * hook is one test and a jump through the resolved pointer. With moves
 * wanted, the copy is made, then shown to the runtime adapter's filter
 * (adapter.h), which decides whether to log an OS_EV_MOVE. */
#include <stdint.h>

#include "preload/adapter.h"
#include "preload/preload.h"

#define OSP_EXPORT __attribute__((visibility("default")))

static OSP_TLS struct osp_thread *osp_copy_cur;

struct osp_thread *osp_copy_thread(void)
{
	return osp_copy_cur;
}

static __attribute__((noinline)) void osp_maybe_move(void *dst, const void *src, size_t n,
						     enum osp_copy_kind kind)
{
	osp_move_filter_fn filter = osp_move_filter;
	struct osp_thread *t;
	uint64_t tag = 0;

	if (!filter || n <= osp_move_min || (uintptr_t)src < osp_move_lo ||
	    (uintptr_t)src >= osp_move_hi)
		return; /* not a move: no bookkeeping (adapter.h) */
	t = osp_enter();
	if (!t)
		return;
	osp_copy_cur = t;
	if (filter(dst, src, n, kind, &tag))
		osp_record_plain(t, OS_EV_MOVE, (uint64_t)(uintptr_t)dst, n,
				 (uint64_t)(uintptr_t)src, tag);
	osp_copy_cur = NULL;
	osp_leave(t);
}

/* The two hottest entry points of the library (every copy of the program):
 * each starts a cache line of its own, so their cost does not move by
 * about 0.4 ns with the code laid out before them (bench_hooks: 3.25 ns
 * at a 64-byte boundary, 3.6-3.9 ns 0x90 bytes further, the same code). */
#define OSP_HOT __attribute__((aligned(64)))

OSP_EXPORT OSP_HOT void *memcpy(void *restrict dst, const void *restrict src, size_t n)
{
	void *r;

	if (osp_likely(osp_move_flags == 0))
		return osp_real.memcpy(dst, src, n);
	r = osp_real.memcpy(dst, src, n);
	osp_maybe_move(dst, src, n, OSP_COPY_MEMCPY);
	return r;
}

OSP_EXPORT OSP_HOT void *memmove(void *dst, const void *src, size_t n)
{
	void *r;

	if (osp_likely(osp_move_flags == 0))
		return osp_real.memmove(dst, src, n);
	r = osp_real.memmove(dst, src, n);
	osp_maybe_move(dst, src, n, OSP_COPY_MEMMOVE);
	return r;
}
