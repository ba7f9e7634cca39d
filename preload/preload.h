/* preload.h - internal interface of libobjscope.so (runs inside the target).
 *
 * Everything declared here is hidden (-fvisibility=hidden); only the hooks in
 * hooks_*.c are exported. Nothing reachable from a hook may call malloc, take
 * a blocking lock or use stdio once the library is armed (see
 * tests/nomalloc/test_nomalloc.c, which proves it for the recording path).
 *
 * Files:
 *   init.c      constructor, shm mapping, resolution of the real functions
 *   fallback.c  static bump arena and byte copies used before resolution
 *   thread.c    per-thread state: recursion guard, slot claim, exit, fork
 *   record.c    building and writing events, call-path unwinding (hot path)
 *   hooks_*.c   the exported interposers
 *   attach.c    objscope_attach()/objscope_detach(), called by `objscope attach`
 *   got.c       import-table (GOT) patching for attach mode
 */
#ifndef OBJSCOPE_PRELOAD_H
#define OBJSCOPE_PRELOAD_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/shm.h"

#define osp_likely(x) __builtin_expect(!!(x), 1)
#define osp_unlikely(x) __builtin_expect(!!(x), 0)
#define OSP_TLS __thread __attribute__((tls_model("initial-exec")))

/* ---- init.c ------------------------------------------------------------ */

/* The real functions, resolved with dlsym(RTLD_NEXT) at start-up. NULL until
 * resolved, except memcpy/memmove which start as the fallback copies. */
struct osp_real {
	void *(*malloc)(size_t);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void (*free)(void *);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	void *(*mmap)(void *, size_t, int, int, int, off_t);
	void *(*mmap64)(void *, size_t, int, int, int, off_t);
	int (*munmap)(void *, size_t);
	void *(*mremap)(void *, size_t, size_t, int, ...);
	void *(*memcpy)(void *, const void *, size_t);
	void *(*memmove)(void *, const void *, size_t);
	int (*getattr)(pthread_t, pthread_attr_t *); /* pthread_getattr_np (hooks_thread.c) */
};
extern struct osp_real osp_real;

/* The shared memory when armed, NULL when inert. */
extern struct os_shm_header *osp_hdr;

/* OS_SHM_F_MOVES when armed with moves wanted, else 0: the only thing the
 * memcpy/memmove fast path reads. */
extern uint32_t osp_move_flags;

/* The smallest malloc block tracked exactly (every one of them): the
 * header's min_size with --native-objects exact (OS_SHM_F_NATIVE_EXACT),
 * else UINT64_MAX: blocks of every size are sampled by bytes. */
extern uint64_t osp_exact_min;

/* Resolves the real functions (idempotent; re-entrant calls during dlsym
 * return at once). Returns 0, or -1 while a resolution is in progress. */
int osp_resolve(void);

/* Validates a mapped shm region of `size` bytes and arms the library with it:
 * registers the thread-exit key and fork handler, counts the process.
 * Returns 0 on success, -EINVAL when the header does not match (the library
 * stays inert). Used by the constructor and by tests. */
int osp_arm(struct os_shm_header *h, size_t size);

/* True when hooks must record (armed and not disarmed by the collector). */
static inline int osp_armed(void)
{
	struct os_shm_header *h = osp_hdr;

	return osp_likely(h == NULL) ? 0 :
	       !__atomic_load_n((const uint32_t *)&h->disarmed, __ATOMIC_RELAXED);
}

/* ---- fallback.c -------------------------------------------------------- */

/* Bump allocation from a static arena, never freed. NULL when exhausted.
 * `align` is a power of two. Memory is zeroed. */
void *osp_arena_alloc(size_t size, size_t align);
/* 1 when p points into the arena (inline: every free asks). */
#define OSP_ARENA_BYTES (256u * 1024u)
extern uint8_t osp_arena[OSP_ARENA_BYTES];
static inline int osp_arena_owns(const void *p)
{
	return (const uint8_t *)p >= osp_arena && (const uint8_t *)p < osp_arena + OSP_ARENA_BYTES;
}
/* Usable size of an arena block (for realloc). */
size_t osp_arena_size(const void *p);
/* Copies that never compile into a memcpy call. */
void *osp_copy_fwd(void *dst, const void *src, size_t n);
void *osp_copy_move(void *dst, const void *src, size_t n);

/* ---- thread.c ---------------------------------------------------------- */

