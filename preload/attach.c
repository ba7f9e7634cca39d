/* attach.c - the entry points `objscope attach` calls inside a running
 * target after injecting this library with dlopen (attacher/inject/inject.c):
 *
 *   int objscope_attach(const char *shm_path)  maps the shm, arms the hooks,
 *       patches the GOT of the loaded objects; returns the number of GOT
 *       entries patched (>= 0) or -errno. Calling it again re-arms.
 *   int objscope_detach(void)  disarms, restores the GOT, releases the shm,
 *       closes the in-target replica breakpoints still armed; returns how
 *       many of those it closed (>= 0).
 *   struct os_attach_orphan *objscope_orphan(void)  what objscope_attach found
 *       left armed by an attach that never detached (common/attach_orphan.h).
 *   struct os_rt_plan *objscope_rt_plan(void), int objscope_rt_commit(void)
 *       the steps of a runtime found in the process (common/attach_abi.h,
 *       the runtime's in-target attach of preload/adapter.h): the runtime
 *       announced during objscope_attach, imports of its own library
 *       redirected (a JVM's GC copies), its allocation/GC detours written
 *       by commit while the collector holds the other threads stopped.
 *       After detach the detours stay, pass-through.
 *
 * Both run on a thread hijacked by ptrace (never inside a hook), so they may
 * use dl_iterate_phdr, mprotect and mmap.
 *
 * Threads cache their ring slot (thread.c) and a hook may still be running
 * on another thread while we detach, so the shm is never simply unmapped:
 * detach replaces it with an anonymous, never-populated placeholder at the
 * same address (MAP_FIXED, atomic for the other threads), and points osp_hdr
 * at a static header that stays disarmed. The next attach maps its shm over
 * the placeholder and gives each live thread back the slot index it cached,
 * so a cached slot pointer is never dangling nor shared. What stays after a
 * detach: this library (and its dependencies), the placeholder mapping and,
 * under --replicas, the hit signal's handler (replica.c): every in-target
 * breakpoint is closed by the detach, none is left armed.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/attach_abi.h"
#include "common/attach_orphan.h"
#include "common/ring.h"
#include "preload/adapter.h"
#include "preload/got.h"
#include "preload/preload.h"

#define OSP_EXPORT __attribute__((visibility("default")))
#define OSP_OWNERS_MAX 4096

/* The imports redirected to the hooks (memcpy/memmove: runtime adapters). */
static const char *const osp_attach_imports[] = {
	"malloc", "calloc", "realloc", "free", "posix_memalign", "aligned_alloc", "memalign",
	"valloc", "pvalloc", "mmap", "mmap64", "munmap", "mremap",
};
/* Objects whose calls stay direct: libc and the loader call each other. */
static const char *const osp_attach_skip[] = { "/libc.so.", "/ld-linux", "linux-vdso", NULL };

static int osp_attached;
static void *osp_home;              /* where every attach maps its shm */
static size_t osp_home_size;        /* size of the home mapping */
static struct os_shm_header osp_dormant; /* what osp_hdr points to after detach */
static struct os_rt_plan osp_plan;      /* read by the collector (attach_abi.h) */
static const struct osp_runtime_attach *osp_plan_rt; /* the runtime that filled it */
static struct os_attach_orphan osp_orphan; /* read by the collector (attach_orphan.h) */

/* Slots owned by live threads at detach: index, pid, tid. */
static struct { uint32_t idx, pid, tid; } osp_owners[OSP_OWNERS_MAX];
static uint32_t osp_nowners;

/* The hooks of this object (not libc's functions of the same names, which
 * the global scope would give us). Returns how many were found. */
static size_t osp_attach_hooks(const char *const *names, size_t nnames, struct osp_got_sym *out)
{
	Dl_info self, at;
	void *h;
	size_t n = 0;

	if (!dladdr((void *)&osp_attach_hooks, &self) || !self.dli_fname)
		return 0;
	h = dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		return 0;
	for (size_t i = 0; i < nnames; i++) {
		void *fn = dlsym(h, names[i]);

		if (fn && dladdr(fn, &at) && at.dli_fbase == self.dli_fbase)
			out[n++] = (struct osp_got_sym){ names[i], fn };
	}
	dlclose(h);
	return n;
}

