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

/* Launch mode: a Java-heap sample that no tracked object holds (an object
 * smaller than --min-size, or in hybrid mode one not sampled at its
 * allocation). When a sample is read (drain time, some ms after it was
 * taken) and no tracked object holds its address, the object there is
 * found by its header (hotspot_scan.h, the window below the address as
 * large as an untracked object can be: hs_scan_back) and remembered with
 * the JVM's collection count; a collection running or beginning during the
 * read voids it. When the sample is applied (time order), the lookup
 * stands only if no collection began between the sample and the read: the
 * count read equals the count after the last collection applied before
 * the sample. The sample is then charged to the class-only context "its
 * class, [not seen at allocation ...]"; the object does not enter the index
 * (the next collection may move or free it unseen). Those samples are
 * shared out to the sites of the class when the profile is built
 * (hotspot_paths.c): each sample counts once. */
bool hs_lookups_on(const struct hotspot *h, const struct hs_jvm *j)
{
	return j && j->vm_ok && j->have_info && (h->att.on || h->a->min_size > 16) &&
	       !(j->info.flags & (OS_JVM_F_ZGC | OS_JVM_F_CONCURRENT));
}

static bool small_wanted(const struct hotspot *h, const struct hs_jvm *j)
{
	return !h->att.on && hs_lookups_on(h, j);
}

/* How far below a sampled address an untracked object can start: exact
 * mode tracks every object >= --min-size, hybrid every one >= 3T/2. */
static uint32_t hs_scan_back(const struct hotspot *h, const struct hs_jvm *j)
{
	uint64_t b = OS_HS_SCAN_BACK;

	if (j->info.mode == OS_JVM_MODE_EXACT)
		b = h->a->min_size;
	else if (j->info.mode == OS_JVM_MODE_HYBRID && j->info.tlab_bytes)
		b = j->info.tlab_bytes * 7 / 4 + 16; /* corrected lengths reach 7T/4 */
	if (b < h->a->min_size)
		b = h->a->min_size;
	return (uint32_t)(b < OS_HS_SCAN_BACK ? b : OS_HS_SCAN_BACK);
}

#define HS_PEND_MAX 8192 /* addresses waiting for a collection's end */

/* Stores what was found at addr (read at collection count e->total). */
static void pre_put(struct hs_jvm *j, uint64_t addr, const struct hs_pre *e)
{
	struct hs_pre *n;
	uint64_t idx, *na;

	if (os_hmap_get(&j->pre, addr, &idx)) {
		j->prev[idx - 1] = *e;
		return;
	}
	n = os_grow(j->prev, &j->cappre, j->npre + 1, sizeof(*n), 256);
	if (!n)
		return;
	j->prev = n;
	na = os_grow(j->prea, &j->capprea, j->npre + 1, sizeof(*na), 256);
	if (!na)
		return;
	j->prea = na;
	if (os_hmap_put(&j->pre, addr, j->npre + 1) < 0)
		return;
	j->prea[j->npre] = addr;
	j->prev[j->npre++] = *e;
}

void hs_pre_prune(struct hs_jvm *j, uint32_t total)
{
	size_t k = 0;

	os_hmap_destroy(&j->pre);
	os_hmap_init(&j->pre);
	for (size_t i = 0; i < j->npre; i++) {
		if ((int32_t)(j->prev[i].total - total) < 0)
			continue;
		j->prev[k] = j->prev[i];
		j->prea[k] = j->prea[i];
		if (os_hmap_put(&j->pre, j->prea[k], k + 1) == 0)
			k++;
	}
	j->npre = k;
}

/* Reads the object at addr; false when a collection ran or began meanwhile. */
static bool look_up(struct hotspot *h, struct hs_jvm *j, struct os_aspace *as, uint64_t addr,
		    uint32_t total)
{
	struct hs_pre e = { 0, 0, 0, HS_UNID_NO_HEADER };
	struct os_hs_found f;
	uint32_t total2;
	uint64_t idx;
	bool active;
	int r;

	/* the same address again, no collection since: known */
	if (os_hmap_get(&j->pre, addr, &idx) && j->prev[idx - 1].total == total)
		return true;
	j->scan.back = hs_scan_back(h, j);
	r = os_hs_scan_find(&j->scan, &j->vm, &h->mem, j->pid, j->info.heap_start,
			    j->info.heap_end, addr, os_now_ns(), tracked, as, &f);
	if (r == 0 && j->scan.back) { /* an object no event showed (born before the
				       * JVM event, moves lost): the whole window */
		j->scan.back = 0;
		os_hmap_del(&j->scan.neg, addr >> 12); /* the small window's verdict */
		r = os_hs_scan_find(&j->scan, &j->vm, &h->mem, j->pid, j->info.heap_start,
				    j->info.heap_end, addr, os_now_ns(), tracked, as, &f);
	}
	if (r == 1) {
		e.klass = f.klass;
		e.size = f.size > UINT32_MAX ? UINT32_MAX : (uint32_t)f.size;
	} else if (r == -EAGAIN) {
		e.why = HS_UNID_SKIPPED;
	}
	if (os_hs_gc_state(&j->vm, &h->mem, j->pid, &total2, &active) != 0 || active ||
	    total2 != total)
		return false;
	e.total = total;
	pre_put(j, addr, &e);
	return true;
}

