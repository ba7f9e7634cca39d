/* shm.h - the memory shared between the preload library (inside the target)
 * and the collector: a header, then a pool of per-thread single-producer /
 * single-consumer rings carrying variable-length, 8-byte aligned events.
 *
 * One shared-memory file serves a whole process tree (record mode passes its
 * path in OBJSCOPE_SHM; children and exec'd programs map it by path). Each
 * target thread claims one ring slot with a CAS on the slot state; the
 * collector drains rings and recycles the slots of threads that exited.
 *
 * Everything here is plain data plus static inline helpers usable inside the
 * target: no malloc, no locks, no stdio, async-signal-safe.
 */
#ifndef OBJSCOPE_SHM_H
#define OBJSCOPE_SHM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OS_SHM_MAGIC 0x314d48534a424f53ULL /* "SOBJSHM1" little endian */
#define OS_SHM_VERSION 7 /* 2: slots_hwm, 3: rep[], 4: rep_hash[], 5: small_sample,
			   * 6: os_slot.quiet, 7: stats.small_outside_tlab */
#define OS_SHM_ENV "OBJSCOPE_SHM"           /* path of the shm file */
#define OS_MAX_FRAMES 128                    /* frames per allocation path */
#define OS_DEFAULT_SLOTS 512
#define OS_DEFAULT_RING_BYTES (2u << 20)     /* per thread, power of two: a burst of ~10k
                                              * Java allocation events fits */

/* Event types written by the preload library. */
enum os_ev_type {
	OS_EV_PAD = 0,      /* filler up to the end of the ring buffer: skip */
	OS_EV_ALLOC = 1,    /* addr,size: a tracked object was born; frames = alloc path */
	OS_EV_FREE = 2,     /* addr: a tracked (or untracked) block was freed */
	OS_EV_REALLOC = 3,  /* aux=old addr, addr,size: old is gone, new is born (frames) */
	OS_EV_MMAP = 4,     /* addr,size, aux=prot|flags<<32 : anonymous mapping (frames) */
	OS_EV_MUNMAP = 5,   /* addr,size: range unmapped (objects inside die) */
	OS_EV_MREMAP = 6,   /* aux=old addr, addr,size, aux2=old size */
	OS_EV_MOVE = 7,     /* aux=src, addr=dst, size: an object move (runtime adapter) */
	OS_EV_GC_BEGIN = 8, /* aux = collection number if known (HotSpot: _total_collections,
			     * aux2 = the adapter's own sequence number, same in BEGIN/END),
			     * size = the header's gc_begun this begin raised (0: none) */
	OS_EV_GC_END = 9,   /* HotSpot: as BEGIN; size = moves flushed at this end,
			     * addr = moves not delivered so far (cumulative) */
	OS_EV_THREAD = 10,  /* a thread claimed this ring; name in frames as bytes */
	/* Runtime adapters (HotSpot: runtimes/hotspot/target/ -> runtimes/hotspot/) */
	OS_EV_JALLOC = 11,  /* Java object: addr = oop, size = bytes, aux = TLAB bytes of the
			     * refill that exposed it (0: allocated outside a TLAB),
			     * aux2 = Klass*; frames = allocation path (OS_FRAME_METHOD) */
	OS_EV_MOVES = 12,   /* a batch of GC object moves: the frames area holds
			     * nframes/3 triples (src, dst, bytes | seq << 40 — see
			     * OS_HS_MOVE_SEQ_* in hotspot_abi.h); size = triples;
			     * aux = GC sequence number (GC_BEGIN's aux2) */
	OS_EV_JVM = 13,     /* the JVM is up: addr/size = reserved Java heap,
			     * aux = libjvm load base, aux2 = OS_JVM_F_* flags (hotspot_abi.h);
			     * frames = struct os_jvm_info (hotspot_abi.h),
			     * nframes = OS_JVM_INFO_WORDS */
	OS_EV_TYPE_MAX
};

