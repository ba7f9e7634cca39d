/* runtime.h - the contract between the collector and a runtime adapter
 * (a JVM, ...): everything a runtime provides to the collector, the
 * attach path and the report goes through these types and ops; nothing
 * outside runtimes/<name>/ names a runtime. docs/RUNTIMES.md says how to
 * add one (a folder, a line in runtimes/registry.c, the in-target plug of
 * preload/adapter.h).
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
 *
 * Several runtimes: the collector creates every runtime of the registry
 * (os_runtimes_new) and sees one struct os_runtime whose ops dispatch to
 * them. An address space belongs to the first runtime that claims it (op
 * claim, asked in registry order when an event the generic code does not
 * know arrives for an address space nobody owns); the ops of an owned
 * address space go to its owner alone. For an address space nobody owns
 * the runtimes are asked in order and the first answer that is not the
 * "do not know" one (pc unchanged, 0, false, OS_RT_WORD_UNKNOWN, NULL, -1,
 * the path unchanged) stands: a runtime answers "do not know" for an
 * address space it does not know.
 */
#ifndef OBJSCOPE_RUNTIME_H
#define OBJSCOPE_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct os_aspace;
struct os_attrib;
struct os_event;
struct os_note_counters;
struct os_obj_event;
struct os_opts;
struct os_profile;
struct os_rt_plan;
struct os_runtime;
struct os_symbolizer;

/* Reads len bytes at addr of the sampled stack copy (or another source)
 * into buf; false when it cannot (outside the copy). */
typedef bool (*os_rt_read)(void *arg, uint64_t addr, void *buf, size_t len);

/* A frame of a sampled stack, runtime neutral: pc, its stack pointer (at
 * its call site: the value rsp has once the callee returned) and the value
 * of the frame pointer register in it. regs: the interrupted frame's user
 * registers as the sampler took them, indexed by enum os_reg
 * (attacher/core/decode.h: OS_REG_AX .. OS_REG_R15, OS_REG_COUNT of them),
 * NULL for a caller (its registers are not known): a runtime that keeps a
 * value in a register of its own (an interpreter's bytecode pointer) reads
 * it there. */
struct os_rt_frame {
	uint64_t pc, sp, fp;
	const uint64_t *regs;
};

/* What a frame word not being a user address is (name_word). */
enum os_rt_word {
	OS_RT_WORD_UNKNOWN = 0, /* not the adapter's, or not resolvable */
	OS_RT_WORD_FRAME = 1,   /* a Java method: *name is "pkg.Class.method" */
	OS_RT_WORD_TYPE = 2,    /* the context's type, not a frame: *name is the class */
	OS_RT_WORD_SYNTHETIC = 3, /* a marker frame ("[allocated before attach ...]") */
};

/* Outermost frame word of the access paths of samples a runtime's GC
 * threads took (thread_kind OS_THR_GC): the collector's own accesses
 * (copying, marking) are access paths apart from the program's own. The
 * collector adds it; an adapter whose thread_kind says OS_THR_GC names it
 * (name_word, OS_RT_WORD_SYNTHETIC, OS_RT_GC_THREAD_NAME). */
#define OS_RT_WORD_GC_THREAD 0x2000000000000100ULL
#define OS_RT_GC_THREAD_NAME "[GC thread: the garbage collector's own access (copying, marking)]"

