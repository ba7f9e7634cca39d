/* record.c - the hot path: build an event and write it into the calling
 * thread's ring; unwind the allocation path with libunwind (local unwinding
 * through .eh_frame, so code without frame pointers gives complete paths).
 * No malloc, no locks, no stdio: proven by tests/nomalloc. */
#define UNW_LOCAL_ONLY
#include <errno.h>
#include <stdbool.h>
#include <libunwind.h>
#include <sys/prctl.h>

#include "common/clock.h"
#include "common/ring.h"
#include "preload/adapter.h"
#include "preload/preload.h"

/* Frames of objscope itself above the allocation site (hook, record). */
#define OSP_SKIP_MAX 8

/* Reserves an event of `nframes` frames and fills the fixed part; NULL when
 * the thread has no slot or the ring is full (both counted). */
static struct os_event *osp_begin(struct osp_thread *t, struct os_slot *s, uint16_t type,
				  uint32_t nframes)
{
	uint32_t len = os_event_len(nframes);
	struct os_event *ev;

	ev = os_ring_reserve(s, osp_hdr->ring_bytes, len);
	if (!ev) {
		osp_stat_add(&s->stats.dropped, 1);
		return NULL;
	}
	ev->type = type;
	ev->nframes = (uint16_t)nframes;
	ev->len = len;
	ev->pid = t->pid;
	ev->tid = t->tid;
	ev->time = os_now_ns();
	return ev;
}

static void osp_finish(struct os_slot *s, struct os_event *ev)
{
	os_ring_commit(s, ev);
	osp_stat_add(&s->stats.events, 1);
}

static struct os_slot *osp_slot_or_count(struct osp_thread *t)
{
	struct os_slot *s = osp_slot(t);

	if (osp_unlikely(!s))
		__atomic_fetch_add((uint64_t *)&osp_hdr->no_slot_events, 1, __ATOMIC_RELAXED);
	return s;
}

/* Writes an event with frames[0..n) as its path: 0, or -ENOSPC when the
 * ring is full (counted). */
static int osp_write_path(struct osp_thread *t, struct os_slot *s, uint16_t type, uint64_t addr,
			  uint64_t size, uint64_t aux, uint64_t aux2, const uint64_t *frames,
			  uint32_t n)
{
	struct os_event *ev = osp_begin(t, s, type, n);

	if (!ev)
		return -ENOSPC;
	ev->addr = addr;
	ev->size = size;
	ev->aux = aux;
	ev->aux2 = aux2;
	for (uint32_t i = 0; i < n; i++)
		ev->frames[i] = frames[i];
	osp_finish(s, ev);
	if (type == OS_EV_ALLOC || type == OS_EV_REALLOC || type == OS_EV_JALLOC)
		osp_rep_alloc(t, addr, size, frames, n); /* a pending replica comparison */
	return 0;
}

int osp_record_words(struct osp_thread *t, uint16_t type, uint64_t addr, uint64_t size,
		     uint64_t aux, uint64_t aux2, const uint64_t *words, uint32_t n)
{
	struct os_slot *s = osp_slot_or_count(t);

	if (!s)
		return -ENOSPC;
	return osp_write_path(t, s, type, addr, size, aux, aux2, words, n);
}

