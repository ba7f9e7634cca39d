/* hotspot_int.h - the HotSpot adapter's state shared by its files
 * (hotspot.c: JVMs and the ops table; hotspot_naming.c, hotspot_events.c,
 * hotspot_samples.c, hotspot_frames.c, hotspot_stack.c, hotspot_inline.c,
 * hotspot_notes.c): not part of any contract, only included by them. */
#ifndef OBJSCOPE_HOTSPOT_INT_H
#define OBJSCOPE_HOTSPOT_INT_H

#include "runtimes/hotspot/hotspot.h"
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "attacher/core/collector.h"
#include "attacher/core/decode.h"
#include "runtimes/hotspot/hotspot_gc.h"
#include "runtimes/hotspot/hotspot_lines.h"
#include "runtimes/hotspot/hotspot_scan.h"
#include "runtimes/hotspot/hotspot_scopes.h"
#include "common/grow.h"
#include "runtimes/hotspot/hs_frames.h"
#include "runtimes/hotspot/hotspot_abi.h"
#include "common/log.h"
#include "common/safefs.h"

#define NAME_MAX_LEN 512
/* Java walks (hs_java_walk): code blobs looked up, cached per JVM */
#define HS_BLOBS_MAX 4096                 /* then the cache starts afresh */
#define HS_BLOBS_AGE_NS 2000000000ULL     /* ... and at least this often (code is
					   * freed by the sweeper too, not only at
					   * collections) */
#define HS_LINE 128                       /* remote reads of a lookup, in lines */
#define HS_LINES 4
#define HS_POPPED 256                     /* leaf pcs known to be at a return poll or not */
#define HS_SEGPAGES 32                    /* segment map pages kept between cache flushes */

/* A code blob [lo, hi) of the Java walk's cache. */
struct hs_blob_ent {
	uint64_t lo, hi;
	struct os_hsf_blob b;
};
/* Frame word of the context of objects allocated before the attach. */
#define HS_WORD_BEFORE 0x2000000000000001ULL
/* ... and of the objects smaller than --min-size found at a sample. */
#define HS_WORD_SMALL 0x2000000000000002ULL
#define HS_SMALL_NAME "[not seen at allocation: found at the sample, path estimated from its class]"
/* Frame words of an enum constant's context: HS_TAG_CLINIT | its enum's
 * Klass*, then HS_WORD_ENUM (hs_class_ctx). Java creates enum constants
 * only in their enum's static initializer (JLS 8.9: no other instance can
 * exist), so the path of one found at a sample is "E.<clinit>", inferred,
 * without its callers. */
#define HS_TAG_CLINIT 0x3000000000000000ULL
#define HS_WORD_ENUM 0x2000000000000003ULL
#define HS_ENUM_NAME "[enum constant: made by its class initializer (JLS 8.9), path inferred, callers not known]"
#define HS_BEFORE_NAME "[allocated before attach (or not sampled at allocation)]"
/* Why a Java-heap sample that no tracked object holds has no object
 * ("Java heap, object not identified", hs_heap_miss). */
enum { HS_UNID_GC = 0,      /* a collection began between the sample and the read */
       HS_UNID_GC_RUNNING,  /* a collection ran when the header was to be read */
       HS_UNID_NO_HEADER,   /* no plausible object header below the address */
       HS_UNID_SKIPPED,     /* lookup not made (rate limit, page known empty) */
       HS_UNID_NO_LOOKUP,   /* lookups off (ZGC, concurrent GC, vmStructs not read) */
       HS_UNID_N };
#define HS_BEFORE_MAX 50000        /* such objects added per collection */
#define HS_MLS_MAX 262144 /* methods whose line tables are kept */
#define HS_NMS_MAX 65536 /* nmethods kept; past it frames keep their pcs */

