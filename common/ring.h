/* ring.h - single-producer / single-consumer byte ring inside an os_slot.
 *
 * Producer (target thread, inside hooks): os_ring_reserve() then
 * os_ring_commit(). Lock-free, never blocks, never allocates: when the
 * record does not fit, reserve returns NULL and the caller counts a drop.
 * Records never wrap: if the tail end of the buffer is too short, a PAD
 * record fills it and the record starts at offset 0 (as perf's ring does).
 *
 * Consumer (collector): os_ring_drain() calls `fn` for every complete record
 * and frees the space. Malformed records (a corrupt or foreign writer) stop
 * the drain of that ring and are counted in *bad; the ring is resynchronised
 * to the producer's head.
 */
#ifndef OBJSCOPE_RING_H
#define OBJSCOPE_RING_H

#include "shm.h"

#define OS_RING_ALIGN 8u

static inline uint32_t os_event_len(uint32_t nframes)
{
	uint32_t len = OS_EVENT_FIXED + nframes * 8u;
	return (len + OS_RING_ALIGN - 1) & ~(OS_RING_ALIGN - 1);
}

/* Returns where to write `len` bytes (8-aligned, <= ring_bytes/2), or NULL
 * when the ring is full. Only the thread owning the slot may call this. */
static inline struct os_event *os_ring_reserve(struct os_slot *s, uint64_t ring_bytes, uint32_t len)
{
	uint64_t head = atomic_load_explicit(&s->head, memory_order_relaxed);
	uint64_t tail = atomic_load_explicit(&s->tail, memory_order_acquire);
	uint64_t off = head & (ring_bytes - 1);
	uint64_t contig = ring_bytes - off;
	uint64_t need = contig < len ? contig + len : len;
	uint8_t *data = os_slot_data(s);

	if (len > ring_bytes / 2 || head + need - tail > ring_bytes)
		return NULL;
	if (contig < len) {
		struct os_event *pad = (struct os_event *)(data + off);
		pad->type = OS_EV_PAD;
		pad->nframes = 0;
		pad->len = (uint32_t)contig;
		atomic_store_explicit(&s->head, head + contig, memory_order_release);
		off = 0;
	}
	return (struct os_event *)(data + off);
}

/* Publishes the record returned by the last reserve. */
static inline void os_ring_commit(struct os_slot *s, struct os_event *ev)
{
	uint64_t head = atomic_load_explicit(&s->head, memory_order_relaxed);
	atomic_store_explicit(&s->head, head + ev->len, memory_order_release);
}

typedef void (*os_ring_fn)(const struct os_event *ev, void *arg);
/* Called with the data offset and length of consumed bytes before they are
 * given back to the producer (so their pages may be released). */
typedef void (*os_ring_release_fn)(struct os_slot *s, uint64_t off, uint64_t len, void *arg);

static inline uint64_t os_ring_drain_ex(struct os_slot *s, uint64_t ring_bytes, os_ring_fn fn,
					void *arg, uint64_t *bad, os_ring_release_fn release,
					void *release_arg);

/* Consumes every complete record; returns the number of records handed to
 * fn. *bad is incremented by the bytes skipped over malformed records. */
static inline uint64_t os_ring_drain(struct os_slot *s, uint64_t ring_bytes, os_ring_fn fn,
				     void *arg, uint64_t *bad)
{
	return os_ring_drain_ex(s, ring_bytes, fn, arg, bad, NULL, NULL);
}

/* os_ring_drain, and `release` sees the consumed range (split at the end of
 * the buffer) while the producer still cannot reuse it. */
static inline uint64_t os_ring_drain_ex(struct os_slot *s, uint64_t ring_bytes, os_ring_fn fn,
					void *arg, uint64_t *bad, os_ring_release_fn release,
					void *release_arg)
{
	uint64_t start = atomic_load_explicit(&s->tail, memory_order_relaxed);
	uint64_t tail = atomic_load_explicit(&s->tail, memory_order_relaxed);
	uint64_t head = atomic_load_explicit(&s->head, memory_order_acquire);
	uint8_t *data = os_slot_data(s);
	uint64_t n = 0;

	if (head - tail > ring_bytes) { /* impossible for a sane producer */
		*bad += head - tail;
		atomic_store_explicit(&s->tail, head, memory_order_release);
		return 0;
	}
	while (tail < head) {
		uint64_t off = tail & (ring_bytes - 1);
		const struct os_event *ev = (const struct os_event *)(data + off);
		uint32_t len = ev->len;

		if (len < 8 || (len & 7) || len > ring_bytes - off || len > head - tail ||
		    (ev->type != OS_EV_PAD &&
		     (len < OS_EVENT_FIXED || os_event_len(ev->nframes) > len))) {
			*bad += head - tail;
			tail = head;
			break;
		}
		if (ev->type != OS_EV_PAD) {
			fn(ev, arg);
			n++;
		}
		tail += len;
	}
	if (release && tail > start) {
		uint64_t off = start & (ring_bytes - 1), len = tail - start;

		if (len > ring_bytes)
			len = ring_bytes;
		if (off + len > ring_bytes) {
			release(s, off, ring_bytes - off, release_arg);
			release(s, 0, off + len - ring_bytes, release_arg);
		} else {
			release(s, off, len, release_arg);
		}
	}
	atomic_store_explicit(&s->tail, tail, memory_order_release);
	return n;
}

#endif
