/* hotspot_walk.c - allocation paths inside a JVM. libunwind (DWARF CFI)
 * through libjvm and native frames; at the first frame whose pc is in the
 * code cache (no CFI there: interpreter, JIT code, stubs) the frame stepper
 * of runtimes/hotspot/hs_frames.h takes over: compiled frames by their CodeBlob's
 * frame size (no -XX:+PreserveFramePointer needed), interpreted and native
 * frames by frame pointer. It is bounded: every stack read lies in the
 * thread's stack and sp grows strictly. Interpreted frames yield their Method*.
 * No malloc on the hot path: the stack bounds are cached per thread on first
 * use (pthread_getattr_np allocates; callers hold the recursion guard). */
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <pthread.h>

#include "runtimes/hotspot/target/hotspot.h"

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

/* Inside JNI_CreateJavaVM (before hs_jvm_up): the interpreter's codelets
 * as they are now. AbstractInterpreter::_code is set early in the VM's
 * initialisation, before the first Java method runs; 0 until then, and
 * then interpreted frames stay raw pcs. hs_jvm_up writes the same values. */
static void hw_learn_interp(void)
{
	const uint8_t *q;
	uint64_t lo;
	int32_t lim;

	if (__atomic_load_n(&osp_hs.interp_hi, __ATOMIC_ACQUIRE) || !osp_hs.interp_code_at)
		return;
	q = *(const uint8_t *const volatile *)osp_hs.interp_code_at;
	if (!q)
		return;
	lo = *(const volatile uint64_t *)(q + osp_hs.interp_buf_off);
	lim = *(const volatile int32_t *)(q + osp_hs.interp_lim_off);
	if (!lo || lim <= 0)
		return;
	osp_hs.interp_lo = lo;
	__atomic_store_n(&osp_hs.interp_hi, lo + (uint64_t)lim, __ATOMIC_RELEASE);
}

/* One frame word for pc `ip` whose frame pointer is `fp`: an interpreted
 * frame is its Method* with its bcp's low bits (common/shm.h), made a line
 * by the collector, which can read the method. Every interpreted frame of
 * an allocation path is at an invoke or calls into the VM, so its bcp slot
 * (runtimes/hotspot/hs_frames.h) is current. */
static uint64_t hw_frame(uintptr_t ip, uintptr_t fp)
{
	if (hw_in(ip, osp_hs.interp_lo, osp_hs.interp_hi)) {
		uintptr_t slot = fp + (uintptr_t)osp_hs.method_off;
		uintptr_t bslot = slot - OS_HSF_BCP_BELOW_METHOD;

		if (hw_in(slot, hw_stack_lo, hw_stack_hi - 8) && !(slot & 7)) {
			uint64_t m = *(const uint64_t *)slot, pos = 0;

			if (!m || (m & 7) || m > HW_METHOD_MASK)
				return ip;
			if (hw_in(bslot, hw_stack_lo, hw_stack_hi - 8)) {
				uint64_t bcp = *(const uint64_t *)bslot;

				if (bcp)
					pos = OS_FRAME_BCP_KNOWN | (bcp & OS_FRAME_BCP_LOW);
			}
			return OS_FRAME_METHOD | pos << OS_FRAME_POS_SHIFT | m;
		}
	}
	return ip;
}

/* Readers for the frame stepper (runtimes/hotspot/hs_frames.h): the stack within
 * the thread's bounds; code-heap memory directly (the stepper only reads
 * committed parts: the segment map below its live _high, then the block of
 * a used segment). */
static bool hw_load(uint64_t addr, void *buf, size_t len)
{
	/* plain loads: memcpy here would be objscope's own memcpy hook */
	switch (len) {
	case 1:
		*(uint8_t *)buf = *(const volatile uint8_t *)(uintptr_t)addr;
		return true;
	case 2: /* CodeBlob::_frame_complete_offset of JDK 23+ (int16_t) */
		*(uint16_t *)buf = *(const volatile uint16_t *)(uintptr_t)addr;
		return true;
	case 4:
		*(uint32_t *)buf = *(const volatile uint32_t *)(uintptr_t)addr;
		return true;
	case 8:
		*(uint64_t *)buf = *(const volatile uint64_t *)(uintptr_t)addr;
		return true;
	default:
		return false;
	}
}

static bool hw_stack_rd(void *arg, uint64_t addr, void *buf, size_t len)
{
	(void)arg;
	if (addr < hw_stack_lo || addr > hw_stack_hi - len || (addr & (len - 1)))
		return false;
	return hw_load(addr, buf, len);
}

static bool hw_code_rd(void *arg, uint64_t addr, void *buf, size_t len)
{
	(void)arg;
	if (addr & (len - 1))
		return false;
	return hw_load(addr, buf, len);
}

static bool hw_find(void *arg, uint64_t pc, struct os_hsf_blob *b)
{
	return os_hsf_blob(arg, hw_code_rd, NULL, pc, b);
}

/* Walk from frame f; appends to frames[n..max). Native and interpreted
 * frames by frame pointer; compiled frames by their CodeBlob's frame size
 * when the layout is known (no -XX:+PreserveFramePointer needed), else by
 * frame pointer as well. */
static int hw_walk_from(uint64_t *frames, int n, int max, struct os_hsf_frame f, int methods,
			int *truncated)
{
	static const struct os_hsf_layout none;
	const struct os_hsf_layout *l = osp_hs.frames.ok ? &osp_hs.frames : &none;
	struct os_hsf_layout fp_only;

	if (!osp_hs.frames.ok) { /* interpreter frames still by their Method* slot */
		fp_only = none;
		fp_only.interp_lo = osp_hs.interp_lo;
		fp_only.interp_hi = osp_hs.interp_hi;
		fp_only.sender_sp_off = -8;
		l = &fp_only;
	}
	while (f.pc) {
		if (n == max) {
			*truncated = 1;
			break;
		}
		frames[n++] = methods ? hw_frame(f.pc, f.fp) : f.pc;
		if (!os_hsf_step(l, hw_find, (void *)l, hw_stack_rd, NULL, &f, false))
			break;
	}
	return n;
}