/* Why a JVM's perf map was not read (a note and a warning say so). */
enum { HS_MAP_OK = 0, HS_MAP_REFUSED_AT_START = 1, HS_MAP_NO_OPENAT2 = 2, HS_MAP_NOT_READ = 3 };
/* ... HS_MAP_NOT_READ: what the file is */
enum { HS_MAP_LINK = 1, HS_MAP_NOT_REGULAR = 2, HS_MAP_OTHER_USER = 3, HS_MAP_TOO_LARGE = 4 };

struct hs_map_issue {
	uint32_t issue, why, pid;
	bool owner_known;          /* HS_MAP_OTHER_USER: the file's and the JVM's uids */
	uint32_t owner_uid, jvm_uid;
	char path[160];
};

/* What was at a sampled address when the sample was read (launch mode). */
struct hs_pre {
	uint64_t klass;            /* 0: no object found (why: HS_UNID_*) */
	uint32_t size;
	uint32_t total;            /* _total_collections then (no collection running) */
	uint32_t why;
};

/* The generations of the heap (runtimes/hotspot/hotspot_gens.c). */
enum { HS_GENS_NONE = 0, HS_GENS_RANGE, HS_GENS_G1 };

/* G1 region generations read at one collection's end (enum os_gen each). */
struct hs_gsnap {
	uint32_t total;            /* _total_collections of that end */
	uint32_t shift;            /* log2 of the region size */
	uint32_t lag;              /* collections begun after it when it was read */
	uint64_t lo, n;            /* the first region's address, regions */
	uint8_t *gen;
};

#define HS_GSNAPS 64 /* ends drained, not applied yet */

struct hs_gens {
	int kind;                  /* HS_GENS_*: how young is told from old */
	uint64_t young_lo, young_hi; /* HS_GENS_RANGE: the young generation */
	/* HS_GENS_G1: offsets (from the heap object) of the region manager,
	 * of its table, of the table's fields, of a region's tag; YoungMask */
	uint64_t g1_hrm, g1_regions, g1_base, g1_length, g1_bias, g1_shift, g1_tag, g1_young;
	uint64_t g1_huge;          /* HumongousMask, 0 unknown */
	uint64_t *g1_words;        /* scratch for the reads */
	uint64_t g1_cap;
	uint64_t g1_failed;        /* ends whose table could not be read */
	uint64_t g1_in_target;     /* ends whose generations the target read (GC_END words) */
	uint64_t g1_read_late;     /* ends whose table the collector read when drained */
	struct hs_gsnap snap[HS_GSNAPS];
	unsigned nsnap;
	struct hs_gsnap cur;       /* the one of the end being applied */
};

