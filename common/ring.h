/* ring.h - single-producer / single-consumer byte ring inside an os_slot.
 *
 * Producer (target thread, inside hooks): os_ring_reserve() then
 * os_ring_commit(). Lock-free, never blocks, never allocates: when the
 * record does not fit, reserve returns NULL and the caller counts a drop.
 * Records never wrap: if the tail end of the buffer is too short, a PAD
 * record fills it and the record starts at offset 0 (as perf's ring does).
 *
 * Consumer (collector): os_ring_drain_ex() calls `fn` for every complete
 * record and frees the space. Malformed records (a corrupt or foreign writer)
 * stop the drain of that ring and are counted in *bad; the ring is
 * resynchronised to the producer's head. The collector's rings are untrusted
 * memory (attach mode: a file the target's user owns): it drains them through
 * a private copy of each record (os_ring_drain_ex's `copy`).
 */
#ifndef OBJSCOPE_RING_H
#define OBJSCOPE_RING_H

#include <string.h>

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

/* Receives one record. With a private buffer (os_ring_drain_ex) `ev` is
 * the drain's copy, valid until fn returns: its type, nframes and len are
 * the ones checked, and os_event_len(nframes) <= len <= the buffer. */
typedef void (*os_ring_fn)(const struct os_event *ev, void *arg);
/* Called with the data offset and length of consumed bytes before they are
 * given back to the producer (so their pages may be released). */
typedef void (*os_ring_release_fn)(struct os_slot *s, uint64_t off, uint64_t len, void *arg);

/* The longest record a consumer takes: a HotSpot move batch (256 triples,
 * runtimes/hotspot/target/hotspot_moves.c) is the longest a producer writes. */
#define OS_EVENT_MAX_FRAMES 1024u
#define OS_EVENT_MAX_LEN (OS_EVENT_FIXED + OS_EVENT_MAX_FRAMES * 8u)
_Static_assert(OS_MAX_FRAMES <= OS_EVENT_MAX_FRAMES, "an allocation path fits a record");

/* A private copy buffer for os_ring_drain_ex. */
struct os_ring_copy {
	uint64_t w[OS_EVENT_MAX_LEN / 8];
};

static inline uint64_t os_ring_drain_ex(struct os_slot *s, uint64_t ring_bytes, os_ring_fn fn,
					void *arg, uint64_t *bad, os_ring_release_fn release,
					void *release_arg, struct os_ring_copy *copy);

/* Consumes every complete record in place; returns the number of records
 * handed to fn. *bad is incremented by the bytes skipped over malformed
 * records. Only for rings that no one else may write to (the preload's own
 * rings, tests, benches): a ring another user can write goes through
 * os_ring_drain_ex with a private copy. */
static inline uint64_t os_ring_drain(struct os_slot *s, uint64_t ring_bytes, os_ring_fn fn,
				     void *arg, uint64_t *bad)
{
	return os_ring_drain_ex(s, ring_bytes, fn, arg, bad, NULL, NULL, NULL);
}

/* os_ring_drain, and `release` sees the consumed range (split at the end of
 * the buffer) while the producer still cannot reuse it.
 *
 * With `copy`, the ring is untrusted memory (a file the target's user may
 * write at any time, during the drain too): `ring_bytes` is the consumer's
 * own (never read from the ring), head and tail are read once, each record's
 * first word (type, nframes, len) is read once and checked, then the record
 * is copied once into `copy`, and fn sees the copy with that first word:
 * nothing fn reads can change after the check. A record that fails is
 * counted in *bad with the rest of the ring, which is resynchronised. */
static inline uint64_t os_ring_drain_ex(struct os_slot *s, uint64_t ring_bytes, os_ring_fn fn,
					void *arg, uint64_t *bad, os_ring_release_fn release,
					void *release_arg, struct os_ring_copy *copy)
{
	uint64_t tail = atomic_load_explicit(&s->tail, memory_order_relaxed);
	uint64_t head = atomic_load_explicit(&s->head, memory_order_acquire);
	uint64_t start = tail, left = head - tail, mask = ring_bytes - 1;
	uint8_t *data = os_slot_data(s);
	uint64_t n = 0;

	if (left > ring_bytes || (left && (tail & 7))) { /* impossible for a sane producer */
		*bad += left;
		atomic_store_explicit(&s->tail, head, memory_order_release);
		return 0;
	}
	while (left) {
		uint64_t off = tail & mask;
		const uint8_t *at = data + off;
		/* type, nframes and len: one read, what every check below uses */
		uint64_t first = __atomic_load_n((const uint64_t *)at, __ATOMIC_RELAXED);
		struct os_event hdr;
		const struct os_event *ev;
		uint32_t len;

		memcpy(&hdr, &first, sizeof(first));
		len = hdr.len;
		if (len < 8 || (len & 7) || len > ring_bytes - off || len > left ||
		    (hdr.type != OS_EV_PAD &&
		     (len < OS_EVENT_FIXED || os_event_len(hdr.nframes) > len ||
		      (copy && len > sizeof(*copy))))) {
			*bad += left;
			tail = head;
			break;
		}
		if (hdr.type != OS_EV_PAD) {
			if (copy) {
				memcpy(copy->w, at, len);
				copy->w[0] = first;
				ev = (const struct os_event *)copy->w;
			} else {
				ev = (const struct os_event *)at;
			}
			fn(ev, arg);
			n++;
		}
		tail += len;
		left -= len;
	}
	if (release && tail != start) {
		uint64_t off = start & mask, len = tail - start;

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
