/* generic_moves.c - copies by an unknown VM's collector (--runtime
 * generic): the copies (memcpy/memmove, preload/adapter.h osp_move_filter)
 * made by threads named as GC threads (generic_names.h) are logged as
 * OS_EV_MOVE; the collector side keeps those inside the managed heap as the
 * GC's copy volume. Nothing of the VM is known here: not its heap (the
 * collector finds it from outside), not its objects; copies made inline by
 * the VM's compiled code are never seen. A thread's name is read
 * (prctl, no allocation, no lock) at its first copy and again every
 * GEN_RENAME_COPIES copies while it is not a GC thread (a thread is often
 * named after it started); the answer lives in its osp_thread's rt_state. */
#include <sys/prctl.h>

#include "preload/adapter.h"
#include "preload/preload.h"
#include "runtimes/generic/generic_names.h"
#include "runtimes/generic/target/generic_attach.h"

#define GEN_RENAME_COPIES 4096
#define GEN_KIND 0        /* rt_state[0]: 0 not read yet, 1 a GC thread, 2 another */
#define GEN_UNTIL 1       /* rt_state[1]: copies until its name is read again */
#define GEN_MIN_COPY 16   /* smaller copies are no objects worth the event */

static int gen_move_filter(const void *dst, const void *src, size_t n, enum osp_copy_kind kind,
			   uint64_t *tag)
{
	struct osp_thread *t = osp_copy_thread();
	char name[16] = "";

	(void)dst;
	(void)src;
	(void)tag;
	if (!t || n < GEN_MIN_COPY)
		return 0;
	if (t->rt_state[GEN_KIND] == 1)
		return 1;
	if (t->rt_state[GEN_KIND] == 2 && --t->rt_state[GEN_UNTIL])
		return 0;
	if (prctl(PR_GET_NAME, name) == 0 && os_gen_thread_kind(name) == OS_THR_GC) {
		t->rt_state[GEN_KIND] = 1;
		return 1;
	}
	t->rt_state[GEN_KIND] = 2;
	t->rt_state[GEN_UNTIL] = GEN_RENAME_COPIES;
	(void)kind;
	return 0;
}

void osp_gen_moves_install(void)
{
	__atomic_store_n(&osp_move_filter, gen_move_filter, __ATOMIC_RELEASE);
}
