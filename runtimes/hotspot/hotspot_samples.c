/* hotspot_samples.c - Java-heap samples that no tracked object holds
 * (runtime.h op sample_taken, os_attrib.heap_miss): the object under the
 * sample is found from its header and charged to its class (objects
 * smaller than --min-size, or born before an attach), or left to the
 * sampled-object estimates. */
#include "runtimes/hotspot/hotspot_int.h"

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

void hs_sample_taken(struct os_runtime *rt, struct os_aspace *as, uint64_t addr)
{
	struct hotspot *h = hs_of(rt);
	struct hs_jvm *j = hs_jvm_find(h, as->id);
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
	ci = hs_class_ctx(h, j, as, e->klass, HS_WORD_SMALL);
	if (ci == OS_NONE)
		return OS_NONE;
	j->small_found++;
	return ci;
}

/* attrib.h heap_miss, attach mode (launch mode: small_object): a sample in the Java heap that no
 * tracked object holds; the object is looked for in the target's memory
 * (hotspot_scan.h) and added with the before-attach context. */
uint32_t hs_heap_miss(void *arg, struct os_aspace *as, uint64_t addr)
{
	struct hotspot *h = arg;
	struct hs_jvm *j = hs_jvm_find(h, as->id);
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
	ci = hs_before_ctx(h, j, as, f.klass);
	if (ci == OS_NONE)
		return OS_NONE;
	h->a->ctx[ci].allocations++;
	h->a->ctx[ci].bytes += f.size;
	h->a->ctx[ci].est_allocations += 1;
	h->a->ctx[ci].est_bytes += (double)f.size;
	os_iv_insert(as->objects, f.start, f.start + f.size, ci);
	return ci;
}
