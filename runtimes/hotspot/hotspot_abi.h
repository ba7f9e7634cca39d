/* hotspot_abi.h - what the HotSpot adapter inside the target (runtimes/hotspot/target/)
 * tells the collector's HotSpot adapter (runtimes/hotspot/) when the JVM
 * is up: the frames area of an OS_EV_JVM event holds one struct os_jvm_info.
 *
 * All addresses are target addresses. The vmStructs tables are read by the
 * collector from the target's memory (process_vm_readv), never hard-coded:
 * the table addresses and their entry layouts are the values of libjvm's
 * exported gHotSpotVM* variables, read in-process with dlsym.
 */
#ifndef OBJSCOPE_HOTSPOT_ABI_H
#define OBJSCOPE_HOTSPOT_ABI_H

#include <stdint.h>

struct os_jvm_table {
	uint64_t addr;        /* value of gHotSpotVMStructs / Types / IntConstants / LongConstants */
	uint64_t stride;      /* gHotSpotVM*EntryArrayStride */
	uint64_t off[6];      /* entry field offsets, see below */
};

/* off[] of each table, in this order:
 *  structs:   TypeName, FieldName, TypeString, IsStatic, Offset, Address
 *  types:     TypeName, SuperclassName, IsOopType, IsIntegerType, IsUnsigned, Size
 *  int/long constants: Name, Value, -, -, -, - */
enum { OS_JVM_STRUCTS, OS_JVM_TYPES, OS_JVM_INTS, OS_JVM_LONGS, OS_JVM_NTABLES };

struct os_jvm_info {
	struct os_jvm_table tables[OS_JVM_NTABLES];
	uint64_t heap_start, heap_end;       /* CollectedHeap::_reserved; ZGC: [0, offset mask + 1):
					      * JALLOC/MOVES addresses are colorless, mask
					      * sampled addresses with heap_end - 1 */
	uint64_t interp_start, interp_end;   /* interpreter code (StubQueue buffer) */
	uint64_t libjvm_base;                /* load address of libjvm.so */
	uint32_t mode;                       /* OS_JVM_MODE_* actually in force */
	uint32_t flags;                      /* OS_JVM_F_* (below) */
	char gc[32];                         /* "G1", "Parallel", "Serial", "Z", "Shenandoah", "Epsilon" */
	uint64_t tlab_bytes;                 /* OS_JVM_MODE_HYBRID: the fixed TLAB size T in
					      * force (TLABSize); 0 in the other modes. Last
					      * field: a collector reading an older, shorter
					      * struct finds 0 here */
};

/* struct os_jvm_info.flags (and the OS_EV_JVM event's aux2). */
#define OS_JVM_F_ZGC 0x1           /* colored pointers: mask addresses */
#define OS_JVM_F_CONCURRENT 0x2    /* ZGC/Shenandoah: moves are best effort */
#define OS_JVM_F_TLAB_DITHER 0x4   /* hybrid: each next TLAB size drawn from [T/2, 3T/2) */
#define OS_JVM_F_MAP_OURS 0x8      /* /tmp/perf-PID.map is written at exit only because launch
				    * mode added -XX:+DumpPerfMapAtExit: remove it once read */
#define OS_JVM_F_MAP_REFUSED 0x20  /* /tmp/perf-PID.map was a link or another user's file
				    * at the JVM's start: -XX:+DumpPerfMapAtExit not added */
#define OS_JVM_F_TLAB_STEERED 0x40 /* attach: hybrid TLABs steered in the running JVM (each
				    * refill writes the thread's next _desired_size and its
				    * _refill_waste_limit); the JVM's own sizing resumes at its
				    * first collection after the detach */
#define OS_JVM_F_SMALL_MOVES 0x80  /* moves of objects <= OS_HS_FWD_MAX_BYTES are logged too
				    * (read from forwarding pointers: hotspot_fwd.c) */
#define OS_JVM_F_NONSAFEPOINT_DEBUG 0x10 /* -XX:+DebugNonSafepoints: PcDescs between safepoints
					  * too, so an interrupted compiled pc has its inlined
					  * methods (runtimes/hotspot/hotspot_scopes.h) */

enum {
	OS_JVM_MODE_EXACT = 1,   /* every object >= min_size reaches the allocation hooks */
	OS_JVM_MODE_SAMPLED = 2, /* TLAB refills: objects seen with probability ~ size/TLAB */
	OS_JVM_MODE_HYBRID = 3,  /* fixed TLAB of tlab_bytes T: objects >= T all seen, smaller
				  * ones (>= min_size) with probability size / T */
};

