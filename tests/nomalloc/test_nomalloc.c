/* test_nomalloc.c - proves the preload's recording path never allocates.
 *
 * This binary replaces malloc & co. with counters that forward to glibc's
 * __libc_* entry points. It links the preload's hot-path objects (init,
 * fallback, thread, record; not the hooks, which would clash), arms them with
 * a shm header built in anonymous memory, then records thousands of events
 * with deep call paths while a per-thread "forbidden" flag is set. Any malloc
 * made by objscope or libunwind on that path is counted and fails the test.
 * Warm-up before setting the flag (libunwind's first use) is allowed. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/ring.h"
#include "preload/preload.h"

#define NM_EXPORT __attribute__((visibility("default")))
#define NM_NSLOTS 4
#define NM_RING (1u << 20)
#define NM_MIN 4096
#define NM_DEPTH 24

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

static __thread int nm_forbidden;
static __thread unsigned long nm_calls;

#define NM_COUNT() \
	do { \
		if (nm_forbidden) \
			nm_calls++; \
	} while (0)

NM_EXPORT void *malloc(size_t n)
{
	NM_COUNT();
	return __libc_malloc(n);
}

NM_EXPORT void *calloc(size_t n, size_t m)
{
	NM_COUNT();
	return __libc_calloc(n, m);
}

NM_EXPORT void *realloc(void *p, size_t n)
{
	NM_COUNT();
	return __libc_realloc(p, n);
}

NM_EXPORT void free(void *p)
{
	NM_COUNT();
	__libc_free(p);
}

NM_EXPORT void *memalign(size_t a, size_t n)
{
	NM_COUNT();
	return __libc_memalign(a, n);
}

NM_EXPORT void *aligned_alloc(size_t a, size_t n)
{
	NM_COUNT();
	return __libc_memalign(a, n);
}

NM_EXPORT int posix_memalign(void **out, size_t a, size_t n)
{
	NM_COUNT();
	*out = __libc_memalign(a, n);
	return *out ? 0 : 12;
}

struct nm_seen {
	uint64_t events, allocs, frees, threads, min_frames;
};

static struct os_shm_header *nm_shm(void)
{
	size_t size = os_shm_size(NM_NSLOTS, NM_RING);
	struct os_shm_header *h = mmap(NULL, size, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	cr_assert(h != MAP_FAILED);
	h->magic = OS_SHM_MAGIC;
	h->version = OS_SHM_VERSION;
	h->nslots = NM_NSLOTS;
	h->ring_bytes = NM_RING;
	h->total_bytes = size;
	h->min_size = NM_MIN;
	h->flags |= OS_SHM_F_NATIVE_EXACT; /* every block >= min_size tracked */
	cr_assert_eq(osp_arm(h, size), 0);
	return h;
}

static void nm_count(const struct os_event *ev, void *arg)
{
	struct nm_seen *s = arg;

	s->events++;
	if (ev->type == OS_EV_ALLOC) {
		s->allocs++;
		if (ev->nframes < s->min_frames)
			s->min_frames = ev->nframes;
	} else if (ev->type == OS_EV_FREE) {
		s->frees++;
	} else if (ev->type == OS_EV_THREAD) {
		s->threads++;
	}
}

/* One allocation, one small allocation and one free, as the hooks do them,
 * from NM_DEPTH frames down. */
__attribute__((noinline, optimize("no-optimize-sibling-calls")))
static int nm_deep(int depth, uint64_t addr)
{
	volatile int frame_keeper = depth; /* a real frame per level */
	struct osp_thread *t;

	if (depth > 0)
		return nm_deep(depth - 1, addr) + 1 + (frame_keeper - depth);
	t = osp_enter();
	if (!t)
		return -1000;
	osp_note_alloc(t, OS_EV_ALLOC, (void *)(uintptr_t)addr, 8192, NULL,
		       __builtin_return_address(0));
	osp_note_alloc(t, OS_EV_ALLOC, (void *)(uintptr_t)(addr + 64), 16, NULL,
		       __builtin_return_address(0));
	osp_record_plain(t, OS_EV_FREE, addr, 0, 0, 0);
	osp_leave(t);
	return 0;
}

static void nm_drain(struct os_shm_header *h, struct nm_seen *seen)
{
	uint64_t bad = 0;

	for (uint32_t i = 0; i < h->nslots; i++)
		os_ring_drain(os_shm_slot(h, i), h->ring_bytes, nm_count, seen, &bad);
	cr_assert_eq(bad, 0);
}

struct nm_worker {
	volatile int go;
	unsigned long calls;
	int rc;
};

/* A fresh thread: its first event claims a slot and writes OS_EV_THREAD,
 * all while forbidden. */
static void *nm_thread(void *arg)
{
	struct nm_worker *w = arg;

	while (!__atomic_load_n(&w->go, __ATOMIC_ACQUIRE))
		;
	nm_forbidden = 1;
	for (int i = 0; i < 1000 && w->rc == 0; i++)
		w->rc = nm_deep(NM_DEPTH, 0x200000 + (uint64_t)i * 16) == NM_DEPTH ? 0 : -1;
	nm_forbidden = 0;
	w->calls = nm_calls;
	return NULL;
}

Test(nomalloc, recording_path_never_allocates)
{
	struct os_shm_header *h = nm_shm();
	struct nm_seen seen = { .min_frames = UINT64_MAX };
	struct nm_worker w = { 0 };
	struct os_slot *main_slot;
	pthread_t th;
	unsigned long calls;

	cr_assert_eq(nm_deep(NM_DEPTH, 0x100000), NM_DEPTH, "warm-up");
	cr_assert_eq(pthread_create(&th, NULL, nm_thread, &w), 0);

	nm_forbidden = 1;
	__atomic_store_n(&w.go, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 10000; i++) {
		if (nm_deep(NM_DEPTH, 0x100000 + (uint64_t)i * 16) != NM_DEPTH)
			break;
		if (i % 500 == 0)
			nm_drain(h, &seen);
	}
	calls = nm_calls;
	nm_forbidden = 0;

	cr_assert_eq(pthread_join(th, NULL), 0);
	nm_drain(h, &seen);
	cr_expect_eq(calls, 0, "%lu malloc-family calls on the recording path", calls);
	cr_expect_eq(w.calls, 0, "%lu malloc-family calls in a new thread's first events",
		     w.calls);
	cr_expect_eq(w.rc, 0);

	main_slot = os_shm_slot(h, 0);
	for (uint32_t i = 0; i < h->nslots; i++)
		if (os_shm_slot(h, i)->tid == (uint32_t)gettid())
			main_slot = os_shm_slot(h, i);
	cr_expect_eq(seen.threads, 2, "THREAD events %lu", (unsigned long)seen.threads);
	cr_expect_eq(seen.allocs, 10001 + 1000, "ALLOC events %lu", (unsigned long)seen.allocs);
	cr_expect_eq(seen.frees, seen.allocs);
	cr_expect_eq(main_slot->stats.small_allocs, 10001);
	cr_expect_eq(main_slot->stats.dropped, 0);
	cr_expect_geq(seen.min_frames, NM_DEPTH, "shortest path %lu frames",
		      (unsigned long)seen.min_frames);
	cr_expect_eq(h->no_slot_events, 0);
}
