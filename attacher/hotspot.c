/* hotspot.c - the HotSpot runtime adapter of the collector (see hotspot.h). */
#include "attacher/hotspot.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attacher/collector.h"
#include "attacher/hotspot_gc.h"
#include "attacher/hotspot_scan.h"
#include "common/hotspot_abi.h"
#include "common/log.h"

#define NAME_MAX_LEN 512

/* What was at a sampled address when the sample was read (launch mode). */
struct hs_pre {
	uint64_t klass;            /* 0: no object found */
	uint32_t size;
	uint32_t total;            /* _total_collections then (no collection running) */
};

struct hs_jvm {
	uint32_t asid, pid;
	bool have_info, vm_ok;
	bool map_existed;          /* /tmp/perf-PID.map was there before the JVM wrote it */
	struct os_jvm_info info;
	struct os_hs_vm vm;
	struct os_hmap names;      /* tagged word (klass / method) -> string index */
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
	os_hmap_init(&j->names);
	os_hmap_init(&j->pre);
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
	os_hmap_destroy(&j->pre);
	free(j->prev);
	os_hs_scan_destroy(&j->scan);
	free(j->batch);
	free(j);
}

static const char *str_at(struct hotspot *h, uint64_t idx)
{
	return idx < h->nstrs ? h->strs[idx] : NULL;
}

/* Remembers name s for a tagged word of j. */
static void name_put(struct hotspot *h, struct hs_jvm *j, uint64_t word, const char *s)
{
	char *dup;

	if (h->nstrs == h->capstrs) {
		uint32_t cap = h->capstrs ? h->capstrs * 2 : 256;
		char **n = realloc(h->strs, cap * sizeof(*n));

		if (!n)
			return;
		h->strs = n;
		h->capstrs = cap;
	}
	dup = strdup(s);
	if (!dup)
		return;
	if (os_hmap_put(&j->names, word, h->nstrs) < 0) {
		free(dup);
		return;
	}
	h->strs[h->nstrs++] = dup;
}