struct os_runtime_ops {
	const char *name;
	/* Drain time: whether the runtime takes address space as, which sent
	 * ev (an event type the generic code does not know) and is owned by no
	 * runtime yet; asked in registry order, the first yes owns as from then
	 * on. NULL: claims every such address space (a catch-all, last in the
	 * registry). */
	bool (*claim)(struct os_runtime *rt, struct os_aspace *as, const struct os_event *ev);
	/* Drain time (the target is alive): reduces an event of a type the
	 * generic code does not know. Returns true when *oe was filled and must
	 * be applied later in time order, false when the event was consumed
	 * (or dropped) here. */
	bool (*prepare)(struct os_runtime *rt, struct os_aspace *as, const struct os_event *ev,
			struct os_obj_event *oe);
	/* Drain time: the frame word for an access-path frame of asid at pc
	 * whose frame pointer is fp (an interpreted frame: OS_FRAME_METHOD |
	 * the runtime's method word, with its source line when known, its name
	 * cached while the target is alive), or pc itself. leaf_regs: the
	 * interrupted frame's user registers (struct os_rt_frame.regs), NULL
	 * for a caller. read(arg, addr, &word) reads the sampled stack copy
	 * (false outside). */
	uint64_t (*frame_word)(struct os_runtime *rt, uint32_t asid, uint64_t pc, uint64_t fp,
			       const uint64_t *leaf_regs,
			       bool (*read)(void *arg, uint64_t addr, uint64_t *word), void *arg);
	/* Drain time: the access path of a sample of asid from frame *start
	 * (leaf: the interrupted frame itself) whose pc lies in the runtime's
	 * code (JIT code, interpreter, stubs), walked by the runtime's frame
	 * rules over the sampled stack copy (read: false outside the copy;
	 * start->regs set for a leaf). frames[] get the words frame_word
	 * gives (interpreted methods named, other pcs as they are); the walk
	 * ends before the first pc that is neither the runtime's code nor in a
	 * known executable mapping. Returns the number of frames, 0 when
	 * start->pc is not in such code (or it cannot be walked: the caller
	 * keeps its own way). */
	uint32_t (*java_walk)(struct os_runtime *rt, uint32_t asid, const struct os_rt_frame *start,
			      bool leaf, os_rt_read read, void *arg, uint64_t *frames, uint32_t max);
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
	/* Time order: a sample of as in the managed heap (in_heap) that no
	 * tracked object holds: the runtime may find the object (reading the
	 * target) and add it to as->objects; returns its context, or OS_NONE
	 * (attrib.h os_attrib.heap_miss, which the dispatcher of
	 * os_runtimes_new takes). */
	uint32_t (*heap_miss)(struct os_runtime *rt, struct os_aspace *as, uint64_t addr);
	/* Drain time: an anonymous mapping of as was made, cut or moved
	 * (OS_EV_MMAP, its allocation path in ev->frames; OS_EV_MUNMAP;
	 * OS_EV_MREMAP) and is about to be tracked by the generic code as
	 * usual: a runtime that finds its managed heap from the mappings
	 * (runtimes/generic/) watches them here. */
	void (*mapping)(struct os_runtime *rt, struct os_aspace *as, const struct os_event *ev);
	/* Time order: whether the managed heap of asid at addr (in_heap) holds
	 * objects that no adapter tracks (a runtime known from its mappings
	 * alone): such a sample goes to heap_miss even where a native mapping
	 * covers it, for the mappings the heap was made of are no objects. */
	bool (*heap_opaque)(struct os_runtime *rt, uint32_t asid, uint64_t addr);
	/* Drain time: another runtime claimed asid; this one drops what it
	 * kept for it and answers "do not know" for it from now on. */
	void (*forget)(struct os_runtime *rt, uint32_t asid);
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
	/* The type of a context of asid that has no type word, from its
	 * allocation path's function names (leaf first; NULL where a frame has
	 * none): the runtime's own native memory (a JVM's metaspace, code
	 * cache, arenas), or NULL. The name lives as long as rt. */
	const char *(*native_type)(struct os_runtime *rt, uint32_t asid, const char *const *names,
				   uint32_t n);
	/* enum os_thread_kind of a thread of pid, or -1 when the adapter does
	 * not know the process. */
	int (*thread_kind)(struct os_runtime *rt, uint32_t pid, const char *name);
	/* Attach mode (`objscope attach`, attacher/cli/cmd_attach.c): the
	 * running process pid was attached and plan says what the runtime's
	 * in-target attach did (common/attach_abi.h: detours active, managed
	 * stacks). Objects first seen later may then be "allocated before
	 * attach". Called for the runtime named in the plan. */
	void (*attached)(struct os_runtime *rt, uint32_t pid, const struct os_rt_plan *plan);
	/* Attach mode, after the detach (pid still runs), before the last
	 * rounds: the runtime fetches what names its code (a JVM writes its
	 * perf map on request). A line for the profile's notes when that
	 * failed goes to note (note[0] = 0 otherwise). */
	void (*detached)(struct os_runtime *rt, uint32_t pid, const struct os_rt_plan *plan,
			 char *note, size_t len);
	/* Adds the adapter's notes (what the figures mean, best-effort parts)
	 * to the profile, as counters (os_profile_note_group and its figures),
	 * which the factory's render_note turns into sentences at report time. */
	void (*notes)(struct os_runtime *rt, struct os_profile *p);
	/* Estimated allocation paths (os_ctx.path_*, evidence, path_var),
	 * again from the start: while recording (at time now, os_now_ns), for
	 * the budget's settled rule (os_attrib_estimate); notes runs it again
	 * for the profile. Returns the class word whose objects the target
	 * should expose more (common/shm.h hs_focus_klass), 0: none. */
	uint64_t (*estimate)(struct os_runtime *rt, uint64_t now);
	void (*destroy)(struct os_runtime *rt);
};

