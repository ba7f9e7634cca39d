/* generic.c - the generic adapter inside the target (--runtime generic,
 * OS_SHM_F_RT_GENERIC): a VM nobody describes to objscope runs code with no
 * unwind information (its JIT code), where libunwind, stepping by guess,
 * can read wild addresses. Native allocation paths (preload/adapter.h
 * osp_path_jit) are therefore walked by libunwind only from frames that
 * have unwind information: the first frame without any (JIT code, or any
 * code of unknown shape) is the path's last. Nothing of the VM is read,
 * detoured or announced; the collector side (runtimes/generic/) finds the
 * VM from outside.
 *
 * Installed at start-up (launch mode, with the move filter of
 * generic_moves.c) or by the attach (osp_gen_attach: the walk alone, the
 * VM's own copies do not reach objscope's memcpy there), only when the
 * collector forced the generic adapter: in auto mode the paths stay as the
 * preload makes them for any program. */
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <stdbool.h>

#include "preload/adapter.h"
#include "preload/preload.h"
#include "runtimes/generic/target/generic_attach.h"

#define GEN_SKIP_MAX 8 /* objscope's own frames above the allocation site */

static int gen_has_unwind_info(unw_cursor_t *cur)
{
	unw_proc_info_t pi;

	return unw_get_proc_info(cur, &pi) == 0;
}

/* osp_path_jit_fn: the frames from caller on, while each has unwind
 * information (the one without is kept, as the last). */
static int gen_walk(uint64_t *frames, int max, const void *caller, int *truncated)
{
	unw_context_t uc;
	unw_cursor_t cur;
	int n = 0, skipping = 1, skipped = 0;

	*truncated = 0;
	if (unw_getcontext(&uc) != 0 || unw_init_local(&cur, &uc) != 0)
		goto fallback;
	do {
		unw_word_t ip;

		if (unw_get_reg(&cur, UNW_REG_IP, &ip) != 0 || ip == 0)
			break;
		if (skipping) {
			if ((const void *)ip != caller) {
				if (++skipped == GEN_SKIP_MAX)
					goto fallback;
				continue;
			}
			skipping = 0;
		}
		if (n == max) {
			*truncated = 1;
			break;
		}
		frames[n++] = ip;
	} while (gen_has_unwind_info(&cur) && unw_step(&cur) > 0);
	return n;
fallback:
	frames[0] = (uint64_t)(uintptr_t)caller;
	return 1;
}

static int gen_wanted(void)
{
	return osp_armed() && (osp_hdr->flags & OS_SHM_F_RT_GENERIC);
}

static void gen_install(void)
{
	osp_path_jit_fn none = NULL;

	/* an adapter that installed its own walk keeps it */
	__atomic_compare_exchange_n(&osp_path_jit, &none, gen_walk, false, __ATOMIC_ACQ_REL,
				    __ATOMIC_ACQUIRE);
}

/* Attach: the walk is installed; nothing is announced (the plan stays the
 * one of a process without a runtime: no detour, no runtime message). */
static int gen_attach_prepare(struct os_rt_plan *plan)
{
	(void)plan;
	if (gen_wanted())
		gen_install();
	return 0;
}

const struct osp_runtime_attach osp_gen_attach = {
	.name = "generic",
	.prepare = gen_attach_prepare,
};

/* after the preload's own start-up (osp_hdr) */
__attribute__((constructor(103))) static void gen_init(void)
{
	if (!gen_wanted())
		return;
	gen_install();
	osp_gen_moves_install();
}
