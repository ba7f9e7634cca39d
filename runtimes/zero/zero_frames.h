/* zero_frames.h - the Java frames of a HotSpot Zero thread, from its Zero
 * stack (shared by the in-target side, runtimes/zero/target/, and the unit
 * tests; pure: every read goes through a reader).
 *
 * Zero runs Java methods in C++ (BytecodeInterpreter::run) and keeps their
 * frames on a stack of its own (ZeroStack: a region alloca'd on the native
 * stack by the first call into Java), not in native frames. Facts, from
 * OpenJDK's src/hotspot/cpu/zero (stack_zero.hpp, interpreterFrame_zero.hpp,
 * javaFrameAnchor_zero.hpp) and share/interpreter/zero/bytecodeInterpreter.hpp:
 *  - a ZeroFrame* points at its word `next_frame` (the older frame, at a
 *    higher address, NULL for the oldest); the word below holds its type;
 *  - an interpreter frame holds its BytecodeInterpreter (the "istate") just
 *    below those two words: istate = frame - istate_words words, the
 *    istate's size depending on the JDK; its first words are _thread,
 *    _bcp, _locals, _constants, _method;
 *  - while the interpreter calls into the VM (an allocation), the thread's
 *    JavaFrameAnchor holds _last_Java_sp, _last_Java_pc, then (Zero's own)
 *    _last_Java_fp: the top ZeroFrame; the istate's _bcp is current.
 * Nothing here is in vmStructs, so the walk checks what it reads: an
 * interpreter frame counts when its istate's _thread is the walking thread
 * and its _bcp lies inside the bytecodes of its _method's ConstMethod (whose
 * layout vmStructs gives). istate_words is learnt once from the first frame
 * that passes (os_zf_learn). A frame that does not pass (an entry frame)
 * gives no word; a chain that leaves [lo, hi) or does not grow ends the walk.
 */
#ifndef OBJSCOPE_ZERO_FRAMES_H
#define OBJSCOPE_ZERO_FRAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "common/shm.h"

#define OS_ZF_ISTATE_MIN 4       /* istate_words tried by os_zf_learn */
#define OS_ZF_ISTATE_MAX 48
#define OS_ZF_MAX_STEPS 4096     /* frames visited at most (entry frames included) */
#define OS_ZF_ADDR_MAX 0x0000ffffffffffffULL

/* Offsets (bytes) the walk needs; the istate's are Zero's, the others
 * come from vmStructs. */
struct os_zf_layout {
	uint32_t istate_words;     /* istate = frame - istate_words * 8; 0: not learnt yet */
	uint32_t thread_off;       /* BytecodeInterpreter::_thread (0) */
	uint32_t bcp_off;          /* BytecodeInterpreter::_bcp (8) */
	uint32_t method_off;       /* BytecodeInterpreter::_method (32) */
	uint32_t const_method_off; /* Method::_constMethod */
	uint32_t code_size_off;    /* ConstMethod::_code_size (u2) */
	uint32_t code_off;         /* sizeof(ConstMethod): the bytecodes follow it */
};

/* Reads the 8-byte word at addr into *w; false when it cannot. */
typedef bool (*os_zf_read)(void *arg, uint64_t addr, uint64_t *w);

/* Whether the istate at `is` belongs to `thread` and is consistent; its
 * Method* and bcp into *method, *bcp. */
