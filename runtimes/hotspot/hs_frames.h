/* hs_frames.h - stepping through HotSpot frames when JIT code keeps no
 * frame pointer (the JVM runs without -XX:+PreserveFramePointer).
 *
 * Header-only: the preload (inside the target: direct loads, no malloc, no
 * syscalls) and the collector (a sampled stack copy, remote code-heap reads)
 * share the same stepping rules through two reader callbacks.
 *
 * A frame is (pc, sp, fp): sp is the frame's stack pointer at its call site
 * (the value rsp has once the callee returned; for a compiled frame that a
 * c2i adapter extended, the unextended one), fp the value of rbp in it.
 * The sender of a frame, by where its pc lies (HotSpot's frame_x86 rules):
 *  - interpreter:   pc = [fp + 8], fp = [fp], sp = [fp + sender_sp_off]
 *                   (the interpreter always keeps rbp; the slot holds the
 *                   caller's unextended sp);
 *  - a code blob with a frame size F words (nmethods, runtime stubs,
 *    native wrappers, safepoint/deopt blobs): sp' = sp + 8F,
 *                   pc = [sp' - 8], fp = [sp' - 16] (the saved rbp);
 *  - anything else (native code with frame pointers, StubRoutines such as
 *    the call stub, blobs of frame size 0): pc = [fp + 8], fp = [fp],
 *    sp = fp + 16;
 *  - a pc in the code cache but in no used block (freed code, a bad
 *    return address): the walk ends.
 * A blob is found from a pc through its code heap's segment map: one byte
 * per segment, 0xff = free, else the distance in segments towards the
 * block's first segment (0 there); the block starts with a HeapBlock
 * header (whose _used flag must be set) followed by the CodeBlob.
 *
 * Every value read from the stack must lie in the caller's stack bounds
 * (the stack reader says no otherwise) and sp must grow strictly: a bad
 * frame ends the walk instead of producing garbage.
 */
#ifndef OBJSCOPE_HS_FRAMES_H
#define OBJSCOPE_HS_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OS_HSF_MAX_HEAPS 4

struct os_hsf_heap {
	uint64_t lo, hi;         /* reserved code: CodeHeap::_memory _low_boundary.._high_boundary */
	uint64_t seg_lo;         /* segment map: CodeHeap::_segmap _low_boundary */
	uint64_t seg_high_at;    /* address of CodeHeap::_segmap._high (grows as the heap
				  * commits more: read at each lookup) */
	uint32_t log2_seg;       /* CodeHeap::_log2_segment_size */
};

/* Everything the stepper needs, resolved from vmStructs once the JVM is up
 * (the code heaps are created at start and keep their reserved ranges). */
struct os_hsf_layout {
	struct os_hsf_heap heap[OS_HSF_MAX_HEAPS];
	uint32_t nheaps;
	uint64_t code_lo, code_hi;        /* CodeCache::_low_bound .. _high_bound */
	uint64_t interp_lo, interp_hi;    /* interpreter codelets */
	uint32_t block_size;              /* sizeof(HeapBlock) */
	uint32_t used_off;                /* HeapBlock::Header::_used (bool), from the block */
	uint32_t frame_size_off;          /* CodeBlob::_frame_size (int, words) */
	uint32_t code_begin_off;          /* CodeBlob::_code_begin (address); JDK 23+
					   * _code_offset (int, from the blob) */
	uint32_t complete_off;            /* CodeBlob::_frame_complete_offset (int; JDK 23+
					   * int16_t) */
	uint8_t code_begin_rel;           /* code_begin_off is the int _code_offset */
	uint8_t complete_width;           /* 4 or 2 (0: 4) */
	int32_t sender_sp_off;            /* interpreter frame: caller's sp slot, bytes from fp */
	bool ok;                          /* all of the above known */
};

/* Reads len bytes at addr into buf; false when it cannot. */
typedef bool (*os_hsf_read)(void *arg, uint64_t addr, void *buf, size_t len);

struct os_hsf_frame {
	uint64_t pc, sp, fp;
	uint64_t bcp;  /* an interrupted interpreted frame: its bytecode pointer
			* (r13 on x86_64), 0 unknown; the stepper leaves it 0 */
};

/* The bytecode pointer slot of an interpreter frame lies 5 words below its
 * Method* slot (JDK 17 x86_64, frame_x86.hpp: method, mirror, mdp, cache,
 * locals, bcp). The interpreter stores its bcp there at every invoke and
 * call into the VM, so a caller's slot is current; the interrupted frame's
 * bcp is in a register. */
#define OS_HSF_BCP_BELOW_METHOD 40

struct os_hsf_blob {
	uint64_t start;        /* the CodeBlob */
	uint64_t code_begin;
	uint64_t complete_pc;  /* code_begin + frame_complete_offset: frame built from here */
	int32_t frame_size;    /* words; 0: no frame of its own */
};