struct os_runtime {
	const struct os_runtime_ops *ops;
	void *priv;
};

/* A runtime of the registry (runtimes/registry.c): its name and its
 * constructor. create returns NULL on out of memory; a runtime stays
 * dormant (every op "do not know") until an address space announces it. */
struct os_runtime_factory {
	const char *name;
	struct os_runtime *(*create)(struct os_attrib *a, struct os_symbolizer *sym);
	/* `objscope record`, in the child about to exec the command: sets the
	 * environment the runtime's in-target side reads (its options: a JVM's
	 * --java-objects mode). May be NULL. */
	void (*launch_env)(const struct os_opts *o);
	/* Report time: the sentence of a note the runtime kept as counters
	 * (common/profile.h os_note_counters, kind "<name>.<what>") into buf;
	 * its length, 0 when it knows no such kind. May be NULL. */
	size_t (*render_note)(const struct os_profile *p, const struct os_note_counters *g,
			      char *buf, size_t len);
	/* Whether the collector creates this runtime for options o (an option
	 * that selects one runtime over another). NULL: always. */
	bool (*wanted)(const struct os_opts *o);
	/* OS_SHM_F_* bits the runtime's in-target side needs in the rings'
	 * header (common/shm.h), for options o; asked for the wanted runtimes
	 * before the rings are made. May be NULL. */
	uint32_t (*shm_flags)(const struct os_opts *o);
};

/* The registry: every runtime the collector knows, in the order they are
 * asked to claim an address space; os_nruntimes of them. */
extern const struct os_runtime_factory os_runtimes[];
extern const size_t os_nruntimes;

/* Creates every runtime of the registry that options o want (all of them
 * when o is NULL) and returns the one runtime whose ops dispatch to them
 * (runtimes/dispatch.c); NULL on out of memory. Its destroy destroys them
 * all. */
struct os_runtime *os_runtimes_new(struct os_attrib *a, struct os_symbolizer *sym,
				   const struct os_opts *o);
/* Whether options o select runtime name: --runtime auto (o->runtime
 * NULL, or o NULL) selects every runtime, --runtime NAME that one alone
 * (for a factory's wanted). */
bool os_runtime_selected(const struct os_opts *o, const char *name);
/* The OS_SHM_F_* bits of the runtimes options o want (shm_flags). */
uint32_t os_runtimes_shm_flags(const struct os_opts *o);

/* os_note_render_fn (common/profile.h) over the registry: the runtime
 * whose name begins the note's kind renders it. */
size_t os_runtimes_render_note(const struct os_profile *p, const struct os_note_counters *g,
			       char *buf, size_t len);

/* The dispatching runtime over rts[0..n) (taken over: destroyed with it,
 * or at once when this fails); os_runtimes_new over the registry's. NULL
 * on out of memory. */
struct os_runtime *os_runtimes_of(struct os_runtime *const *rts, size_t n);

/* The runtime named name inside rt (rt itself when it is that runtime, or
 * one of the runtimes a dispatcher made by os_runtimes_new holds), or NULL. */
struct os_runtime *os_runtime_find(struct os_runtime *rt, const char *name);

#endif