struct hs_jvm {
	uint32_t asid, pid;
	bool have_info, vm_ok;
	bool map_ours;             /* its perf map is written only for objscope (OS_JVM_F_MAP_OURS) */
	uid_t uid;                 /* its owner when first seen: the only one (with root) */
	gid_t gid;                 /*   whose perf map is read, whose identity removes it */
	struct hs_map_issue map;   /* why its perf map was not read (issue 0: read or none) */
	struct os_jvm_info info;
	struct os_hs_vm vm;
	struct os_hmap names;      /* tagged word (klass / method) -> string index */
	struct os_hmap unnamed;    /* tagged words seen before vmStructs could be read
	                              (allocations inside JNI_CreateJavaVM): named then */
	struct hs_gens gens;       /* young and old (hotspot_gens.c) */
	struct os_hs_move *batch;  /* moves of the collection in progress */
	size_t nbatch, capbatch;
	uint64_t objects, gcs, moves, dropped;
	uint64_t small;            /* hybrid: objects seen below T (weight > 1) */
	double estimated;          /* sum of the weights of the objects seen */
	uint64_t moves_lost;       /* moves the target could not deliver (GC_END addr) */
	uint64_t fwd[OS_HS_FWD_WORDS]; /* small objects' moves read from mark words (GC_END
					* payload, OS_HS_FWD_*, cumulative) */
	uint64_t checked;          /* collections after which survivors were checked */
	uint64_t before;           /* objects first seen moved (attach: allocated before) */
	struct os_hs_scan scan;    /* objects found at sampled addresses */
	uint64_t scan_gc;          /* samples not looked up: a collection was running */
	uint32_t end_total;        /* _total_collections after the last GC end applied */
	bool in_gc;                /* a GC begin applied, its end not yet */
	/* launch mode: Java-heap samples no tracked object holds */
	struct os_hmap pre;        /* sampled address -> index + 1 into prev (since the
	                              last GC end applied) */
	struct hs_pre *prev;       /* objects found when the samples were read */
	uint64_t *prea;            /* ... at these addresses */
	size_t npre, cappre, capprea;
	uint64_t *pend;            /* read while a collection ran: read again after it */
	size_t npend, cappend;
	uint64_t small_found;      /* on an object < --min-size: charged to its class */
	uint64_t enum_found;       /* ... of them on enum constants: path E.<clinit> */
	struct os_hmap enum_of;    /* Klass* -> its enum's Klass* + 1 (1: not an enum constant) */
	struct os_hmap klass_lh;   /* Klass* -> Klass::_layout_helper | 1 << 32 (add_before_attach) */
	uint64_t small_big;        /* on an untracked object >= --min-size (estimates) */
	uint64_t small_gc;         /* not looked up: a collection since the sample */
	uint64_t unid[HS_UNID_N];  /* Java-heap samples whose object was not identified */
	/* estimated allocation paths (hotspot_paths.c): samples held by
	 * class-only contexts, shared out of them; classes held, shared */
	double pe_held, pe_shared;
	uint64_t pe_classes, pe_classes_shared;
	/* Java walks of access paths (hs_java_walk): the code heaps */
	struct os_hsf_layout frames;  /* frames.ok: walks possible */
	int64_t method_off;        /* interpreter frame's Method* slot, bytes from fp */
	bool method_ok;
	int64_t blob_size_off;     /* CodeBlob::_size (int), -1 unknown */
	struct hs_blob_ent *blobs; /* sorted by lo, disjoint */
	size_t nblobs, capblobs;
	uint64_t blobs_since;      /* when the cache was started afresh */
	uint64_t walks, walk_frames, blob_lookups, blob_misses, blob_flushes, walk_cut;
	uint64_t walk_popped;      /* leaves at a return poll, their frame popped */
	uint64_t blob_reads;       /* remote reads made by blob lookups */
	/* kept until the blob cache is flushed: each heap's _segmap._high + 1
	 * (0 unknown), and segment map pages (tag: page address + 1) */
	uint64_t seg_high[OS_HSF_MAX_HEAPS];
	uint64_t segpage_tag[HS_SEGPAGES];
	uint8_t (*segpage)[4096];
	uint64_t popped_pc[HS_POPPED]; /* leaf pc + 1 -> ... (direct mapped) */
	bool popped[HS_POPPED];    /* ... whether it lies at a return poll */
	/* compiled frames expanded into the methods inlined there
	 * (runtimes/hotspot/hotspot_scopes.h) */
	struct os_hs_scope_layout scl;
	struct os_hs_nm *nms;      /* nmethods read (method 0: a blob that is none) */
	size_t nnms, capnms;
	struct os_hmap nm_at;      /* blob start -> index into nms */
	uint32_t code_epoch;       /* counts blob cache flushes: cached nmethods checked again */
	/* allocation paths already expanded since the last blob flush: hash of
	 * (Klass*, raw frames) -> CCT node + 1 (hotspot_events.c prepare_alloc);
	 * emptied when code_epoch moves (code unloaded or replaced) */
	struct os_hmap paths;
	uint32_t paths_epoch;
	uint64_t paths_hits, paths_misses;
	uint64_t jit_frames, jit_expanded, jit_outer, jit_inlined, nm_reads, nm_stale;
	uint64_t nm_failed;        /* nmethods whose debug info could not be read or made no sense */
	uint64_t nm_full;          /* frames left to the perf map: HS_NMS_MAX nmethods kept */
	/* hs_jit_expand's answers by pc: the same pc of the same nmethod always
	 * expands to the same named words, so a hit skips the scope decoding,
	 * the name and line lookups */
	struct os_hmap jx_at;      /* pc << 1 | exact -> index into jx */
	struct hs_jx *jx;
	size_t njx, capjx;
	uint64_t *jxw;             /* the words, jx[i].n at jx[i].off */
	size_t njxw, capjxw;
	uint64_t jx_hits;
	uint32_t jx_gen;           /* counts restarts of the jx cache (indices then stale) */
	/* hs_expand_path's answers by raw frame word (direct mapped, HS_FX_SLOTS):
	 * a method word's canonical word (named), a compiled pc's expansion in
	 * jx for one code epoch; allocation paths repeat frames far more than
	 * whole paths (hotspot_inline.c) */
	struct hs_fx *fx;
	uint64_t fx_hits, fx_misses;
	/* source lines of Java frames (runtimes/hotspot/hotspot_lines.h) */
	struct os_hs_line_layout lil;
	struct hs_ml *mls;         /* methods read */
	size_t nmls, capmls;
	struct os_hmap ml_at;      /* Method* -> index + 1 into mls (0: could not be read) */
	struct os_hmap files;      /* ConstantPool* -> string index + 1 (0: no source file) */
	uint64_t line_frames;      /* Java frames given a line */
	uint64_t line_none;        /* ... left without one (no table, no file, bcp not known) */
	uint64_t ml_failed;        /* methods whose line table could not be read */
};

