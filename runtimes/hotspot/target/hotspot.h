/* hotspot.h - the HotSpot runtime adapter inside the target (internal to
 * libobjscope.so). hotspot.c detects libjvm.so (dlopen hook, or already
 * loaded at start-up), installs inline detours (detour.h) on its allocation
 * and GC entry points and on JNI_CreateJavaVM, adds objscope's JVM options,
 * and announces the JVM with one OS_EV_JVM event (hotspot_abi.h).
 *
 * Files: hotspot.c (detection, hooks, events), hotspot_walk.c (allocation
 * paths through libjvm, interpreted and JIT frames), hotspot_moves.c (GC
 * object moves from memcpy/memmove), hotspot_vms.c (vmStructs),
 * hotspot_elf.c (.symtab of libjvm on disk).
 *
 * Return convention: 0 on success, -errno on failure, unless stated. */
#ifndef OBJSCOPE_PRELOAD_HOTSPOT_H
#define OBJSCOPE_PRELOAD_HOTSPOT_H

#include <stddef.h>
#include <stdint.h>

#include "runtimes/hotspot/hotspot_abi.h"
#include "runtimes/hotspot/hs_frames.h"
#include "preload/adapter.h"
#include "preload/preload.h"

/* What the hot paths read; written once when the JVM is up (before the
 * filter and the hooks start using it), read-only afterwards. The *_at
 * pointers are set when libjvm is found: before `up`, walks read through
 * them what exists so far (Java code runs inside JNI_CreateJavaVM). */
struct osp_hs_state {
	uintptr_t heap_lo, heap_hi;       /* reserved Java heap (masked for ZGC) */
	uintptr_t interp_lo, interp_hi;   /* interpreter codelets */
	const void *const *interp_code_at; /* AbstractInterpreter::_code (a StubQueue*) */
	uint64_t interp_buf_off, interp_lim_off; /* StubQueue::_stub_buffer, _buffer_limit */
	uintptr_t code_lo, code_hi;       /* whole code cache (JIT, stubs, interpreter) */
	const uintptr_t *code_lo_at;      /* CodeCache::_low_bound / _high_bound, from libjvm's */
	const uintptr_t *code_hi_at;      /* load (before `up`: JIT code runs during start-up) */
	uintptr_t jvm_lo, jvm_hi;         /* libjvm's executable segment */
	uintptr_t end_lo[2], end_hi[2];   /* libc's and libjli's: where a thread's frames
					   * end (native walks by frame pointer) */
	int64_t method_off;               /* Method* slot of an interpreter frame, bytes from fp */
	uint64_t total_coll_off;          /* CollectedHeap::_total_collections, 0 = unknown */
	uint64_t zgc_offset_mask;         /* ZGC: address bits without the color (0: not ZGC) */
	uint64_t zgc_meta_mask;           /* ZGC: color bits of a heap address */
	uint64_t gc_count;                /* number of the collection in progress or last */
	uint64_t dither_off;              /* hybrid mode: Thread::_tlab + TLAB::_desired_size, 0 = off */
	uint64_t dither_lo, dither_span;  /* next TLAB's desired size: lo + [0, span) words */
	uint64_t dither_floor;            /* ... and never below MinTLABSize (words, hs_tlab.h) */
	uint64_t alloc_bytes_off;         /* Thread::_allocated_bytes, 0 = unknown */
	uint64_t waste_off;               /* attach, hybrid steered: Thread::_tlab +
					   * TLAB::_refill_waste_limit, 0 = off */
	struct os_hsf_layout frames;      /* JIT frames without frame pointers (.ok: usable) */
	int fwd_marks;                    /* G1, Parallel, Serial: small objects' moves read
					   * from their mark words (hotspot_fwd.c) */
	int up;                           /* 1 once the fields above are valid */
};
extern struct osp_hs_state osp_hs;

/* ---- hotspot.c ---- */

/* Writes one event with `n` payload words into t's ring (frames area).
 * Returns 0, or -ENOSPC when the ring is full or no slot is free (counted). */
int osp_hs_emit(struct osp_thread *t, uint16_t type, uint64_t addr, uint64_t size, uint64_t aux,
		uint64_t aux2, const uint64_t *words, uint32_t n);
/* Set by an adapter built on this one (runtimes/zero/target/): called by
 * osp_hs_emit before each event, so that the adapter's own first event
 * (its hello) leads every ring that carries HotSpot events of the JVM
 * (a GC thread's GC_BEGIN drained before any Java thread's hello let the
 * HotSpot adapter claim a Zero JVM). The adapter's own events pass through
 * it too: it must not emit again for them. */