/* Gives each live thread back the slot it cached in a previous attach. */
static void osp_attach_owners(struct os_shm_header *h)
{
	pid_t me = getpid();

	for (uint32_t i = 0; i < osp_nowners; i++) {
		struct os_slot *s;

		if (osp_owners[i].idx >= h->nslots || osp_owners[i].pid != (uint32_t)me ||
		    syscall(SYS_tgkill, me, (pid_t)osp_owners[i].tid, 0) != 0)
			continue;
		s = os_shm_slot(h, osp_owners[i].idx);
		s->pid = osp_owners[i].pid;
		s->tid = osp_owners[i].tid;
		s->generation++;
		os_shm_note_slot(h, osp_owners[i].idx);
		atomic_store_explicit(&s->state, OS_SLOT_ACTIVE, memory_order_release);
	}
	osp_nowners = 0;
}

static int osp_attach_map(const char *path, struct os_shm_header **out, size_t *size)
{
	struct stat st;
	void *map;
	int fd, rc = 0;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0) {
		rc = -errno;
		goto out;
	}
	if ((size_t)st.st_size < OS_SHM_HDR) {
		rc = -EINVAL;
		goto out;
	}
	if (osp_home && (size_t)st.st_size > osp_home_size) {
		rc = -E2BIG; /* the placeholder must keep covering cached slots */
		goto out;
	}
	map = mmap(osp_home, (size_t)st.st_size, PROT_READ | PROT_WRITE,
		   MAP_SHARED | (osp_home ? MAP_FIXED : 0), fd, 0);
	if (map == MAP_FAILED) {
		rc = -errno;
		goto out;
	}
	*out = map;
	*size = (size_t)st.st_size;
out:
	close(fd);
	return rc;
}

/* Puts the never-populated placeholder over the home range. */
static void osp_attach_placeholder(void)
{
	struct os_shm_header *ph;

	if (mmap(osp_home, osp_home_size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0) == MAP_FAILED)
		return; /* the old shm stays mapped: still safe */
	ph = osp_home;
	atomic_store(&ph->disarmed, 1);
	ph->min_size = UINT64_MAX;
}

OSP_EXPORT int objscope_detach(void);

static void osp_orphan_event(const struct os_event *ev, void *arg)
{
	(void)ev;
	(void)arg;
}

/* The previous attach never detached (its collector was killed): its
 * hooks kept writing into rings nobody drained. Counts what was lost
 * there (drops, and events written but never read: consumed here, as the
 * only reader left) before objscope_detach() releases the rings. */
static void osp_attach_orphaned(struct os_shm_header *h)
{
	memset(&osp_orphan, 0, sizeof(osp_orphan));
	if (!h || h == &osp_dormant)
		return;
	atomic_store(&h->disarmed, 1);
	osp_orphan.found = 1;
	osp_orphan.collector_pid = h->collector_pid;
	osp_orphan.dropped = atomic_load(&h->no_slot_events);
	for (uint32_t i = 0; i < h->nslots; i++) {
		struct os_slot *s = os_shm_slot(h, i);

		osp_orphan.dropped += atomic_load(&s->stats.dropped);
		if (atomic_load(&s->state) != OS_SLOT_FREE)
			osp_orphan.unread += os_ring_drain(s, h->ring_bytes, osp_orphan_event, NULL,
							   &osp_orphan.bad_bytes);
	}
}