/* The third word of each OS_EV_MOVES triple: bytes | sequence << 40. The
 * sequence is a process-wide 24-bit counter taken inside the copy, so a
 * copy that depends on an earlier one (a ParallelCompact shadow region
 * copied back after it was filled) always has a larger number. */
#define OS_HS_MOVE_SEQ_SHIFT 40
#define OS_HS_MOVE_SEQ_BITS 24

/* Small objects' moves read from their forwarding pointers at the end of a
 * collection (runtimes/hotspot/target/hotspot_fwd.c): objects of at most
 * OS_HS_FWD_MAX_BYTES (copied inline by the JVM, never through memcpy).
 * OS_EV_GC_END carries OS_HS_FWD_WORDS payload words, cumulative counts:
 * moves read, objects not followed because the target's table was full,
 * mark words that could not be read (or pointed outside the heap). */
#define OS_HS_FWD_MAX_BYTES 64

/* Hybrid mode: an object below min_size that a TLAB refill exposed is only
 * the evidence of where its class's objects come from (estimated allocation
 * paths); one in OS_HS_SMALL_THIN of them is kept (the others counted as
 * small), marked by OS_HS_THIN_BIT in the JALLOC event's aux (the TLAB
 * bytes), and weighs OS_HS_SMALL_THIN times its hybrid weight. A stack
 * walk in the target and a path expansion in the collector each is most of
 * objscope's fixed cost on allocation-heavy programs (javac: ~40,000 such
 * events in 25 CPU-seconds). */
#define OS_HS_SMALL_THIN 2u
#define OS_HS_THIN_BIT (1ULL << 63)
/* Focus (docs/JAVA.md "Focus: evidence where it is missing"): while the
 * collector names a class in os_shm_hdr.hs_focus_klass, hybrid TLABs are
 * drawn around OS_HS_FOCUS_TLAB bytes (where that is below T) and objects
 * of that class are not thinned, so that more of them are seen at
 * allocation. An object seen at the refill that ends a TLAB drawn so has
 * OS_HS_FOCUS_BIT in its JALLOC aux: its weight uses OS_HS_FOCUS_TLAB. */
#define OS_HS_FOCUS_TLAB 4096u
#define OS_HS_FOCUS_BIT (1ULL << 62)
enum { OS_HS_FWD_MOVED = 0, OS_HS_FWD_FULL = 1, OS_HS_FWD_UNREAD = 2, OS_HS_FWD_WORDS = 3 };

/* G1: the generations of the heap's regions as the collection left them,
 * read by the target's GC-end hook (runtimes/hotspot/target/
 * hotspot_g1gens.c), after the OS_HS_FWD_WORDS in the GC_END record:
 *   word 0  OS_HS_GENS_MAGIC | shift << 8 (log2 of the region size)
 *   word 1  the address of region 0 (bias << shift)
 *   word 2  regions
 *   then 4 bits per region, OS_HS_GENS_PER_WORD to a word, low bits first:
 *   OS_HS_GENS_{UNKNOWN,FREE,YOUNG,OLD,HUGE}.
 * Absent (GC_END with OS_HS_FWD_WORDS words only) when not G1, not read or
 * more regions than the record holds: the collector reads the table then. */
#define OS_HS_GENS_MAGIC 0x47ULL /* 'G' */
#define OS_HS_GENS_HDR 3
#define OS_HS_GENS_PER_WORD 16
#define OS_HS_GENS_MAX_REGIONS 16000u
enum { OS_HS_GENS_UNKNOWN = 0, OS_HS_GENS_FREE = 1, OS_HS_GENS_YOUNG = 2, OS_HS_GENS_OLD = 3,
       OS_HS_GENS_HUGE = 4 };

#define OS_JVM_INFO_WORDS ((sizeof(struct os_jvm_info) + 7) / 8)

/* Environment variable the collector sets for the preload: "exact", "hybrid"
 * or "sampled" (unset or anything else: exact). */
#define OS_JAVA_MODE_ENV "OBJSCOPE_JAVA_MODE"
/* Hybrid mode's TLAB size T in bytes (decimal); the preload uses
 * max(T, min_size, 1024), 32768 when unset or not a number. */
#define OS_JAVA_TLAB_ENV "OBJSCOPE_JAVA_TLAB"
#define OS_JAVA_TLAB_DEFAULT 32768
/* "1": launch mode adds -XX:+PreserveFramePointer even where JIT frames can
 * be walked without it (--java-frame-pointers). */
#define OS_JAVA_FP_ENV "OBJSCOPE_JAVA_FP"

#endif
