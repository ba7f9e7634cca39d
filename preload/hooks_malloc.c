/* hooks_malloc.c - the exported malloc family. Each hook calls the real
 * function, then (when armed and not re-entered) records: blocks picked by
 * the byte sampling (every size; docs/NATIVE.md) and, with --native-objects
 * exact, every block of at least header->min_size become ALLOC/REALLOC
 * events with their call path; the others are only counted. The free of a
 * sampled block (found in record.c's table of sampled addresses) or of a
 * block that may have been tracked exactly (usable size >= min_size) is a
 * FREE event. Before the real functions are resolved, allocations come
 * from the static arena (see fallback.c), whose blocks free() ignores. */
#include <errno.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#include "preload/preload.h"

#define OSP_EXPORT __attribute__((visibility("default")))
#define OSP_CALLER __builtin_return_address(0)

/* ---- byte sampling of malloc blocks (docs/NATIVE.md) -------------------
 * Each thread counts down the bytes of its blocks (below min_size with
 * --native-objects exact; smaller than the mean) from an exponential random
 * interval of mean header->small_sample bytes; the block that crosses zero
 * takes the full path (its allocation path recorded, as a tracked block's,
 * with aux2 = OS_SMALL_TAG | mean): a block of s bytes is sampled with
 * probability 1 - exp(-s / mean), which the collector inverts into its
 * weight. A block of at least the mean is always taken, with weight 1.
 * Its address is kept in a lock-free table (record.c osp_small_keep) so
 * that its free is reported. */
/* -ln(u) for u in (0, 1], without libm: u = m 2^e, m in [1, 2);
 * ln m = 2 atanh((m - 1) / (m + 1)) to 1e-5. */