/* One raw frame word of allocation paths, as hs_expand_path made it. */
struct hs_fx {
	uint64_t raw;              /* the word as the preload sent it; 0: empty */
	uint64_t val;              /* method word: its canonical word; pc: index into jx */
	uint32_t epoch, gen;       /* pc: code_epoch and jx_gen it was made in */
	uint8_t kind;              /* HS_FX_METHOD, HS_FX_PC */
	uint8_t line;              /* method word: 1 counted in line_frames, 2 in line_none */
};
enum { HS_FX_METHOD = 1, HS_FX_PC = 2 };
#define HS_FX_SLOTS 16384

/* One cached expansion of a compiled frame (hs_jit_expand). */
struct hs_jx {
	uint64_t nm_start, method; /* the nmethod it was made from ... */
	int32_t compile_id;        /* ... and its compilation */
	uint32_t off, n;           /* words in jxw */
	bool outer;                /* the compiled method alone (no scope there) */
};

#define HS_FRAME_SLOTS_MAX 64 /* interpreter frame slots lie within this many words of fp */
#define HS_JX_MAX (1u << 20) /* cached expansions; the cache starts afresh when full */

/* A method's bytecodes and line table, and its source file. */
struct hs_ml {
	struct os_hs_mlines ml;
	uint32_t file;             /* string index + 1, 0: none */
};

/* Focus (hotspot_paths.c hs_focus_pick): the class whose objects hybrid
 * TLABs expose more while its sites cannot be told apart. */
struct hs_focus {
	uint64_t klass;            /* Klass* focused now, 0: none */
	uint32_t asid;             /* its JVM's */
	uint64_t since;            /* os_now_ns of this focus's start */
	uint64_t first, ns;        /* the first focus's start; focused time in all */
	uint64_t first_klass;      /* the first focus's class, asid */
	uint32_t first_asid, times;
	double ev0, ev;            /* its evidence (samples) when it began, at the last look */
	uint64_t start;            /* os_now_ns of the first estimate (the run's start) */
	uint64_t seen, seen_all;   /* JALLOC events from TLABs drawn in focus; from any TLAB */
};