static bool name_known(struct hs_jvm *j, uint64_t word)
{
	uint64_t idx;

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

static void name_method(struct hotspot *h, struct hs_jvm *j, uint64_t word)
{
	char name[NAME_MAX_LEN];

	if (name_known(j, word) || !j->vm_ok)
		return;
	if (os_hs_method_name(&j->vm, &h->mem, j->pid, word & OS_HS_WORD_MASK, name,
			      sizeof(name)) < 0)
		return;
	name_put(h, j, word, name);
}

static uint64_t canon(const struct hs_jvm *j, uint64_t addr)
{
	if (!j || !(j->info.flags & OS_JVM_F_ZGC))
		return addr;
	/* the adapter in the target gives [0, offset mask + 1) as the heap */
	return os_hs_zgc_mask(addr, j->info.heap_end ? j->info.heap_end - 1 : 0);
}

static void prepare_jvm(struct hotspot *h, struct hs_jvm *j, const struct os_event *ev)
{
	char path[64];
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
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", j->pid);
	j->map_existed = access(path, F_OK) == 0;
	if (!j->have_info || j->vm_ok)
		return;
	t0 = os_now_ns();
	rc = os_hs_vm_load(&j->vm, &h->mem, j->pid, &j->info);
	os_debug("hotspot: pid %u: vmStructs read in %.1f ms", j->pid, (os_now_ns() - t0) / 1e6);
	if (rc < 0)
		os_debug("hotspot: pid %u: cannot read the vmStructs tables: %s", j->pid,
			 strerror(-rc));
	j->vm_ok = rc == 0;
}

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
	memcpy(buf + 1, ev->frames, n * sizeof(*buf));
	if (j->vm_ok) {
		if (j->vm.lay.compressed_klass < 0)
			os_hs_learn_header(&j->vm, &h->mem, j->pid, ev->addr, klass);
		name_klass(h, j, klass);
		for (uint32_t i = 1; i <= n; i++)
			if (buf[i] & OS_FRAME_METHOD)
				name_method(h, j, buf[i]);
	}
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
	if (j->nbatch == j->capbatch) {
		size_t cap = j->capbatch ? j->capbatch * 2 : 1024;
		struct os_hs_move *n = realloc(j->batch, cap * sizeof(*n));

		if (!n)
			return;
		j->batch = n;
		j->capbatch = cap;
	}
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
	struct hs_pre e = { 0, 0, 0 };
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
	if (j->npre == j->cappre) {
		size_t cap = j->cappre ? j->cappre * 2 : 256;
		struct hs_pre *n = realloc(j->prev, cap * sizeof(*n));

		if (!n)
			return;
		j->prev = n;
		j->cappre = cap;
	}
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

static void hs_before_symbolize(struct os_runtime *rt)
{
	struct hotspot *h = hs_of(rt);
	char path[160];

	for (uint32_t i = 0; i < h->njvms; i++) {
		struct hs_jvm *j = h->jvms[i];
		/* one JVM per attach; its pid may be the container's view */
		bool attached = h->att.on && (j->pid == h->att.pid || h->njvms == 1) &&
				h->att.map[0];

		if (attached) /* written on request, possibly in a container's /tmp */
			snprintf(path, sizeof(path), "%s", h->att.map);
		else
			snprintf(path, sizeof(path), "/tmp/perf-%u.map", j->pid);
		if (access(path, R_OK) < 0)
			continue;
		if (os_sym_load_perf_map(h->sym, j->asid, path) < 0)
			os_debug("hotspot: cannot read %s", path);
		/* written because objscope asked for it: leave no artifact */
		if (attached ? h->att.remove_map : !j->map_existed)
			unlink(path);
	}
}

static bool hs_in_heap(struct os_runtime *rt, uint32_t asid, uint64_t addr)
{
	struct hs_jvm *j = jvm_find(hs_of(rt), asid);

	return j && j->have_info && j->info.heap_end > j->info.heap_start &&
	       addr >= j->info.heap_start && addr < j->info.heap_end;
}

static uint64_t hs_frame_word(struct os_runtime *rt, uint32_t asid, uint64_t pc, uint64_t fp,
			      bool (*read)(void *arg, uint64_t addr, uint64_t *word), void *arg)
{
	struct hotspot *h = hs_of(rt);
	struct hs_jvm *j = jvm_find(h, asid);
	uint64_t off, m;

	if (!j || !j->vm_ok || pc < j->info.interp_start || pc >= j->info.interp_end)
		return pc;
	/* the Method* slot of an interpreter frame, in words from fp (JDK 17
	 * exports the slot next to it: the method is the one below last_sp) */
	if (os_hs_vm_get(&j->vm, "frame::interpreter_frame_method_offset", &off) != 0) {
		if (os_hs_vm_get(&j->vm, "frame::interpreter_frame_last_sp_offset", &off) != 0)
			return pc;
		off -= 1;
	}
	if (!read(arg, fp + (uint64_t)((int64_t)off * 8), &m) || !m || (m & 7) ||
	    (m & ~OS_HS_WORD_MASK))
		return pc;
	name_method(h, j, OS_FRAME_METHOD | m);
	return name_known(j, OS_FRAME_METHOD | m) ? (OS_FRAME_METHOD | m) : pc;
}

static enum os_rt_word hs_name_word(struct os_runtime *rt, uint32_t asid, uint64_t word,
				    const char **name)
{
	struct hotspot *h = hs_of(rt);
	struct hs_jvm *j = jvm_find(h, asid);
	uint64_t idx;
	bool klass = (word & ~OS_HS_WORD_MASK) == OS_HS_TAG_KLASS;
	bool method = (word & ~OS_HS_WORD_MASK) == OS_FRAME_METHOD;

	*name = NULL;
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
	if (j && os_hmap_get(&j->names, word, &idx))
		*name = str_at(h, idx);
	if (klass)
		return OS_RT_WORD_TYPE; /* a type even when unnamed: never a frame */
	return *name ? OS_RT_WORD_FRAME : OS_RT_WORD_UNKNOWN;
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

	if (!os_hmap_get(&h->pids, pid, &one))
		return -1;
	return os_hs_thread_kind(name);
}

static void hs_notes(struct os_runtime *rt, struct os_profile *p)
{
	struct hotspot *h = hs_of(rt);
	char note[1024];

	for (uint32_t i = 0; i < h->njvms; i++) {
		struct hs_jvm *j = h->jvms[i];
		const char *gc = j->have_info && j->info.gc[0] ? j->info.gc : "unknown";

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
				 h->att.preserve_fp == 1
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

static const struct os_runtime_ops hotspot_ops = {
	.name = "hotspot",
	.prepare = hs_prepare,
	.sample_taken = hs_sample_taken,
	.apply = hs_apply,
	.sample_addr = hs_sample_addr,
	.before_symbolize = hs_before_symbolize,
	.name_word = hs_name_word,
	.frame_word = hs_frame_word,
	.in_heap = hs_in_heap,
	.jit_name = hs_jit_name,
	.thread_kind = hs_thread_kind,
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