void osp_record_path(struct osp_thread *t, uint16_t type, uint64_t addr, uint64_t size,
		     uint64_t aux, uint64_t aux2, const void *caller)
{
	void *pcs[OS_MAX_FRAMES + OSP_SKIP_MAX];
	uint64_t frames[OS_MAX_FRAMES];
	struct os_slot *s = osp_slot_or_count(t);
	int n, skip = 0, count;

	if (!s)
		return;
	/* a JIT compiler thread (the collector said so, for this claim of the
	 * slot): its blocks are tracked without a path, no stack walked */
	{
		uint32_t q = atomic_load_explicit(&s->quiet, memory_order_relaxed);

		if (osp_unlikely(q != 0) && q == s->generation) {
			frames[0] = OS_QUIET_WORD;
			osp_write_path(t, s, type, addr, size, aux, aux2, frames, 1);
			return;
		}
	}
	if (__atomic_load_n(&osp_path_jit, __ATOMIC_ACQUIRE)) { /* a JIT runs here (adapter.h) */
		int truncated = 0;

		n = osp_path_jit(frames, OS_MAX_FRAMES, caller, &truncated);
		if (truncated)
			osp_stat_add(&s->stats.truncated, 1);
		osp_write_path(t, s, type, addr, size, aux, aux2, frames, (uint32_t)n);
		return;
	}
	n = unw_backtrace(pcs, (int)(sizeof(pcs) / sizeof(pcs[0])));
	while (skip < n && skip < OSP_SKIP_MAX && pcs[skip] != caller)
		skip++;
	if (skip == n || skip == OSP_SKIP_MAX)
		skip = 0; /* the hook's return address was not found: keep all */
	count = n - skip;
	if (count > OS_MAX_FRAMES || n == (int)(sizeof(pcs) / sizeof(pcs[0]))) {
		osp_stat_add(&s->stats.truncated, 1);
		if (count > OS_MAX_FRAMES)
			count = OS_MAX_FRAMES;
	}
	if (count < 0)
		count = 0;
	for (int i = 0; i < count; i++)
		frames[i] = (uint64_t)(uintptr_t)pcs[skip + i];
	osp_write_path(t, s, type, addr, size, aux, aux2, frames, (uint32_t)count);
}

void osp_record_plain(struct osp_thread *t, uint16_t type, uint64_t addr, uint64_t size,
		      uint64_t aux, uint64_t aux2)
{
	osp_record_words(t, type, addr, size, aux, aux2, NULL, 0);
}

void osp_record_thread(struct osp_thread *t, struct os_slot *s)
{
	char name[16] = { 0 };
	struct os_event *ev;
	uint32_t len = 0;

	prctl(PR_GET_NAME, name, 0, 0, 0);
	while (len < sizeof(name) - 1 && name[len])
		len++;
	ev = osp_begin(t, s, OS_EV_THREAD, (len + 7) / 8);
	if (!ev)
		return;
	ev->addr = 0;
	ev->size = len;
	ev->aux = 0;
	ev->aux2 = 0;
	for (uint32_t i = 0; i < (len + 7) / 8; i++) {
		uint64_t w = 0;

		for (uint32_t b = 0; b < 8 && i * 8 + b < len; b++)
			w |= (uint64_t)(uint8_t)name[i * 8 + b] << (8 * b);
		ev->frames[i] = w;
	}
	osp_finish(s, ev);
}

/* Byte-sampled small blocks alive (docs/NATIVE.md): a lock-free table of
 * their addresses, so that their free is reported; every other small free
 * costs one bit test (osp_small_bits), and a probe of a 64-byte bucket
 * only when the bit says the bucket holds a block. */
#define OSP_SMALL_WAYS 8
#define OSP_SMALL_BUCKETS (1u << OSP_SMALL_BUCKET_BITS) /* 65536 blocks alive (512 KiB) */
#define OSP_SMALL_TOMB 1ULL

static _Alignas(64) _Atomic uint64_t osp_small_tab[OSP_SMALL_BUCKETS][OSP_SMALL_WAYS];
_Atomic uint64_t osp_small_live;

/* bit b: bucket b may hold a block (1 KiB, stays in the L1 cache: a free
 * looks at its bucket only when its bit is set) */
_Alignas(64) _Atomic uint64_t osp_small_bits[OSP_SMALL_BUCKETS / 64];

static inline _Atomic uint64_t *osp_small_bucket(uint64_t p)
{
	return osp_small_tab[osp_small_index(p)];
}

/* 1 when bucket b holds a block. */
static int osp_small_any(_Atomic uint64_t *b)
{
	for (int i = 0; i < OSP_SMALL_WAYS; i++) {
		uint64_t v = __atomic_load_n((uint64_t *)&b[i], __ATOMIC_SEQ_CST);

		if (v != 0 && v != OSP_SMALL_TOMB)
			return 1;
	}
	return 0;
}