static double osp_neg_ln(double u)
{
	union { double d; uint64_t w; } x = { .d = u };
	int e = (int)((x.w >> 52) & 0x7ff) - 1023;
	double m, t, t2;

	x.w = (x.w & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL;
	m = x.d;
	t = (m - 1) / (m + 1);
	t2 = t * t;
	return -(e * 0.6931471805599453 +
		 2 * t * (1 + t2 * (1.0 / 3 + t2 * (1.0 / 5 + t2 * (1.0 / 7 + t2 / 9)))));
}

/* An exponential interval of mean `mean` bytes (at least 1). */
static uint64_t osp_small_draw(struct osp_thread *t, uint64_t mean)
{
	uint64_t x = osp_rng_next(t);
	double u, v;

	u = (double)((x >> 11) + 1) * (1.0 / 9007199254740992.0); /* (0, 1] */
	v = osp_neg_ln(u) * (double)mean;
	return v < 1 ? 1 : v > 1e18 ? (uint64_t)1e18 : (uint64_t)v;
}

/* The countdown reached a block of `size` bytes (small_left <= size): 1
 * when the block is sampled (small_pick set, small_left drawn anew), else
 * 0 with small_left > size. */
int osp_small_due(struct osp_thread *t, size_t size)
{
	uint64_t mean = osp_hdr ? osp_hdr->small_sample : 0;

	if (!mean) {
		t->small_left = UINT64_MAX;
		return 0;
	}
	/* the thread's first small block: no countdown drawn yet (small_left
	 * stays >= 1 once drawn). Not the rng's state: another draw (HotSpot's
	 * thinning) may have seeded it, and this block would then be taken
	 * with probability 1 instead of by its countdown. */
	if (osp_unlikely(!t->small_left)) {
		t->small_left = osp_small_draw(t, mean);
		if (t->small_left > size)
			return 0;
	}
	t->small_left = osp_small_draw(t, mean);
	t->small_pick = 1;
	return 1;
}

/* 1 when the real function pointer is usable, resolving on first need. */
#define OSP_READY(fn) (osp_likely(osp_real.fn != NULL) || (osp_resolve() == 0 && osp_real.fn))

/* The recording part of osp_after_alloc: a block to record, or a thread
 * without its slot yet. */
static __attribute__((noinline)) void osp_after_alloc_slow(uint16_t type, void *p, size_t size,
							    void *old, const void *caller)
{
	struct osp_thread *t = osp_enter();

	if (!t) {
		osp_self.small_pick = 0;
		return;
	}
	osp_note_alloc(t, type, p, size, old, caller);
	osp_leave(t);
}

/* Inline in each hook: the common case of a malloc-heavy program, a block
 * neither sampled nor tracked, is a countdown and two counter stores. */
static inline __attribute__((always_inline)) void
osp_after_alloc(uint16_t type, void *p, size_t size, void *old, const void *caller)
{
	if (!p)
		return;
	if (!old && size < osp_exact_min && osp_count_small(size))
		return;
	osp_after_alloc_slow(type, p, size, old, caller);
}

static void osp_before_free(void *p)
{
	struct osp_thread *t;

	/* blocks neither sampled nor tracked exactly need no event: most frees
	 * of a malloc-heavy program cost one bit test, not a ring write */
	if (!(osp_small_maybe((uint64_t)(uintptr_t)p) && osp_small_forget((uint64_t)(uintptr_t)p)) &&
	    (osp_exact_min == UINT64_MAX || malloc_usable_size(p) < osp_exact_min))
		return;
	osp_rep_dead((uint64_t)(uintptr_t)p, osp_self.pid); /* replica.c: before reuse */
	t = osp_enter();
	if (!t)
		return;
	osp_record_plain(t, OS_EV_FREE, (uint64_t)(uintptr_t)p, 0, 0, 0);
	osp_leave(t);
}

OSP_EXPORT void *malloc(size_t size)
{
	void *p;

	if (!OSP_READY(malloc))
		return osp_arena_alloc(size, 16);
	p = osp_real.malloc(size);
	if (osp_hdr)
		osp_after_alloc(OS_EV_ALLOC, p, size, NULL, OSP_CALLER);
	return p;
}

OSP_EXPORT void *calloc(size_t n, size_t m)
{
	void *p;

	if (!OSP_READY(calloc)) {
		if (m && n > SIZE_MAX / m)
			return NULL;
		return osp_arena_alloc(n * m, 16); /* static memory: already zero */
	}
	p = osp_real.calloc(n, m);
	if (osp_hdr && p)
		osp_after_alloc(OS_EV_ALLOC, p, n * m, NULL, OSP_CALLER);
	return p;
}

/* realloc of an arena block: copy it out (the arena never frees). */
static void *osp_realloc_arena(void *old, size_t size)
{
	size_t have = osp_arena_size(old);
	void *p = osp_real.malloc ? osp_real.malloc(size) : osp_arena_alloc(size, 16);

	if (p)
		osp_copy_fwd(p, old, have < size ? have : size);
	return p;
}

OSP_EXPORT void *realloc(void *old, size_t size)
{
	void *p, *tracked_old = old;
	struct osp_thread *t;

	if (old && osp_arena_owns(old))
		return osp_realloc_arena(old, size);
	if (!OSP_READY(realloc))
		return old ? NULL : osp_arena_alloc(size, 16);
	if (old && size == 0 && osp_hdr) /* glibc frees: report before the address is reused */
		osp_before_free(old);
	/* a block too small to have been tracked needs no FREE/REALLOC of its
	 * old address: the common small realloc costs no event */
	if (old && osp_hdr && !osp_small_forget((uint64_t)(uintptr_t)old) &&
	    (osp_exact_min == UINT64_MAX || malloc_usable_size(old) < osp_exact_min))
		tracked_old = NULL;
	if (tracked_old)
		osp_rep_dead((uint64_t)(uintptr_t)old, osp_self.pid); /* replica.c */
	p = osp_real.realloc(old, size);
	if (!osp_hdr || !p)
		return p;
	if (!tracked_old && size < osp_exact_min && osp_count_small(size))
		return p;
	t = osp_enter();
	if (!t)
		return p;
	osp_note_alloc(t, tracked_old ? OS_EV_REALLOC : OS_EV_ALLOC, p, size, tracked_old,
		       OSP_CALLER);
	osp_leave(t);
	return p;
}

OSP_EXPORT void free(void *p)
{
	if (!p || osp_arena_owns(p))
		return;
	if (!OSP_READY(free))
		return; /* cannot happen after start-up; leaking is the safe choice */
	/* before the address can be handed out again; inline, the test of
	 * most frees: not a sampled block's, no exact tracking */
	if (osp_hdr && (osp_small_maybe((uint64_t)(uintptr_t)p) || osp_exact_min != UINT64_MAX))
		osp_before_free(p);
	osp_real.free(p);
}

OSP_EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
	int err;

	if (!OSP_READY(posix_memalign)) {
		*out = osp_arena_alloc(size, align);
		return *out ? 0 : ENOMEM;
	}
	err = osp_real.posix_memalign(out, align, size);
	if (osp_hdr && err == 0)
		osp_after_alloc(OS_EV_ALLOC, *out, size, NULL, OSP_CALLER);
	return err;
}

OSP_EXPORT void *aligned_alloc(size_t align, size_t size)
{
	void *p;

	if (!OSP_READY(aligned_alloc))
		return osp_arena_alloc(size, align);
	p = osp_real.aligned_alloc(align, size);
	if (osp_hdr)
		osp_after_alloc(OS_EV_ALLOC, p, size, NULL, OSP_CALLER);
	return p;
}

OSP_EXPORT void *memalign(size_t align, size_t size)
{
	void *p;

	if (!OSP_READY(memalign))
		return osp_arena_alloc(size, align);
	p = osp_real.memalign(align, size);
	if (osp_hdr)
		osp_after_alloc(OS_EV_ALLOC, p, size, NULL, OSP_CALLER);
	return p;
}

OSP_EXPORT void *valloc(size_t size)
{
	void *p;

	if (!OSP_READY(valloc))
		return osp_arena_alloc(size, 4096);
	p = osp_real.valloc(size);
	if (osp_hdr)
		osp_after_alloc(OS_EV_ALLOC, p, size, NULL, OSP_CALLER);
	return p;
}

OSP_EXPORT void *pvalloc(size_t size)
{
	void *p;
	size_t page = 4096;

	if (!OSP_READY(pvalloc))
		return osp_arena_alloc((size + page - 1) & ~(page - 1), page);
	p = osp_real.pvalloc(size);
	if (osp_hdr)
		osp_after_alloc(OS_EV_ALLOC, p, (size + page - 1) & ~(page - 1), NULL, OSP_CALLER);
	return p;
}