/* One event. `nframes` return addresses follow the fixed part; the whole
 * record is `len` bytes (8-aligned). Frames are leaf first: frames[0] is the
 * caller of the hooked function (the allocation site). */
struct os_event {
	uint16_t type;
	uint16_t nframes;
	uint32_t len;      /* bytes of this record including frames */
	uint32_t pid;
	uint32_t tid;
	uint64_t time;     /* CLOCK_MONOTONIC ns (perf uses the same clock) */
	uint64_t addr;
	uint64_t size;
	uint64_t aux;
	uint64_t aux2;     /* adapter specific: type (Klass*), old size, ...;
			    * OS_EV_ALLOC of the malloc hooks: 0, or OS_SMALL_TAG |
			    * mean bytes for a block below min_size sampled by bytes */
	uint64_t frames[];
};
#define OS_EVENT_FIXED ((uint32_t)sizeof(struct os_event))
/* A byte-sampled small block (aux2 of OS_EV_ALLOC): the tag in bits 48-63,
 * the mean sampling interval in bytes below; its probability of being
 * sampled was 1 - exp(-size / mean). */
#define OS_SMALL_TAG 0x5a11000000000000ULL
#define OS_SMALL_MEAN(aux2) ((aux2) & 0x0000ffffffffffffULL)
#define OS_IS_SMALL(aux2) (((aux2) & 0xffff000000000000ULL) == OS_SMALL_TAG)

/* A frame word with this bit set is an interpreted Java frame: the low 48
 * bits are its Method* (read from the interpreter frame), not a pc. User
 * addresses never have it set. */
#define OS_FRAME_METHOD 0x8000000000000000ULL
/* Bits 48-61 of a method word say where in the method it stands (bit 62
 * tags class words, runtimes/hotspot/hotspot.h). In the collector's words: the
 * source line (1..OS_FRAME_LINE_MAX; 0 unknown). In the preload's
 * allocation paths, which cannot read the method: OS_FRAME_BCP_KNOWN | the
 * interpreted frame's bytecode pointer & OS_FRAME_BCP_LOW (0: not known);
 * the collector turns those into lines before the path is kept. */
#define OS_FRAME_POS_SHIFT 48
#define OS_FRAME_POS_MASK (0x3fffULL << OS_FRAME_POS_SHIFT)
#define OS_FRAME_LINE_MAX 0x3fffu
#define OS_FRAME_BCP_KNOWN 0x2000u
#define OS_FRAME_BCP_LOW 0x1fffu
#define OS_FRAME_IS_METHOD(w) (((w) >> 62) == 2)

enum os_slot_state {
	OS_SLOT_FREE = 0,     /* nobody owns it */
	OS_SLOT_ACTIVE = 1,   /* a live thread writes to it */
	OS_SLOT_EXITED = 2,   /* its thread ended; collector drains then frees */
};

/* Per-thread counters live in the slot so the collector can read them even
 * after the thread is gone. Producer-only writes (relaxed atomics). */
struct os_slot_stats {
	_Atomic uint64_t events;        /* events written */
	_Atomic uint64_t dropped;       /* events dropped: ring full */
	_Atomic uint64_t small_allocs;  /* allocations below min_size: counted, not tracked */
	_Atomic uint64_t small_bytes;
	_Atomic uint64_t tracked_allocs;
	_Atomic uint64_t tracked_bytes;
	_Atomic uint64_t reentered;     /* hook calls passed through by the recursion guard */
	_Atomic uint64_t truncated;     /* alloc paths cut at OS_MAX_FRAMES */
	/* time inside the recording hooks (between osp_enter and osp_leave:
	 * stack walks, ring writes; the pass-through of blocks below
	 * min_size is not counted), in os_ticks() units, and their number */
	_Atomic uint64_t hook_ticks;
	_Atomic uint64_t hook_calls;
	/* rare heavy hooks (GC end, JVM start: osp_enter_heavy) in the
	 * thread's CPU clock, ns; and the light hooks whose TSC time passed
	 * OS_HOOK_CLIP_TICKS (preempted inside: counted at the clip) */
	_Atomic uint64_t hook_cpu_ns;
	_Atomic uint64_t hook_clipped;
	/* of small_allocs, HotSpot's hybrid mode: made outside any TLAB, so
	 * never sampled by the TLAB refills (near 0 expected: every object
	 * that does not fit makes a new TLAB; runtimes/hotspot/hs_tlab.h) */
	_Atomic uint64_t small_outside_tlab;
};
/* A light hook takes a few µs at most: a longer TSC interval was a
 * preemption (or an interrupt) inside it, whose wall time is not the hook's
 * cost; it is counted as this many ticks (~20-40 µs at 2.5-5 GHz). */
