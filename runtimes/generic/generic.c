/* generic.c - the generic runtime adapter of the collector (generic.h):
 * its address spaces (find, create, free), the registry's entries, the ops
 * table of runtime.h and the ops that only look a VM up: the managed heap
 * (in_heap, heap_opaque, heap_miss and its line's name), thread kinds,
 * forget. What the mappings say is generic_probe.c's. */
#include "runtimes/generic/generic_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attacher/cli/options.h"
#include "common/clock.h"
#include "common/grow.h"
#include "common/shm.h"

/* Auto mode: a specific adapter announces its VM once the VM is up (HotSpot:
 * when JNI_CreateJavaVM returns, well within this after the heap was
 * reserved); the generic adapter waits as long before it charges heap
 * samples to its line, and counts them meanwhile. */
#define GEN_GRACE_NS (2ULL * 1000000000ULL)

/* --runtime generic (os_generic_wanted saw it): no other runtime can claim. */
static bool gen_forced;

struct generic *gen_of(struct os_runtime *rt)
{
	return rt->priv;
}

struct gen_vm *gen_vm_find(struct generic *g, uint32_t asid)
{
	uint64_t i;

	return os_hmap_get(&g->asid2vm, asid, &i) ? g->vms[i] : NULL;
}

struct gen_vm *gen_vm_get(struct generic *g, struct os_aspace *as)
{
	struct gen_vm *v = gen_vm_find(g, as->id), **n;
	char proc[32];
	struct stat st;

	if (v)
		return v;
	n = os_grow(g->vms, &g->capvms, g->nvms + 1, sizeof(*n), 8);
	if (!n)
		return NULL;
	g->vms = n;
	v = calloc(1, sizeof(*v));
	if (!v)
		return NULL;
	v->asid = as->id;
	v->pid = as->pid;
	v->ctx = OS_NONE;
	/* the owner of its perf map: the process's, ours when unknown */
	snprintf(proc, sizeof(proc), "/proc/%u", as->pid);
	v->uid = stat(proc, &st) == 0 ? st.st_uid : geteuid();
	if (os_hmap_put(&g->asid2vm, as->id, g->nvms) < 0) {
		free(v);
		return NULL;
	}
	os_hmap_put(&g->pid2vm, as->pid, g->nvms);
	g->vms[g->nvms++] = v;
	return v;
}

void gen_heap_update(struct gen_vm *v)
{
	if (os_gen_resv_heap(&v->resvs, &v->heap_lo, &v->heap_hi)) {
		v->heap_from = GEN_HEAP_EVENTS;
	} else if (v->maps_hi > v->maps_lo) {
		v->heap_lo = v->maps_lo;
		v->heap_hi = v->maps_hi;
		v->heap_from = GEN_HEAP_MAPS;
	} else {
		v->heap_lo = v->heap_hi = 0;
		v->heap_from = GEN_HEAP_NONE;
	}
}

/* The VM of asid whose managed heap holds addr, or NULL. */
static struct gen_vm *heap_vm(struct generic *g, uint32_t asid, uint64_t addr)
{
	struct gen_vm *v = g->nvms ? gen_vm_find(g, asid) : NULL;

	return v && v->vm && !v->forgotten && addr >= v->heap_lo && addr < v->heap_hi ? v : NULL;
}

static bool gen_in_heap(struct os_runtime *rt, uint32_t asid, uint64_t addr)
{
	return heap_vm(gen_of(rt), asid, addr) != NULL;
}

/* No object of the heap is known: the mappings it is made of take no
 * sample (they would name the heap by its mmap call). */
static bool gen_heap_opaque(struct os_runtime *rt, uint32_t asid, uint64_t addr)
{
	return heap_vm(gen_of(rt), asid, addr) != NULL;
}

static uint32_t gen_heap_miss(struct os_runtime *rt, struct os_aspace *as, uint64_t addr)
{
	struct generic *g = gen_of(rt);
	struct gen_vm *v = heap_vm(g, as->id, addr);

	if (!v)
		return OS_NONE;
	if (os_now_ns() < v->seen_ns + g->grace_ns) {
		v->grace_samples++;
		return OS_NONE;
	}
	if (v->ctx == OS_NONE) {
		uint64_t word = GEN_WORD_HEAP;
		uint32_t node = os_attrib_path(g->a, as->id, &word, 1);

		if (node == OS_CCT_NONE)
			return OS_NONE;
		v->ctx = os_attrib_context(g->a, as->id, node);
		if (v->ctx == OS_NONE)
			return OS_NONE;
	}
	v->heap_samples++;
	return v->ctx;
}

