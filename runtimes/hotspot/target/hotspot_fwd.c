/* hotspot_fwd.c - moves of small tracked objects, read from their
 * forwarding pointers at the end of a collection.
 *
 * Young collections copy objects of 64 bytes or less inline, without
 * memcpy (docs/HOTSPOT-FACTS.md): hotspot_moves.c never sees them. But G1,
 * Parallel and Serial leave the old copy's mark word forwarded (forwardee |
 * 0b11) when they evacuate it, and the old copy is not overwritten before
 * the mutators run again. So every tracked object of at most 64 bytes is
 * remembered here (its address, at allocation or at its last move), and
 * the GC-end hook - the VM thread at the end of the pause, no Java thread
 * running and none inside an allocation hook - reads each one's mark word:
 *  - forwarded to another address in the heap: the object moved there; the
 *    move is written as OS_EV_MOVES before OS_EV_GC_END (counted in its
 *    flushed moves) and the new address is remembered;
 *  - forwarded to itself (G1 evacuation failure): it stayed, remembered;
 *  - not forwarded: it died, or it was not in the collected set (an old
 *    object at a young collection): forgotten either way. An old small
 *    object that a later G1 mixed collection moves is therefore not seen
 *    (docs/LIFETIMES.md, "Limits"). Full collections rewrite the mark words
 *    of the objects they slide, so nothing there reads as forwarded.
 * Mark words are read with process_vm_readv on this process: memory the
 * collection gave back (uncommitted) fails the read, it never faults.
 * Concurrent collectors (ZGC, Shenandoah) are left out: they copy while
 * Java threads run and keep no such mark.
 * No malloc, no locks, no stdio: this runs in allocation and GC hooks. */
#include <sys/uio.h>
#include <unistd.h>

#include "runtimes/hotspot/hotspot_abi.h"
#include "runtimes/hotspot/target/hotspot.h"

#define HF_MAX (1 << 18) /* small tracked objects remembered at once (3 MiB, touched as used) */
#define HF_READ OSP_HS_READ_MAX /* mark words per process_vm_readv */
#define HF_BATCH 256 /* moves per OS_EV_MOVES record */

static uint64_t hf_addr[HF_MAX]; /* 0: free (a claim not yet written, or forgotten) */
static uint32_t hf_size[HF_MAX];
static uint32_t hf_n;            /* slots claimed, may pass HF_MAX */
static uint64_t hf_stat[OS_HS_FWD_WORDS];

void osp_hs_fwd_track(uint64_t addr, uint64_t bytes)
{
	uint32_t i;

	if (!osp_hs.fwd_marks || bytes > OS_HS_FWD_MAX_BYTES || !addr)
		return;
	i = __atomic_fetch_add(&hf_n, 1, __ATOMIC_RELAXED);
	if (i >= HF_MAX) {
		__atomic_fetch_add(&hf_stat[OS_HS_FWD_FULL], 1, __ATOMIC_RELAXED);
		return;
	}
	hf_size[i] = (uint32_t)bytes;
	__atomic_store_n(&hf_addr[i], addr, __ATOMIC_RELEASE);
}

static int hf_in_heap(uint64_t a, uint64_t n)
{
	return a >= osp_hs.heap_lo && a < osp_hs.heap_hi && n <= osp_hs.heap_hi - a && !(a & 7);
}

static void hf_write(struct osp_thread *t, uint64_t *w, uint32_t *n, uint64_t gc, uint64_t *flushed)
{
	if (!*n)
		return;
	if (osp_hs_emit(t, OS_EV_MOVES, 0, *n, gc, 0, w, *n * 3) == 0)
		*flushed += *n;
	else
		osp_hs_moves_lost_add(*n);
	*n = 0;
}

/* n (<= OSP_HS_READ_MAX) words at the addresses addr[] of this process into
 * out[]; ok[i] says read. process_vm_readv on itself: a wrong address fails
 * the read instead of faulting. getpid() each time, not cached: a forked
 * child must read its own memory. */
void osp_hs_read_words(const uint64_t *addr, uint32_t n, uint64_t *out, uint8_t *ok)
{
	struct iovec loc[OSP_HS_READ_MAX], rem[OSP_HS_READ_MAX];
	pid_t self = getpid();
	uint32_t done = 0;

	if (n > OSP_HS_READ_MAX)
		n = OSP_HS_READ_MAX;
	for (uint32_t i = 0; i < n; i++) {
		loc[i] = (struct iovec){ &out[i], 8 };
		rem[i] = (struct iovec){ (void *)(uintptr_t)addr[i], 8 };
		ok[i] = 0;
	}
	while (done < n) {
		ssize_t r = process_vm_readv(self, loc + done, n - done, rem + done, n - done, 0);
		uint32_t got = r > 0 ? (uint32_t)(r / 8) : 0;

		for (uint32_t i = 0; i < got; i++)
			ok[done + i] = 1;
		done += got + 1; /* the one after those read failed (or the call did) */
	}
}

void osp_hs_fwd_collect(struct osp_thread *t, uint64_t gc, uint64_t *flushed)
{
	uint64_t w[HF_BATCH * 3], mark[HF_READ];
	uint8_t ok[HF_READ];
	uint32_t n, keep = 0, nw = 0;

	if (!osp_hs.fwd_marks)
		return;
	n = __atomic_load_n(&hf_n, __ATOMIC_ACQUIRE);
	if (n > HF_MAX)
		n = HF_MAX;
	for (uint32_t from = 0; from < n; from += HF_READ) {
		uint32_t k = n - from < HF_READ ? n - from : HF_READ;

		osp_hs_read_words(&hf_addr[from], k, mark, ok);
		for (uint32_t i = 0; i < k; i++) {
			uint64_t src = hf_addr[from + i], size = hf_size[from + i], dst;

			if (!src)
				continue;
			if (!ok[i]) {
				hf_stat[OS_HS_FWD_UNREAD]++;
				continue;
			}
			if ((mark[i] & 3) != 3)
				continue; /* dead, or not collected: forgotten */
			dst = mark[i] & ~(uint64_t)3;
			if (dst != src) {
				if (!hf_in_heap(dst, size)) {
					hf_stat[OS_HS_FWD_UNREAD]++;
					continue;
				}
				w[nw * 3] = src;
				w[nw * 3 + 1] = dst;
				w[nw * 3 + 2] = size | ((osp_hs_move_seq() &
							 ((1ULL << OS_HS_MOVE_SEQ_BITS) - 1))
							<< OS_HS_MOVE_SEQ_SHIFT);
				hf_stat[OS_HS_FWD_MOVED]++;
				if (++nw == HF_BATCH)
					hf_write(t, w, &nw, gc, flushed);
			}
			/* from + i >= keep: the slot is free to take */
			hf_addr[keep] = dst;
			hf_size[keep] = (uint32_t)size;
			keep++;
		}
	}
	hf_write(t, w, &nw, gc, flushed);
	for (uint32_t i = keep; i < n; i++)
		hf_addr[i] = 0;
	__atomic_store_n(&hf_n, keep, __ATOMIC_RELEASE);
}

void osp_hs_fwd_stats(uint64_t out[OS_HS_FWD_WORDS])
{
	for (int i = 0; i < OS_HS_FWD_WORDS; i++)
		out[i] = __atomic_load_n(&hf_stat[i], __ATOMIC_RELAXED);
}
