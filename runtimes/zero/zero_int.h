/* zero_int.h - the Zero adapter's state shared by its files (zero.c,
 * zero_notes.c), not a contract. */
#ifndef OBJSCOPE_ZERO_INT_H
#define OBJSCOPE_ZERO_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "common/hashmap.h"
#include "runtimes/runtime.h"
#include "runtimes/zero/zero_abi.h"

/* One Zero JVM (an address space whose threads sent the hello). */
struct zero_jvm {
	uint32_t asid, pid;
	uint64_t ranges[2 * OS_ZERO_MAX_RANGES]; /* the bytecode interpreter's code */
	uint32_t nranges;
	uint32_t mode;           /* OS_JVM_MODE_* of the JVM event (instances are weighed by it) */
	uint32_t istate_words;   /* zero_frames.h: where an istate lies below its frame (0: unknown) */
	uint64_t jvm_lo, jvm_hi; /* libjvm's executable segment */
	uint64_t samples;        /* addressed samples */
	uint64_t interp;         /* ... whose accessing instruction is in the interpreter */
	uint64_t named;          /* ... whose Java method was found (zero_access.c) */
	uint64_t chain_bad;      /* ... whose callers' Zero frames did not follow the rules */
	uint64_t no_java;        /* allocation paths without the Java frames (OS_ZERO_A_NO_JAVA) */
	uint64_t allocs;         /* OS_EV_JALLOC events */
	uint64_t arrays;         /* ... of arrays (weight 1) */
	uint64_t mismatch;       /* allocations the hook did not send (hello's size) */
};

struct zero {
	struct os_runtime rt;
	struct os_runtime *hs;   /* the HotSpot adapter the ops go to */
	struct zero_jvm *jvms;
	size_t njvms, capjvms;
	struct os_hmap asid2jvm; /* asid -> index in jvms */
};

struct zero *zero_of(struct os_runtime *rt);
struct zero_jvm *zero_jvm_find(struct zero *z, uint32_t asid);

/* zero_access.c: runtime.h op java_walk. */
uint32_t zero_java_walk(struct os_runtime *rt, uint32_t asid, const struct os_rt_frame *start,
			bool leaf, os_rt_read read, void *arg, uint64_t *frames, uint32_t max);

/* zero_notes.c: the notes of every Zero JVM (runtime.h op notes). */
struct os_profile;
void zero_notes(struct zero *z, struct os_profile *p);

#endif