extern void (*osp_hs_pre_emit)(struct osp_thread *t, uint16_t type, uint64_t aux2);

/* Hybrid mode (OS_JVM_F_TLAB_DITHER): thread (a JavaThread*) just made a
 * new TLAB that starts with obj: the size of its next TLAB is drawn
 * (its _desired_size written). Called by the refill hook, and by an
 * adapter that sees refills its own way (runtimes/zero/target/). Takes the
 * recursion guard itself: call it outside osp_enter. No-op otherwise. */
void osp_hs_tlab_refilled(void *thread, const void *obj);
/* ... thread allocated `bytes` outside any TLAB: kept out of the next
 * TLAB's measured length. */
void osp_hs_tlab_outside(void *thread, size_t bytes);

/* ---- hotspot_g1gens.c ---- */

struct osp_vms;
/* At the JVM's start: G1's region table offsets (gc: os_jvm_info.gc). */
void osp_hs_g1gens_setup(const struct osp_vms *v, const char *gc);
/* At a collection's end: the regions' generations as OS_HS_GENS words
 * (hotspot_abi.h) into w[0, max); the number written, 0 when none. */
uint32_t osp_hs_g1gens(const void *heap, uint64_t *w, uint32_t max);

/* ---- hotspot_walk.c ---- */

/* Allocation path of the calling thread, leaf first, starting at `caller`
 * (the hooked function's return address): libunwind through native code,
 * then a bounded frame-pointer walk through the code cache. Interpreted
 * frames become OS_FRAME_METHOD | Method*. Returns the number of frames;
 * *truncated is set when `max` cut the walk. */
int osp_hs_walk(uint64_t *frames, int max, const void *caller, int *truncated);

/* The same walk for native allocation paths that reach JIT code
 * (osp_path_jit, adapter.h). */
int osp_hs_walk_native(uint64_t *frames, int max, const void *caller, int *truncated);

/* Frame-pointer-only walk from `caller` whose frame pointer is `fp` (libjvm
 * is built with frame pointers). Same frame words and bounds. */
int osp_hs_walk_fp(uint64_t *frames, int max, const void *caller, const void *fp, int *truncated);

/* ---- hotspot_moves.c ---- */

/* The memcpy/memmove filter (adapter.h): buffers GC object moves per GC
 * thread, never asks hooks_mem.c to log single OS_EV_MOVE events (returns 0).
 * Copies of at most OSP_HS_MOVE_MIN bytes are not looked at (osp_move_min). */
#define OSP_HS_MOVE_MIN 64
int osp_hs_move_filter(const void *dst, const void *src, size_t n, enum osp_copy_kind kind,
		       uint64_t *tag);

/* Writes every thread's buffered moves as OS_EV_MOVES (aux = gc) into t's
 * ring; called at GC end before OS_EV_GC_END. *flushed = moves written,
 * *lost = moves that could not be delivered (ring full, buffer busy). */
void osp_hs_moves_flush_all(struct osp_thread *t, uint64_t gc, uint64_t *flushed, uint64_t *lost);

/* Cumulative count of moves that could not be delivered; ... adds n to it. */
uint64_t osp_hs_moves_lost(void);
void osp_hs_moves_lost_add(uint64_t n);
/* The next process-wide move sequence number (OS_HS_MOVE_SEQ_SHIFT). */
uint64_t osp_hs_move_seq(void);

/* ---- hotspot_fwd.c ---- */

/* Words at scattered addresses of this process, batched process_vm_readv on
 * itself (hotspot_fwd.c): ok[i] = 1 where out[i] was read. */
#define OSP_HS_READ_MAX 256
void osp_hs_read_words(const uint64_t *addr, uint32_t n, uint64_t *out, uint8_t *ok);
/* A tracked object of addr, bytes was allocated: remembered when it is
 * small enough to be copied inline (OS_HS_FWD_MAX_BYTES) and fwd_marks. */
void osp_hs_fwd_track(uint64_t addr, uint64_t bytes);
/* GC end (no Java thread running): the remembered objects' moves, read from
 * their mark words, written as OS_EV_MOVES (aux = gc) into t's ring and
 * added to *flushed; the dead are forgotten. */
void osp_hs_fwd_collect(struct osp_thread *t, uint64_t gc, uint64_t *flushed);
/* Cumulative counts, OS_HS_FWD_* order. */
void osp_hs_fwd_stats(uint64_t out[OS_HS_FWD_WORDS]);

#endif