#define OS_HOOK_CLIP_TICKS 100000u

/* A cheap clock for the hooks' own time: the TSC on x86-64 (no syscall, no
 * vDSO page), CLOCK_MONOTONIC ns elsewhere; the collector converts with
 * the rate it sees over its run (attacher/core/overhead.c). */
#if defined(__x86_64__)
static inline uint64_t os_ticks(void)
{
	return __builtin_ia32_rdtsc();
}
#define OS_TICKS_ARE_NS 0
#else
#include <time.h>
static inline uint64_t os_ticks(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}
#define OS_TICKS_ARE_NS 1
#endif

/* Ring slot header; the data area follows at offset OS_SLOT_HDR. */
struct os_slot {
	_Atomic uint64_t head;          /* bytes produced (monotonic), producer writes */
	uint8_t pad0[56];
	_Atomic uint64_t tail;          /* bytes consumed (monotonic), consumer writes */
	uint8_t pad1[56];
	_Atomic uint32_t state;         /* enum os_slot_state */
	uint32_t pid;
	uint32_t tid;
	uint32_t generation;            /* bumped each time the slot is claimed */
	struct os_slot_stats stats;
	/* the collector: "this thread's tracked blocks without allocation
	 * paths" (a JIT compiler thread: its blocks are the compiler's own,
	 * never attributed), valid for the claim whose generation it holds
	 * (0: none; a slot claimed again does not inherit it). The hooks then
	 * send the path OS_QUIET_WORD instead of walking the stack. */
	_Atomic uint32_t quiet;
	uint8_t pad2[256 - 128 - 16 - sizeof(struct os_slot_stats) - 4];
};
/* The one-word allocation path of a quiet thread's blocks (os_slot.quiet). */
#define OS_QUIET_WORD 0xfffc000000000000ULL
/* Whether an event's path is that word. */
static inline bool os_quiet_path(const uint64_t *frames, uint32_t nframes)
{
	return nframes == 1 && frames[0] == OS_QUIET_WORD;
}
#define OS_SLOT_HDR 256
_Static_assert(sizeof(struct os_slot) == OS_SLOT_HDR, "slot header size");

/* Flags in os_shm_header.flags (set by the collector before launch). */
#define OS_SHM_F_TRACK_MMAP  0x1  /* report anonymous mmaps as objects */
#define OS_SHM_F_MOVES       0x2  /* a runtime adapter wants memcpy/memmove moves */
#define OS_SHM_F_RT_GENERIC  0x4  /* --runtime generic: runtime-specific in-target sides
				   * stay off (runtimes/generic/) */
#define OS_SHM_F_REPLICAS    0x8  /* --replicas (record, attach): the allocation hooks arm pending
				   * replica comparisons (rep[], preload/replica.c) */

