/* hotspot.c - the HotSpot runtime adapter of the collector (see hotspot.h). */
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

/* What was at a sampled address when the sample was read (launch mode). */
struct hs_pre {
	uint64_t klass;            /* 0: no object found */
	uint32_t size;
	uint32_t total;            /* _total_collections then (no collection running) */
};

struct hs_jvm {
	uint32_t asid, pid;
	bool have_info, vm_ok;
	bool map_ours;             /* its perf map is written only for objscope (OS_JVM_F_MAP_OURS) */
	uid_t uid;                 /* its owner when first seen: the only one (with root) */
	gid_t gid;                 /*   whose perf map is read, whose identity removes it */
	char map_note[400];        /* why its perf map was not read, "" read or none */
	struct os_jvm_info info;
	struct os_hs_vm vm;
	struct os_hmap names;      /* tagged word (klass / method) -> string index */
	struct os_hmap unnamed;    /* tagged words seen before vmStructs could be read
	                              (allocations inside JNI_CreateJavaVM): named then */
	struct os_hs_move *batch;  /* moves of the collection in progress */
	size_t nbatch, capbatch;
	uint64_t objects, gcs, moves, dropped;
	uint64_t small;            /* hybrid: objects seen below T (weight > 1) */
	double estimated;          /* sum of the weights of the objects seen */
	uint64_t moves_lost;       /* moves the target could not deliver (GC_END addr) */
	uint64_t checked;          /* collections after which survivors were checked */
	uint64_t before;           /* objects first seen moved (attach: allocated before) */
	struct os_hs_scan scan;    /* objects found at sampled addresses */
	uint64_t scan_gc;          /* samples not looked up: a collection was running */
	uint32_t end_total;        /* _total_collections after the last GC end applied */
	/* launch mode: Java-heap samples no tracked object holds */
	struct os_hmap pre;        /* sampled address -> index + 1 into prev (since the
	                              last GC end applied) */
	struct hs_pre *prev;       /* objects found when the samples were read */
	size_t npre, cappre;
	uint64_t small_found;      /* on an object < --min-size: charged to its class */
	uint64_t small_big;        /* on an untracked object >= --min-size (estimates) */
	uint64_t small_gc;         /* not looked up: a collection since the sample */
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
	uint64_t jit_frames, jit_expanded, jit_outer, jit_inlined, nm_reads, nm_stale;
	uint64_t nm_failed;        /* nmethods whose debug info could not be read or made no sense */
	uint64_t nm_full;          /* frames left to the perf map: HS_NMS_MAX nmethods kept */
	/* jit_expand's answers by pc: the same pc of the same nmethod always
	 * expands to the same named words, so a hit skips the scope decoding,
	 * the name and line lookups */
	struct os_hmap jx_at;      /* pc << 1 | exact -> index into jx */
	struct hs_jx *jx;
	size_t njx, capjx;
	uint64_t *jxw;             /* the words, jx[i].n at jx[i].off */
	size_t njxw, capjxw;
	uint64_t jx_hits;
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

/* One cached expansion of a compiled frame (jit_expand). */
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

struct hotspot {
	struct os_runtime rt;
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

/* Frame word of the context of objects allocated before the attach. */
#define HS_WORD_BEFORE 0x2000000000000001ULL
/* ... and of the objects smaller than --min-size found at a sample. */
#define HS_WORD_SMALL 0x2000000000000002ULL
#define HS_SMALL_NAME "[smaller than --min-size: not tracked, found at the sample]"
#define HS_BEFORE_NAME "[allocated before attach (or not sampled at allocation)]"
#define HS_BEFORE_MAX 50000        /* such objects added per collection */

static struct hotspot *hs_of(struct os_runtime *rt)
{
	return rt->priv;
}

static struct hs_jvm *jvm_find(struct hotspot *h, uint32_t asid)
{
	uint64_t i;

	return os_hmap_get(&h->asid2jvm, asid, &i) ? h->jvms[i] : NULL;
}

/* The JVM's uid/gid (of /proc/PID), ours when it cannot be known: then only
 * our own or root's perf map is read. */
static void jvm_owner(struct hs_jvm *j)
{
	char proc[32];
	struct stat st;

	snprintf(proc, sizeof(proc), "/proc/%u", j->pid);
	j->uid = stat(proc, &st) == 0 ? st.st_uid : geteuid();
	j->gid = stat(proc, &st) == 0 ? st.st_gid : getegid();
}

static struct hs_jvm *jvm_get(struct hotspot *h, struct os_aspace *as)
{
	struct hs_jvm *j = jvm_find(h, as->id);