struct hotspot {
	struct os_runtime rt;
	struct hs_focus focus;
	uint64_t focus_cand;       /* hs_paths_estimate's candidate for a focus (Klass*) */
	uint32_t focus_cand_asid;
	struct os_attrib *a;
	struct os_symbolizer *sym;
	struct os_hs_mem mem;
	struct os_hmap asid2jvm;   /* asid -> index in jvms */
	struct os_hmap pids;       /* pid -> 1 for JVM processes */
	struct hs_jvm **jvms;
	uint32_t njvms, capjvms;
	double estimated;          /* all JVMs with weighted objects: objects_estimated */
	struct os_hmap node2klass; /* allocation path node -> Klass* */
	struct os_hmap moved;      /* scratch: destinations of the current batch */
	struct os_hmap blocks;     /* move blocks queued, not applied yet (owned) */
	struct hs_jvm *checking;   /* the JVM whose survivors are being checked */
	uint32_t checking_total;   /* ... after its collection number checking_total */
	char **strs;               /* names handed out (owned) */
	uint32_t nstrs, capstrs;
	struct {                   /* attach mode (os_hotspot_attached) */
		bool on, remove_map;
		uint32_t pid;
		int preserve_fp, hooks;
		char map[128];     /* perf map the JVM wrote on request, "" none */
	} att;
};

/* The reader argument of remote reads of one JVM (hs_nm_rd). */
struct hs_rd {
	struct hotspot *h;
	struct hs_jvm *j;
};

/* The argument of hs_walk_find (os_hsf_find) during one walk. */
struct hs_walk {
	struct hotspot *h;
	struct hs_jvm *j;
};

/* hotspot.c */
struct hotspot *hs_of(struct os_runtime *rt);
struct hs_jvm *hs_jvm_find(struct hotspot *h, uint32_t asid);
struct hs_jvm *hs_jvm_get(struct hotspot *h, struct os_aspace *as);
uint64_t hs_canon(const struct hs_jvm *j, uint64_t addr);
bool hs_rd_u64(struct hotspot *h, struct hs_jvm *j, uint64_t addr, uint64_t *v);
bool hs_rd_i32(struct hotspot *h, struct hs_jvm *j, uint64_t addr, int32_t *v);

/* hotspot_naming.c */
int64_t hs_str_add(struct hotspot *h, const char *s);
bool hs_name_known(struct hs_jvm *j, uint64_t word);
void hs_name_klass(struct hotspot *h, struct hs_jvm *j, uint64_t klass);
void hs_name_clinit(struct hotspot *h, struct hs_jvm *j, uint64_t klass);
void hs_name_method(struct hotspot *h, struct hs_jvm *j, uint64_t word);
void hs_name_path_word(struct hotspot *h, struct hs_jvm *j, uint64_t word);
void hs_name_pending(struct hotspot *h, struct hs_jvm *j);
void hs_before_symbolize(struct os_runtime *rt);
#define HS_NATIVE_METASPACE "[JVM metaspace: class metadata]"
#define HS_NATIVE_GC "[JVM GC data structures]"
/* A label for the JVM's own native memory from an allocation path's
 * function names (leaf first), or NULL (hotspot_naming.c). */
const char *hs_native_type_of(const char *const *names, uint32_t n);
const char *hs_native_type(struct os_runtime *rt, uint32_t asid, const char *const *names,
			   uint32_t n);
enum os_rt_word hs_name_word(struct os_runtime *rt, uint32_t asid, uint64_t word,
			     const char **name, const char **file, uint32_t *line);
uint32_t hs_path_words(struct os_runtime *rt, struct os_aspace *as, const uint64_t *frames,
		       uint32_t n, uint64_t *out, uint32_t max);

/* hotspot_stack.c */
void hs_frames_resolve(struct hotspot *h, struct hs_jvm *j);
void hs_blobs_flush(struct hs_jvm *j);
void hs_blobs_maybe_flush(struct hs_jvm *j, uint64_t now);
bool hs_walk_find(void *arg, uint64_t pc, struct os_hsf_blob *b);
uint32_t hs_java_walk(struct os_runtime *rt, uint32_t asid, const struct os_rt_frame *start,
		      bool leaf, os_rt_read read, void *arg, uint64_t *frames, uint32_t max);

