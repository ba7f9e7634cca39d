/* zero_abi.h - what the Zero adapter inside the target
 * (runtimes/zero/target/) tells the collector's Zero adapter
 * (runtimes/zero/), on top of the HotSpot adapter's events
 * (runtimes/hotspot/hotspot_abi.h), which Zero reuses as they are.
 *
 * The hello: before its first event of any kind, every thread of a Zero
 * JVM that writes one of the Zero adapter's own events writes an OS_EV_JVM
 * without JVM info (nframes = the ranges below, addr = size = 0, aux =
 * libjvm's load base, aux2 = OS_ZERO_HELLO; frames below). A thread
 * that learnt more (the istate's place) may send it again. The collector hands an address
 * space to the first runtime that claims one of its events, and drains the
 * rings one after another: a hello ahead of each thread's own events makes
 * the Zero adapter the claimant whichever ring is read first. The JVM event
 * proper (OS_EV_JVM with its struct os_jvm_info) follows as HotSpot sends it.
 */
#ifndef OBJSCOPE_ZERO_ABI_H
#define OBJSCOPE_ZERO_ABI_H

#include <stdint.h>

#define OS_ZERO_HELLO 0x5a45524f48454c4fULL /* "OLEHOREZ": no OS_JVM_F_* combination */

/* The hello's frames: OS_ZERO_HELLO_WORDS words, then [lo, hi) pairs of
 * the bytecode interpreter's code (the BytecodeInterpreter::run
 * instantiations, at most OS_ZERO_MAX_RANGES): an access sampled there is
 * in an interpreted Java method, found from the sample's registers. */
#define OS_ZERO_MAX_RANGES 4
enum {
	OS_ZERO_HELLO_ISTATE = 0, /* istate_words of zero_frames.h as learnt so far (0: not yet) */
	OS_ZERO_HELLO_JVM_LO = 1, /* libjvm's executable segment [lo, hi) */
	OS_ZERO_HELLO_JVM_HI = 2,
	OS_ZERO_HELLO_WORDS = 3,
};

/* OS_EV_JALLOC of a Zero JVM: as HotSpot's (addr, size, aux2 = Klass*,
 * frames = the allocation path, Java frames as OS_FRAME_METHOD words); aux
 * = the bytes of the TLAB the object starts (a refill; 0: outside a TLAB,
 * or inside the current one) | these flags in its low bits, which TLAB
 * sizes (in heap words) leave free. The collector's Zero adapter counts
 * and clears them. */
#define OS_ZERO_A_NO_JAVA 0x1   /* the thread was in Java but its Zero frames did
				 * not follow the rules of zero_frames.h: the path
				 * holds native frames only */
#define OS_ZERO_A_ARRAY 0x2     /* an array: the interpreter allocates every one in
				 * the VM, so every one is seen (weight 1) */
#define OS_ZERO_A_FLAGS 0x7

/* The hello's size: allocations the hook did not send because the
 * MemAllocator did not match the object it returned (its layout is not
 * the one this adapter knows), cumulative; a hello is written again each
 * time that count reaches a power of two. */

#endif
