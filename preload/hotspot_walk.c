/* hotspot_walk.c - allocation paths inside a JVM. libunwind (DWARF CFI)
 * through libjvm and native frames; at the first frame whose pc is in the
 * code cache (no CFI there: interpreter, JIT code, stubs) a frame-pointer
 * walk takes over. It needs -XX:+PreserveFramePointer for JIT frames (added
 * by hotspot.c) and is bounded: every fp must lie in the thread's stack,
 * 8-aligned and strictly increasing. Interpreted frames yield their Method*.
 * No malloc on the hot path: the stack bounds are cached per thread on first
 * use (pthread_getattr_np allocates; callers hold the recursion guard). */
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <pthread.h>

#include "preload/hotspot.h"

#define HW_SKIP_MAX 8
#define HW_METHOD_MASK 0x0000ffffffffffffULL

static OSP_TLS uintptr_t hw_stack_lo, hw_stack_hi;

static int hw_stack_bounds(void)
{
	pthread_attr_t a;
	void *addr;
	size_t size;

	if (hw_stack_hi)
		return 0;
	if (pthread_getattr_np(pthread_self(), &a) != 0)
		return -1;
	if (pthread_attr_getstack(&a, &addr, &size) == 0) {
		hw_stack_lo = (uintptr_t)addr;
		hw_stack_hi = (uintptr_t)addr + size;
	}
	pthread_attr_destroy(&a);
	return hw_stack_hi ? 0 : -1;
}

static int hw_in(uintptr_t p, uintptr_t lo, uintptr_t hi)
{
	return p >= lo && p < hi;
}

/* One frame word for pc `ip` whose frame pointer is `fp`. */
static uint64_t hw_frame(uintptr_t ip, uintptr_t fp)
{
	if (hw_in(ip, osp_hs.interp_lo, osp_hs.interp_hi)) {
		uintptr_t slot = fp + (uintptr_t)osp_hs.method_off;

		if (hw_in(slot, hw_stack_lo, hw_stack_hi - 8) && !(slot & 7)) {
			uint64_t m = *(const uint64_t *)slot;

			if (m && !(m & 7) && m <= HW_METHOD_MASK)
				return OS_FRAME_METHOD | m;
		}
	}
	return ip;
}

/* Frame-pointer walk from (ip, fp); appends to frames[n..max). */
static int hw_fp_walk(uint64_t *frames, int n, int max, uintptr_t ip, uintptr_t fp, int *truncated)
{
	while (ip) {
		if (n == max) {
			*truncated = 1;
			break;
		}
		frames[n++] = hw_frame(ip, fp);
		if ((fp & 7) || !hw_in(fp, hw_stack_lo, hw_stack_hi - 16))
			break;
		uintptr_t next_fp = ((const uintptr_t *)fp)[0];

		ip = ((const uintptr_t *)fp)[1];
		if (next_fp <= fp)
			break;
		fp = next_fp;
	}
	return n;
}

int osp_hs_walk_fp(uint64_t *frames, int max, const void *caller, const void *fp, int *truncated)
{
	*truncated = 0;
	if (hw_stack_bounds() != 0)
		return 0;
	return hw_fp_walk(frames, 0, max, (uintptr_t)caller, (uintptr_t)fp, truncated);
}

int osp_hs_walk(uint64_t *frames, int max, const void *caller, int *truncated)
{
	unw_context_t uc;
	unw_cursor_t cur;
	int n = 0, skipping = 1, skipped = 0;

	*truncated = 0;
	if (hw_stack_bounds() != 0 || unw_getcontext(&uc) != 0 || unw_init_local(&cur, &uc) != 0)
		goto fallback;
	do {
		unw_word_t ip, fp;

		if (unw_get_reg(&cur, UNW_REG_IP, &ip) != 0 || ip == 0)
			break;
		if (skipping) {
			/* objscope's own frames above the allocation site */
			if ((const void *)ip != caller) {
				if (++skipped == HW_SKIP_MAX)
					goto fallback;
				continue;
			}
			skipping = 0;
		}
		if (hw_in(ip, osp_hs.code_lo, osp_hs.code_hi)) {
			if (unw_get_reg(&cur, UNW_X86_64_RBP, &fp) != 0)
				break;
			return hw_fp_walk(frames, n, max, ip, fp, truncated);
		}
		if (n == max) {
			*truncated = 1;
			break;
		}
		frames[n++] = ip;
	} while (unw_step(&cur) > 0);
	return n;
fallback:
	frames[0] = (uint64_t)(uintptr_t)caller;
	return 1;
}
