/* hooks_mmap.c - the exported mmap family. Anonymous mappings of at least
 * header->min_size become OS_EV_MMAP objects (with their call path) when the
 * collector asked for OS_SHM_F_TRACK_MMAP; munmap and mremap are always
 * reported so the collector can drop the objects inside. Before resolution
 * the raw system calls serve. */
#include <stdarg.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/preload.h"

#define OSP_EXPORT __attribute__((visibility("default")))

static void osp_after_mmap(void *p, size_t len, int prot, int flags, int fd, const void *caller)
{
	struct osp_thread *t;

	if (p == MAP_FAILED || fd >= 0 || !(flags & MAP_ANONYMOUS) ||
	    !(osp_hdr->flags & OS_SHM_F_TRACK_MMAP) || len < osp_hdr->min_size)
		return;
	t = osp_enter();
	if (!t)
		return;
	osp_record_path(t, OS_EV_MMAP, (uint64_t)(uintptr_t)p, len,
			(uint32_t)prot | (uint64_t)(uint32_t)flags << 32, 0, caller);
	osp_leave(t);
}

/* mmap and mmap64 (the same call on x86-64): the real one, or the raw
 * system call before it is resolved, then the event; caller is the
 * exported function's return address. */
static void *osp_mmap_via(void *(*real)(void *, size_t, int, int, int, off_t), void *addr,
			  size_t len, int prot, int flags, int fd, off_t off, const void *caller)
{
	void *p;

	if (osp_unlikely(!real))
		p = (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	else
		p = real(addr, len, prot, flags, fd, off);
	if (osp_hdr)
		osp_after_mmap(p, len, prot, flags, fd, caller);
	return p;
}

OSP_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return osp_mmap_via(osp_real.mmap, addr, len, prot, flags, fd, off,
			    __builtin_return_address(0));
}

OSP_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return osp_mmap_via(osp_real.mmap64, addr, len, prot, flags, fd, off,
			    __builtin_return_address(0));
}

OSP_EXPORT int munmap(void *addr, size_t len)
{
	struct osp_thread *t;
	int ret;

	if (osp_unlikely(!osp_real.munmap))
		ret = (int)syscall(SYS_munmap, addr, len);
	else
		ret = osp_real.munmap(addr, len);
	if (ret != 0 || !osp_hdr)
		return ret;
	t = osp_enter();
	if (t) {
		osp_record_plain(t, OS_EV_MUNMAP, (uint64_t)(uintptr_t)addr, len, 0, 0);
		osp_leave(t);
	}
	return ret;
}

OSP_EXPORT void *mremap(void *old, size_t old_size, size_t new_size, int flags, ...)
{
	struct osp_thread *t;
	void *want = NULL, *p;
	va_list ap;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		want = va_arg(ap, void *);
		va_end(ap);
	}
	if (osp_unlikely(!osp_real.mremap))
		p = (void *)syscall(SYS_mremap, old, old_size, new_size, flags, want);
	else
		p = osp_real.mremap(old, old_size, new_size, flags, want);
	if (p == MAP_FAILED || !osp_hdr)
		return p;
	t = osp_enter();
	if (t) {
		osp_record_plain(t, OS_EV_MREMAP, (uint64_t)(uintptr_t)p, new_size,
				 (uint64_t)(uintptr_t)old, old_size);
		osp_leave(t);
	}
	return p;
}
