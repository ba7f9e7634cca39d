/* hooks_thread.c - the exported pthread_getattr_np.
 *
 * glibc holds the thread's lock while it fills the attributes, and may
 * allocate meanwhile (the main thread's bounds come from /proc/self/maps
 * through stdio). An allocation hook that records a path walks the
 * caller's stack, and the runtimes' in-target walkers learn a thread's
 * stack bounds from pthread_getattr_np (runtimes/hotspot/target/
 * hotspot_walk.c hw_stack_bounds): called from inside the real one, that
 * waits for the lock the thread itself holds, forever (javac hung at
 * start-up under --min-size 72: a 152-byte block of the JVM's own
 * pthread_getattr_np was large enough to record). So while the real function
 * runs the thread counts as inside a hook: its allocations there are
 * counted as re-entered (the slot's `reentered`), not recorded.
 *
 * Launch mode only: in attach mode the target's calls were bound before the
 * library came (docs/ATTACH.md). */
#include <dlfcn.h>
#include <errno.h>

#include "preload/preload.h"

#define OSP_EXPORT __attribute__((visibility("default")))

OSP_EXPORT int pthread_getattr_np(pthread_t th, pthread_attr_t *attr)
{
	int (*real)(pthread_t, pthread_attr_t *) = osp_real.getattr;
	struct osp_thread *t = &osp_self;
	int busy = t->busy, ret;

	if (osp_unlikely(!real)) {
		osp_resolve();
		real = osp_real.getattr;
	}
	/* another thread is resolving right now: look it up for this call */
	if (osp_unlikely(!real))
		*(void **)&real = dlsym(RTLD_NEXT, "pthread_getattr_np");
	if (!real)
		return ENOSYS; /* no libc function to call: cannot happen */
	t->busy = 1;
	ret = real(th, attr);
	t->busy = busy;
	return ret;
}
