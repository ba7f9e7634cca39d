/* hotspot_moves.c - GC object moves seen through memcpy/memmove. A copy is a
 * move when the calling thread is a GC thread (name cached per thread), both
 * ends are in the Java heap and it is larger than 64 bytes (smaller objects
 * are copied inline by the JVM). Moves are buffered per GC thread in static
 * buffers and written as OS_EV_MOVES batches (src, dst, bytes triples): by
 * their owner when a buffer fills, and by the GC-end hook for all buffers
 * before it writes OS_EV_GC_END. A buffer is only touched under its try-flag,
 * so it is never written by two threads; what cannot be delivered is counted.
 * Every move carries a process-wide sequence number (bits 40..63 of the
 * bytes word, see runtimes/hotspot/hotspot_gc.h): buffers are per thread, and
 * ParallelCompact's shadow regions make the order of moves across threads
 * matter (a worker compacts into a free shadow region, then the region is
 * copied back to its destination - by any worker - and reused).
 * No malloc, no locks, no stdio (this runs inside memcpy). */
#include <string.h>
#include <sys/prctl.h>

#include "runtimes/hotspot/hotspot_abi.h"
#include "runtimes/hotspot/target/hotspot.h"

#define HM_MIN_BYTES OSP_HS_MOVE_MIN
#define HM_BATCH 256            /* moves per OS_EV_MOVES record */
#define HM_BUFS 128             /* GC threads with their own buffer */

enum { HM_UNKNOWN = 0, HM_GC = 1, HM_OTHER = 2 };

struct hm_buf {
	int busy;               /* try-flag */
	uint32_t n;             /* triples buffered */
	uint64_t w[HM_BATCH * 3];
};

static struct hm_buf hm_bufs[HM_BUFS];
static uint32_t hm_nbufs;
static uint64_t hm_lost;
static uint64_t hm_seq;         /* moves logged so far, all threads */
static OSP_TLS int hm_kind;
static OSP_TLS struct hm_buf *hm_mine;

/* GC worker names (15 bytes at most through prctl). Best effort for ZGC and
 * Shenandoah, whose workers copy concurrently. */
static int hm_classify(void)
{
	static const char *const gc[] = {
		"GC Thread#", "VM Thread", "ZWorker", "Shenandoah",
	};
	char name[16] = { 0 };

	if (prctl(PR_GET_NAME, name, 0, 0, 0) != 0)
		return HM_OTHER;
	for (size_t i = 0; i < sizeof(gc) / sizeof(gc[0]); i++)
		if (strncmp(name, gc[i], strlen(gc[i])) == 0)
			return HM_GC;
	return HM_OTHER;
}

static uintptr_t hm_canon(uintptr_t a)
{
	return osp_hs.zgc_offset_mask ? (a & osp_hs.zgc_offset_mask) : a;
}

static int hm_in_heap(uintptr_t a, size_t n)
{
	if (osp_hs.zgc_offset_mask) /* colored view: some color bit, nothing else */
		return (a & osp_hs.zgc_meta_mask) &&
		       !(a & ~(osp_hs.zgc_meta_mask | osp_hs.zgc_offset_mask));
	return a >= osp_hs.heap_lo && a < osp_hs.heap_hi && n <= osp_hs.heap_hi - a;
}

/* Writes a buffer's moves; the caller holds its try-flag. */
static uint64_t hm_write(struct osp_thread *t, struct hm_buf *b, uint64_t gc)
{
	uint64_t n = b->n;

	if (!n)
		return 0;
	b->n = 0;
	if (osp_hs_emit(t, OS_EV_MOVES, 0, n, gc, 0, b->w, (uint32_t)(n * 3)) != 0) {
		__atomic_fetch_add(&hm_lost, n, __ATOMIC_RELAXED);
		return 0;
	}
	return n;
}

static struct hm_buf *hm_claim(void)
{
	uint32_t i = __atomic_fetch_add(&hm_nbufs, 1, __ATOMIC_RELAXED);