static inline bool os_zf_istate(const struct os_zf_layout *l, os_zf_read rd, void *arg,
				uint64_t is, uint64_t thread, uint64_t *method, uint64_t *bcp)
{
	uint64_t th, m, b, cm, cs;

	if (!rd(arg, is + l->thread_off, &th) || th != thread || !rd(arg, is + l->method_off, &m) ||
	    !m || (m & 7) || m > OS_ZF_ADDR_MAX || !rd(arg, is + l->bcp_off, &b) || !b ||
	    b > OS_ZF_ADDR_MAX)
		return false;
	if (!rd(arg, m + l->const_method_off, &cm) || !cm || (cm & 7) || cm > OS_ZF_ADDR_MAX)
		return false;
	/* _code_size is a u2: read its aligned word */
	if (!rd(arg, (cm + l->code_size_off) & ~7ULL, &cs))
		return false;
	cs = (cs >> (8 * ((cm + l->code_size_off) & 7))) & 0xffff;
	if (b < cm + l->code_off || b >= cm + l->code_off + cs)
		return false;
	*method = m;
	*bcp = b;
	return true;
}

/* Learns istate_words from the interpreter frame `frame` of `thread`
 * (the top frame: the one that called into the VM), no istate read below
 * lo. true when found. */
static inline bool os_zf_learn(struct os_zf_layout *l, os_zf_read rd, void *arg, uint64_t frame,
			       uint64_t thread, uint64_t lo)
{
	uint64_t m, b;

	for (uint32_t k = OS_ZF_ISTATE_MIN; k <= OS_ZF_ISTATE_MAX; k++) {
		if (frame < 8ULL * k || frame - 8ULL * k < lo)
			break;
		if (os_zf_istate(l, rd, arg, frame - 8ULL * k, thread, &m, &b)) {
			l->istate_words = k;
			return true;
		}
	}
	return false;
}

/* The frame word of an interpreted method at bcp (common/shm.h: the
 * collector makes the bcp's low bits a line). */
static inline uint64_t os_zf_word(uint64_t method, uint64_t bcp)
{
	uint64_t pos = OS_FRAME_BCP_KNOWN | (bcp & OS_FRAME_BCP_LOW);

	return OS_FRAME_METHOD | pos << OS_FRAME_POS_SHIFT | method;
}

/* The word of the interpreter frame whose istate is at `is`, when it is
 * one of thread's; false otherwise (an entry frame). For walkers that
 * check frames their own way (the collector reads the target from afar). */
typedef bool (*os_zf_frame_fn)(void *arg, uint64_t is, uint64_t thread, uint64_t *word);

/* Walks the Zero frames from `top` (the anchor's _last_Java_fp), youngest
 * first, frames strictly growing inside [lo, hi) (their istates too): one
 * word per interpreter frame of `thread` into out[0..max), as `frame` says
 * (NULL: os_zf_istate and os_zf_word over rd). Returns the number written;
 * *bad is set when the chain ended off its rules (left the bounds, did not
 * grow, or istate_words is unknown), *truncated when max cut it. */
static inline uint32_t os_zf_walk(const struct os_zf_layout *l, os_zf_read rd, os_zf_frame_fn frame,
				  void *arg, uint64_t top, uint64_t thread, uint64_t lo, uint64_t hi,
				  uint64_t *out, uint32_t max, bool *bad, bool *truncated)
{
	uint64_t fr = top, next, m, b, w;
	uint32_t n = 0;
	bool ok;

	*bad = false;
	*truncated = false;
	if (!l->istate_words) {
		*bad = true;
		return 0;
	}
	for (uint32_t step = 0; fr && step < OS_ZF_MAX_STEPS; step++) {
		uint64_t is = fr - 8ULL * l->istate_words;

		if (fr >= hi - 8 || (fr & 7) || fr < 8ULL * l->istate_words || is < lo) {
			*bad = true;
			break;
		}
		if (frame) {
			ok = frame(arg, is, thread, &w);
		} else {
			ok = os_zf_istate(l, rd, arg, is, thread, &m, &b);
			w = ok ? os_zf_word(m, b) : 0;
		}
		if (ok) {
			if (n == max) {
				*truncated = true;
				break;
			}
			out[n++] = w;
		}
		if (!rd(arg, fr, &next)) {
			*bad = true;
			break;
		}
		if (next && next <= fr) {
			*bad = true;
			break;
		}
		fr = next;
	}
	return n;
}

#endif