struct osp_thread {
	int busy;               /* recursion guard */
	int no_slot;            /* no slot was free: do not rescan on every event */
	int exited;             /* the exit destructor ran */
	int exit_rounds;
	struct os_slot *slot;   /* claimed ring slot, NULL until the first event */
	uint32_t pid, tid;      /* cached, 0 = refresh */
	/* per-thread state of a runtime's in-target side (preload/adapter.h),
	 * laid out by the runtime (zero at the thread's start) */
	uint64_t rt_state[4];
	/* in-target replica breakpoints (replica.c): the token of each (0:
	 * none; the open breakpoint itself is owned by the process-wide cell
	 * rep_cell[k], which detach can close), the entry armed and its sg
	 * word, the watched address; written by this thread only */
	uint64_t rep_tok[2];
	uint16_t rep_cell[2];
	uint8_t rep_idx[2];
	uint64_t rep_sg[2];
	uint64_t rep_addr[2];
	/* byte sampling of blocks below min_size (hooks_malloc.c): bytes left
	 * before the next sampled block, the xorshift state (0: not seeded),
	 * 1 while the block being recorded was picked */
	uint64_t small_left;
	uint64_t rng;           /* xorshift64 state of osp_rng_next (0: not seeded) */
	int small_pick;
	uint64_t hook_t0;       /* os_ticks() at osp_enter */
	uint64_t hook_cpu0;     /* osp_enter_heavy: the thread's CPU clock (ns), else 0 */
};

/* Enters a hook that wants to record: returns the thread state with the guard
 * set, or NULL when the hook must just pass through (inert, disarmed, or a
 * re-entered call, which is counted in the slot's `reentered`). Pair with
 * osp_leave(). */
struct osp_thread *osp_enter(void);
/* osp_enter for a rare hook that may run for milliseconds (GC end, JVM
 * start): its time is read from the thread's CPU clock (a system call),
 * not the TSC, so a preemption inside it is not counted. */
struct osp_thread *osp_enter_heavy(void);
void osp_leave(struct osp_thread *t);

/* The calling thread's slot, claimed on first use (writes the OS_EV_THREAD
 * event). NULL when none is free (counted in header->no_slot_events by the
 * caller through osp_lost()). */
struct os_slot *osp_slot(struct osp_thread *t);

/* Registers the pthread key and the fork child handler; 0 or -errno. */
int osp_thread_setup(void);

/* Called in a fork child: forget the parent's slot and ids. */
void osp_thread_after_fork(void);

