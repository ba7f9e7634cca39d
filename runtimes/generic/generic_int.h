/* generic_int.h - the generic adapter's state shared by its files
 * (generic.c: the VMs and the ops that look one up; generic_probe.c: what
 * the mappings say; generic_jit.c: perf maps; generic_notes.c: notes).
 * Not a contract. */
#ifndef OBJSCOPE_GENERIC_INT_H
#define OBJSCOPE_GENERIC_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "attacher/core/attrib.h"
#include "common/hashmap.h"
#include "runtimes/generic/generic.h"

/* Frame word of the managed heap's line (a context of its own, no frame). */
#define GEN_WORD_HEAP 0x1000000000000001ULL
#define GEN_HEAP_NAME "[managed heap of an unknown runtime: objects not identified]"

/* Where the heap's bounds come from (note figure "from"). */
enum gen_heap_from {
	GEN_HEAP_NONE = 0,
	GEN_HEAP_EVENTS = 1, /* the VM library's reservation most committed (mmap events) */
	GEN_HEAP_MAPS = 2,   /* the maps' partly uncommitted region most committed */
};

/* What became of the perf map (note figure "map"). */
enum gen_map {
	GEN_MAP_NONE = 0,    /* no /tmp/perf-PID.map */
	GEN_MAP_READ = 1,
	GEN_MAP_REFUSED = 2, /* there but not read (a link, not regular, another owner, too large) */
};

/* An executable file mapping of the last maps read, and whether it is a VM
 * library: who made a reservation (its mmap's caller). */
struct gen_mod {
	uint64_t lo, hi;
	bool vm;
};

/* One address space (every one that had samples or mappings: a VM or not). */
struct gen_vm {
	uint32_t asid, pid;
	uid_t uid;
	bool vm;                  /* a VM library is mapped */
	bool forgotten;           /* another runtime claimed it (op forget) */
	char lib[64];             /* the VM library seen first (its base name) */
	uint64_t seen_ns;         /* when it was found to be a VM (collector clock) */
	struct os_gen_resvs resvs; /* reservations made by the VM's library */
	uint64_t resv_seen;       /* reservations seen, the VM's or not */
	uint64_t maps_lo, maps_hi; /* the maps' view of the heap, last read */
	uint64_t heap_lo, heap_hi; /* the managed heap, [lo, hi) */
	uint32_t heap_from;       /* enum gen_heap_from */
	uint64_t probed_ns;       /* last read of its maps */
	uint32_t probes;
	struct gen_mod *mods;
	size_t nmods, capmods;
	uint32_t ctx;             /* the heap line's context, OS_NONE until used */
	uint64_t heap_samples;    /* charged to the heap line */
	uint64_t grace_samples;   /* in the heap during the grace time: counted only */
	uint64_t gc_copies, gc_bytes; /* copies by GC threads inside the heap */
	uint64_t gc_copies_out;   /* ... with an end outside it (not the heap's) */
	uint32_t map;             /* enum gen_map */
	int map_err;              /* its errno when refused */
};

struct generic {
	struct os_runtime rt;
	struct os_attrib *a;
	struct os_symbolizer *sym;
	uint64_t grace_ns;        /* auto mode: a specific runtime's time to claim a VM */
	bool moves;               /* the in-target side logs GC threads' copies (forced,
				   * launch mode: OS_SHM_F_MOVES) */
	struct gen_vm **vms;
	size_t nvms, capvms;
	struct os_hmap asid2vm;   /* asid -> index in vms */
	struct os_hmap pid2vm;    /* pid -> index in vms (its latest image) */
};

struct generic *gen_of(struct os_runtime *rt);
struct gen_vm *gen_vm_find(struct generic *g, uint32_t asid);
struct gen_vm *gen_vm_get(struct generic *g, struct os_aspace *as);
/* The heap of v from what is known (reservations, else the maps' view). */
void gen_heap_update(struct gen_vm *v);

/* generic_probe.c: ops mapping and sample_taken. */
void gen_mapping(struct os_runtime *rt, struct os_aspace *as, const struct os_event *ev);
void gen_sample_taken(struct os_runtime *rt, struct os_aspace *as, uint64_t addr);

/* generic_jit.c: op before_symbolize. */
void gen_before_symbolize(struct os_runtime *rt);

/* generic_notes.c: op notes. */
void gen_notes(struct os_runtime *rt, struct os_profile *p);

#endif
