/* zero.h - the collector side of the HotSpot Zero runtime adapter (the
 * in-target side is runtimes/zero/target/; their contract is the HotSpot
 * adapter's events, runtimes/hotspot/hotspot_abi.h, plus the hello of
 * runtimes/zero/zero_abi.h).
 *
 * Zero is HotSpot with a C++ bytecode interpreter and no JIT: its heap,
 * collections, moves, classes, methods and lines are HotSpot's. So this
 * adapter holds a HotSpot adapter of its own (os_hotspot_create) and hands
 * it every event and op of the address spaces it claimed (those whose
 * threads sent the hello), changing what differs:
 *  - Java objects come from MemAllocator::allocate: every array (flagged
 *    by the in-target side: weight 1 in every mode), and the instances made
 *    in the VM (a new TLAB, outside a TLAB), which keep HotSpot's weights
 *    in the mode in force;
 *  - access samples taken in the bytecode interpreter are named with their
 *    Java method from the sampled registers (zero_access.c), counted;
 *  - its ops answer for Zero's address spaces alone ("do not know"
 *    elsewhere: the registry's HotSpot adapter keeps the other JVMs);
 *  - allocation paths whose Zero frames could not be walked, and
 *    allocations the hook could not read, are counted (notes "zero.*",
 *    os_zero_render_note).
 */
#ifndef OBJSCOPE_ZERO_H
#define OBJSCOPE_ZERO_H

#include <stdbool.h>
#include <stddef.h>

#include "runtimes/runtime.h"

/* The registry's constructor (runtimes/registry.c): NULL on out of memory. */
struct os_runtime *os_zero_create(struct os_attrib *a, struct os_symbolizer *sym);

/* The registry's wanted: --runtime auto, zero or hotspot (a Zero JVM is
 * HotSpot's: under --runtime hotspot it is still this adapter's, else its
 * hello would reach the HotSpot adapter as a JVM event). */
struct os_opts;
bool os_zero_wanted(const struct os_opts *o);

/* The registry's render_note (zero_notes.c): the sentences of the kinds
 * "zero.access" and "zero.objects". */
struct os_note_counters;
struct os_profile;
size_t os_zero_render_note(const struct os_profile *p, const struct os_note_counters *g,
			   char *buf, size_t len);

#endif
