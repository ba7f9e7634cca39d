/* generic.h - the generic runtime adapter: a JVM objscope has no adapter
 * of its own for (OpenJ9, GraalVM, a HotSpot forced with --runtime generic),
 * seen without any knowledge of the VM's internals. docs/RUNTIMES.md
 * ("Unknown JVMs") says what it does and why:
 * - a process is a VM when a VM library is mapped in it
 *   (os_gen_vm_library);
 * - its managed heap is the address-space reservation (PROT_NONE,
 *   MAP_NORESERVE, anonymous) made by code of a VM library with the most
 *   memory committed in it since, from the mmap events (launch mode), else
 *   the partly uncommitted anonymous region of /proc/PID/maps with the
 *   most committed (attach mode: the reservation came before);
 * - a sample there is charged to one synthetic context, "[managed heap of
 *   an unknown runtime: objects not identified]", never to the mappings the
 *   heap was made of: no managed object is known (class, allocation site,
 *   lifetime, moves), and the notes say so;
 * - JIT code is named from the perf map the VM wrote when asked
 *   (/tmp/perf-PID.map), which is the user's to ask for;
 * - GC and JIT compiler threads are told by names common to the VMs.
 *
 * Its in-target side (target/) only keeps native allocation paths from
 * stepping through code without unwind information (JIT code), under
 * OS_SHM_F_RT_GENERIC.
 */
#ifndef OBJSCOPE_GENERIC_H
#define OBJSCOPE_GENERIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/procmaps.h"
#include "runtimes/generic/generic_names.h"
#include "runtimes/runtime.h"

struct os_attrib;
struct os_note_counters;
struct os_opts;
struct os_profile;
struct os_symbolizer;

/* The adapter; grace_ns: how long after it found a VM it waits before it
 * charges heap samples to the heap's line (counted meanwhile), the time a
 * specific adapter has to claim the VM (0 when the generic one was forced). */
struct os_runtime *os_generic_new(struct os_attrib *a, struct os_symbolizer *sym,
				  uint64_t grace_ns);

/* The registry's entries (runtimes/registry.c). */
struct os_runtime *os_generic_create(struct os_attrib *a, struct os_symbolizer *sym);
/* --runtime auto or generic. */
bool os_generic_wanted(const struct os_opts *o);
/* OS_SHM_F_RT_GENERIC when --runtime generic forced it. */
uint32_t os_generic_shm_flags(const struct os_opts *o);
/* The sentences of the notes "generic.*" (generic_notes.c). */
size_t os_generic_render_note(const struct os_profile *p, const struct os_note_counters *g,
			      char *buf, size_t len);

/* Pure parts (generic_vm.c), unit tested. */

/* Whether the file at path (its base name) is a VM library: libjvm.so
 * (HotSpot, and OpenJ9's shim), libj9vm*.so, libj9gc*.so, libj9prt*.so
 * (OpenJ9's VM, collector and port library), libjvmcicompiler.so (GraalVM),
 * libjvm*.so. */
bool os_gen_vm_library(const char *path);

/* Address-space reservations of a VM (launch mode, from mmap events), and
 * how much was committed in each since (mmaps with MAP_FIXED over them). */
struct os_gen_resv {
	uint64_t lo, hi;
	uint64_t committed;
};

struct os_gen_resvs {
	struct os_gen_resv *v;
	size_t n, cap;
};

/* Adds [lo, hi) (it replaces what it overlaps); -ENOMEM. */
int os_gen_resv_add(struct os_gen_resvs *r, uint64_t lo, uint64_t hi);
/* munmap of [lo, hi): the reservations lose what they had there (a cut in
 * the middle keeps the larger side: a heap is trimmed at its ends). */
void os_gen_resv_cut(struct os_gen_resvs *r, uint64_t lo, uint64_t hi);
/* A mapping [lo, hi) made over a reservation (MAP_FIXED): committed when
 * accessible, uncommitted when PROT_NONE (the part inside it counts). */
void os_gen_resv_commit(struct os_gen_resvs *r, uint64_t lo, uint64_t hi, bool accessible);
/* The heap among the reservations: the one with the most memory committed
 * in it (a managed heap holds the bulk of a VM's memory from its start: its
 * initial size is committed at once), the largest among equals; false when
 * there is none. Not simply the largest: a heap may be smaller than other
 * reservations of its VM (HotSpot's class space is 1 GiB). */
bool os_gen_resv_heap(const struct os_gen_resvs *r, uint64_t *lo, uint64_t *hi);
void os_gen_resv_free(struct os_gen_resvs *r);

/* One walk over /proc/PID/maps (os_gen_maps_add for every entry in
 * address order, then os_gen_maps_end): whether a VM library is mapped
 * (vm_lib: its base name, the first one), and among the regions of
 * adjacent private anonymous mappings with an uncommitted (---p) part (a
 * reservation committed piecewise) the one with the most committed (the
 * other parts), the largest among equals: the maps' view of a managed
 * heap, by the rule of os_gen_resv_heap. */
struct os_gen_maps {
	bool vm;
	char vm_lib[64];
	uint64_t heap_lo, heap_hi;   /* the region chosen, 0 0: none */
	uint64_t heap_committed;
	/* the region being walked */
	uint64_t cur_lo, cur_hi, cur_committed;
	bool cur_reserved;
};

void os_gen_maps_init(struct os_gen_maps *m);
void os_gen_maps_add(struct os_gen_maps *m, const struct os_maps_entry *e);
void os_gen_maps_end(struct os_gen_maps *m);

#endif
