/* zero.h - the HotSpot Zero adapter inside the target (internal to
 * libobjscope.so). Zero is HotSpot with a C++ bytecode interpreter and no
 * JIT; the HotSpot adapter (runtimes/hotspot/target/) installs as on any
 * JVM (GC hooks, JVM options, the JVM event, move logging), and this one
 * adds what Zero needs on top, before it (it comes first in
 * runtimes/target/registry.c):
 *  - Zero's libjvm has no JFR: HotSpot's allocation hooks
 *    (AllocTracer::send_allocation_*) are empty one-byte functions. Here
 *    MemAllocator::allocate is detoured: every array (the interpreter
 *    allocates them all in the VM) and every instance made in the VM
 *    (a new TLAB, outside a TLAB) is seen once allocated, its class from
 *    the MemAllocator (checked against the object's header); every TLAB
 *    refill passes there too, where HotSpot's hybrid mode draws the next
 *    TLAB size (osp_hs_tlab_refilled);
 *  - its Java frames are on the Zero stack (runtimes/zero/zero_frames.h),
 *    reached from the thread's JavaFrameAnchor;
 *  - each thread writes the hello of runtimes/zero/zero_abi.h before its
 *    first event, so that the collector's Zero adapter claims the process.
 */
#ifndef OBJSCOPE_PRELOAD_ZERO_H
#define OBJSCOPE_PRELOAD_ZERO_H

#include "preload/adapter.h"

/* Launch mode: a Zero libjvm.so gets the MemAllocator::allocate detour
 * (the HotSpot adapter, asked next, installs the rest). */
extern const struct osp_runtime_load osp_zero_load;

/* Attach mode: a running Zero JVM; prepare announces it, prepares the
 * HotSpot adapter's detours (osp_hs_attach) and its own, commit writes
 * them all. A JVM that is not Zero is left to the next entry. */
extern const struct osp_runtime_attach osp_zero_attach;

#endif