/* Producer-only counter increment (no locked instruction). */
static inline void osp_stat_add(_Atomic uint64_t *c, uint64_t n)
{
	uint64_t *p = (uint64_t *)c;

	__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

/* The calling thread's state (thread.c). */
extern OSP_TLS struct osp_thread osp_self;

/* An allocation below min_size on a thread that has its ring slot already
 * and is not inside a hook: only counted, without entering the guard (the
 * two counter stores are the producer's own; a signal handler's allocation
 * in between can cost one count, never an event). 0 when the full path must
 * run: disarmed, no slot yet, or re-entered. Detach never unmaps a cached
 * slot (attach.c), so a late store lands in the placeholder. */
int osp_small_due(struct osp_thread *t, size_t size);

/* The thread's xorshift64: the next value, seeding the state at its first
 * use (thread.c). Shared by the native small-block sampling and the
 * runtimes' draws (HotSpot's thinning). */
uint64_t osp_rng_next(struct osp_thread *t);

static inline int osp_count_small(size_t size)
{
	struct osp_thread *t = &osp_self;
	struct os_slot *s = t->slot;

	if (!s || t->busy || !osp_armed())
		return 0;
	/* byte sampling (docs/NATIVE.md): the countdown crossed zero, the
	 * block takes the full path as a sampled block; a block of at least
	 * the mean interval is always taken (osp_note_alloc), outside the
	 * countdown */
	if (osp_unlikely(size >= osp_hdr->small_sample) && osp_hdr->small_sample)
		return 0;
	if (osp_unlikely(t->small_left <= size) && osp_small_due(t, size))
		return 0;
	t->small_left -= size;
	osp_stat_add(&s->stats.small_allocs, 1);
	osp_stat_add(&s->stats.small_bytes, size);
	return 1;
}

/* Byte-sampled blocks alive (hooks_malloc.c): their free must be
 * reported. osp_small_keep: 1 when p was remembered (0: table bucket full,
 * the block is not sampled, counted in the header's sample_table_full);
 * osp_small_forget: 1 when p was one (removed). */
int osp_small_keep(uint64_t p);
int osp_small_forget(uint64_t p);
extern _Atomic uint64_t osp_small_live;

/* The table's bucket of an address, and the bitmap of buckets that may
 * hold a block (record.c): 0 when p cannot be a sampled block alive, the
 * whole test of most frees, inline in the free hook. */
#define OSP_SMALL_BUCKET_BITS 13
extern _Atomic uint64_t osp_small_bits[(1u << OSP_SMALL_BUCKET_BITS) / 64];
static inline uint32_t osp_small_index(uint64_t p)
{
	return (uint32_t)(((p >> 4) * 0x9e3779b97f4a7c15ULL) >> (64 - OSP_SMALL_BUCKET_BITS));
}
static inline int osp_small_maybe(uint64_t p)
{
	uint32_t bi;

	if (osp_likely(__atomic_load_n((uint64_t *)&osp_small_live, __ATOMIC_RELAXED) == 0))
		return 0;
	bi = osp_small_index(p);
	return (__atomic_load_n((uint64_t *)&osp_small_bits[bi / 64], __ATOMIC_RELAXED) >>
		(bi % 64)) & 1;
}

/* ---- hooks_mem.c ------------------------------------------------------- */

/* Inside osp_move_filter (adapter.h): the copying thread's state, guard held,
 * so a filter can write events itself (a runtime adapter batching moves);
 * NULL outside a filter call. */
struct osp_thread *osp_copy_thread(void);

/* ---- record.c ---------------------------------------------------------- */

/* Writes an event with the allocation path unwound from here; `caller` is
 * the hook's return address (frames[0]). Counts a drop when the ring is full
 * and no_slot_events when the thread has no slot. */
void osp_record_path(struct osp_thread *t, uint16_t type, uint64_t addr, uint64_t size,
		     uint64_t aux, uint64_t aux2, const void *caller);

/* The one ring writer: an event of type with words[0..n) as its frames (a
 * path, or the words of a runtime's event), into t's ring. 0, or -ENOSPC
 * when the thread has no slot (no_slot_events counted) or its ring is full
 * (a drop counted). No malloc, no locks. */
int osp_record_words(struct osp_thread *t, uint16_t type, uint64_t addr, uint64_t size,
		     uint64_t aux, uint64_t aux2, const uint64_t *words, uint32_t n);

/* Writes an event without frames (free, munmap, mremap, move). */
void osp_record_plain(struct osp_thread *t, uint16_t type, uint64_t addr, uint64_t size,
		      uint64_t aux, uint64_t aux2);

/* Writes the OS_EV_THREAD event announcing the slot's new owner. */
void osp_record_thread(struct osp_thread *t, struct os_slot *s);

/* Malloc family policy: records an ALLOC/REALLOC of `size` at p when size >=
 * min_size, else counts a small allocation. */
void osp_note_alloc(struct osp_thread *t, uint16_t type, void *p, size_t size, void *old,
		    const void *caller);

/* ---- replica.c --------------------------------------------------------- */

/* Breakpoints a thread arms itself (of x86's 4 debug registers; the others
 * stay for the collector's watchpoints). */
#define OSP_REP_PER_THREAD OS_REP_PER_THREAD
/* The signal of a hit: a real-time signal that HotSpot does not use
 * (SIGRTMIN + 6 with glibc; Java's NIO takes SIGRTMAX - 2) */
#define OSP_REP_SIG 40

/* Installs the hit handler when h asks for in-target replicas
 * (OS_SHM_F_REPLICAS): 0 or -errno (then nothing is armed). */
int osp_rep_setup(struct os_shm_header *h);
/* After an allocation event of `size` bytes at addr with path frames[0..n)
 * was written (guard held): arms a pending comparison of that site. */
void osp_rep_alloc(struct osp_thread *t, uint64_t addr, uint64_t size, const uint64_t *frames,
		   uint32_t n);
/* The object at addr of process pid dies (before its memory is given
 * back); addr 0: every object of pid (a collection began). */
void osp_rep_dead(uint64_t addr, uint32_t pid);
/* The thread ends: its breakpoints are closed. */
void osp_rep_thread_gone(struct osp_thread *t);
/* In a fork child: every breakpoint inherited from the parent's threads is
 * closed (not disabled: the events are the parent's). */
void osp_rep_after_fork(struct osp_thread *t);
/* objscope_detach (attach.c), after osp_hdr points at the disarmed header:
 * closes every in-target breakpoint of every thread. Returns how many. */
unsigned osp_rep_detach(void);

#endif