static inline bool os_hsf_in_code(const struct os_hsf_layout *l, uint64_t pc)
{
	return pc >= l->code_lo && pc < l->code_hi;
}

static inline bool os_hsf_in_interp(const struct os_hsf_layout *l, uint64_t pc)
{
	return pc >= l->interp_lo && pc < l->interp_hi;
}

/* The blob holding pc. Returns false when pc is in no used block. */
static inline bool os_hsf_blob(const struct os_hsf_layout *l, os_hsf_read rd, void *arg,
			       uint64_t pc, struct os_hsf_blob *b)
{
	for (uint32_t i = 0; i < l->nheaps; i++) {
		const struct os_hsf_heap *h = &l->heap[i];
		uint64_t idx, block, cb, begin, seg_hi;
		uint8_t hop, used;
		int32_t fs, complete = 0, rel = 0;
		int16_t complete16 = 0;
		int guard = 0;

		if (pc < h->lo || pc >= h->hi)
			continue;
		idx = (pc - h->lo) >> h->log2_seg;
		if (!rd(arg, h->seg_high_at, &seg_hi, 8))
			return false;
		for (;;) {
			if (h->seg_lo + idx >= seg_hi || !rd(arg, h->seg_lo + idx, &hop, 1) ||
			    hop == 0xff)
				return false;
			if (hop == 0)
				break;
			if (hop > idx || ++guard > 1 << 16)
				return false;
			idx -= hop;
		}
		block = h->lo + (idx << h->log2_seg);
		cb = block + l->block_size;
		if (!rd(arg, block + l->used_off, &used, 1) || !used ||
		    !rd(arg, cb + l->frame_size_off, &fs, 4))
			return false;
		if (l->code_begin_rel) {
			if (!rd(arg, cb + l->code_begin_off, &rel, 4) || rel < 0)
				return false;
			begin = cb + (uint64_t)rel;
		} else if (!rd(arg, cb + l->code_begin_off, &begin, 8)) {
			return false;
		}
		if (l->complete_width == 2) {
			if (!rd(arg, cb + l->complete_off, &complete16, 2))
				return false;
			complete = complete16;
		} else if (!rd(arg, cb + l->complete_off, &complete, 4)) {
			return false;
		}
		/* -1: a stub that sets no frame size (C1's runtime stubs, e.g.
		 * g1_pre_barrier_slow: they keep rbp as their frame pointer) */
		if (fs < -1 || fs > (1 << 20) || begin < cb || begin > pc)
			return false;
		if (fs < 0)
			fs = 0;
		b->start = cb;
		b->code_begin = begin;
		b->complete_pc = complete >= 0 ? begin + (uint64_t)complete : UINT64_MAX;
		b->frame_size = fs;
		return true;
	}
	return false;
}

/* Finds the blob of a pc in the code cache (os_hsf_blob, or a cache of it). */
typedef bool (*os_hsf_find)(void *arg, uint64_t pc, struct os_hsf_blob *b);

/* One step from f to its sender. `leaf`: f is the interrupted frame of a
 * sample (its pc may lie in a prologue, where the frame is not built yet:
 * the walk ends there). Returns true and updates f, or false at the end. */
static inline bool os_hsf_step(const struct os_hsf_layout *l, os_hsf_find find, void *find_arg,
			       os_hsf_read stack_rd, void *stack_arg, struct os_hsf_frame *f,
			       bool leaf)
{
	struct os_hsf_frame n = { 0, 0, 0, 0 };
	struct os_hsf_blob b;

	if (os_hsf_in_interp(l, f->pc)) {
		if (!stack_rd(stack_arg, f->fp + 8, &n.pc, 8) || !stack_rd(stack_arg, f->fp, &n.fp, 8) ||
		    !stack_rd(stack_arg, f->fp + (uint64_t)(int64_t)l->sender_sp_off, &n.sp, 8) ||
		    n.sp < f->fp + 16)
			return false;
	} else if (os_hsf_in_code(l, f->pc) && !find(find_arg, f->pc, &b)) {
		return false; /* in no used blob: freed code or a bad pc, no rule holds */
	} else if (os_hsf_in_code(l, f->pc) && b.frame_size > 0) {
		if (leaf && f->pc < b.complete_pc)
			return false;
		n.sp = f->sp + 8 * (uint64_t)b.frame_size;
		if (!stack_rd(stack_arg, n.sp - 8, &n.pc, 8) || !stack_rd(stack_arg, n.sp - 16, &n.fp, 8))
			return false;
	} else {
		if ((f->fp & 7) || !stack_rd(stack_arg, f->fp + 8, &n.pc, 8) ||
		    !stack_rd(stack_arg, f->fp, &n.fp, 8))
			return false;
		n.sp = f->fp + 16;
	}
	if (n.sp <= f->sp || !n.pc)
		return false;
	*f = n;
	return true;
}

#endif
