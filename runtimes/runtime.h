/* runtime.h - the collector's plug for runtime adapters (HotSpot, ...).
 *
 * The generic collector knows native objects: malloc/free/realloc and
 * anonymous mmaps (attrib.c); that is the default behaviour and needs no
 * adapter. A runtime adapter gives a meaning to the ring events the generic
 * code does not know (OS_EV_JVM, OS_EV_JALLOC, OS_EV_MOVE(S),
 * OS_EV_GC_BEGIN/END), names the frame words it put into allocation paths
 * (words with bits above 47 set, never user addresses: interpreted Java
 * methods, the type of a context), names JIT code and classifies threads.
 *
 * One adapter instance (struct os_runtime) serves every address space of a
 * collection; it keeps its own per-address-space state. Every op may be
 * NULL. Return convention: see each op; -errno where an int error is given.
 */
#ifndef OBJSCOPE_RUNTIME_H
#define OBJSCOPE_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtimes/hotspot/hs_frames.h"

struct os_aspace;
struct os_event;
struct os_obj_event;
struct os_profile;
struct os_runtime;

/* What a frame word not being a user address is (name_word). */
enum os_rt_word {
	OS_RT_WORD_UNKNOWN = 0, /* not the adapter's, or not resolvable */
	OS_RT_WORD_FRAME = 1,   /* a Java method: *name is "pkg.Class.method" */
	OS_RT_WORD_TYPE = 2,    /* the context's type, not a frame: *name is the class */
	OS_RT_WORD_SYNTHETIC = 3, /* a marker frame ("[allocated before attach ...]") */
};

struct os_runtime_ops {
	const char *name;
	/* Drain time (the target is alive): reduces an event of a type the
	 * generic code does not know. Returns true when *oe was filled and must
	 * be applied later in time order, false when the event was consumed
	 * (or dropped) here. */
	bool (*prepare)(struct os_runtime *rt, struct os_aspace *as, const struct os_event *ev,
			struct os_obj_event *oe);
	/* Drain time: the frame word for an access-path frame of asid at pc
	 * whose frame pointer is fp (an interpreted frame: OS_FRAME_METHOD |
	 * Method*, with its source line when known, its name cached while the
	 * target is alive), or pc itself. leaf_bcp: the interrupted frame's
	 * bytecode pointer register (NULL for a caller, whose frame holds it).
	 * read(arg, addr, &word) reads the sampled stack copy (false outside). */
	uint64_t (*frame_word)(struct os_runtime *rt, uint32_t asid, uint64_t pc, uint64_t fp,
			       const uint64_t *leaf_bcp,
			       bool (*read)(void *arg, uint64_t addr, uint64_t *word), void *arg);
	/* Drain time: the access path of a sample of asid from frame *start
	 * (leaf: the interrupted frame itself) whose pc lies in the runtime's
	 * code (JIT code, interpreter, stubs), walked by the runtime's frame
	 * rules over the sampled stack copy (read: runtimes/hotspot/hs_frames.h's
	 * reader, false outside the copy). frames[] get the words frame_word
	 * gives (interpreted methods named, other pcs as they are); the walk
	 * ends before the first pc that is neither the runtime's code nor in a
	 * known executable mapping. Returns the number of frames, 0 when
	 * start->pc is not in such code (or it cannot be walked: the caller
	 * keeps its own way). */
	uint32_t (*java_walk)(struct os_runtime *rt, uint32_t asid, const struct os_hsf_frame *start,
			      bool leaf, os_hsf_read read, void *arg, uint64_t *frames, uint32_t max);
	/* Drain time: a native allocation path (OS_EV_ALLOC/REALLOC/MMAP) of
	 * as is about to be interned; words of the runtime in it (interpreted
	 * methods) are named now, while the target holds them, and frames of
	 * the runtime's compiled code may be rewritten (the methods inlined
	 * there): the path to intern goes to out (at most max words). Returns
	 * its length. Optional. */
	uint32_t (*path_words)(struct os_runtime *rt, struct os_aspace *as, const uint64_t *frames,
			       uint32_t n, uint64_t *out, uint32_t max);
	/* Drain time: a sample of as with data address addr was just read (it
	 * is applied later, in time order); the adapter may look at the
	 * target's memory now, while it is closest to the sample. */
	void (*sample_taken)(struct os_runtime *rt, struct os_aspace *as, uint64_t addr);
	/* Applies a prepared event in time order. */
	void (*apply)(struct os_runtime *rt, struct os_aspace *as, const struct os_obj_event *oe);
	/* Canonical form of a sampled data address of asid (ZGC colors). */
	uint64_t (*sample_addr)(struct os_runtime *rt, uint32_t asid, uint64_t addr);
	/* Whether a (canonical) data address of asid lies in a managed heap
	 * (the Java heap): reported apart, so that coverage of runtime objects
	 * is not hidden inside the native heap figures. */
	bool (*in_heap)(struct os_runtime *rt, uint32_t asid, uint64_t addr);
	/* Before symbolization: load what names JIT code (perf maps). */
	void (*before_symbolize)(struct os_runtime *rt);
	/* Names a frame word with bits above 47 set; *name lives as long as rt.
	 * A frame's source file and line go to *file and *line when known
	 * (file and line may be NULL; else *file NULL and *line 0 otherwise). */
	enum os_rt_word (*name_word)(struct os_runtime *rt, uint32_t asid, uint64_t word,
				     const char **name, const char **file, uint32_t *line);
	/* Rewrites a JIT symbol (perf map name) of asid into buf; returns buf,
	 * or NULL to keep the name as it is. */
	const char *(*jit_name)(struct os_runtime *rt, uint32_t asid, const char *raw, char *buf,
				size_t len);
	/* enum os_thread_kind of a thread of pid, or -1 when the adapter does
	 * not know the process. */
	int (*thread_kind)(struct os_runtime *rt, uint32_t pid, const char *name);
	/* Adds the adapter's notes (what the figures mean, best-effort parts). */
	void (*notes)(struct os_runtime *rt, struct os_profile *p);
	void (*destroy)(struct os_runtime *rt);
};

struct os_runtime {
	const struct os_runtime_ops *ops;
	void *priv;
};

#endif