void hs_sample_taken(struct os_runtime *rt, struct os_aspace *as, uint64_t addr)
{
	struct hotspot *h = hs_of(rt);
	struct hs_jvm *j = hs_jvm_find(h, as->id);
	uint32_t total;
	bool active;
	uint64_t *n;

	if (!small_wanted(h, j) || addr < j->info.heap_start || addr >= j->info.heap_end ||
	    os_iv_lookup(as->objects, addr, NULL, NULL, NULL))
		return;
	if (os_hs_gc_state(&j->vm, &h->mem, j->pid, &total, &active) != 0)
		return;
	if (active) { /* read again once the collection is over */
		n = j->npend < HS_PEND_MAX
			    ? os_grow(j->pend, &j->cappend, j->npend + 1, sizeof(*n), 256)
			    : NULL;
		if (!n) {
			j->small_gc++;
			return;
		}
		j->pend = n;
		j->pend[j->npend++] = addr;
		return;
	}
	/* samples read while a collection ran: what is there after it (the
	 * copies, or what they left), for those taken during it (small_object) */
	for (size_t i = 0; i < j->npend; i++)
		if (!look_up(h, j, as, j->pend[i], total))
			j->small_gc++;
	j->npend = 0;
	if (!look_up(h, j, as, addr, total))
		j->small_gc++;
}

/* attrib.h heap_miss, launch mode: see hs_sample_taken. */
static uint32_t small_object(struct hotspot *h, struct hs_jvm *j, struct os_aspace *as,
			     uint64_t addr)
{
	const struct hs_pre *e;
	uint64_t idx;
	uint32_t ci;

	if (!os_hmap_get(&j->pre, addr, &idx)) { /* a collection ran while it was read */
		uint32_t total;
		bool active;

		/* not read again yet: now, if that collection is over */
		if (os_hs_gc_state(&j->vm, &h->mem, j->pid, &total, &active) != 0 || active ||
		    !look_up(h, j, as, addr, total) || !os_hmap_get(&j->pre, addr, &idx)) {
			j->unid[HS_UNID_GC_RUNNING]++;
			return OS_NONE;
		}
	}
	e = &j->prev[idx - 1];
	/* a collection began after the sample: void. A sample taken during a
	 * collection (mostly its GC threads copying or marking) whose header was
	 * read after that one collection ended: the object there then is the
	 * copy (to-space) or what the copy left (from-space, not reused yet) */
	if (e->total != j->end_total && !(j->in_gc && e->total == j->end_total + 1)) {
		j->small_gc++;
		j->unid[HS_UNID_GC]++;
		return OS_NONE;
	}
	if (!e->klass) {
		j->unid[e->why < HS_UNID_N ? e->why : HS_UNID_NO_HEADER]++;
		return OS_NONE;
	}
	ci = hs_class_ctx(h, j, as, e->klass, HS_WORD_SMALL);
	if (ci == OS_NONE)
		return OS_NONE;
	if (e->size >= h->a->min_size)
		j->small_big++; /* a tracked size, not sampled at allocation */
	else
		j->small_found++;
	return ci;
}

/* attrib.h heap_miss: a sample in the Java heap that no tracked object
 * holds. Launch mode: small_object. Attach mode: the object is looked for
 * in the target's memory (hotspot_scan.h) and added with the
 * before-attach context. No object: counted by why (HS_UNID_*). */
uint32_t hs_heap_miss(void *arg, struct os_aspace *as, uint64_t addr)
{
	struct hotspot *h = arg;
	struct hs_jvm *j = hs_jvm_find(h, as->id);
	struct os_hs_found f;
	uint32_t total, ci;
	bool active;
	int r;

	if (!j)
		return OS_NONE;
	if (!hs_lookups_on(h, j)) {
		j->unid[HS_UNID_NO_LOOKUP]++;
		return OS_NONE;
	}
	if (!h->att.on)
		return small_object(h, j, as, addr);
	/* objects move while a collection runs: their headers say nothing */
	if (os_hs_gc_state(&j->vm, &h->mem, j->pid, &total, &active) == 0 && active) {
		j->scan_gc++;
		j->unid[HS_UNID_GC_RUNNING]++;
		return OS_NONE;
	}
	r = os_hs_scan_find(&j->scan, &j->vm, &h->mem, j->pid, j->info.heap_start,
			    j->info.heap_end, addr, os_now_ns(), tracked, as, &f);
	if (r != 1) {
		j->unid[r == -EAGAIN ? HS_UNID_SKIPPED : HS_UNID_NO_HEADER]++;
		return OS_NONE;
	}
	ci = hs_before_ctx(h, j, as, f.klass);
	if (ci == OS_NONE)
		return OS_NONE;
	if (f.forwarded) /* a dead copy in from-space: its class, never an index entry */
		return ci;
	h->a->ctx[ci].allocations++;
	h->a->ctx[ci].bytes += f.size;
	h->a->ctx[ci].est_allocations += 1;
	h->a->ctx[ci].est_bytes += (double)f.size;
	os_iv_insert(as->objects, f.start, f.start + f.size, ci);
	return ci;
}