/* hotspot_events.c */
bool hs_prepare(struct os_runtime *rt, struct os_aspace *as, const struct os_event *ev,
		struct os_obj_event *oe);
uint32_t hs_class_ctx(struct hotspot *h, struct hs_jvm *j, struct os_aspace *as,
		   uint64_t klass, uint64_t word);
uint32_t hs_before_ctx(struct hotspot *h, struct hs_jvm *j, struct os_aspace *as,
		    uint64_t klass);
void hs_gens_load(struct hotspot *h, struct hs_jvm *j);
void hs_gens_drained(struct hotspot *h, struct hs_jvm *j, uint32_t total, const uint64_t *w,
		     uint32_t nw);
bool hs_gens_select(struct hs_jvm *j, uint32_t total);
/* enum os_gen (attrib.h) of addr as the last collection left it: of an
 * object it did not move (hs_gen_of), of where it moved one (_dest) */
uint32_t hs_gen_of(const struct hs_jvm *j, uint64_t addr);
uint32_t hs_gen_of_dest(const struct hs_jvm *j, uint64_t addr);
void hs_gens_free(struct hs_jvm *j);
void hs_apply(struct os_runtime *rt, struct os_aspace *as, const struct os_obj_event *ev);

/* hotspot_samples.c */
void hs_sample_taken(struct os_runtime *rt, struct os_aspace *as, uint64_t addr);
uint32_t hs_heap_miss(void *arg, struct os_aspace *as, uint64_t addr);
/* Whether samples on objects not seen at allocation are looked up (their
 * class read) in j. */
bool hs_lookups_on(const struct hotspot *h, const struct hs_jvm *j);
/* At the end of collection `total` applied: lookups read before it go. */
void hs_pre_prune(struct hs_jvm *j, uint32_t total);

/* hotspot_paths.c: the class-only contexts' samples shared out to the
 * sites of their classes (os_ctx.path_kind); called before the profile is
 * built, may be called again. */
void hs_paths_estimate(struct hotspot *h);
/* After hs_paths_estimate, while recording: the class to focus on (a
 * Klass*, 0: none), with its bookkeeping at time now (h->focus). */
uint64_t hs_focus_pick(struct hotspot *h, uint64_t now);
/* The note saying what the focus did (none when there was none). */
void hs_focus_note(struct hotspot *h, struct os_profile *p);
/* The Java name of a class already named (hs_name_klass), or NULL. */
const char *hs_klass_name(struct hotspot *h, struct hs_jvm *j, uint64_t klass);

/* hotspot_frames.c */
bool hs_nm_rd(void *arg, uint64_t addr, void *buf, size_t len);
const struct hs_ml *hs_ml_get(struct hotspot *h, struct hs_jvm *j, uint64_t m);
uint64_t hs_line_word(struct hotspot *h, struct hs_jvm *j, uint64_t m, int32_t bci);
uint64_t hs_canon_word(struct hotspot *h, struct hs_jvm *j, uint64_t w);
uint64_t hs_method_word(struct hotspot *h, struct hs_jvm *j, uint64_t pc, bool read,
		     uint64_t m, uint64_t bcp);
uint64_t hs_frame_word(struct os_runtime *rt, uint32_t asid, uint64_t pc, uint64_t fp,
		       const uint64_t *leaf_regs,
		       bool (*read)(void *arg, uint64_t addr, uint64_t *word), void *arg);

/* hotspot_inline.c */
uint32_t hs_jit_expand(struct hotspot *h, struct hs_jvm *j, const struct os_hsf_blob *b,
		    uint64_t pc, bool exact, uint64_t *out, uint32_t max);
uint32_t hs_expand_path(struct hotspot *h, struct hs_jvm *j, const uint64_t *in, uint32_t n,
		     uint64_t *out, uint32_t max, bool *named);

/* hotspot_notes.c */
/* The sentence of a perf map issue (the note and the warning). */
int hs_map_note(const struct hs_map_issue *m, char *buf, size_t len);
void hs_notes(struct os_runtime *rt, struct os_profile *p);

#endif