int osp_hs_walk_fp(uint64_t *frames, int max, const void *caller, const void *fp, int *truncated)
{
	*truncated = 0;
	if (hw_stack_bounds() != 0)
		return 0;
	hw_learn_interp();
	/* the caller's own sp lies below its frame pointer */
	return hw_walk_from(frames, 0, max,
			    (struct os_hsf_frame){ (uintptr_t)caller, (uintptr_t)fp, (uintptr_t)fp, 0 }, 1,
			    truncated);
}

/* Whether the cursor's frame has unwind information. Without it unw_step
 * guesses the caller from rbp, which JIT code (no frame pointers) uses as
 * a general register: libunwind then reads wild addresses and can crash
 * the JVM (seen once in ~20 javac runs with unw_backtrace). Code-cache
 * frames never reach unw_step (the stepper takes them); this check, which
 * costs a lookup per frame, is only made where the code cache's bounds
 * cannot be known (a libjvm whose vmStructs lack them). */
static int hw_has_cfi(unw_cursor_t *cur)
{
	unw_proc_info_t pi;

	return unw_get_proc_info(cur, &pi) == 0;
}

/* A native path from a libjvm frame f, by frame pointer (libjvm keeps
 * them) and the stepper through the code cache, as long as every pc is in
 * libjvm or the code cache. The first other pc is the last frame: *ok
 * when it is in libc or libjli (a thread's entry: start_thread, the
 * launcher's JavaMain), else the walk must be redone by libunwind (a JNI
 * library, code without frame pointers: its rbp proves nothing). About 20
 * times cheaper than stepping libunwind through the deep C2 compiler
 * stacks that make most native allocations of a JVM. */
static int hw_walk_jvm_fp(uint64_t *frames, int n, int max, struct os_hsf_frame f, int *truncated,
			  int *ok)
{
	const struct os_hsf_layout *l = &osp_hs.frames;

	*ok = 0;
	for (;;) {
		if (n == max) {
			*truncated = 1;
			*ok = 1;
			return n;
		}
		frames[n++] = hw_frame(f.pc, f.fp);
		if (!hw_in(f.pc, osp_hs.jvm_lo, osp_hs.jvm_hi) && !os_hsf_in_code(l, f.pc)) {
			*ok = hw_in(f.pc, osp_hs.end_lo[0], osp_hs.end_hi[0]) ||
			      hw_in(f.pc, osp_hs.end_lo[1], osp_hs.end_hi[1]);
			return n;
		}
		if (!os_hsf_step(l, hw_find, (void *)l, hw_stack_rd, NULL, &f, false)) {
			/* the end of the chain inside libjvm or the code cache */
			*ok = 1;
			return n;
		}
	}
}

static int hw_walk(uint64_t *frames, int max, const void *caller, int methods, int *truncated)
{
	unw_context_t uc;
	unw_cursor_t cur;
	int n = 0, skipping = 1, skipped = 0, code_known;
	uintptr_t code_lo = osp_hs.code_lo, code_hi = osp_hs.code_hi;

	/* before the JVM is up, the code cache's bounds as they are now (0
	 * until CodeCache::initialize: then no JIT code exists yet) */
	if (!code_hi && osp_hs.code_hi_at) {
		code_lo = *(const volatile uintptr_t *)osp_hs.code_lo_at;
		code_hi = *(const volatile uintptr_t *)osp_hs.code_hi_at;
	}
	code_known = code_hi || osp_hs.code_hi_at;
	hw_learn_interp();
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
		if (methods == 2 && osp_hs.frames.ok && hw_in(ip, osp_hs.jvm_lo, osp_hs.jvm_hi)) {
			unw_word_t sp;
			int ok, k;

			methods = 1; /* tried once */
			if (unw_get_reg(&cur, UNW_X86_64_RBP, &fp) == 0 &&
			    unw_get_reg(&cur, UNW_REG_SP, &sp) == 0) {
				k = hw_walk_jvm_fp(frames, n, max, (struct os_hsf_frame){ ip, sp, fp, 0 },
						   truncated, &ok);
				if (ok)
					return k;
				*truncated = 0; /* libunwind from this frame on */
			}
		}
		if (hw_in(ip, code_lo, code_hi)) {
			unw_word_t sp;

			if (unw_get_reg(&cur, UNW_X86_64_RBP, &fp) != 0 ||
			    unw_get_reg(&cur, UNW_REG_SP, &sp) != 0)
				break;
			return hw_walk_from(frames, n, max, (struct os_hsf_frame){ ip, sp, fp, 0 },
					    methods, truncated);
		}
		if (n == max) {
			*truncated = 1;
			break;
		}
		frames[n++] = ip;
	} while ((code_known || hw_has_cfi(&cur)) && unw_step(&cur) > 0);
	return n;
fallback:
	frames[0] = (uint64_t)(uintptr_t)caller;
	return 1;
}

int osp_hs_walk(uint64_t *frames, int max, const void *caller, int *truncated)
{
	return hw_walk(frames, max, caller, 1, truncated);
}

int osp_hs_walk_native(uint64_t *frames, int max, const void *caller, int *truncated)
{
	/* 2: by frame pointer from the first libjvm frame (hw_walk_jvm_fp) */
	return hw_walk(frames, max, caller, 2, truncated);
}