/* In-target replica comparisons (docs/REPLICAS.md, "Routes"): the collector
 * publishes "an object of allocation site `key` in process `pid`: watch
 * offset `off` (`width` bytes)" in a free entry; the allocation hook of the
 * next object of that site claims it and arms a breakpoint on its own
 * thread (preload/replica.c); the hit writes the value seen into the entry;
 * the collector compares it with the value it remembered (never published:
 * the target needs none) and frees the entry.
 *
 * `sg` = generation << 8 | state, changed by CAS only, so that a late
 * writer of an entry since reused fails. Who moves which state:
 *   FREE -> PENDING            collector (fields written before, release)
 *   PENDING -> CLAIMED         target, allocation hook (then ARMED or FAILED)
 *   PENDING -> FREE            collector: withdrawn (no object of the site came)
 *   ARMED -> HITTING -> HIT    target, signal handler of the hit
 *   ARMED -> DEAD              target: object freed (free hook), collection
 *                              began (HotSpot hook); collector: expired
 *   HIT, DEAD, FAILED -> FREE  collector, after reading the entry (new generation)
 * `alive` stays 1 from ARMED until the object dies (free hook, collection),
 * also after the hit: the collector reads the object's content after the
 * hit and trusts it only if `alive` is still 1 after the read. */
enum os_rep_state {
	OS_REP_FREE = 0, OS_REP_PENDING, OS_REP_CLAIMED, OS_REP_ARMED, OS_REP_HITTING,
	OS_REP_HIT, OS_REP_DEAD, OS_REP_FAILED,
};
#define OS_REP_SLOTS 32
#define OS_REP_PER_THREAD 2  /* breakpoints a target thread arms itself (of x86's 4) */
#define OS_REP_SG(gen, st) ((uint64_t)(gen) << 8 | (st))
#define OS_REP_ST(sg) ((unsigned)((sg) & 0xff))

struct os_rep_entry {
	_Atomic uint64_t sg;    /* generation << 8 | enum os_rep_state */
	uint64_t key;           /* allocation site: os_rep_site_key of its path */
	uint32_t pid;           /* process of the site */
	uint32_t off;           /* offset in the object */
	uint8_t width;          /* 1, 2, 4, 8 */
	uint8_t pad0;
	int16_t err;            /* target: FAILED: -errno of the arm */
	uint32_t tid;           /* target: thread that armed it */
	uint64_t obj;           /* target: the object armed on */
	uint64_t value;         /* target: the value seen at the hit (width bytes) */
	uint64_t time;          /* target: arm time, then hit time (CLOCK_MONOTONIC) */
	uint32_t size;          /* target: its size (UINT32_MAX: that or more) */
	_Atomic uint32_t alive; /* target: 1 while the armed object lives */
};
_Static_assert(sizeof(struct os_rep_entry) == 64, "one cache line");

/* Hash of an object's content (the exact figure, docs/REPLICAS.md): the
 * same function in the collector and in the target's free hook. Never
 * 0 or UINT64_MAX. */
static inline uint64_t os_rep_content_hash(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ n, w;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		__builtin_memcpy(&w, p + i, 8);
		w += i;
		w ^= w >> 33;
		w *= 0xff51afd7ed558ccdULL;
		w ^= w >> 33;
		w *= 0xc4ceb9fe1a85ec53ULL;
		w ^= w >> 33;
		h = (h ^ w) * 0x100000001b3ULL;
		h ^= h >> 29;
	}
	for (; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h == UINT64_MAX || h == 0 ? h - 2 : h;
}

static inline int os_rep_filter_has(const _Atomic uint64_t *f, uint64_t key)
{
	unsigned b = (unsigned)(key >> 56);

	return (int)((atomic_load_explicit(&f[b >> 6], memory_order_acquire) >> (b & 63)) & 1);
}

/* Allocation-site key of a path (frames as written in the event): the same
 * function in the target and in the collector. */
static inline uint64_t os_rep_site_key(const uint64_t *frames, uint32_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ n;

	for (uint32_t i = 0; i < n && i < 32; i++) {
		h = (h ^ frames[i]) * 0x100000001b3ULL;
		h ^= h >> 31;
	}
	return h | 1; /* never 0 */
}