	if (j)
		return j;
	if (h->njvms == h->capjvms) {
		uint32_t cap = h->capjvms ? h->capjvms * 2 : 4;
		struct hs_jvm **n = realloc(h->jvms, cap * sizeof(*n));

		if (!n)
			return NULL;
		h->jvms = n;
		h->capjvms = cap;
	}
	j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	j->asid = as->id;
	j->pid = as->pid;
	jvm_owner(j);
	os_hmap_init(&j->names);
	os_hmap_init(&j->unnamed);
	os_hmap_init(&j->pre);
	os_hmap_init(&j->nm_at);
	os_hmap_init(&j->jx_at);
	os_hmap_init(&j->ml_at);
	os_hmap_init(&j->files);
	os_hs_scan_init(&j->scan);
	if (os_hmap_put(&h->asid2jvm, as->id, h->njvms) < 0) {
		free(j);
		return NULL;
	}
	os_hmap_put(&h->pids, as->pid, 1);
	h->jvms[h->njvms++] = j;
	return j;
}

static void jvm_free(struct hs_jvm *j)
{
	os_hs_vm_free(&j->vm);
	os_hmap_destroy(&j->names);
	os_hmap_destroy(&j->unnamed);
	os_hmap_destroy(&j->pre);
	free(j->prev);
	os_hs_scan_destroy(&j->scan);
	free(j->batch);
	free(j->blobs);
	free(j->segpage);
	for (size_t i = 0; i < j->nnms; i++)
		os_hs_nm_free(&j->nms[i]);
	free(j->nms);
	os_hmap_destroy(&j->nm_at);
	free(j->jx);
	free(j->jxw);
	os_hmap_destroy(&j->jx_at);
	for (size_t i = 0; i < j->nmls; i++)
		os_hs_mlines_free(&j->mls[i].ml);
	free(j->mls);
	os_hmap_destroy(&j->ml_at);
	os_hmap_destroy(&j->files);
	free(j);
}

static const char *str_at(struct hotspot *h, uint64_t idx)
{
	return idx < h->nstrs ? h->strs[idx] : NULL;
}

/* Keeps a copy of s: its index, or -1 (out of memory). */
static int64_t str_add(struct hotspot *h, const char *s)
{
	char *dup;

	if (h->nstrs == h->capstrs) {
		uint32_t cap = h->capstrs ? h->capstrs * 2 : 256;
		char **n = realloc(h->strs, cap * sizeof(*n));

		if (!n)
			return -1;
		h->strs = n;
		h->capstrs = cap;
	}
	dup = strdup(s);
	if (!dup)
		return -1;
	h->strs[h->nstrs] = dup;
	return h->nstrs++;
}

/* Remembers name s for a tagged word of j. */
static void name_put(struct hotspot *h, struct hs_jvm *j, uint64_t word, const char *s)
{
	int64_t at = str_add(h, s);

	if (at >= 0)
		os_hmap_put(&j->names, word, (uint64_t)at);
}

/* Whether the word is named (a method's line is not part of its name). */
static bool name_known(struct hs_jvm *j, uint64_t word)
{
	uint64_t idx;

	if (OS_FRAME_IS_METHOD(word))
		word &= ~OS_FRAME_POS_MASK;
	return os_hmap_get(&j->names, word, &idx);
}

static void name_klass(struct hotspot *h, struct hs_jvm *j, uint64_t klass)
{
	uint64_t word = OS_HS_TAG_KLASS | (klass & OS_HS_WORD_MASK);
	char internal[NAME_MAX_LEN], java[NAME_MAX_LEN];

	if (name_known(j, word) || !j->vm_ok)
		return;
	if (os_hs_klass_name(&j->vm, &h->mem, j->pid, klass, internal, sizeof(internal)) < 0)
		return;
	os_hs_java_class(internal, java, sizeof(java));
	name_put(h, j, word, java);
}

static const struct hs_ml *ml_get(struct hotspot *h, struct hs_jvm *j, uint64_t m);

/* "pkg.Class.method": the class name from the names of j's classes (the
 * same holder for many methods), the method's own name read. A word with a
 * line is named by its method's name (its file and line: hs_name_word). */
static void name_method(struct hotspot *h, struct hs_jvm *j, uint64_t word)
{
	char meth[NAME_MAX_LEN], name[2 * NAME_MAX_LEN + 2];
	const char *cls = NULL;
	uint64_t holder, idx;

	word &= ~OS_FRAME_POS_MASK;
	if (name_known(j, word) || !j->vm_ok)
		return;
	if (os_hs_method_parts(&j->vm, &h->mem, j->pid, word & OS_HS_WORD_MASK, &holder, meth,
			       sizeof(meth)) < 0)
		return;
	name_klass(h, j, holder);
	if (os_hmap_get(&j->names, OS_HS_TAG_KLASS | (holder & OS_HS_WORD_MASK), &idx))
		cls = str_at(h, idx);
	if (!cls)
		return;
	snprintf(name, sizeof(name), "%s.%s", cls, meth);
	name_put(h, j, word, name);
	/* its lines too, while it surely lives: a frame at a line of it may be
	 * read after the JVM is gone (allocation paths drained at the end) */
	ml_get(h, j, word & OS_HS_WORD_MASK);
}

/* A class or method word of an allocation path: named now, or, before the
 * JVM event (the JDK's start-up code allocates inside JNI_CreateJavaVM),
 * once vmStructs is read. Start-up classes and methods belong to the boot
 * loader and are never unloaded, so their words stay valid until then. */
static void name_word(struct hotspot *h, struct hs_jvm *j, uint64_t word)
{
	if (!j->vm_ok) {
		if (!j->have_info)
			os_hmap_put(&j->unnamed, word, 0);
		return;
	}
	if ((word & ~OS_HS_WORD_MASK) == OS_HS_TAG_KLASS)
		name_klass(h, j, word & OS_HS_WORD_MASK);
	else if (OS_FRAME_IS_METHOD(word))
		name_method(h, j, word);
}

static void name_pending(struct hotspot *h, struct hs_jvm *j)
{
	size_t it = 0;
	uint64_t word, v;

	while (os_hmap_next(&j->unnamed, &it, &word, &v))
		name_word(h, j, word);
	os_hmap_destroy(&j->unnamed);
	os_hmap_init(&j->unnamed);
}

static uint64_t canon(const struct hs_jvm *j, uint64_t addr)
{
	if (!j || !(j->info.flags & OS_JVM_F_ZGC))
		return addr;
	/* the adapter in the target gives [0, offset mask + 1) as the heap */
	return os_hs_zgc_mask(addr, j->info.heap_end ? j->info.heap_end - 1 : 0);
}

static bool rd_u64(struct hotspot *h, struct hs_jvm *j, uint64_t addr, uint64_t *v)
{
	return addr && h->mem.read(h->mem.arg, j->pid, addr, v, 8) == 8;
}

static bool rd_i32(struct hotspot *h, struct hs_jvm *j, uint64_t addr, int32_t *v)
{
	return addr && h->mem.read(h->mem.arg, j->pid, addr, v, 4) == 4;
}

/* What the Java walk needs (runtimes/hotspot/hs_frames.h's os_hsf_layout), from the
 * vmStructs tables and the code heaps the JVM created at start (their
 * reserved ranges never change; the segment maps' committed ends grow and
 * are read again after each flush of the blob cache). Leaves
 * j->frames.ok false when something is missing. */
static void frames_resolve(struct hotspot *h, struct hs_jvm *j)
{
	static const char *const need[] = {
		"CodeCache::_heaps", "CodeCache::_low_bound", "CodeCache::_high_bound",
		"GrowableArrayBase::_len", "GrowableArray<int>::_data", "CodeHeap::_memory",
		"CodeHeap::_segmap", "CodeHeap::_log2_segment_size", "VirtualSpace::_low_boundary",
		"VirtualSpace::_high_boundary", "VirtualSpace::_low", "VirtualSpace::_high",
		"HeapBlock", "HeapBlock::_header", "HeapBlock::Header::_used",
		"CodeBlob::_frame_size", "CodeBlob::_code_begin", "CodeBlob::_frame_complete_offset",
	};
	enum { P_HEAPS, P_LO, P_HI, O_LEN, O_DATA, O_MEM, O_SEG, O_LOG2, O_VLOWB, O_VHIGHB, O_VLOW,
	       O_VHIGH, S_BLOCK, O_HDR, O_USED, O_FS, O_BEGIN, O_COMPLETE, NNEED };
	struct os_hsf_layout *l = &j->frames;
	uint64_t v[NNEED], ga, arr, ss = 0, heap;
	int32_t len, log2;

	_Static_assert(sizeof(need) / sizeof(need[0]) == NNEED, "names");
	memset(l, 0, sizeof(*l));
	os_hs_scope_layout(&j->scl, &j->vm);
	os_hs_line_layout(&j->lil, &j->vm);
	if (os_hs_vm_field(&j->vm, "CodeBlob::_size", &j->blob_size_off) != 0)
		j->blob_size_off = -1;
	j->method_ok = true;
	if (os_hs_vm_get(&j->vm, "frame::interpreter_frame_method_offset", &ss) != 0) {
		if (os_hs_vm_get(&j->vm, "frame::interpreter_frame_last_sp_offset", &ss) == 0)
			ss -= 1; /* JDK 17, x86: the method slot is the one below last_sp */
		else
			j->method_ok = false;
	}
	/* frame slots are a few words from fp: a wild table value is not used */
	if ((int64_t)ss < -HS_FRAME_SLOTS_MAX || (int64_t)ss > HS_FRAME_SLOTS_MAX) {
		j->method_ok = false;
		ss = 0;
	}
	j->method_off = (int64_t)ss * 8;
	for (int i = 0; i < NNEED; i++) {
		if (os_hs_vm_get(&j->vm, need[i], &v[i]) != 0) {
			os_debug("hotspot: pid %u: no %s in vmStructs: JIT frames of access paths "
				 "by frame pointer only", j->pid, need[i]);
			return;
		}
	}
	/* the interpreter's caller-sp slot: -1 word from fp on x86 */
	if (os_hs_vm_get(&j->vm, "frame::interpreter_frame_sender_sp_offset", &ss) != 0)
		ss = (uint64_t)-1;
	if ((int64_t)ss < -HS_FRAME_SLOTS_MAX || (int64_t)ss > HS_FRAME_SLOTS_MAX)
		goto bad;
	if (!rd_u64(h, j, v[P_HEAPS], &ga) || !rd_i32(h, j, ga + v[O_LEN], &len) ||
	    !rd_u64(h, j, ga + v[O_DATA], &arr) || len <= 0 || len > OS_HSF_MAX_HEAPS)
		goto bad;
	for (int32_t i = 0; i < len; i++) {
		struct os_hsf_heap *d = &l->heap[i];
		uint64_t mem, seg, low, seg_low;

		if (!rd_u64(h, j, arr + 8 * (uint64_t)i, &heap) || !heap)
			goto bad;
		mem = heap + v[O_MEM];
		seg = heap + v[O_SEG];
		if (!rd_u64(h, j, mem + v[O_VLOWB], &d->lo) ||
		    !rd_u64(h, j, mem + v[O_VHIGHB], &d->hi) || !rd_u64(h, j, mem + v[O_VLOW], &low) ||
		    !rd_u64(h, j, seg + v[O_VLOWB], &d->seg_lo) ||
		    !rd_u64(h, j, seg + v[O_VLOW], &seg_low) ||
		    !rd_i32(h, j, heap + v[O_LOG2], &log2))
			goto bad;
		d->seg_high_at = seg + v[O_VHIGH];
		d->log2_seg = (uint32_t)log2;
		/* the block of segment i is at _memory._low + (i << log2): both
		 * virtual spaces commit from their low boundary */
		if (d->lo != low || d->seg_lo != seg_low || d->hi <= d->lo || log2 < 4 || log2 > 16)
			goto bad;
	}
	l->nheaps = (uint32_t)len;
	if (!rd_u64(h, j, v[P_LO], &l->code_lo) || !rd_u64(h, j, v[P_HI], &l->code_hi))
		goto bad;
	l->interp_lo = j->info.interp_start;
	l->interp_hi = j->info.interp_end;
	l->block_size = (uint32_t)v[S_BLOCK];
	l->used_off = (uint32_t)(v[O_HDR] + v[O_USED]);
	l->frame_size_off = (uint32_t)v[O_FS];
	l->code_begin_off = (uint32_t)v[O_BEGIN];
	l->complete_off = (uint32_t)v[O_COMPLETE];
	l->sender_sp_off = (int32_t)(int64_t)ss * 8;
	l->ok = j->method_ok && l->interp_hi > l->interp_lo && l->code_hi > l->code_lo;
	if (!l->ok)
		goto bad;
	os_debug("hotspot: pid %u: %u code heaps in [0x%llx, 0x%llx): JIT frames of access paths "
		 "walked by their code blobs", j->pid, l->nheaps, (unsigned long long)l->code_lo,
		 (unsigned long long)l->code_hi);
	return;
bad:
	l->ok = false;
	os_debug("hotspot: pid %u: the code heaps could not be read: JIT frames of access paths "
		 "by frame pointer only", j->pid);
}

/* Forgets the blobs the Java walk looked up. */
static void blobs_flush(struct hs_jvm *j)
{
	if (j->nblobs)
		j->blob_flushes++;
	j->nblobs = 0;
	j->blobs_since = os_now_ns();
	j->code_epoch++;
	memset(j->popped_pc, 0, sizeof(j->popped_pc));
	memset(j->seg_high, 0, sizeof(j->seg_high));
	memset(j->segpage_tag, 0, sizeof(j->segpage_tag));
}

static void prepare_jvm(struct hotspot *h, struct hs_jvm *j, const struct os_event *ev)
{
	uint64_t t0;
	int rc;

	/* an older preload sends a shorter struct (no tlab_bytes): the rest
	 * stays 0; a newer one may send a longer one */
	if ((size_t)ev->nframes * 8 >= offsetof(struct os_jvm_info, tlab_bytes)) {
		size_t n = (size_t)ev->nframes * 8;

		memcpy(&j->info, ev->frames, n < sizeof(j->info) ? n : sizeof(j->info));
		j->info.gc[sizeof(j->info.gc) - 1] = 0;
		j->have_info = true;
	} else {
		j->info.heap_start = ev->addr;
		j->info.heap_end = ev->addr + ev->size;
		j->info.flags = (uint32_t)ev->aux2;
	}
	/* The preload decided, inside the JVM before it started: a check
	 * here would come after the JVM's exit when it ran briefly (its own
	 * map then looked like the user's), and would take a stale map of an
	 * earlier process with this pid for the user's. */
	j->map_ours = (j->info.flags & OS_JVM_F_MAP_OURS) != 0;
	if ((j->info.flags & OS_JVM_F_MAP_REFUSED) && !j->map_note[0])
		snprintf(j->map_note, sizeof(j->map_note),
			 "HotSpot pid %u: /tmp/perf-%u.map was a link or another user's file when "
			 "the JVM started: no perf map asked for (the JVM would have written "
			 "through it) — JIT frames unnamed", j->pid, j->pid);
	if (!j->have_info || j->vm_ok)
		return;
	t0 = os_now_ns();
	rc = os_hs_vm_load(&j->vm, &h->mem, j->pid, &j->info);
	os_debug("hotspot: pid %u: vmStructs read in %.1f ms", j->pid, (os_now_ns() - t0) / 1e6);
	if (rc < 0)
		os_debug("hotspot: pid %u: cannot read the vmStructs tables: %s", j->pid,
			 strerror(-rc));
	j->vm_ok = rc == 0;
	if (j->vm_ok) {
		frames_resolve(h, j);
		name_pending(h, j);
	}
}

static uint32_t expand_path(struct hotspot *h, struct hs_jvm *j, const uint64_t *in, uint32_t n,
			    uint64_t *out, uint32_t max);

/* OS_EV_JALLOC: the path is interned with the class word innermost. */
static bool prepare_alloc(struct hotspot *h, struct hs_jvm *j, const struct os_event *ev,
			  struct os_obj_event *oe)
{
	uint64_t buf[OS_MAX_FRAMES];
	uint32_t n = ev->nframes < OS_MAX_FRAMES - 1 ? ev->nframes : OS_MAX_FRAMES - 1;
	uint64_t klass = ev->aux2 & OS_HS_WORD_MASK;

	if (!ev->size)
		return false;
	buf[0] = OS_HS_TAG_KLASS | klass;
	n = expand_path(h, j, ev->frames, n, buf + 1, OS_MAX_FRAMES - 1);
	if (j->vm_ok && j->vm.lay.compressed_klass < 0)
		os_hs_learn_header(&j->vm, &h->mem, j->pid, ev->addr, klass);
	name_word(h, j, buf[0]);
	for (uint32_t i = 1; i <= n; i++)
		if (OS_FRAME_IS_METHOD(buf[i]))
			name_word(h, j, buf[i]);
	oe->type = ev->type;
	oe->addr = canon(j, ev->addr);
	oe->size = ev->size;
	oe->aux = os_hs_weight_jvm(&j->info, ev->aux, ev->size);
	oe->asid = j->asid;
	oe->node = os_attrib_path(h->a, j->asid, buf, n + 1);
	if (oe->node != OS_CCT_NONE)
		os_hmap_put(&h->node2klass, oe->node, klass);
	return true;
}

/* OS_EV_MOVES: the triples are copied out of the ring; the block travels
 * with the queued event and is freed when applied. */
static bool prepare_moves(struct hotspot *h, struct hs_jvm *j, const struct os_event *ev,
			  struct os_obj_event *oe)
{
	size_t n = ev->nframes / 3;
	struct os_hs_move *mv;

