/* hotspot.h - the collector side of the HotSpot runtime adapter (the
 * in-target side is runtimes/hotspot/target/; their contract is shm.h's
 * OS_EV_JVM / OS_EV_JALLOC / OS_EV_MOVES / OS_EV_GC_* and hotspot_abi.h).
 *
 * Per JVM (address space that sent OS_EV_JVM):
 * - its vmStructs tables are read when the JVM is up (hotspot_vm.h);
 * - every OS_EV_JALLOC object is tracked with its class and allocation
 *   path; contexts are keyed by (allocation path, class): the Klass* is
 *   interned as an extra innermost frame word OS_HS_TAG_KLASS | Klass*, so
 *   one path allocating two classes gives two contexts, and the profile
 *   shows that word as the context's type, not as a frame;
 * - class names (Klass* -> "byte[]") and interpreted method names
 *   (Method* -> "pkg.Class.method") are read and cached at drain time,
 *   while the JVM is alive (a class unloaded and its Klass* reused later is
 *   named by the first);
 * - object weights (Horvitz-Thompson: 1 / inclusion probability, fixed
 *   point, os_hs_weight): exact mode 1; hybrid mode max(1, T / size) with T
 *   the fixed TLAB size; sampled mode max(1, refill TLAB bytes / size).
 *   The weight travels with the object in its interval index value
 *   (attrib.h os_val_make) and is summed into the context's allocations
 *   and bytes, objects_estimated, and per sample into the sample
 *   estimates;
 * - moves of a collection are applied in a batch at its GC end, then dead
 *   objects are dropped (hotspot_gc.h);
 * - JIT code is named from the perf map the JVM writes at exit
 *   (/tmp/perf-PID.map, removed after reading unless it existed before).
 *
 * Return convention: constructors return NULL on out of memory; formatting
 * functions return the number of characters written (snprintf-like).
 */
#ifndef OBJSCOPE_HOTSPOT_H
#define OBJSCOPE_HOTSPOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attacher/core/attrib.h"
#include "runtimes/hotspot/hotspot_vm.h"
#include "runtimes/runtime.h"
#include "symbolizer/symbolizer.h"

/* Frame word naming the class of a context (innermost word of its path). */
#define OS_HS_TAG_KLASS 0x4000000000000000ULL
#define OS_HS_WORD_MASK 0x0000ffffffffffffULL

/* The adapter; mem NULL means os_hs_mem_proc. */
struct os_runtime *os_hotspot_new(struct os_attrib *a, struct os_symbolizer *sym,
				  const struct os_hs_mem *mem);

/* The registry's constructor (runtimes/registry.c): os_hotspot_new over
 * the target's memory (os_hs_mem_proc). */
struct os_runtime *os_hotspot_create(struct os_attrib *a, struct os_symbolizer *sym);

/* The registry's launch_env (hotspot_attach.c): --java-objects, the TLAB
 * size and --java-frame-pointers for the in-target side (hotspot_abi.h's
 * OS_JAVA_*_ENV). */
struct os_opts;
void os_hotspot_launch_env(const struct os_opts *o);

/* The registry's wanted (hotspot_attach.c): --runtime auto or hotspot. */
bool os_hotspot_wanted(const struct os_opts *o);

/* The registry's render_note (hotspot_notes.c): the sentences of the
 * notes the adapter kept as counters (kinds "hotspot.*"). */
struct os_note_counters;
struct os_profile;
size_t os_hotspot_render_note(const struct os_profile *p, const struct os_note_counters *g,
			      char *buf, size_t len);

/* Attach mode (hotspot_attach.c), pid attached while running: objects seen
 * first when a collection moves them, or found by reading the header below
 * a sampled Java-heap address no tracked object holds (hotspot_scan.h,
 * through os_attrib.heap_miss), get an "allocated before attach" context;
 * map_path (may be NULL) is the perf map the JVM wrote on request,
 * removed after reading when remove_map; preserve_fp (1, 0, -1 unknown)
 * and hooks (allocation/GC detours active) go into the report's notes.
 * May be called again to update. */
void os_hotspot_attached(struct os_runtime *rt, uint32_t pid, const char *map_path,
			 bool remove_map, int preserve_fp, int hooks);

/* The runtime.h ops attached and detached (hotspot_attach.c): the plan of
 * the in-target attach goes to os_hotspot_attached; after the detach the
 * JVM is asked for its perf map (Compiler.perfmap), a note says why not
 * when it gave none. */
void os_hs_attached(struct os_runtime *rt, uint32_t pid, const struct os_rt_plan *plan);
void os_hs_detached(struct os_runtime *rt, uint32_t pid, const struct os_rt_plan *plan,
		    char *note, size_t len);

/* For an adapter built on this one (runtimes/zero/): the access-path word
 * of method m (a Method* of asid's JVM) at bytecode pointer bcp, named now
 * with its source line, when m is a method of that JVM and bcp lies inside
 * its bytecodes; 0 otherwise. */
uint64_t os_hotspot_bcp_word(struct os_runtime *rt, uint32_t asid, uint64_t m, uint64_t bcp);

/* "[B" -> "byte[]", "[[I" -> "int[][]", "Ljava/lang/String;" and
 * "java/lang/String" -> "java.lang.String", "[Ljava/lang/Object;" ->
 * "java.lang.Object[]". */
int os_hs_java_class(const char *internal, char *buf, size_t len);
/* A perf map name of JIT code as "Class.method": "java.lang.Object
 * java.util.HashMap.get(java.lang.Object)" (JDK 17), "java.util.HashMap::get",
 * "Lfoo/Bar;::baz" -> "foo.Bar.baz"; stubs, adapters and "Interpreter" keep
 * their names. */
int os_hs_jit_name(const char *raw, char *buf, size_t len);
/* enum os_thread_kind of a thread of a JVM, from its name (possibly cut
 * to 15 characters by the kernel). */
int os_hs_thread_kind(const char *name);
/* Weight of an object of `size` bytes seen in `mode` (OS_JVM_MODE_*), as
 * fixed point (attrib.h: OS_W_ONE == 1.0, rounded, capped at OS_W_MAX):
 * exact 1; hybrid max(1, tlab / size) with tlab the fixed TLAB size T, for
 * refill and outside-TLAB events alike; sampled max(1, refill_bytes /
 * size), 1 outside a TLAB (refill_bytes 0). */
uint64_t os_hs_weight(uint32_t mode, uint64_t tlab, uint64_t refill_bytes, uint64_t size);
/* The weight of a JALLOC of `size` bytes for the JVM described by info:
 * os_hs_weight, except in hybrid mode with TLAB sizes
 * drawn at random (OS_JVM_F_TLAB_DITHER), where an object of s bytes is seen
 * with probability s/T up to T/2 and 1 from 3T/2 on. */
uint64_t os_hs_weight_jvm(const struct os_jvm_info *info, uint64_t refill_bytes, uint64_t size);
/* ZGC colored address to its heap offset (others unchanged): the colors
 * are the views 1, 2 or 4 << offset bits above offset_mask (a power of two
 * minus one, os_jvm_info.heap_end - 1; 0 means the 42 bits measured on
 * JDK 17 with small heaps). */
uint64_t os_hs_zgc_mask(uint64_t addr, uint64_t offset_mask);

#endif