struct os_shm_header {
	uint64_t magic;
	uint32_t version;
	uint32_t nslots;
	uint64_t ring_bytes;            /* data bytes per slot, power of two */
	uint64_t total_bytes;           /* size of the whole mapping */
	uint64_t min_size;              /* smallest allocation tracked */
	uint32_t flags;
	_Atomic uint32_t disarmed;      /* 1: hooks must pass through (detach, collector gone) */
	_Atomic uint64_t no_slot_events;/* events lost because no slot was free */
	_Atomic uint32_t processes;     /* processes that mapped this shm */
	uint32_t collector_pid;
	/* High-water mark: no slot at index >= slots_hwm was ever claimed, so
	 * the collector drains only [0, slots_hwm). Raised (never lowered) by
	 * whoever makes a slot ACTIVE, before its first event: os_shm_note_slot */
	_Atomic uint32_t slots_hwm;
	/* entries of rep[] not FREE (collector's count): the allocation hooks
	 * look at rep[] only when it is not 0 */
	_Atomic uint32_t rep_live;
	/* bit (key >> 56) set for the key of every PENDING entry (collector;
	 * stale bits only cost a look): an allocation hook whose site's bit is
	 * clear does not look at rep[] (os_rep_filter_has) */
	_Atomic uint64_t rep_filter[4];
	/* --small-sample BYTES: mean bytes between two sampled allocations
	 * below min_size (exponential intervals, docs/NATIVE.md); 0: off */
	uint64_t small_sample;
	/* Collections of every JVM mapping this shm (runtimes/hotspot/target):
	 * gc_begun is raised before a collection moves anything (and carried
	 * by its GC_BEGIN event, in `size`), gc_ended after it ended. The
	 * collector reads an object late only while they are equal and every
	 * begin is drained (attacher/analyses/replica_collector.c). 0: none,
	 * or a library that does not count them. */
	_Atomic uint32_t gc_begun;
	_Atomic uint32_t gc_ended;
	/* Focus (runtimes/hotspot/hotspot_abi.h OS_HS_FOCUS_BIT): the Klass*
	 * whose objects a JVM's hybrid TLABs should expose more (collector
	 * writes, hooks read); 0: none */
	_Atomic uint64_t hs_focus_klass;
	struct os_rep_entry rep[OS_REP_SLOTS];
	/* rep_hash[i]: os_rep_content_hash of rep[i]'s object, taken by the
	 * target's free hook when a HIT object dies before the collector read
	 * it (written before `alive` drops to 0; 0: none). The collector clears
	 * it when it frees the entry. */
	_Atomic uint64_t rep_hash[OS_REP_SLOTS];
	uint8_t pad[4096 - 128 - OS_REP_SLOTS * 64 - OS_REP_SLOTS * 8];
};
_Static_assert(sizeof(struct os_shm_header) == 4096, "shm header is one page");
#define OS_SHM_HDR 4096

static inline size_t os_shm_size(uint32_t nslots, uint64_t ring_bytes)
{
	return OS_SHM_HDR + (size_t)nslots * (OS_SLOT_HDR + ring_bytes);
}

static inline struct os_slot *os_shm_slot(struct os_shm_header *h, uint32_t i)
{
	return (struct os_slot *)((uint8_t *)h + OS_SHM_HDR +
				  (size_t)i * (OS_SLOT_HDR + h->ring_bytes));
}

/* Raises h->slots_hwm to idx + 1 (atomic max: lock-free, allocation-free,
 * async-signal-safe; shared by every process mapping h). */
static inline void os_shm_note_slot(struct os_shm_header *h, uint32_t idx)
{
	uint32_t want = idx + 1;
	uint32_t cur = atomic_load_explicit(&h->slots_hwm, memory_order_relaxed);

	while (cur < want && !atomic_compare_exchange_weak_explicit(&h->slots_hwm, &cur, want,
								    memory_order_release,
								    memory_order_relaxed))
		;
}

/* Slots the collector must visit: min(slots_hwm, nslots). */
static inline uint32_t os_shm_slots_used(struct os_shm_header *h)
{
	uint32_t n = atomic_load_explicit(&h->slots_hwm, memory_order_acquire);

	return n < h->nslots ? n : h->nslots;
}

static inline uint8_t *os_slot_data(struct os_slot *s)
{
	return (uint8_t *)s + OS_SLOT_HDR;
}

#endif