OSP_EXPORT int objscope_attach(const char *shm_path)
{
	struct osp_got_sym syms[sizeof(osp_attach_imports) / sizeof(*osp_attach_imports)];
	struct os_shm_header *h = NULL;
	size_t size = 0, nsyms;
	int rc, n;

	if (osp_resolve() != 0)
		return -EAGAIN;
	if (osp_hdr && !osp_attached && osp_hdr != &osp_dormant)
		return -EBUSY; /* launched under `objscope record` */
	memset(&osp_orphan, 0, sizeof(osp_orphan));
	if (osp_attached) {
		osp_attach_orphaned(osp_hdr);
		objscope_detach();
	}
	nsyms = osp_attach_hooks(osp_attach_imports,
				 sizeof(osp_attach_imports) / sizeof(*osp_attach_imports), syms);
	if (nsyms == 0)
		return -ENOENT;
	rc = osp_attach_map(shm_path, &h, &size);
	if (rc < 0)
		return rc;
	if (h->magic == OS_SHM_MAGIC && h->version == OS_SHM_VERSION &&
	    h->total_bytes <= size)
		osp_attach_owners(h);
	rc = osp_arm(h, size);
	if (rc < 0) {
		if (osp_home)
			osp_attach_placeholder();
		else
			munmap(h, size);
		return rc;
	}
	if (!osp_home) {
		osp_home = h;
		osp_home_size = size;
	}
	osp_attached = 1;
	/* a runtime of the process (a running JVM): announced now, detours
	 * prepared for the collector to write (objscope_rt_commit); before any
	 * GOT entry leads to the hooks, so that no native path of a runtime
	 * thread is unwound by unw_backtrace (preload/adapter.h, osp_path_jit) */
	osp_plan_rt = NULL;
	memset(&osp_plan, 0, sizeof(osp_plan));
	for (size_t i = 0; i < osp_nruntime_attaches && !osp_plan_rt; i++)
		if (osp_runtime_attaches[i]->prepare(&osp_plan) == 1)
			osp_plan_rt = osp_runtime_attaches[i];
	rc = osp_got_patch(syms, nsyms, osp_attach_skip);
	/* the imports of the runtime's own library (a JVM's GC copies: moves) */
	if (rc >= 0 && osp_plan_rt && osp_plan_rt->ngot_imports &&
	    osp_plan_rt->ngot_imports <= sizeof(syms) / sizeof(*syms)) {
		nsyms = osp_attach_hooks(osp_plan_rt->got_imports, osp_plan_rt->ngot_imports, syms);
		n = osp_got_patch_only(syms, nsyms, osp_plan_rt->got_object);
		if (n > 0)
			osp_plan.got_runtime = (uint32_t)n;
	}
	return rc;
}

/* What the previous attach left armed, found by the last objscope_attach
 * (common/attach_orphan.h). */
OSP_EXPORT struct os_attach_orphan *objscope_orphan(void)
{
	return &osp_orphan;
}

/* The runtime part of the attach (common/attach_abi.h). */
OSP_EXPORT struct os_rt_plan *objscope_rt_plan(void)
{
	return &osp_plan;
}

/* Runs while the collector holds every other thread stopped: writes bytes,
 * nothing else (no allocation, no lock another thread could hold). */
OSP_EXPORT int objscope_rt_commit(void)
{
	int n = osp_plan_rt ? osp_plan_rt->commit() : 0;

	if (n > 0) {
		osp_plan.active += (uint32_t)n;
		osp_plan.pending = 0;
	}
	return n;
}

OSP_EXPORT int objscope_detach(void)
{
	struct os_shm_header *h = osp_hdr;
	pid_t me = getpid();
	unsigned n;

	if (!osp_attached || !h)
		return 0;
	atomic_store(&h->disarmed, 1);
	/* the detours stay in the runtime, pass-through (osp_enter answers NULL
	 * once disarmed); the copies stop being examined */
	__atomic_store_n(&osp_move_flags, 0, __ATOMIC_RELEASE);
	osp_got_restore();
	osp_nowners = 0;
	for (uint32_t i = 0; i < h->nslots && osp_nowners < OSP_OWNERS_MAX; i++) {
		struct os_slot *s = os_shm_slot(h, i);

		if (atomic_load(&s->state) == OS_SLOT_ACTIVE && s->pid == (uint32_t)me)
			osp_owners[osp_nowners++] = (typeof(osp_owners[0])){ i, s->pid, s->tid };
	}
	/* ring_bytes 0 makes a late writer drop its event; nslots 0 makes a
	 * claim fail */
	memset(&osp_dormant, 0, sizeof(osp_dormant));
	osp_dormant.magic = OS_SHM_MAGIC;
	osp_dormant.version = OS_SHM_VERSION;
	osp_dormant.min_size = UINT64_MAX;
	osp_exact_min = UINT64_MAX; /* frees cost a bit test again */
	atomic_store(&osp_dormant.disarmed, 1);
	__atomic_store_n(&osp_hdr, &osp_dormant, __ATOMIC_SEQ_CST);
	/* in-target replica breakpoints (replica.c) of every thread: closed
	 * now, after osp_hdr changed (a hook arming one meanwhile sees the
	 * change and closes its own); a hit signal already queued finds its
	 * token gone and returns */
	n = osp_rep_detach();
	osp_attach_placeholder();
	osp_attached = 0;
	return (int)n;
}
