/* init.c - start-up of libobjscope.so: resolve the real functions, map the
 * shared memory named by OBJSCOPE_SHM and arm the hooks. Without the variable,
 * or on any mismatch, the library stays inert and every hook passes through. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "preload/adapter.h"
#include "preload/preload.h"

struct osp_real osp_real = {
	.memcpy = osp_copy_fwd,
	.memmove = osp_copy_move,
};
struct os_shm_header *osp_hdr;
uint32_t osp_move_flags;
osp_move_filter_fn osp_move_filter;
size_t osp_move_min;
uintptr_t osp_move_lo, osp_move_hi = UINTPTR_MAX;
osp_path_jit_fn osp_path_jit;

static int osp_resolve_state; /* 0 not started, 1 in progress, 2 done */

#define OSP_RESOLVE(field, name) \
	(*(void **)&osp_real.field = dlsym(RTLD_NEXT, name))

int osp_resolve(void)
{
	void *mc, *mm;

	if (__atomic_load_n(&osp_resolve_state, __ATOMIC_ACQUIRE) == 2)
		return 0;
	if (__atomic_exchange_n(&osp_resolve_state, 1, __ATOMIC_ACQ_REL) == 1)
		return -1; /* dlsym re-entered us: callers use the fallback */
	/* memcpy first: dlsym copies while it resolves the rest. */
	mc = dlsym(RTLD_NEXT, "memcpy");
	mm = dlsym(RTLD_NEXT, "memmove");
	OSP_RESOLVE(calloc, "calloc");
	OSP_RESOLVE(realloc, "realloc");
	OSP_RESOLVE(free, "free");
	OSP_RESOLVE(posix_memalign, "posix_memalign");
	OSP_RESOLVE(aligned_alloc, "aligned_alloc");
	OSP_RESOLVE(memalign, "memalign");
	OSP_RESOLVE(valloc, "valloc");
	OSP_RESOLVE(pvalloc, "pvalloc");
	OSP_RESOLVE(mmap, "mmap");
	OSP_RESOLVE(mmap64, "mmap64");
	OSP_RESOLVE(munmap, "munmap");
	OSP_RESOLVE(mremap, "mremap");
	OSP_RESOLVE(getattr, "pthread_getattr_np");
	if (mc)
		osp_real.memcpy = mc;
	if (mm)
		osp_real.memmove = mm;
	/* malloc last: hooks treat a non-NULL malloc as "resolved". */
	OSP_RESOLVE(malloc, "malloc");
	__atomic_store_n(&osp_resolve_state, 2, __ATOMIC_RELEASE);
	return 0;
}

int osp_arm(struct os_shm_header *h, size_t size)
{
	uint64_t rb = h->ring_bytes;

	if (h->magic != OS_SHM_MAGIC || h->version != OS_SHM_VERSION || h->nslots == 0 ||
	    rb < 4096 || (rb & (rb - 1)) || h->total_bytes != os_shm_size(h->nslots, rb) ||
	    h->total_bytes > size)
		return -EINVAL;
	if (osp_thread_setup() != 0)
		return -EINVAL;
	osp_rep_setup(h); /* a failure: nothing armed in-target (the collector counts) */
	__atomic_fetch_add((uint32_t *)&h->processes, 1, __ATOMIC_RELAXED);
	osp_move_flags = h->flags & OS_SHM_F_MOVES;
	__atomic_store_n(&osp_hdr, h, __ATOMIC_RELEASE);
	return 0;
}

/* Maps the file named by OBJSCOPE_SHM; stays inert on any failure.
 * secure_getenv: in a setuid or setgid program (whose environment its
 * invoker chose) the variable is not honoured, so that no file the
 * program's owner may write is opened and mapped for writing on the
 * invoker's say. A regular file only (a device or FIFO is never mapped). */
static void osp_map_shm(void)
{
	const char *path = secure_getenv(OS_SHM_ENV);
	struct stat st;
	void *map = MAP_FAILED;
	int fd;

	if (!path || !*path)
		return;
	fd = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size < OS_SHM_HDR)
		goto out;
	map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		goto out;
	if (osp_arm(map, (size_t)st.st_size) != 0)
		munmap(map, (size_t)st.st_size);
out:
	close(fd);
}

__attribute__((constructor(101))) static void osp_init(void)
{
	osp_resolve();
	osp_map_shm();
}