int osp_small_keep(uint64_t p)
{
	_Atomic uint64_t *b = osp_small_bucket(p);

	for (int i = 0; i < OSP_SMALL_WAYS; i++) {
		uint64_t v = __atomic_load_n((uint64_t *)&b[i], __ATOMIC_RELAXED);

		if ((v == 0 || v == OSP_SMALL_TOMB) &&
		    __atomic_compare_exchange_n((uint64_t *)&b[i], &v, p, false, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED)) {
			__atomic_add_fetch((uint64_t *)&osp_small_live, 1, __ATOMIC_RELAXED);
			/* after the slot: a forget that clears the bit rescans */
			__atomic_fetch_or((uint64_t *)&osp_small_bits[osp_small_index(p) / 64],
					  1ULL << (osp_small_index(p) % 64), __ATOMIC_SEQ_CST);
			return 1;
		}
	}
	return 0;
}

int osp_small_forget(uint64_t p)
{
	_Atomic uint64_t *b;

	uint32_t bi = osp_small_index(p);
	uint64_t bit = 1ULL << (bi % 64);

	if (osp_likely(__atomic_load_n((uint64_t *)&osp_small_live, __ATOMIC_RELAXED) == 0) ||
	    osp_likely(!(__atomic_load_n((uint64_t *)&osp_small_bits[bi / 64], __ATOMIC_RELAXED) &
			 bit)))
		return 0;
	b = osp_small_tab[bi];
	for (int i = 0; i < OSP_SMALL_WAYS; i++) {
		uint64_t v = p;

		if (__atomic_load_n((uint64_t *)&b[i], __ATOMIC_RELAXED) == p &&
		    __atomic_compare_exchange_n((uint64_t *)&b[i], &v, OSP_SMALL_TOMB, false,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
			__atomic_sub_fetch((uint64_t *)&osp_small_live, 1, __ATOMIC_RELAXED);
			/* the bucket's last block: clear its bit, and set it again
			 * when a keep raced in (keeps set the bit after the slot) */
			if (!osp_small_any(b)) {
				__atomic_fetch_and((uint64_t *)&osp_small_bits[bi / 64], ~bit,
						   __ATOMIC_SEQ_CST);
				if (osp_small_any(b))
					__atomic_fetch_or((uint64_t *)&osp_small_bits[bi / 64], bit,
							  __ATOMIC_SEQ_CST);
			}
			return 1;
		}
	}
	return 0;
}

void osp_note_alloc(struct osp_thread *t, uint16_t type, void *p, size_t size, void *old,
		    const void *caller)
{
	struct os_slot *s;
	uint64_t mean = osp_hdr->small_sample;

	if (size >= osp_exact_min) {
		osp_record_path(t, type, (uint64_t)(uintptr_t)p, size, (uint64_t)(uintptr_t)old,
				0, caller);
		s = t->slot;
		if (s) {
			osp_stat_add(&s->stats.tracked_allocs, 1);
			osp_stat_add(&s->stats.tracked_bytes, size);
		}
		return;
	}
	if (old) /* a tracked or sampled block reallocated into one not taken */
		osp_record_plain(t, OS_EV_FREE, (uint64_t)(uintptr_t)old, 0, 0, 0);
	/* a block picked by the byte sampling (hooks_malloc.c osp_count_small),
	 * or one of at least the mean interval: always taken, weight 1 */
	if (t->small_pick || (mean && size >= mean)) {
		int big = mean && size >= mean;

		t->small_pick = 0;
		if (mean && osp_small_keep((uint64_t)(uintptr_t)p)) {
			osp_record_path(t, type == OS_EV_REALLOC ? OS_EV_ALLOC : type,
					(uint64_t)(uintptr_t)p, size, 0,
					big ? 0 : OS_SMALL_TAG | OS_SMALL_MEAN(mean), caller);
			s = t->slot;
			if (s) {
				osp_stat_add(big ? &s->stats.tracked_allocs : &s->stats.small_allocs,
					     1);
				osp_stat_add(big ? &s->stats.tracked_bytes : &s->stats.small_bytes,
					     size);
			}
			return;
		}
		if (mean)
			__atomic_fetch_add((uint64_t *)&osp_hdr->sample_table_full, 1,
					   __ATOMIC_RELAXED);
	}
	s = osp_slot(t);
	if (s) {
		osp_stat_add(&s->stats.small_allocs, 1);
		osp_stat_add(&s->stats.small_bytes, size);
	}
}
