/* loaded.c - "a library was loaded", told to the runtimes' in-target sides
 * (preload/adapter.h osp_runtime_loads): the process's dlopen is
 * interposed here, and at start-up the libraries a program is linked
 * against (an embedder of a runtime) are looked up by the sonames the
 * runtimes name. A runtime installs its detours from there: a launcher
 * that dlopens its runtime's library before the runtime has created any
 * thread keeps detour.h's single-thread assumption.
 */
#include <dlfcn.h>

#include "preload/adapter.h"
#include "preload/preload.h"

#define OSP_EXPORT __attribute__((visibility("default")))

void osp_runtimes_loaded(void *handle)
{
	if (!handle || !osp_armed())
		return;
	for (size_t i = 0; i < osp_nruntime_loads; i++)
		osp_runtime_loads[i]->loaded(handle);
}

OSP_EXPORT void *dlopen(const char *file, int mode)
{
	static void *(*real)(const char *, int);
	void *h;

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "dlopen");
	if (!real)
		return NULL;
	h = real(file, mode);
	if (h && file)
		osp_runtimes_loaded(h);
	return h;
}

/* After osp_init (101): the libraries loaded before us. */
__attribute__((constructor(102))) static void osp_loaded_init(void)
{
	if (!osp_armed())
		return;
	for (size_t i = 0; i < osp_nruntime_loads; i++) {
		const char *so = osp_runtime_loads[i]->preloaded;
		void *h = so ? dlopen(so, RTLD_NOW | RTLD_NOLOAD) : NULL;

		/* again if the call went through the interposer: each runtime
		 * keeps its own "done" state */
		osp_runtimes_loaded(h);
	}
}
