/* bench_moves.c - cost of memcpy/memmove through objscope's hooks, and of a
 * logged object move (OS_EV_MOVE), against libc called directly.
 *
 * The preload library's objects are linked into this program (Makefile rule
 * build/bench/bench_moves), so its hooks ARE this program's memcpy/memmove
 * and the runtime-adapter plug (preload/adapter.h) can be set from here. The
 * library is armed with a shm region in anonymous memory (osp_arm). Cases,
 * 64-byte copies, ns per call (best of 5 rounds):
 *   libc          libc's memcpy/memmove called through a pointer
 *   hook, native  the hook without OS_SHM_F_MOVES (native programs)
 *   hook, filter  OS_SHM_F_MOVES set, the adapter's filter says "not a move"
 *                 (small non-heap copies inside a JVM)
 *   logged move   OS_SHM_F_MOVES set, the filter says "move": one event
 *                 written to the thread's ring (drained between rounds)
 *
 * Usage: bench_moves [--quick]   (--quick: 100x fewer calls, for the tests)
 * Exit status: 0, or 1 when the hooks are not interposed or moves were lost.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "common/clock.h"
#include "common/ring.h"
#include "preload/adapter.h"
#include "preload/preload.h"

#define M_SLOTS 4
#define M_RING (64u << 20)
#define M_BATCH 200000L /* logged moves per round: fits one ring */

typedef void *(*copy_fn)(void *, const void *, size_t);

static unsigned char heap_area[1 << 16]; /* what the filter calls "the heap" */
static unsigned char plain_src[64];

static double now_ns(void)
{
	return (double)os_now_ns();
}

/* The adapter's filter: a move is a copy whose destination is in the heap. */
static int heap_filter(const void *dst, const void *src, size_t n, enum osp_copy_kind kind,
		       uint64_t *tag)
{
	(void)src;
	(void)n;
	(void)kind;
	*tag = 0x1234;
	return (const unsigned char *)dst >= heap_area &&
	       (const unsigned char *)dst < heap_area + sizeof(heap_area);
}

static void count_event(const struct os_event *ev, void *arg)
{
	if (ev->type == OS_EV_MOVE)
		(*(unsigned long *)arg)++;
}

static unsigned long drain(struct os_shm_header *h)
{
	unsigned long moves = 0;
	uint64_t bad = 0;

	for (uint32_t i = 0; i < h->nslots; i++)
		os_ring_drain(os_shm_slot(h, i), h->ring_bytes, count_event, &moves, &bad);
	return moves;
}

/* ns per call, best of 5 rounds of n calls; drains the rings between rounds
 * and adds the moves found to *moves. */
static double time_copies(copy_fn fn, unsigned char *dst, const unsigned char *src, long n,
			  struct os_shm_header *h, unsigned long *moves)
{
	double best = 1e30;

	for (int r = 0; r < 5; r++) {
		double t0 = now_ns(), t;

		for (long i = 0; i < n; i++) {
			fn(dst + (i & 7) * 64, src, 64);
			__asm__ volatile("" ::: "memory");
		}
		t = (now_ns() - t0) / (double)n;
		best = t < best ? t : best;
		*moves += drain(h);
	}
	return best;
}

int main(int argc, char **argv)
{
	long n = 20000000, nmoves = M_BATCH;
	size_t size = os_shm_size(M_SLOTS, M_RING);
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	copy_fn libc_fn[2], hook_fn[2] = { memcpy, memmove };
	const char *names[2] = { "memcpy", "memmove" };
	static unsigned char dst[8 * 64];
	struct os_shm_header *h;
	unsigned long moves = 0, unused = 0, expected = 0;

	if (argc > 1 && strcmp(argv[1], "--quick") == 0) {
		n /= 100;
		nmoves /= 100;
	} else if (argc > 1) {
		fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
		return 2;
	}
	libc_fn[0] = libc ? (copy_fn)dlsym(libc, "memcpy") : NULL;
	libc_fn[1] = libc ? (copy_fn)dlsym(libc, "memmove") : NULL;
	if (!libc_fn[0] || !libc_fn[1] || libc_fn[0] == hook_fn[0]) {
		fprintf(stderr, "bench_moves: the hooks are not interposed\n");
		return 1;
	}
	h = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (h == MAP_FAILED)
		return 1;
	h->magic = OS_SHM_MAGIC;
	h->version = OS_SHM_VERSION;
	h->nslots = M_SLOTS;
	h->ring_bytes = M_RING;
	h->total_bytes = size;
	h->min_size = 1024;
	h->flags = OS_SHM_F_MOVES;
	if (osp_resolve() != 0 || osp_arm(h, size) != 0) {
		fprintf(stderr, "bench_moves: cannot arm the preload library\n");
		return 1;
	}
	osp_move_filter = heap_filter;
	for (int k = 0; k < 2; k++) {
		double t_libc, t_native, t_filter, t_range, t_move;

		osp_move_flags = 0;
		t_libc = time_copies(libc_fn[k], dst, plain_src, n, h, &unused);
		t_native = time_copies(hook_fn[k], dst, plain_src, n, h, &unused);
		osp_move_flags = OS_SHM_F_MOVES;
		t_filter = time_copies(hook_fn[k], dst, plain_src, n, h, &unused);
		/* the adapter's range (adapter.h osp_move_lo/hi) leaves the
		 * source out: refused before the hook's bookkeeping */
		osp_move_lo = (uintptr_t)heap_area;
		osp_move_hi = (uintptr_t)heap_area + 1;
		t_range = time_copies(hook_fn[k], dst, plain_src, n, h, &unused);
		osp_move_lo = 0;
		osp_move_hi = UINTPTR_MAX;
		t_move = time_copies(hook_fn[k], heap_area, plain_src, nmoves, h, &moves);
		expected += 5 * (unsigned long)nmoves;
		printf("%-7s 64B: libc %6.2f ns   hook, native %6.2f ns   hook, filter says no "
		       "%6.2f ns   source outside the range %6.2f ns   logged move %6.2f ns\n",
		       names[k], t_libc, t_native, t_filter, t_range, t_move);
	}
	osp_move_flags = 0;
	printf("moves logged: %lu of %lu (copies that were not moves logged: %lu)\n", moves,
	       expected, unused);
	if (moves != expected || unused != 0) {
		fprintf(stderr, "bench_moves: %lu moves expected in the rings, %lu found, %lu "
			"spurious\n", expected, moves, unused);
		return 1;
	}
	return 0;
}
