/* fallback.c - what the hooks serve before the real functions are resolved:
 * a static bump arena (dlsym calls calloc) and copies that never compile into
 * a call to memcpy (memcpy is called during start-up). */
#include <stdint.h>

#include "preload/preload.h"

#define OSP_ARENA_HDR 16u /* block size stored just below each block */

uint8_t osp_arena[OSP_ARENA_BYTES] __attribute__((aligned(4096)));
static size_t osp_arena_used;

void *osp_arena_alloc(size_t size, size_t align)
{
	size_t old, start, end;

	if (align < OSP_ARENA_HDR)
		align = OSP_ARENA_HDR;
	if (size > OSP_ARENA_BYTES)
		return NULL;
	old = __atomic_load_n(&osp_arena_used, __ATOMIC_RELAXED);
	do {
		start = (old + OSP_ARENA_HDR + align - 1) & ~(align - 1);
		end = start + size;
		if (end > OSP_ARENA_BYTES)
			return NULL;
	} while (!__atomic_compare_exchange_n(&osp_arena_used, &old, end, 0, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	*(size_t *)(osp_arena + start - sizeof(size_t)) = size;
	return osp_arena + start;
}

size_t osp_arena_size(const void *p)
{
	return *(const size_t *)((const uint8_t *)p - sizeof(size_t));
}

void *osp_copy_fwd(void *dst, const void *src, size_t n)
{
	void *d = dst;

	__asm__ volatile("rep movsb" : "+D"(d), "+S"(src), "+c"(n) : : "memory");
	return dst;
}

/* Overlap-safe: forward when dst is below src, else backwards byte by byte
 * through volatile pointers (gcc cannot turn it into a memmove call). */
__attribute__((optimize("no-tree-loop-distribute-patterns")))
void *osp_copy_move(void *dst, const void *src, size_t n)
{
	volatile uint8_t *d = dst;
	const volatile uint8_t *s = src;

	if ((uintptr_t)dst <= (uintptr_t)src || (uintptr_t)dst >= (uintptr_t)src + n)
		return osp_copy_fwd(dst, src, n);
	while (n--)
		d[n] = s[n];
	return dst;
}
