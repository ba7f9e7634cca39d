/* hotspot.c - the HotSpot runtime adapter of the collector (see hotspot.h):
 * its JVMs, one per address space that announced one (find, create, free),
 * remote reads of their memory, the ops table of runtime.h and the ops
 * that only look a JVM up (sampled addresses, heap ranges, JIT names,
 * thread kinds). The other ops live in the files hotspot_int.h lists. */
#include "runtimes/hotspot/hotspot_int.h"

struct hotspot *hs_of(struct os_runtime *rt)
{
	return rt->priv;
}

struct hs_jvm *hs_jvm_find(struct hotspot *h, uint32_t asid)
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

struct hs_jvm *hs_jvm_get(struct hotspot *h, struct os_aspace *as)
{
	struct hs_jvm *j = hs_jvm_find(h, as->id);

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
	os_hmap_init(&j->enum_of);
	os_hmap_init(&j->klass_lh);
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
	os_hmap_destroy(&j->enum_of);
	os_hmap_destroy(&j->klass_lh);
	os_hmap_destroy(&j->paths);
	os_hmap_destroy(&j->unnamed);
	os_hmap_destroy(&j->pre);
	free(j->prev);
	free(j->prea);
	free(j->pend);
	os_hs_scan_destroy(&j->scan);
	free(j->batch);
	hs_gens_free(j);
	free(j->blobs);
	free(j->segpage);
	for (size_t i = 0; i < j->nnms; i++)
		os_hs_nm_free(&j->nms[i]);
	free(j->nms);
	os_hmap_destroy(&j->nm_at);
	free(j->jx);
	free(j->jxw);
	os_hmap_destroy(&j->jx_at);
	free(j->fx);
	for (size_t i = 0; i < j->nmls; i++)
		os_hs_mlines_free(&j->mls[i].ml);
	free(j->mls);
	os_hmap_destroy(&j->ml_at);
	os_hmap_destroy(&j->files);
	free(j);
}

uint64_t hs_canon(const struct hs_jvm *j, uint64_t addr)
{
	if (!j || !(j->info.flags & OS_JVM_F_ZGC))
		return addr;
	/* the adapter in the target gives [0, offset mask + 1) as the heap */
	return os_hs_zgc_mask(addr, j->info.heap_end ? j->info.heap_end - 1 : 0);
}

bool hs_rd_u64(struct hotspot *h, struct hs_jvm *j, uint64_t addr, uint64_t *v)
{
	return addr && h->mem.read(h->mem.arg, j->pid, addr, v, 8) == 8;
}

bool hs_rd_i32(struct hotspot *h, struct hs_jvm *j, uint64_t addr, int32_t *v)
{
	return addr && h->mem.read(h->mem.arg, j->pid, addr, v, 4) == 4;
}

static uint64_t hs_sample_addr(struct os_runtime *rt, uint32_t asid, uint64_t addr)
{
	struct hotspot *h = hs_of(rt);

	if (!h->njvms)
		return addr;
	return hs_canon(hs_jvm_find(h, asid), addr);
}

static bool hs_in_heap(struct os_runtime *rt, uint32_t asid, uint64_t addr)
{
	struct hs_jvm *j = hs_jvm_find(hs_of(rt), asid);

	return j && j->have_info && j->info.heap_end > j->info.heap_start &&
	       addr >= j->info.heap_start && addr < j->info.heap_end;
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

static uint32_t hs_heap_miss_op(struct os_runtime *rt, struct os_aspace *as, uint64_t addr)
{
	return hs_heap_miss(hs_of(rt), as, addr);
}

static uint64_t hs_estimate_op(struct os_runtime *rt, uint64_t now)
{
	hs_paths_estimate(hs_of(rt));
	return hs_focus_pick(hs_of(rt), now);
}

static const struct os_runtime_ops hotspot_ops = {
	.name = "hotspot",
	.claim = hs_claim,
	.prepare = hs_prepare,
	.sample_taken = hs_sample_taken,
	.apply = hs_apply,
	.heap_miss = hs_heap_miss_op,
	.sample_addr = hs_sample_addr,
	.before_symbolize = hs_before_symbolize,
	.name_word = hs_name_word,
	.frame_word = hs_frame_word,
	.path_words = hs_path_words,
	.java_walk = hs_java_walk,
	.in_heap = hs_in_heap,
	.jit_name = hs_jit_name,
	.native_type = hs_native_type,
	.thread_kind = hs_thread_kind,
	.attached = os_hs_attached,
	.detached = os_hs_detached,
	.notes = hs_notes,
	.estimate = hs_estimate_op,
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