static enum os_rt_word gen_name_word(struct os_runtime *rt, uint32_t asid, uint64_t word,
				     const char **name, const char **file, uint32_t *line)
{
	(void)rt;
	(void)asid;
	*name = NULL;
	if (file)
		*file = NULL;
	if (line)
		*line = 0;
	if (word != GEN_WORD_HEAP)
		return OS_RT_WORD_UNKNOWN;
	*name = GEN_HEAP_NAME;
	return OS_RT_WORD_SYNTHETIC;
}

static int gen_thread_kind(struct os_runtime *rt, uint32_t pid, const char *name)
{
	struct generic *g = gen_of(rt);
	uint64_t i;

	if (!os_hmap_get(&g->pid2vm, pid, &i) || !g->vms[i]->vm || g->vms[i]->forgotten)
		return -1;
	return os_gen_thread_kind(name);
}

/* OS_EV_MOVE: a copy by a thread named as a GC thread (target/
 * generic_moves.c). Inside the managed heap it is the collector's copy
 * volume; no object moves with it (none of the heap is tracked). */
static bool gen_prepare(struct os_runtime *rt, struct os_aspace *as, const struct os_event *ev,
			struct os_obj_event *oe)
{
	struct gen_vm *v = gen_vm_find(gen_of(rt), as->id);
	uint64_t src = ev->aux, dst = ev->addr, n = ev->size;

	(void)oe;
	if (ev->type != OS_EV_MOVE || !v || !v->vm || v->forgotten)
		return false;
	if (src >= v->heap_lo && dst >= v->heap_lo && n <= v->heap_hi - v->heap_lo &&
	    src < v->heap_hi - n + 1 && dst < v->heap_hi - n + 1) {
		v->gc_copies++;
		v->gc_bytes += n;
	} else {
		v->gc_copies_out++;
	}
	return false;
}

static void gen_forget(struct os_runtime *rt, uint32_t asid)
{
	struct gen_vm *v = gen_vm_find(gen_of(rt), asid);

	if (v)
		v->forgotten = true;
}

static void gen_destroy(struct os_runtime *rt)
{
	struct generic *g = gen_of(rt);

	for (size_t i = 0; i < g->nvms; i++) {
		os_gen_resv_free(&g->vms[i]->resvs);
		free(g->vms[i]->mods);
		free(g->vms[i]);
	}
	free(g->vms);
	os_hmap_destroy(&g->asid2vm);
	os_hmap_destroy(&g->pid2vm);
	free(g);
}

/* claim NULL: a catch-all, last in the registry; it claims nothing in fact,
 * for it has no events: it answers for the address spaces nobody owns. */
static const struct os_runtime_ops generic_ops = {
	.name = "generic",
	.prepare = gen_prepare,
	.mapping = gen_mapping,
	.sample_taken = gen_sample_taken,
	.in_heap = gen_in_heap,
	.heap_opaque = gen_heap_opaque,
	.heap_miss = gen_heap_miss,
	.before_symbolize = gen_before_symbolize,
	.name_word = gen_name_word,
	.thread_kind = gen_thread_kind,
	.forget = gen_forget,
	.notes = gen_notes,
	.destroy = gen_destroy,
};

struct os_runtime *os_generic_new(struct os_attrib *a, struct os_symbolizer *sym,
				  uint64_t grace_ns)
{
	struct generic *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->rt.ops = &generic_ops;
	g->rt.priv = g;
	g->a = a;
	g->sym = sym;
	g->grace_ns = grace_ns;
	os_hmap_init(&g->asid2vm);
	os_hmap_init(&g->pid2vm);
	return &g->rt;
}

struct os_runtime *os_generic_create(struct os_attrib *a, struct os_symbolizer *sym)
{
	struct os_runtime *rt = os_generic_new(a, sym, gen_forced ? 0 : GEN_GRACE_NS);

	if (rt)
		gen_of(rt)->moves = gen_forced;
	return rt;
}

/* The registry asks it right before create (dispatch.c os_runtimes_new):
 * it also tells whether the adapter was chosen alone. */
bool os_generic_wanted(const struct os_opts *o)
{
	gen_forced = o && o->runtime && strcmp(o->runtime, "generic") == 0;
	return os_runtime_selected(o, "generic");
}

uint32_t os_generic_shm_flags(const struct os_opts *o)
{
	/* forced: the HotSpot side off, copies of GC threads logged */
	return o && o->runtime && strcmp(o->runtime, "generic") == 0
		       ? OS_SHM_F_RT_GENERIC | OS_SHM_F_MOVES
		       : 0;
}