	if (!n)
		return false;
	mv = malloc(n * sizeof(*mv));
	if (!mv || os_hmap_put(&h->blocks, (uint64_t)(uintptr_t)mv, n) < 0) {
		free(mv);
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		mv[i].src = canon(j, ev->frames[3 * i]);
		mv[i].dst = canon(j, ev->frames[3 * i + 1]);
		os_hs_move_decode(ev->frames[3 * i + 2], &mv[i].bytes, &mv[i].seq);
	}
	oe->type = ev->type;
	oe->addr = (uint64_t)(uintptr_t)mv;
	oe->size = n;
	oe->aux = ev->aux;
	oe->asid = j->asid;
	oe->node = OS_CCT_NONE;
	return true;
}

static bool hs_prepare(struct os_runtime *rt, struct os_aspace *as, const struct os_event *ev,
		       struct os_obj_event *oe)
{
	struct hotspot *h = hs_of(rt);
	struct hs_jvm *j;

	switch (ev->type) {
	case OS_EV_JVM:
	case OS_EV_JALLOC:
	case OS_EV_MOVES:
	case OS_EV_MOVE:
	case OS_EV_GC_BEGIN:
	case OS_EV_GC_END:
		break;
	default:
		return false;
	}
	j = jvm_get(h, as);
	if (!j) {
		h->a->c.dropped_events++;
		return false;
	}
	if (ev->type == OS_EV_GC_BEGIN || ev->type == OS_EV_GC_END)
		blobs_flush(j); /* code is unloaded at collections */
	switch (ev->type) {
	case OS_EV_JVM:
		prepare_jvm(h, j, ev);
		return false;
	case OS_EV_JALLOC:
		return prepare_alloc(h, j, ev, oe);
	case OS_EV_MOVES:
		return prepare_moves(h, j, ev, oe);
	case OS_EV_MOVE:
		oe->type = ev->type;
		oe->addr = canon(j, ev->addr);
		oe->size = ev->size;
		oe->aux = canon(j, ev->aux);
		oe->asid = j->asid;
		oe->node = OS_CCT_NONE;
		return true;
	default: /* GC_END: addr = moves not delivered so far (cumulative) */
		oe->type = ev->type;
		oe->addr = ev->addr;
		oe->size = ev->size;
		oe->aux = ev->aux;
		oe->asid = j->asid;
		oe->node = OS_CCT_NONE;
		return true;
	}
}

static void batch_add(struct hs_jvm *j, const struct os_hs_move *m)
{
	struct os_hs_move *n = os_grow(j->batch, &j->capbatch, j->nbatch + 1, sizeof(*n), 1024);

	if (!n)
		return;
	j->batch = n;
	j->batch[j->nbatch++] = *m;
}

static uint64_t klass_of_ctx(void *arg, uint64_t ctx)
{
	struct hotspot *h = arg;
	uint64_t k;

	ctx = os_val_ctx(ctx); /* an interval value: weight bits above */
	if (ctx >= h->a->nctx || !os_hmap_get(&h->node2klass, h->a->ctx[ctx].node, &k))
		return 0; /* not a Java object (a malloc'd block in the heap range?) */
	return k;
}

/* The heap is as collection `total` left it: no later one has started. */
static bool heap_quiet(struct hotspot *h, struct hs_jvm *j, uint32_t total)
{
	uint32_t now;
	bool active;

	return os_hs_gc_state(&j->vm, &h->mem, j->pid, &now, &active) == 0 && !active &&
	       now == total;
}

static bool confirm_quiet(void *arg)
{
	struct hotspot *h = arg;

	return heap_quiet(h, h->checking, h->checking_total);
}

/* Size of the object whose header is at oop, read through its klass
 * (Klass::_layout_helper: instance size, or array header and element size
 * with the length in the header); 0 when not an object. *klass gets it. */
static uint64_t object_size(struct hotspot *h, struct hs_jvm *j, uint64_t oop, int compressed,
			    uint64_t *klass)
{
	struct os_hs_layout lay = j->vm.lay;
	uint64_t word, lh_off;
	int32_t lh, len;
	int64_t ko;

	lay.compressed_klass = compressed;
	ko = os_hs_klass_word_offset(&lay);
	if (ko < 0 || os_hs_vm_get(&j->vm, "Klass::_layout_helper", &lh_off) != 0 ||
	    h->mem.read(h->mem.arg, j->pid, oop + (uint64_t)ko, &word, 8) != 8)
		return 0;
	*klass = os_hs_decode_klass(&lay, word);
	if (!*klass || (*klass & 7) ||
	    h->mem.read(h->mem.arg, j->pid, *klass + lh_off, &lh, 4) != 4)
		return 0;
	if (lh > 0) /* instance: size in bytes, low bit a slow-path flag */
		return (uint64_t)(lh & ~1);
	if (lh == 0)
		return 0;
	/* array: header bytes in bits 16..23, log2 element size in bits 0..7;
	 * the length follows the klass word */
	if (h->mem.read(h->mem.arg, j->pid, oop + (uint64_t)ko + (compressed ? 4 : 8), &len, 4) !=
		    4 ||
	    len < 0)
		return 0;
	return ((((uint32_t)lh >> 16) & 0xff) + ((uint64_t)len << (lh & 0x3f)) + 7) & ~7ULL;
}

/* The context "class, then a synthetic frame" (word: HS_WORD_BEFORE or
 * HS_WORD_SMALL) of objects found without their allocation path. */
static uint32_t class_ctx(struct hotspot *h, struct hs_jvm *j, struct os_aspace *as,
			  uint64_t klass, uint64_t word)
{
	uint64_t frames[2];
	uint32_t node, ci;

	frames[0] = OS_HS_TAG_KLASS | (klass & OS_HS_WORD_MASK);
	frames[1] = word;
	node = os_attrib_path(h->a, j->asid, frames, 2);
	ci = node == OS_CCT_NONE ? OS_NONE : os_attrib_context(h->a, as->id, node);
	if (ci == OS_NONE)
		return OS_NONE;
	name_klass(h, j, klass);
	os_hmap_put(&h->node2klass, node, klass);
	return ci;
}

static uint32_t before_ctx(struct hotspot *h, struct hs_jvm *j, struct os_aspace *as,
			   uint64_t klass)
{
	return class_ctx(h, j, as, klass, HS_WORD_BEFORE);
}

/* Attach mode: an object that a collection moved but that was never seen
 * allocated (born before the attach, or not sampled at allocation) is added
 * at its new place with its class, when its header confirms the move's
 * size (a move of a region holding several objects does not). */
static void add_before_attach(struct hotspot *h, struct hs_jvm *j, struct os_aspace *as)
{
	uint64_t one;
	uint32_t added = 0;

	for (size_t i = 0; i < j->nbatch && added < HS_BEFORE_MAX; i++) {
		const struct os_hs_move *m = &j->batch[i];
		uint64_t klass = 0, size = 0;
		uint32_t ci;

		if (m->dst < j->info.heap_start || m->dst + m->bytes > j->info.heap_end ||
		    os_hmap_get(&h->moved, m->dst, &one) ||
		    os_iv_lookup(as->objects, m->dst, NULL, NULL, NULL) ||
		    os_iv_lookup(as->objects, m->dst + m->bytes - 1, NULL, NULL, NULL))
			continue;
		if (j->vm.lay.compressed_klass >= 0) {
			size = object_size(h, j, m->dst, j->vm.lay.compressed_klass, &klass);
		} else { /* no allocation seen yet: learn the header layout here */
			for (int c = 1; c >= 0 && size != m->bytes; c--) {
				size = object_size(h, j, m->dst, c, &klass);
				if (size == m->bytes)
					j->vm.lay.compressed_klass = c;
			}
		}
		if (size != m->bytes)
			continue;
		ci = before_ctx(h, j, as, klass);
		if (ci == OS_NONE)
			continue;
		h->a->ctx[ci].allocations++;
		h->a->ctx[ci].bytes += m->bytes;
		h->a->ctx[ci].est_allocations += 1;
		h->a->ctx[ci].est_bytes += (double)m->bytes;
		os_iv_insert(as->objects, m->dst, m->dst + m->bytes, ci);
		j->before++;
		added++;
	}
}

static bool tracked(void *arg, uint64_t start, uint64_t end)
{
	struct os_aspace *as = arg;

	return os_iv_lookup(as->objects, start, NULL, NULL, NULL) ||
	       os_iv_lookup(as->objects, end - 1, NULL, NULL, NULL);
}

/* Launch mode, objects smaller than --min-size: never tracked (their
 * allocations are only counted), yet they take most Java-heap samples of
 * real programs. When a sample is read (drain time, some ms after it was
 * taken) and no tracked object holds its address, the object there is
 * found by its header (hotspot_scan.h, the window limited to --min-size
 * below the address) and remembered with the JVM's collection count; a
 * collection running or beginning during the read voids it. When the
 * sample is applied (time order), the lookup stands only if no collection
 * began between the sample and the read: the count read then equals the
 * count after the last collection applied before the sample. The sample is
 * then charged to the context "its class, [smaller than --min-size]"; the
 * object does not enter the index (the next collection may move or free it
 * unseen). An untracked object of a tracked size is left alone: in hybrid
 * mode the weights of its context's seen objects already stand for it. */
static bool small_wanted(const struct hotspot *h, const struct hs_jvm *j)
{
	return j && !h->att.on && j->vm_ok && j->have_info && h->a->min_size > 16 &&
	       !(j->info.flags & (OS_JVM_F_ZGC | OS_JVM_F_CONCURRENT));
}

static void hs_sample_taken(struct os_runtime *rt, struct os_aspace *as, uint64_t addr)
{
	struct hotspot *h = hs_of(rt);
	struct hs_jvm *j = jvm_find(h, as->id);
	struct hs_pre e = { 0, 0, 0 }, *n;
	struct os_hs_found f;
	uint32_t total, total2;
	uint64_t idx;
	bool active;

	if (!small_wanted(h, j) || addr < j->info.heap_start || addr >= j->info.heap_end ||
	    os_iv_lookup(as->objects, addr, NULL, NULL, NULL))
		return;
	if (os_hs_gc_state(&j->vm, &h->mem, j->pid, &total, &active) != 0 || active) {
		j->small_gc++;
		return;
	}
	/* the same address again, no collection since: known */
	if (os_hmap_get(&j->pre, addr, &idx) && j->prev[idx - 1].total == total)
		return;
	j->scan.back = (uint32_t)(h->a->min_size < OS_HS_SCAN_BACK ? h->a->min_size
								    : OS_HS_SCAN_BACK);
	if (os_hs_scan_find(&j->scan, &j->vm, &h->mem, j->pid, j->info.heap_start,
			    j->info.heap_end, addr, os_now_ns(), tracked, as, &f) == 1) {
		e.klass = f.klass;
		e.size = f.size > UINT32_MAX ? UINT32_MAX : (uint32_t)f.size;
	}
	if (os_hs_gc_state(&j->vm, &h->mem, j->pid, &total2, &active) != 0 || active ||
	    total2 != total) {
		j->small_gc++;
		return;
	}
	e.total = total;
	if (os_hmap_get(&j->pre, addr, &idx)) {
		j->prev[idx - 1] = e;
		return;
	}
	n = os_grow(j->prev, &j->cappre, j->npre + 1, sizeof(*n), 256);
	if (!n)
		return;
	j->prev = n;
	if (os_hmap_put(&j->pre, addr, j->npre + 1) < 0)
		return;
	j->prev[j->npre++] = e;
}

/* attrib.h heap_miss, launch mode: see hs_sample_taken. */
static uint32_t small_object(struct hotspot *h, struct hs_jvm *j, struct os_aspace *as,
			     uint64_t addr)
{
	const struct hs_pre *e;
	uint64_t idx;
	uint32_t ci;

	if (!small_wanted(h, j) || !os_hmap_get(&j->pre, addr, &idx))
		return OS_NONE;
	e = &j->prev[idx - 1];
	if (e->total != j->end_total) { /* a collection began after the sample */
		j->small_gc++;
		return OS_NONE;
	}
	if (!e->klass)
		return OS_NONE;
	if (e->size >= h->a->min_size) {
		j->small_big++;
		return OS_NONE;
	}
	ci = class_ctx(h, j, as, e->klass, HS_WORD_SMALL);
	if (ci == OS_NONE)
		return OS_NONE;
	j->small_found++;
	return ci;
}

/* attrib.h heap_miss, attach mode (launch mode: small_object): a sample in the Java heap that no
 * tracked object holds; the object is looked for in the target's memory
 * (hotspot_scan.h) and added with the before-attach context. */
static uint32_t hs_heap_miss(void *arg, struct os_aspace *as, uint64_t addr)
{
	struct hotspot *h = arg;
	struct hs_jvm *j = jvm_find(h, as->id);
	struct os_hs_found f;
	uint32_t total, ci;
	bool active;

	if (!j || !j->vm_ok || !j->have_info ||
	    (j->info.flags & (OS_JVM_F_ZGC | OS_JVM_F_CONCURRENT)))
		return OS_NONE;
	if (!h->att.on)
		return small_object(h, j, as, addr);
	/* objects move while a collection runs: their headers say nothing */
	if (os_hs_gc_state(&j->vm, &h->mem, j->pid, &total, &active) == 0 && active) {
		j->scan_gc++;
		return OS_NONE;
	}
	if (os_hs_scan_find(&j->scan, &j->vm, &h->mem, j->pid, j->info.heap_start,
			    j->info.heap_end, addr, os_now_ns(), tracked, as, &f) != 1)
		return OS_NONE;
	ci = before_ctx(h, j, as, f.klass);
	if (ci == OS_NONE)
		return OS_NONE;
	h->a->ctx[ci].allocations++;
	h->a->ctx[ci].bytes += f.size;
	h->a->ctx[ci].est_allocations += 1;
	h->a->ctx[ci].est_bytes += (double)f.size;
	os_iv_insert(as->objects, f.start, f.start + f.size, ci);
	return ci;
}

static void gc_end(struct hotspot *h, struct hs_jvm *j, struct os_aspace *as, uint64_t lost,
		   uint32_t total)
{
	size_t moved;

	os_hmap_destroy(&h->moved);
	os_hmap_init(&h->moved);
	moved = os_hs_apply_moves(as->objects, j->batch, j->nbatch, &h->moved);
	if (h->att.on && j->vm_ok && !(j->info.flags & (OS_JVM_F_ZGC | OS_JVM_F_CONCURRENT)) &&
	    heap_quiet(h, j, total))
		add_before_attach(h, j, as);
	j->nbatch = 0;
	j->end_total = total;
	/* lookups made before this collection cannot stand for later samples */
	os_hmap_destroy(&j->pre);
	os_hmap_init(&j->pre);
	j->npre = 0;
	j->moves += moved;
	if (lost > j->moves_lost)
		j->moves_lost = lost;
	j->gcs++;
	h->a->c.moves += moved;
	h->a->c.gc_count++;
	/* concurrent collectors: headers are read while the JVM runs on, and
	 * ZGC's masked addresses are not readable as such: no validation */
	if (!j->vm_ok || (j->info.flags & (OS_JVM_F_ZGC | OS_JVM_F_CONCURRENT)))
		return;
	/* this end is applied late (time order): when a later collection has
	 * begun (or the JVM is gone) the headers do not show this one's
	 * result; the next end's check covers the objects */
	if (!heap_quiet(h, j, total))
		return;
	j->checked++;
	h->checking = j;
	h->checking_total = total;
	j->dropped += os_hs_drop_dead(as->objects, j->info.heap_start, j->info.heap_end,
				      &h->moved, klass_of_ctx, h, &h->mem, j->pid, &j->vm.lay,
				      confirm_quiet);
}

static void born(struct hotspot *h, struct hs_jvm *j, struct os_aspace *as,
		 const struct os_obj_event *ev)
{
	struct os_attrib *a = h->a;
	uint32_t ci = ev->node == OS_CCT_NONE ? OS_NONE : os_attrib_context(a, as->id, ev->node);
	uint64_t wq = ev->aux ? ev->aux : OS_W_ONE; /* fixed point (prepare_alloc) */
	double w = (double)wq / (double)OS_W_ONE;
	struct os_ctx *x;

	if (ci == OS_NONE) {
		a->c.dropped_events++;
		return;
	}
	/* allocations and bytes are the estimates, rounded (counts when every
	 * weight is 1); the fractions are kept in est_* */
	x = &a->ctx[ci];
	x->est_allocations += w;
	x->est_bytes += w * (double)ev->size;
	x->allocations = (uint64_t)(x->est_allocations + 0.5);
	x->bytes = (uint64_t)(x->est_bytes + 0.5);
	a->c.objects_seen++;
	j->estimated += w;
	if (wq != OS_W_ONE)
		j->small++;
	if (j->info.mode == OS_JVM_MODE_SAMPLED || j->info.mode == OS_JVM_MODE_HYBRID) {
		h->estimated += w;
		a->c.objects_estimated = (uint64_t)(h->estimated + 0.5);
		a->weighted = true;
	}
	j->objects++;
	os_iv_remove_overlaps(as->objects, ev->addr, ev->addr + ev->size, NULL, NULL);
	os_iv_insert(as->objects, ev->addr, ev->addr + ev->size, os_val_make(ci, wq));
}

static void hs_apply(struct os_runtime *rt, struct os_aspace *as, const struct os_obj_event *ev)
{
	struct hotspot *h = hs_of(rt);
	struct hs_jvm *j = jvm_find(h, ev->asid);
	struct os_hs_move *mv;

	if (ev->type == OS_EV_MOVES) {
		if (!os_hmap_del(&h->blocks, ev->addr))
			return;
		mv = (struct os_hs_move *)(uintptr_t)ev->addr;
		for (uint64_t i = 0; j && i < ev->size; i++)
			batch_add(j, &mv[i]);
		free(mv);
		return;
	}
	if (!j)
		return;
	switch (ev->type) {
	case OS_EV_JALLOC:
		born(h, j, as, ev);
		break;
	case OS_EV_MOVE:
		batch_add(j, &(struct os_hs_move){ .src = ev->aux, .dst = ev->addr,
						   .bytes = ev->size });
		break;
	case OS_EV_GC_END:
		gc_end(h, j, as, ev->addr, (uint32_t)ev->aux);
		break;
	default: /* OS_EV_GC_BEGIN: moves before it belong to it as well */
		break;
	}
}

static uint64_t hs_sample_addr(struct os_runtime *rt, uint32_t asid, uint64_t addr)
{
	struct hotspot *h = hs_of(rt);

	if (!h->njvms)
		return addr;
	return canon(jvm_find(h, asid), addr);
}

/* The perf map is the target's file, in a directory its user can write
 * (its /tmp, its container's): opened without following a link, never a
 * FIFO or device (O_NONBLOCK), only if it belongs to the JVM's user or root,
 * a path under /proc/PID/root resolved inside that root; read with caps
 * (symbolizer/perfmap.h); removed (when objscope asked for it) only if it
 * is still the file read, with the JVM's file-system identity. A map that
 * fails a check is not read: a warning and a note say so. */
static void hs_before_symbolize(struct os_runtime *rt)
{
	struct hotspot *h = hs_of(rt);
	char path[160], dir[160];

	if (!h->sym) /* no symbolizer: nothing to name, nothing to remove */
		return;
	for (uint32_t i = 0; i < h->njvms; i++) {
		struct hs_jvm *j = h->jvms[i];
		/* one JVM per attach; its pid may be the container's view */
		bool attached = h->att.on && (j->pid == h->att.pid || h->njvms == 1) &&
				h->att.map[0];
		int rootfd = -1, dirfd, fd, off = 0;
		const char *name, *slash, *why = NULL;
		unsigned int rpid;
		size_t long_lines = 0;
		struct os_fsid fsid;
		struct stat st;
		uid_t uid = j->uid;
		gid_t gid = j->gid;

		/* the preload did not ask for a map (its path was taken): what
		 * is there is not the JVM's (the note says so) */
		if (!attached && (j->info.flags & OS_JVM_F_MAP_REFUSED))
			continue;
		if (attached) { /* written on request, possibly in a container's /tmp */
			snprintf(path, sizeof(path), "%s", h->att.map);
			snprintf(dir, sizeof(dir), "/proc/%u", h->att.pid);
			if (stat(dir, &st) == 0) { /* the host's pid: the owner for sure */
				uid = st.st_uid;
				gid = st.st_gid;
			}
		} else {
			snprintf(path, sizeof(path), "/tmp/perf-%u.map", j->pid);
		}
		slash = strrchr(path, '/');
		if (!slash || !slash[1])
			continue;
		name = slash + 1;
		if (sscanf(path, "/proc/%u/root%n", &rpid, &off) == 1 && off > 0 &&
		    path[off] == '/') {
			rootfd = os_proc_root((pid_t)rpid);
			if (rootfd < 0) {
				os_debug("hotspot: perf map %s: %s", path, strerror(-rootfd));
				continue;
			}
			snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path - off), path + off);
			dirfd = os_open_in_root(rootfd, dir[0] ? dir : "/", O_PATH | O_DIRECTORY,
						0);
		} else {
			snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
			dirfd = open(dir[0] ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
			dirfd = dirfd < 0 ? -errno : dirfd;
		}
		if (dirfd == -ENOSYS) { /* no openat2 (< 5.6): no resolution that stays inside */
			snprintf(j->map_note, sizeof(j->map_note),
				 "HotSpot pid %u: perf map %s cannot be opened inside the target's "
				 "root on this kernel (no openat2): not read — JIT frames unnamed",
				 j->pid, path);
			os_warn("%s", j->map_note);
		} else if (dirfd < 0) {
			os_debug("hotspot: perf map %s: its directory: %s", path, strerror(-dirfd));
		}
		if (dirfd < 0) {
			if (rootfd >= 0)
				close(rootfd);
			continue;
		}
		fd = os_open_untrusted(dirfd, name, uid, &st);
		if (fd == -ELOOP)
			why = "is a symbolic link";
		else if (fd == -EFTYPE_OS)
			why = "is not a regular file (a FIFO, device or directory)";
		else if (fd == -EPERM)
			why = "is owned by another user than the JVM's";
		if (fd >= 0) {
			int rc = os_sym_load_perf_map_fd(h->sym, j->asid, fd, &long_lines);

			if (rc == -EFBIG)
				why = "is larger than 512 MiB";
			else if (rc < 0)
				os_debug("hotspot: cannot read %s: %s", path, strerror(-rc));
			else if (long_lines)
				os_debug("hotspot: %s: %zu lines over 64 KiB skipped", path,
					 long_lines);
			close(fd);
		} else if (fd != -ENOENT && !why) {
			os_debug("hotspot: cannot open %s: %s", path, strerror(-fd));
		}
		if (why) {
			struct stat lst;
			char owner[48] = "";

			if (fd == -EPERM && fstatat(dirfd, name, &lst, AT_SYMLINK_NOFOLLOW) == 0)
				snprintf(owner, sizeof(owner), " (uid %u, the JVM runs as uid %u)",
					 (unsigned)lst.st_uid, (unsigned)uid);
			snprintf(j->map_note, sizeof(j->map_note),
				 "HotSpot pid %u: perf map %s %s%s: not read — JIT frames unnamed",
				 j->pid, path, why, owner);
			os_warn("%s", j->map_note);
		}
		/* written because objscope asked for it: leave no artifact, but
		 * remove only the file read, as the JVM's user would */
		if (fd >= 0 && (attached ? h->att.remove_map : j->map_ours)) {
			os_fs_enter(&fsid, uid, gid);
			os_unlink_same(dirfd, name, &st);
			os_fs_leave(&fsid);
		}
		close(dirfd);
		if (rootfd >= 0)
			close(rootfd);
	}
}

static bool hs_in_heap(struct os_runtime *rt, uint32_t asid, uint64_t addr)
{
	struct hs_jvm *j = jvm_find(hs_of(rt), asid);

	return j && j->have_info && j->info.heap_end > j->info.heap_start &&
	       addr >= j->info.heap_start && addr < j->info.heap_end;
}

/* ---- source lines (runtimes/hotspot/hotspot_lines.h) ---- */

#define HS_MLS_MAX 262144 /* methods whose line tables are kept */

struct hs_rd {
	struct hotspot *h;
	struct hs_jvm *j;
};

static bool nm_rd(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct hs_rd *r = arg;

	return r->h->mem.read(r->h->mem.arg, r->j->pid, addr, buf, len) == (ssize_t)len;
}

/* The source file of the classes whose constant pool is cp: string index
 * + 1, 0 none (cached: one class, many methods). */
static uint32_t file_of(struct hotspot *h, struct hs_jvm *j, uint64_t cp)
{
	struct hs_rd r = { h, j };
	char buf[NAME_MAX_LEN];
	uint64_t v, sym;

	if (os_hmap_get(&j->files, cp, &v))
		return (uint32_t)v;
	v = 0;
	if (os_hs_source_symbol(&j->lil, nm_rd, &r, cp, &sym) == 0 && sym &&
	    os_hs_symbol_str(&j->vm, &h->mem, j->pid, sym, buf, sizeof(buf)) == 0 && buf[0]) {
		int64_t at = str_add(h, buf);

		v = at >= 0 ? (uint64_t)at + 1 : 0;
	}
	os_hmap_put(&j->files, cp, v);
	return (uint32_t)v;
}

/* Method m's bytecodes, line table and file: read once, while the method
 * runs (a frame of it was just seen); NULL when it cannot be read. */
static const struct hs_ml *ml_get(struct hotspot *h, struct hs_jvm *j, uint64_t m)
{
	struct hs_rd r = { h, j };
	struct os_hs_mlines ml;
	struct hs_ml *n;
	uint64_t idx;

	if (!j->lil.ok || !j->vm_ok)
		return NULL;
	if (os_hmap_get(&j->ml_at, m, &idx))
		return idx ? &j->mls[idx - 1] : NULL;
	if (j->nmls >= HS_MLS_MAX)
		return NULL;
	n = os_grow(j->mls, &j->capmls, j->nmls + 1, sizeof(*n), 256);
	if (!n)
		return NULL;
	j->mls = n;
	if (os_hs_mlines_read(&ml, &j->lil, nm_rd, &r, m) < 0) {
		j->ml_failed++; /* the JVM gone (paths drained at its end), or not a method */
		os_hmap_put(&j->ml_at, m, 0);
		return NULL;
	}
	if (os_hmap_put(&j->ml_at, m, j->nmls + 1) < 0) {
		os_hs_mlines_free(&ml);
		return NULL;
	}
	j->mls[j->nmls].ml = ml;
	j->mls[j->nmls].file = file_of(h, j, ml.cpool);
	return &j->mls[j->nmls++];
}

/* The word of method m at bytecode index bci (-1: its entry; < -1: not
 * known): with its source line when the method has one there and its class
 * names its file. */
static uint64_t line_word(struct hotspot *h, struct hs_jvm *j, uint64_t m, int32_t bci)
{
	const struct hs_ml *ml = bci >= -1 ? ml_get(h, j, m) : NULL;
	uint32_t line = 0;

	if (ml && ml->file && bci < (int32_t)ml->ml.code_size)
		line = os_hs_line_at(ml->ml.pairs, ml->ml.npairs, bci);
	if (!line || line > OS_FRAME_LINE_MAX) {
		j->line_none++;
		return OS_FRAME_METHOD | m;
	}
	j->line_frames++;
	return OS_FRAME_METHOD | (uint64_t)line << OS_FRAME_POS_SHIFT | m;
}

/* ... at bytecode pointer bcp (low13: its 13 low bits only). */
static uint64_t bcp_word(struct hotspot *h, struct hs_jvm *j, uint64_t m, uint64_t bcp, bool low13)
{
	const struct hs_ml *ml = ml_get(h, j, m);

	return line_word(h, j, m, ml ? os_hs_bci_of(&ml->ml, bcp, low13) : -2);
}

/* A method word of the preload's (common/shm.h: the bcp's low bits) as the
 * collector's (a line). */
static uint64_t canon_word(struct hotspot *h, struct hs_jvm *j, uint64_t w)
{
	uint32_t pos = (uint32_t)((w & OS_FRAME_POS_MASK) >> OS_FRAME_POS_SHIFT);
	uint64_t m = w & OS_HS_WORD_MASK;

	if (!OS_FRAME_IS_METHOD(w))
		return w;
	if (!(pos & OS_FRAME_BCP_KNOWN) || !j || !j->vm_ok)
		return OS_FRAME_METHOD | m;
	name_method(h, j, OS_FRAME_METHOD | m);
	if (!name_known(j, OS_FRAME_METHOD | m)) /* not readable: "Interpreter" */
		return OS_FRAME_METHOD | m;
	return bcp_word(h, j, m, pos & OS_FRAME_BCP_LOW, true);
}

/* The word of an interpreted frame whose Method* slot holds m (read: its
 * reader said yes) at bytecode pointer bcp (0: not known), or pc. */
static uint64_t method_word(struct hotspot *h, struct hs_jvm *j, uint64_t pc, bool read,
			    uint64_t m, uint64_t bcp)
{
	uint64_t w, base = OS_FRAME_METHOD | m;

	if (!read || !m || (m & 7) || (m & ~OS_HS_WORD_MASK))
		return pc;
	name_method(h, j, base);
	if (!name_known(j, base)) /* not a method (a frame not yet built) */
		return pc;
	w = bcp ? bcp_word(h, j, m, bcp, false) : line_word(h, j, m, -2);
	name_method(h, j, w);
	return name_known(j, w) ? w : base;
}

static uint64_t hs_frame_word(struct os_runtime *rt, uint32_t asid, uint64_t pc, uint64_t fp,
			      const uint64_t *leaf_regs,
			      bool (*read)(void *arg, uint64_t addr, uint64_t *word), void *arg)
{
	struct hotspot *h = hs_of(rt);
	struct hs_jvm *j = jvm_find(h, asid);
	uint64_t m = 0, bcp = 0;
	bool ok;

	/* the Method* slot of an interpreter frame (frames_resolve) */
	if (!j || !j->vm_ok || !j->method_ok || pc < j->info.interp_start ||
	    pc >= j->info.interp_end)
		return pc;
	ok = read(arg, fp + (uint64_t)j->method_off, &m);
	if (leaf_regs) /* the interrupted frame's bcp: r13 on x86_64 */
		bcp = leaf_regs[OS_REG_R13];
	else if (!read(arg, fp + (uint64_t)j->method_off - OS_HSF_BCP_BELOW_METHOD, &bcp))
		bcp = 0;
	return method_word(h, j, pc, ok, m, bcp);
}

/* ---- Java walks of access paths (runtimes/hotspot/hs_frames.h) ---- */

/* Remote reads of one blob lookup, by lines of HS_LINE bytes: the segment
 * map's hops and the block's header fields lie close together. */
struct hs_lines {
	struct hotspot *h;
	struct hs_jvm *j;
	uint64_t tag[HS_LINES];     /* line address + 1, 0 = empty */
	uint8_t data[HS_LINES][HS_LINE];
	uint32_t next;
};

static bool remote_rd(struct hs_lines *c, uint64_t addr, void *buf, size_t len)
{
	c->j->blob_reads++;
	return c->h->mem.read(c->h->mem.arg, c->j->pid, addr, buf, len) == (ssize_t)len;
}

static bool lines_rd(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct hs_lines *c = arg;
	uint64_t line = addr & ~(uint64_t)(HS_LINE - 1);
	uint32_t i;

	if (!len || (addr & (HS_LINE - 1)) + len > HS_LINE)
		return remote_rd(c, addr, buf, len);
	for (i = 0; i < HS_LINES; i++)
		if (c->tag[i] == line + 1)
			break;
	if (i == HS_LINES) {
		i = c->next++ % HS_LINES;
		c->tag[i] = 0;
		/* a line lies in one page: readable whole when addr is */
		if (!remote_rd(c, line, c->data[i], HS_LINE))
			return remote_rd(c, addr, buf, len);
		c->tag[i] = line + 1;
	}
	memcpy(buf, c->data[i] + (addr & (HS_LINE - 1)), len);
	return true;
}

/* The lookup's reader (os_hsf_blob): the segment maps' committed ends and
 * pages as read since the last flush of the blob cache (a lookup that
 * fails on them is made again on fresh reads: walk_find), block headers
 * afresh by lines. */
static bool code_rd(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct hs_lines *c = arg;
	struct hs_jvm *j = c->j;
	const struct os_hsf_layout *l = &j->frames;

	for (uint32_t i = 0; i < l->nheaps; i++) {
		const struct os_hsf_heap *hp = &l->heap[i];
		uint64_t page = addr & ~4095ULL, v;
		uint32_t slot;

		if (addr == hp->seg_high_at && len == 8) {
			if (!j->seg_high[i]) {
				if (!remote_rd(c, addr, &v, 8))
					return false;
				j->seg_high[i] = v + 1;
			}
			v = j->seg_high[i] - 1;
			memcpy(buf, &v, 8);
			return true;
		}
		if (addr < hp->seg_lo || addr - hp->seg_lo >= (hp->hi - hp->lo) >> hp->log2_seg ||
		    (addr & 4095) + len > 4096)
			continue;
		if (!j->segpage) {
			j->segpage = malloc(HS_SEGPAGES * sizeof(*j->segpage));
			if (!j->segpage)
				return lines_rd(c, addr, buf, len);
		}
		slot = (uint32_t)((page >> 12) % HS_SEGPAGES);
		if (j->segpage_tag[slot] != page + 1) {
			j->segpage_tag[slot] = 0;
			if (!remote_rd(c, page, j->segpage[slot], 4096))
				return lines_rd(c, addr, buf, len); /* the map's committed end */
			j->segpage_tag[slot] = page + 1;
		}
		memcpy(buf, j->segpage[slot] + (addr & 4095), len);
		return true;
	}
	return lines_rd(c, addr, buf, len);
}

/* The first cached blob whose hi lies above pc. */
static size_t blobs_bound(const struct hs_jvm *j, uint64_t pc)
{
	size_t lo = 0, hi = j->nblobs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (j->blobs[mid].hi <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct hs_walk {
	struct hotspot *h;
	struct hs_jvm *j;
};

/* os_hsf_find: the blob of pc, from the cache or the target's code heap. */
static bool walk_find(void *arg, uint64_t pc, struct os_hsf_blob *b)
{
	struct hs_walk *w = arg;
	struct hs_jvm *j = w->j;
	struct hs_lines lines;
	struct hs_blob_ent e, *n;
	size_t i = blobs_bound(j, pc);
	int32_t size;

	j->blob_lookups++;
	if (i < j->nblobs && j->blobs[i].lo <= pc) {
		*b = j->blobs[i].b;
		return true;
	}
	j->blob_misses++;
	lines.h = w->h;
	lines.j = j;
	lines.next = 0;
	memset(lines.tag, 0, sizeof(lines.tag));
	if (!os_hsf_blob(&j->frames, code_rd, &lines, pc, b)) {
		/* the kept segment map may be older than the blob: again afresh */
		memset(j->seg_high, 0, sizeof(j->seg_high));
		memset(j->segpage_tag, 0, sizeof(j->segpage_tag));
		if (!os_hsf_blob(&j->frames, code_rd, &lines, pc, b))
			return false; /* not cached: a free block may be used soon */
	}
	/* the blob's extent: CodeBlob::_size bytes from the blob; else this pc */
	e.lo = b->start;
	e.hi = pc + 1;
	if (j->blob_size_off >= 0 &&
	    lines_rd(&lines, b->start + (uint64_t)j->blob_size_off, &size, 4) &&
	    size > 0 && b->start + (uint64_t)size > pc)
		e.hi = b->start + (uint64_t)size;
	else
		e.lo = pc;
	e.b = *b;
	if (j->nblobs >= HS_BLOBS_MAX)
		blobs_flush(j);
	n = os_grow(j->blobs, &j->capblobs, j->nblobs + 1, sizeof(*n), 64);
	if (!n)
		return true;
	j->blobs = n;
	/* disjoint: what the new blob overlaps (stale entries) goes */
	i = blobs_bound(j, e.lo);
	{
		size_t k = i;

		while (k < j->nblobs && j->blobs[k].lo < e.hi)
			k++;
		if (k > i)
			memmove(&j->blobs[i], &j->blobs[k], (j->nblobs - k) * sizeof(e));
		j->nblobs -= k - i;
	}
	memmove(&j->blobs[i + 1], &j->blobs[i], (j->nblobs - i) * sizeof(e));
	j->blobs[i] = e;
	j->nblobs++;
	return true;
}

/* A return pc where a walk may go on: the interpreter, a used code blob,
 * or an ELF file's executable mapping. */
static bool walk_plausible(struct hs_walk *w, uint64_t pc)
{
	struct os_hsf_blob b;
	const char *path;
	uint64_t bias, start, end;

	if (os_hsf_in_interp(&w->j->frames, pc))
		return true;
	if (os_hsf_in_code(&w->j->frames, pc))
		return walk_find(w, pc, &b);
	return w->h->sym && os_sym_module_at(w->h->sym, w->j->asid, pc, &path, &bias, &start,
					     &end) == 0;
}

/* Whether a sampled compiled frame at pc has popped its frame already:
 * C1 and C2 end a method with `add rsp, N; pop rbp; cmp rsp, [r15 + poll];
 * ja slow; ret` (JDK 17, x86_64), and the soft sampler's pc is the one
 * after the accessing instruction, the poll: pc at `ja rel; ret`. */
static bool at_return_poll(struct hotspot *h, struct hs_jvm *j, uint64_t pc)
{
	uint32_t slot = (uint32_t)(os_hash64(pc) & (HS_POPPED - 1));
	uint8_t c[7];
	bool r;

	if (j->popped_pc[slot] == pc + 1)
		return j->popped[slot];
	if (h->mem.read(h->mem.arg, j->pid, pc, c, sizeof(c)) == (ssize_t)sizeof(c))
		r = (c[0] == 0x0f && c[1] == 0x87 && c[6] == 0xc3) || (c[0] == 0x77 && c[2] == 0xc3);
	else if (h->mem.read(h->mem.arg, j->pid, pc, c, 3) == 3) /* at a mapping's end */
		r = c[0] == 0x77 && c[2] == 0xc3;
	else
		r = false;
	j->popped_pc[slot] = pc + 1;
	j->popped[slot] = r;
	return r;
}

/* ---- compiled frames: the methods inlined there (hotspot_scopes.h) ---- */

#define HS_NMS_MAX 65536 /* nmethods kept; past it frames keep their pcs */

/* The nmethod of blob b (read, or cached and checked once per code epoch);
 * NULL when b is none or cannot be read. */
static const struct os_hs_nm *nm_get(struct hotspot *h, struct hs_jvm *j,
				     const struct os_hsf_blob *b)
{
	struct hs_rd r = { h, j };
	struct os_hs_nm *nm, *n;
	uint64_t idx;
	int rc;

	if (os_hmap_get(&j->nm_at, b->start, &idx)) {
		nm = &j->nms[idx];
		if (nm->epoch == j->code_epoch)
			return nm->method ? nm : NULL;
		if (nm->method && nm->code_begin == b->code_begin && os_hs_nm_same(nm, &j->scl, nm_rd, &r)) {
			nm->epoch = j->code_epoch;
			return nm;
		}
		j->nm_stale += nm->method != 0;
		os_hs_nm_free(nm);
	} else {
		if (j->nnms >= HS_NMS_MAX) {
			j->nm_full++;
			return NULL;
		}
		n = os_grow(j->nms, &j->capnms, j->nnms + 1, sizeof(*n), 256);
		if (!n)
			return NULL;
		j->nms = n;
		idx = j->nnms;
		if (os_hmap_put(&j->nm_at, b->start, idx) < 0)
			return NULL;
		j->nnms++;
		nm = &j->nms[idx];
	}
	j->nm_reads++;
	rc = os_hs_nm_read(nm, &j->scl, nm_rd, &r, b->start, b->code_begin);
	if (rc < 0) { /* none (a stub), or unreadable now: again next epoch */
		j->nm_failed += rc != -ENOENT;
		memset(nm, 0, sizeof(*nm));
	}
	nm->start = b->start;
	nm->epoch = j->code_epoch;
	return nm->method ? nm : NULL;
}

/* The cached expansion of pc in nm, or NULL. */
static const struct hs_jx *jx_get(const struct hs_jvm *j, const struct os_hs_nm *nm, uint64_t pc,
				  bool exact)
{
	uint64_t idx;
	const struct hs_jx *e;

	if (!os_hmap_get(&j->jx_at, pc << 1 | exact, &idx))
		return NULL;
	e = &j->jx[idx];
	if (e->nm_start != nm->start || e->compile_id != nm->compile_id || e->method != nm->method)
		return NULL;
	return e;
}

/* Keeps an expansion (best effort: out of memory just leaves it uncached). */
static void jx_put(struct hs_jvm *j, const struct os_hs_nm *nm, uint64_t pc, bool exact,
		   const uint64_t *w, uint32_t n, bool outer)
{
	uint64_t *slot, *w2;
	struct hs_jx *e, *x;

	if (j->njx >= HS_JX_MAX || j->njxw + n > (size_t)HS_JX_MAX * 4) {
		os_hmap_destroy(&j->jx_at);
		os_hmap_init(&j->jx_at);
		j->njx = j->njxw = 0;
	}
	x = os_grow(j->jx, &j->capjx, j->njx + 1, sizeof(*j->jx), 1024);
	if (!x)
		return;
	j->jx = x;
	w2 = os_grow(j->jxw, &j->capjxw, j->njxw + n, sizeof(*j->jxw), 4096);
	if (!w2)
		return;
	j->jxw = w2;
	slot = os_hmap_ref(&j->jx_at, pc << 1 | exact, UINT64_MAX);
	if (!slot)
		return;
	if (*slot == UINT64_MAX)
		*slot = j->njx++;
	e = &j->jx[*slot];
	e->nm_start = nm->start;
	e->method = nm->method;
	e->compile_id = nm->compile_id;
	e->off = (uint32_t)j->njxw;
	e->n = n;
	e->outer = outer;
	memcpy(j->jxw + j->njxw, w, n * sizeof(*w));
	j->njxw += n;
}

/* A compiled frame at pc (in blob b) as the Java methods running there,
 * innermost first, as named Method* words into out: their count, 0 when
 * the frame keeps its pc (not an nmethod, no scope there, a method not
 * readable). exact: pc is a return address. */
static uint32_t jit_expand(struct hotspot *h, struct hs_jvm *j, const struct os_hsf_blob *b,
			   uint64_t pc, bool exact, uint64_t *out, uint32_t max)
{
	uint64_t m[OS_HS_SCOPE_DEPTH];
	int32_t bci[OS_HS_SCOPE_DEPTH];
	const struct os_hs_nm *nm;
	const struct hs_jx *e;
	bool outer = false;
	uint32_t n;

	if (!j->scl.ok || !j->vm_ok || !max)
		return 0;
	nm = nm_get(h, j, b);
	if (!nm)
		return 0;
	j->jit_frames++;
	/* a hit answers as the decoding below would: an expansion of n
	 * scopes is made for any max >= n (os_hs_nm_expand gives none when
	 * they do not fit), the compiled method alone is kept only when found
	 * with room for every scope */
	e = jx_get(j, nm, pc, exact);
	if (e && e->n <= max) {
		memcpy(out, j->jxw + e->off, e->n * sizeof(*out));
		j->jx_hits++;
		j->jit_outer += e->outer;
		j->jit_expanded++;
		j->jit_inlined += e->n - 1;
		return e->n;
	}
	/* an interrupted pc between safepoints: without -XX:+DebugNonSafepoints
	 * the nearest PcDesc may lie in another inlined method */
	if (exact || (j->info.flags & OS_JVM_F_NONSAFEPOINT_DEBUG))
		n = os_hs_nm_expand(nm, pc, exact, m, bci,
				    max < OS_HS_SCOPE_DEPTH ? max : OS_HS_SCOPE_DEPTH);
	else
		n = 0;
	if (!n) { /* the compiled method itself is certain */
		m[0] = nm->method;
		bci[0] = -2; /* where in it is not known */
		n = 1;
		outer = true;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint64_t base = OS_FRAME_METHOD | m[i];

		if ((m[i] & ~OS_HS_WORD_MASK) != 0)
			return 0;
		name_method(h, j, base);
		if (!name_known(j, base))
			return 0;
		out[i] = line_word(h, j, m[i], bci[i]);
		name_method(h, j, out[i]);
		if (!name_known(j, out[i]))
			out[i] = base;
	}
	j->jit_outer += outer;
	j->jit_expanded++;
	j->jit_inlined += n - 1;
	if (!outer || max >= OS_HS_SCOPE_DEPTH)
		jx_put(j, nm, pc, exact, out, n, outer);
	return n;
}

/* An allocation path from the preload (its compiled frames' pcs are return
 * addresses) with compiled frames expanded, into out. Returns its length. */
static uint32_t expand_path(struct hotspot *h, struct hs_jvm *j, const uint64_t *in, uint32_t n,
			    uint64_t *out, uint32_t max)
{
	struct hs_walk w = { h, j };
	struct os_hsf_blob b;
	uint32_t k = 0;

	if (!j->frames.ok || !j->scl.ok || !j->vm_ok) {
		n = n < max ? n : max;
		for (uint32_t i = 0; i < n; i++)
			out[i] = canon_word(h, j, in[i]);
		return n;
	}
	if (os_now_ns() - j->blobs_since > HS_BLOBS_AGE_NS)
		blobs_flush(j);
	for (uint32_t i = 0; i < n && k < max; i++) {
		uint32_t e = 0;

		if (OS_FRAME_IS_METHOD(in[i])) {
			out[k++] = canon_word(h, j, in[i]);
			continue;
		}
		if (os_hsf_in_code(&j->frames, in[i]) && !os_hsf_in_interp(&j->frames, in[i]) &&
		    walk_find(&w, in[i], &b))
			e = jit_expand(h, j, &b, in[i], true, out + k, max - k);
		if (e)
			k += e;
		else
			out[k++] = in[i];
	}
	return k;
}

static uint32_t hs_java_walk(struct os_runtime *rt, uint32_t asid, const struct os_rt_frame *start,
			     bool leaf, os_rt_read read, void *arg, uint64_t *frames, uint32_t max)
{
	struct hotspot *h = hs_of(rt);
	struct hs_jvm *j = h->njvms ? jvm_find(h, asid) : NULL;
	struct hs_walk w = { h, j };
	struct os_hsf_frame f = { start->pc, start->sp, start->fp, 0 };
	struct os_hsf_blob b = { 0, 0, 0, 0 };
	uint32_t n = 0;
	uint64_t now;

	if (!j || !j->frames.ok || !max)
		return 0;
	if (!os_hsf_in_interp(&j->frames, f.pc)) {
		if (!os_hsf_in_code(&j->frames, f.pc))
			return 0;
		now = os_now_ns();
		if (now - j->blobs_since > HS_BLOBS_AGE_NS)
			blobs_flush(j);
		if (!walk_find(&w, f.pc, &b))
			return 0; /* a pc in no used blob: nothing to stand on */
	}
	j->walks++;
	/* a leaf whose frame is gone already: its caller's pc is at sp */
	if (leaf && b.frame_size > 0 && f.pc >= b.complete_pc && at_return_poll(h, j, f.pc)) {
		uint64_t ra;

		j->walk_popped++;
		n = jit_expand(h, j, &b, f.pc, false, frames, max);
		if (!n)
			frames[n++] = f.pc;
		if (n == max || !read(arg, f.sp, &ra, 8) || !walk_plausible(&w, ra)) {
			j->walk_frames += n;
			return n;
		}
		f.pc = ra;
		f.sp += 8;
		leaf = false;
	}
	for (;;) {
		uint64_t m = 0;
		bool ok;

		if (os_hsf_in_interp(&j->frames, f.pc)) {
			uint64_t bcp = 0;

			ok = read(arg, f.fp + (uint64_t)j->method_off, &m, 8);
			/* the interrupted frame's bcp is in a register; a caller's
			 * in its frame (runtimes/hotspot/hs_frames.h) */
			if (leaf)
				bcp = start->regs ? start->regs[OS_REG_R13] : 0;
			else if (!read(arg, f.fp + (uint64_t)j->method_off - OS_HSF_BCP_BELOW_METHOD,
				       &bcp, 8))
				bcp = 0;
			frames[n++] = method_word(h, j, f.pc, ok, m, bcp);
		} else {
			uint32_t k = 0;

			if (os_hsf_in_code(&j->frames, f.pc) && walk_find(&w, f.pc, &b))
				k = jit_expand(h, j, &b, f.pc, !leaf, frames + n, max - n);
			if (k)
				n += k;
			else
				frames[n++] = f.pc;
		}
		if (n == max)
			break;
		if (!os_hsf_step(&j->frames, walk_find, &w, read, arg, &f, leaf))
			break;
		leaf = false;
		if (!walk_plausible(&w, f.pc)) {
			j->walk_cut++;
			break;
		}
	}
	j->walk_frames += n;
	return n;
}

static enum os_rt_word hs_name_word(struct os_runtime *rt, uint32_t asid, uint64_t word,
				    const char **name, const char **file, uint32_t *line)
{
	struct hotspot *h = hs_of(rt);
	struct hs_jvm *j = jvm_find(h, asid);
	uint64_t idx;
	bool klass = (word & ~OS_HS_WORD_MASK) == OS_HS_TAG_KLASS;
	bool method = OS_FRAME_IS_METHOD(word);
	uint32_t ln = method ? (uint32_t)((word & OS_FRAME_POS_MASK) >> OS_FRAME_POS_SHIFT) : 0;

	*name = NULL;
	if (file)
		*file = NULL;
	if (line)
		*line = 0;
	if (word == HS_WORD_BEFORE) {
		*name = HS_BEFORE_NAME;
		return OS_RT_WORD_SYNTHETIC;
	}
	if (word == HS_WORD_SMALL) {
		*name = HS_SMALL_NAME;
		return OS_RT_WORD_SYNTHETIC;
	}
	if (!klass && !method)
		return OS_RT_WORD_UNKNOWN;
	if (j && os_hmap_get(&j->names, method ? word & ~OS_FRAME_POS_MASK : word, &idx))
		*name = str_at(h, idx);
	if (*name && ln && file && line) {
		/* a line word is made only with its method's file known (line_word) */
		uint64_t at;

		if (os_hmap_get(&j->ml_at, word & OS_HS_WORD_MASK, &at) && at &&
		    j->mls[at - 1].file) {
			*file = str_at(h, j->mls[at - 1].file - 1);
			*line = *file ? ln : 0;
		}
	}
	if (klass)
		return OS_RT_WORD_TYPE; /* a type even when unnamed: never a frame */
	if (!*name) /* its Method could not be read (unloaded, or the JVM gone) */
		*name = "Interpreter";
	return OS_RT_WORD_FRAME;
}

/* A native allocation path (malloc, mmap) of a JVM: the preload's walk
 * through JIT code gives interpreted frames as Method* words; their names
 * are read now, while the methods exist, and compiled frames become the
 * methods inlined there (direct buffers and other native memory allocated
 * from compiled Java code). */
static uint32_t hs_path_words(struct os_runtime *rt, struct os_aspace *as, const uint64_t *frames,
			      uint32_t n, uint64_t *out, uint32_t max)
{
	struct hotspot *h = hs_of(rt);
	struct hs_jvm *j = NULL;

	for (uint32_t i = 0; i < n && !j; i++)
		if (OS_FRAME_IS_METHOD(frames[i]))
			j = jvm_get(h, as);
	if (!j && h->njvms)
		j = jvm_find(h, as->id);
	if (!j) {
		n = n < max ? n : max;
		for (uint32_t i = 0; i < n; i++)
			out[i] = canon_word(h, NULL, frames[i]);
		return n;
	}
	n = expand_path(h, j, frames, n, out, max);
	for (uint32_t i = 0; i < n; i++)
		if (OS_FRAME_IS_METHOD(out[i]))
			name_word(h, j, out[i]);
	return n;
}

static const char *hs_jit_name(struct os_runtime *rt, uint32_t asid, const char *raw, char *buf,
			       size_t len)
{
	(void)rt;
	(void)asid;
	os_hs_jit_name(raw, buf, len);
	return buf;
}

static int hs_thread_kind(struct os_runtime *rt, uint32_t pid, const char *name)
{
	struct hotspot *h = hs_of(rt);
	uint64_t one;

	/* Before its JVM event (sent once JNI_CreateJavaVM returns) a JVM's
	 * compiler threads already compile: their own names are unmistakable. */
	if (!os_hmap_get(&h->pids, pid, &one))
		return name && (!strncmp(name, "C1 CompilerThre", 15) ||
				!strncmp(name, "C2 CompilerThre", 15))
			       ? OS_THR_JIT
			       : -1;
	return os_hs_thread_kind(name);
}

static void hs_notes(struct os_runtime *rt, struct os_profile *p)
{
	struct hotspot *h = hs_of(rt);
	char note[1024];

	for (uint32_t i = 0; i < h->njvms; i++) {
		struct hs_jvm *j = h->jvms[i];
		const char *gc = j->have_info && j->info.gc[0] ? j->info.gc : "unknown";

		if (j->map_note[0]) /* hs_before_symbolize refused its perf map */
			os_profile_add_note(p, j->map_note);

		if (j->info.mode == OS_JVM_MODE_HYBRID) {
			unsigned long long t = (unsigned long long)j->info.tlab_bytes;
			int dither = (j->info.flags & OS_JVM_F_TLAB_DITHER) != 0;

			snprintf(note, sizeof(note),
				 "HotSpot pid %u (%s GC), hybrid objects: TLABs of %s%llu bytes%s; "
				 "objects >= %llu bytes are all seen, smaller ones >= min-size are "
				 "seen with probability %s and weighted by its inverse "
				 "(Horvitz-Thompson); %llu Java objects seen (%llu of them with a "
				 "weight above 1), estimated %.0f objects allocated; allocations and "
				 "bytes per object are estimates, and sample figures marked est. are "
				 "Horvitz-Thompson estimates (each sample counts its object's weight)",
				 j->pid, gc, dither ? "random size, mean " : "", t,
				 dither ? " (drawn from [T/2, 3T/2) at each refill)" : "",
				 dither ? t * 3 / 2 : t,
				 dither ? "size / T up to T/2 (then rising to 1)" : "size / T",
				 (unsigned long long)j->objects, (unsigned long long)j->small,
				 j->estimated);
		} else if (j->info.mode == OS_JVM_MODE_SAMPLED)
			snprintf(note, sizeof(note),
				 "HotSpot pid %u (%s GC), sampled objects: %llu objects seen at TLAB "
				 "refills and outside TLABs, each refill weighted by TLAB bytes / "
				 "object size (outside-TLAB objects weight 1), estimate %.0f objects "
				 "(objects_estimated counts Java objects only); allocations and bytes "
				 "per object are estimates, and sample figures marked est. are "
				 "Horvitz-Thompson estimates",
				 j->pid, gc, (unsigned long long)j->objects, j->estimated);
		else
			snprintf(note, sizeof(note),
				 "HotSpot pid %u (%s GC), exact objects: %llu Java objects seen; "
				 "allocations and bytes per object are counts of objects allocated",
				 j->pid, gc, (unsigned long long)j->objects);
		os_profile_add_note(p, note);
		snprintf(note, sizeof(note),
			 "HotSpot pid %u: %llu collections, %llu object moves applied (%llu not "
			 "delivered by the target), %llu dead objects dropped after collections "
			 "(checked at %llu of them; an object replaced by one of the same class "
			 "at the same address is kept)",
			 j->pid, (unsigned long long)j->gcs, (unsigned long long)j->moves,
			 (unsigned long long)j->moves_lost, (unsigned long long)j->dropped,
			 (unsigned long long)j->checked);
		os_profile_add_note(p, note);
		if (j->info.flags & (OS_JVM_F_ZGC | OS_JVM_F_CONCURRENT)) {
			snprintf(note, sizeof(note),
				 "HotSpot pid %u: %s GC moves objects concurrently: attribution "
				 "after its collections is best effort",
				 j->pid, gc);
			os_profile_add_note(p, note);
		}
		if (j->walks)
			os_debug("hotspot: pid %u: %llu access paths walked from JIT code (%llu frames, "
				 "%llu cut at an implausible return pc, %llu leaves at a return poll); "
				 "%llu code blob lookups, %llu misses read from the code heap (%llu "
				 "reads), cache flushed %llu times",
				 j->pid, (unsigned long long)j->walks,
				 (unsigned long long)j->walk_frames, (unsigned long long)j->walk_cut,
				 (unsigned long long)j->walk_popped,
				 (unsigned long long)j->blob_lookups,
				 (unsigned long long)j->blob_misses, (unsigned long long)j->blob_reads,
				 (unsigned long long)j->blob_flushes);
		if (j->line_frames || j->line_none || j->ml_failed) {
			snprintf(note, sizeof(note),
				 "HotSpot pid %u: %llu of %llu Java frames with their source line "
				 "(File.java:LINE: the method's LineNumberTable at the frame's "
				 "bytecode index); the others have none (a method without a line "
				 "table or a class without its source file name, an interpreted "
				 "frame whose bytecode pointer was not known, a compiled frame named "
				 "as the compiled method alone); %llu methods whose line table could "
				 "not be read (their JVM had exited when a path of theirs was read)",
				 j->pid, (unsigned long long)j->line_frames,
				 (unsigned long long)(j->line_frames + j->line_none),
				 (unsigned long long)j->ml_failed);
			os_profile_add_note(p, note);
		}
		if (j->jit_frames || j->nm_failed || j->nm_full) {
			snprintf(note, sizeof(note),
				 "HotSpot pid %u: %llu of %llu frames in compiled Java methods named "
				 "by their nmethods' debug info, %llu more inlined methods shown as "
				 "frames of their own; %llu (interrupted pcs%s, or no scope "
				 "recorded there) as the compiled method alone, %llu by the perf map "
				 "(a method that could not be read); %llu nmethods read, %llu found "
				 "replaced, %llu whose debug info could not be read (their frames "
				 "by the perf map), %llu frames by the perf map once %u nmethods "
				 "were kept",
				 j->pid, (unsigned long long)(j->jit_expanded - j->jit_outer),
				 (unsigned long long)j->jit_frames, (unsigned long long)j->jit_inlined,
				 (unsigned long long)j->jit_outer,
				 (j->info.flags & OS_JVM_F_NONSAFEPOINT_DEBUG)
					 ? "" : " without -XX:+DebugNonSafepoints",
				 (unsigned long long)(j->jit_frames - j->jit_expanded),
				 (unsigned long long)j->nm_reads, (unsigned long long)j->nm_stale,
				 (unsigned long long)j->nm_failed, (unsigned long long)j->nm_full,
				 HS_NMS_MAX);
			os_profile_add_note(p, note);
		} else if (j->vm_ok && !j->scl.ok) {
			os_profile_add_note(p, "HotSpot: this JVM's vmStructs lack the nmethod debug-info "
					       "fields: compiled frames are named by the perf map, "
					       "methods inlined there are not shown");
		}
		if (j->nm_reads) {
			size_t bytes = 0;

			for (size_t i = 0; i < j->nnms; i++)
				bytes += (size_t)j->nms[i].npcs * 8 + j->nms[i].ndata +
					 (size_t)j->nms[i].nmeta * 8;
			os_debug("hotspot: pid %u: %zu nmethods' debug info kept, %zu KiB; %llu "
				 "compiled frames expanded from the cache of %zu pcs", j->pid,
				 j->nnms, bytes >> 10, (unsigned long long)j->jx_hits, j->njx);
		}
		if (!j->vm_ok)
			os_profile_add_note(p, "HotSpot: the vmStructs tables could not be read: "
					       "classes and interpreted frames are unnamed");
		if (!h->att.on && (j->small_found || j->small_big || j->small_gc)) {
			snprintf(note, sizeof(note),
				 "HotSpot pid %u: %llu Java-heap samples fell on objects smaller than "
				 "--min-size %llu (not tracked): each was found by reading the object "
				 "header at the sampled address and charged to the context of its "
				 "class marked \"" HS_SMALL_NAME "\" (class known, allocation path "
				 "not, allocations not counted); %llu fell on an untracked object of a "
				 "tracked size (left to the estimates), %llu were not looked up because "
				 "a collection had begun since the sample (%llu heap lookups: %llu "
				 "found, %llu not found, %llu skipped by the per-page negative cache "
				 "or the %u/s cap; %.1f ms collector CPU)",
				 j->pid, (unsigned long long)j->small_found,
				 (unsigned long long)h->a->min_size, (unsigned long long)j->small_big,
				 (unsigned long long)j->small_gc, (unsigned long long)j->scan.scans,
				 (unsigned long long)j->scan.found,
				 (unsigned long long)j->scan.not_found,
				 (unsigned long long)j->scan.skipped, j->scan.max_per_sec,
				 j->scan.cpu_ns / 1e6);
			os_profile_add_note(p, note);
		}
		if (h->att.on && (j->pid == h->att.pid || h->njvms == 1)) {
			snprintf(note, sizeof(note),
				 "HotSpot pid %u was attached while running: %s; %llu objects were "
				 "first seen moved by a collection and are shown as \"" HS_BEFORE_NAME
				 "\" with their class, %llu more were found by reading the object "
				 "header below a sampled Java-heap address (%llu heap lookups: %llu "
				 "found, %llu not found, %llu candidate headers rejected, %llu "
				 "skipped by the per-page negative cache or the %u/s cap, %llu "
				 "during a collection; %.1f ms collector CPU); JIT names %s; Java "
				 "call paths are %s",
				 j->pid,
				 h->att.hooks > 0 ? "allocation and GC hooks installed"
						  : "allocation hooks NOT installed (only samples)",
				 (unsigned long long)j->before,
				 (unsigned long long)j->scan.found,
				 (unsigned long long)j->scan.scans,
				 (unsigned long long)j->scan.found,
				 (unsigned long long)j->scan.not_found,
				 (unsigned long long)j->scan.rejected,
				 (unsigned long long)j->scan.skipped, j->scan.max_per_sec,
				 (unsigned long long)j->scan_gc, j->scan.cpu_ns / 1e6,
				 h->att.map[0] ? "from the perf map the JVM wrote on request "
						 "(Compiler.perfmap)"
					       : "unavailable (no perf map)",
				 h->att.preserve_fp == 2
					 ? "complete (JIT frames walked by their code blobs' frame sizes)"
				 : h->att.preserve_fp == 1
					 ? "complete (the JVM runs with -XX:+PreserveFramePointer)"
					 : "TRUNCATED at the first JIT-compiled frame (the JVM runs "
					   "without -XX:+PreserveFramePointer; start it with that "
					   "flag for complete Java stacks)");
			os_profile_add_note(p, note);
		}
	}
}

static void hs_destroy(struct os_runtime *rt)
{
	struct hotspot *h = hs_of(rt);
	uint64_t ptr, n;

	for (size_t it = 0; os_hmap_next(&h->blocks, &it, &ptr, &n);)
		free((void *)(uintptr_t)ptr);
	os_hmap_destroy(&h->blocks);
	if (h->a && h->a->heap_miss_arg == h) {
		h->a->heap_miss = NULL;
		h->a->heap_miss_arg = NULL;
	}
	for (uint32_t i = 0; i < h->njvms; i++)
		jvm_free(h->jvms[i]);
	for (uint32_t i = 0; i < h->nstrs; i++)
		free(h->strs[i]);
	free(h->strs);
	free(h->jvms);
	os_hmap_destroy(&h->asid2jvm);
	os_hmap_destroy(&h->pids);
	os_hmap_destroy(&h->node2klass);
	os_hmap_destroy(&h->moved);
	free(h);
}

/* HotSpot takes the address spaces whose in-target side sent its events
 * (runtimes/hotspot/target/: the JVM announced, its allocations, moves and
 * collections). */
static bool hs_claim(struct os_runtime *rt, struct os_aspace *as, const struct os_event *ev)
{
	(void)rt;
	(void)as;
	switch (ev->type) {
	case OS_EV_JVM:
	case OS_EV_JALLOC:
	case OS_EV_MOVE:
	case OS_EV_MOVES:
	case OS_EV_GC_BEGIN:
	case OS_EV_GC_END:
		return true;
	default:
		return false;
	}
}

static const struct os_runtime_ops hotspot_ops = {
	.name = "hotspot",
	.claim = hs_claim,
	.prepare = hs_prepare,
	.sample_taken = hs_sample_taken,
	.apply = hs_apply,
	.sample_addr = hs_sample_addr,
	.before_symbolize = hs_before_symbolize,
	.name_word = hs_name_word,
	.frame_word = hs_frame_word,
	.path_words = hs_path_words,
	.java_walk = hs_java_walk,
	.in_heap = hs_in_heap,
	.jit_name = hs_jit_name,
	.thread_kind = hs_thread_kind,
	.attached = os_hs_attached,
	.detached = os_hs_detached,
	.notes = hs_notes,
	.destroy = hs_destroy,
};

struct os_runtime *os_hotspot_new(struct os_attrib *a, struct os_symbolizer *sym,
				  const struct os_hs_mem *mem)
{
	struct hotspot *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->rt.ops = &hotspot_ops;
	h->rt.priv = h;
	h->a = a;
	h->sym = sym;
	h->mem = mem ? *mem : os_hs_mem_proc;
	os_hmap_init(&h->asid2jvm);
	os_hmap_init(&h->pids);
	os_hmap_init(&h->node2klass);
	os_hmap_init(&h->moved);
	os_hmap_init(&h->blocks);
	if (a) {
		a->heap_miss = hs_heap_miss;
		a->heap_miss_arg = h;
	}
	return &h->rt;
}

struct os_runtime *os_hotspot_create(struct os_attrib *a, struct os_symbolizer *sym)
{
	return os_hotspot_new(a, sym, NULL);
}

void os_hotspot_attached(struct os_runtime *rt, uint32_t pid, const char *map_path,
			 bool remove_map, int preserve_fp, int hooks)
{
	struct hotspot *h;

	if (!rt || rt->ops != &hotspot_ops)
		return;
	h = hs_of(rt);
	h->att.on = true;
	h->att.pid = pid;
	h->att.preserve_fp = preserve_fp;
	h->att.hooks = hooks;
	h->att.remove_map = remove_map;
	snprintf(h->att.map, sizeof(h->att.map), "%s", map_path ? map_path : "");
}