	return i < HM_BUFS ? &hm_bufs[i] : NULL;
}

/* The GC number of moves written outside a GC end: the one in progress. */
static uint64_t hm_gc_now(void)
{
	return __atomic_load_n(&osp_hs.gc_count, __ATOMIC_RELAXED);
}

int osp_hs_move_filter(const void *dst, const void *src, size_t n, enum osp_copy_kind kind,
		       uint64_t *tag)
{
	uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;
	struct osp_thread *t;
	struct hm_buf *b;
	uint64_t trip[3];

	(void)kind;
	(void)tag;
	if (n <= HM_MIN_BYTES || (n >> OS_HS_MOVE_SEQ_SHIFT) || !hm_in_heap(s, n) || !hm_in_heap(d, n))
		return 0;
	if (osp_unlikely(hm_kind == HM_UNKNOWN))
		hm_kind = hm_classify();
	if (hm_kind != HM_GC)
		return 0;
	t = osp_copy_thread();
	if (!t)
		return 0;
	trip[0] = hm_canon(s);
	trip[1] = hm_canon(d);
	/* taken inside the copy call: a copy that depends on an earlier one
	 * (copy-back after the fill of a shadow region) gets a larger number */
	trip[2] = n | ((__atomic_fetch_add(&hm_seq, 1, __ATOMIC_RELAXED) & ((1ULL << OS_HS_MOVE_SEQ_BITS) - 1))
		       << OS_HS_MOVE_SEQ_SHIFT);
	if (!hm_mine)
		hm_mine = hm_claim();
	b = hm_mine;
	if (!b || __atomic_exchange_n(&b->busy, 1, __ATOMIC_ACQUIRE)) {
		/* no buffer, or the GC-end flush holds it: write this one alone */
		if (osp_hs_emit(t, OS_EV_MOVES, 0, 1, hm_gc_now(), 0, trip, 3) != 0)
			__atomic_fetch_add(&hm_lost, 1, __ATOMIC_RELAXED);
		return 0;
	}
	b->w[b->n * 3] = trip[0];
	b->w[b->n * 3 + 1] = trip[1];
	b->w[b->n * 3 + 2] = trip[2];
	if (++b->n == HM_BATCH)
		hm_write(t, b, hm_gc_now());
	__atomic_store_n(&b->busy, 0, __ATOMIC_RELEASE);
	return 0;
}

void osp_hs_moves_flush_all(struct osp_thread *t, uint64_t gc, uint64_t *flushed, uint64_t *lost)
{
	uint32_t nb = __atomic_load_n(&hm_nbufs, __ATOMIC_ACQUIRE);

	*flushed = 0;
	*lost = 0;
	if (nb > HM_BUFS)
		nb = HM_BUFS;
	for (uint32_t i = 0; i < nb; i++) {
		struct hm_buf *b = &hm_bufs[i];

		if (!__atomic_load_n(&b->n, __ATOMIC_ACQUIRE))
			continue;
		if (__atomic_exchange_n(&b->busy, 1, __ATOMIC_ACQUIRE)) {
			/* its owner is adding a move right now (concurrent GC) */
			*lost += __atomic_load_n(&b->n, __ATOMIC_RELAXED);
			continue;
		}
		*flushed += hm_write(t, b, gc);
		__atomic_store_n(&b->busy, 0, __ATOMIC_RELEASE);
	}
	__atomic_fetch_add(&hm_lost, *lost, __ATOMIC_RELAXED);
}

void osp_hs_moves_lost_add(uint64_t n)
{
	__atomic_fetch_add(&hm_lost, n, __ATOMIC_RELAXED);
}

uint64_t osp_hs_move_seq(void)
{
	return __atomic_fetch_add(&hm_seq, 1, __ATOMIC_RELAXED);
}

uint64_t osp_hs_moves_lost(void)
{
	return __atomic_load_n(&hm_lost, __ATOMIC_RELAXED);
}
