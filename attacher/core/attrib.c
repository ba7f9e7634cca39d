/* attrib.c - live objects per address space, contexts, access charging. */
#include "attacher/core/attrib.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int os_attrib_init(struct os_attrib *a, struct os_tasks *tasks)
{
	memset(a, 0, sizeof(*a));
	a->tasks = tasks;
	os_hmap_init(&a->node2ctx);
	os_hmap_init(&a->acc_map);
	os_hmap_init(&a->tb_map);
	os_hmap_init(&a->slice_map);
	return os_cct_init(&a->cct);
}

void os_attrib_destroy(struct os_attrib *a)
{
	os_cct_destroy(&a->cct);
	os_hmap_destroy(&a->node2ctx);
	os_hmap_destroy(&a->acc_map);
	os_hmap_destroy(&a->tb_map);
	os_hmap_destroy(&a->slice_map);
	free(a->tb);
	free(a->slices);
	free(a->ctx);
	free(a->acc);
	memset(a, 0, sizeof(*a));
}

uint32_t os_attrib_path(struct os_attrib *a, uint32_t asid, const uint64_t *frames, uint32_t n)
{
	uint64_t buf[OS_MAX_FRAMES + 1];

	if (n > OS_MAX_FRAMES)
		n = OS_MAX_FRAMES;
	memcpy(buf, frames, n * sizeof(*buf));
	buf[n] = OS_ASID_MARK | asid;
	return os_cct_insert(&a->cct, buf, n + 1);
}

uint32_t os_attrib_unpath(const struct os_attrib *a, uint32_t node, uint64_t *frames,
			  uint32_t max, uint32_t *asid)
{
	uint64_t buf[OS_MAX_FRAMES + 2];
	uint32_t d = os_cct_path(&a->cct, node, buf, OS_MAX_FRAMES + 2);

	if (d > OS_MAX_FRAMES + 2)
		d = OS_MAX_FRAMES + 2;
	*asid = 0;
	if (d && (buf[d - 1] & OS_ASID_MARK) == OS_ASID_MARK) {
		*asid = (uint32_t)(buf[d - 1] & 0xffffffff);
		d--;
	}
	if (d > max)
		d = max;
	memcpy(frames, buf, d * sizeof(*frames));
	return d;
}

uint32_t os_attrib_context(struct os_attrib *a, uint32_t asid, uint32_t node)
{
	uint64_t idx;

	if (os_hmap_get(&a->node2ctx, node, &idx))
		return (uint32_t)idx;
	if (a->nctx == a->ctxcap) {
		uint32_t cap = a->ctxcap ? a->ctxcap * 2 : 256;
		struct os_ctx *n = realloc(a->ctx, cap * sizeof(*n));

		if (!n)
			return OS_NONE;
		a->ctx = n;
		a->ctxcap = cap;
	}
	memset(&a->ctx[a->nctx], 0, sizeof(a->ctx[0]));
	a->ctx[a->nctx].asid = asid;
	a->ctx[a->nctx].node = node;
	if (os_hmap_put(&a->node2ctx, node, a->nctx) < 0)
		return OS_NONE;
	return a->nctx++;
}

static void born(struct os_attrib *a, struct os_aspace *as, const struct os_obj_event *ev)
{
	uint32_t ci;

	if (!ev->size)
		return;
	ci = ev->node == OS_CCT_NONE ? OS_NONE : os_attrib_context(a, as->id, ev->node);
	if (ci == OS_NONE) {
		a->c.dropped_events++;
		return;
	}
	a->ctx[ci].allocations++;
	a->ctx[ci].bytes += ev->size;
	a->ctx[ci].est_allocations += 1;
	a->ctx[ci].est_bytes += (double)ev->size;
	a->c.objects_seen++;
	/* whatever was there is stale (a free we did not see) */
	os_iv_remove_overlaps(as->objects, ev->addr, ev->addr + ev->size, NULL, NULL);
	os_iv_insert(as->objects, ev->addr, ev->addr + ev->size, ci);
}

bool os_attrib_prepare(struct os_attrib *a, const struct os_event *ev, struct os_obj_event *oe)
{
	struct os_aspace *as = os_tasks_aspace(a->tasks, ev->pid);

	if (ev->type == OS_EV_THREAD) {
		char name[32] = "";
		size_t n = ev->size < sizeof(name) - 1 ? ev->size : sizeof(name) - 1;

		if (n > ev->nframes * 8u)
			n = ev->nframes * 8u;
		memcpy(name, ev->frames, n);
		name[n] = 0;
		os_tasks_thread_named(a->tasks, ev->pid, ev->tid, name, ev->time);
		return false;
	}
	if (!as)
		return false;
	if (ev->type != OS_EV_ALLOC && ev->type != OS_EV_FREE && ev->type != OS_EV_REALLOC &&
	    ev->type != OS_EV_MMAP && ev->type != OS_EV_MUNMAP && ev->type != OS_EV_MREMAP)
		return a->rt && a->rt->ops->prepare ? a->rt->ops->prepare(a->rt, as, ev, oe) : false;
	oe->type = ev->type;
	oe->addr = ev->addr;
	oe->size = ev->size;
	oe->aux = ev->aux;
	oe->asid = as->id;
	oe->node = OS_CCT_NONE;
	if (ev->type == OS_EV_ALLOC || ev->type == OS_EV_MMAP || ev->type == OS_EV_REALLOC) {
		if (a->rt && a->rt->ops->path_words) {
			uint64_t path[OS_MAX_FRAMES];
			uint32_t n = a->rt->ops->path_words(a->rt, as, ev->frames, ev->nframes, path,
							    OS_MAX_FRAMES);

			oe->node = os_attrib_path(a, as->id, path, n);
		} else {
			oe->node = os_attrib_path(a, as->id, ev->frames, ev->nframes);
		}
	}
	return true;
}

void os_attrib_event(struct os_attrib *a, const struct os_obj_event *ev)
{
	struct os_aspace *as = os_tasks_get(a->tasks, ev->asid);
	uint64_t end, val;

	if (!as || !as->objects)
		return;
	switch (ev->type) {
	case OS_EV_ALLOC:
	case OS_EV_MMAP:
		born(a, as, ev);
		break;
	case OS_EV_FREE:
		if (os_iv_remove(as->objects, ev->addr, NULL, NULL) == 0)
			a->c.frees++;
		break;
	case OS_EV_REALLOC:
		if (os_iv_remove(as->objects, ev->aux, NULL, NULL) == 0)
			a->c.frees++;
		born(a, as, ev);
		break;
	case OS_EV_MUNMAP:
		a->c.frees += os_iv_remove_overlaps(as->objects, ev->addr, ev->addr + ev->size,
						    NULL, NULL);
		break;
	case OS_EV_MREMAP:
		if (os_iv_remove(as->objects, ev->aux, &end, &val) == 0) {
			os_iv_remove_overlaps(as->objects, ev->addr, ev->addr + ev->size, NULL,
					      NULL);
			os_iv_insert(as->objects, ev->addr, ev->addr + ev->size, val);
		}
		break;
	default:
		/* runtime adapters (runtimes/runtime.h) give the other types a meaning */
		if (a->rt && a->rt->ops->apply)
			a->rt->ops->apply(a->rt, as, ev);
		break;
	}
}

/* Grows *arr (n used of *cap, elements of size sz) for one more; false: no memory. */
static bool room(void **arr, uint32_t n, uint32_t *cap, size_t sz)
{
	void *na;
	uint32_t c;

	if (n < *cap)
		return true;
	c = *cap ? *cap * 2 : 1024;
	na = realloc(*arr, (size_t)c * sz);
	if (!na)
		return false;
	*arr = na;
	*cap = c;
	return true;
}

/* Counts n samples of `entry` for (pid, tid, bucket). */
static void slice_count(struct os_attrib *a, uint32_t entry, uint32_t pid, uint32_t tid,
			uint64_t bucket, uint64_t n)
{
	uint64_t tbkey, *tbs, *ss;

	if (bucket >= OS_SLICE_BUCKETS)
		bucket = OS_SLICE_BUCKETS - 1;
	tbkey = (uint64_t)(pid & 0x3fffff) << 42 | (uint64_t)(tid & 0x3fffff) << 20 | bucket;
	tbs = os_hmap_ref(&a->tb_map, tbkey, UINT64_MAX);
	if (!tbs)
		goto lost;
	if (*tbs == UINT64_MAX) {
		if (!room((void **)&a->tb, a->ntb, &a->tbcap, sizeof(*a->tb)))
			goto lost;
		a->tb[a->ntb] = tbkey;
		*tbs = a->ntb++;
	}
	ss = os_hmap_ref(&a->slice_map, (uint64_t)entry << 32 | *tbs, UINT64_MAX);
	if (!ss)
		goto lost;
	if (*ss == UINT64_MAX) {
		if (!room((void **)&a->slices, a->nslices, &a->slicecap, sizeof(*a->slices)))
			goto lost;
		a->slices[a->nslices] = (struct os_attrib_slice){ entry, (uint32_t)*tbs, 0 };
		*ss = a->nslices++;
	}
	a->slices[*ss].samples += n;
	return;
lost:
	a->slices_lost += n;
}

/* Too many slices (a long run of many threads and paths): buckets twice
 * as wide, equal keys folded; the memory held stays bounded. */
static void slices_widen(struct os_attrib *a)
{
	struct os_attrib_slice *old = a->slices;
	uint32_t nold = a->nslices, i;
	uint64_t *tbold = a->tb;

	a->slice_k = (a->slice_k ? a->slice_k : 1) * 2;
	a->slices = NULL;
	a->nslices = a->slicecap = 0;
	a->tb = NULL;
	a->ntb = a->tbcap = 0;
	os_hmap_destroy(&a->tb_map);
	os_hmap_destroy(&a->slice_map);
	os_hmap_init(&a->tb_map);
	os_hmap_init(&a->slice_map);
	for (i = 0; i < nold; i++) {
		uint64_t tb = tbold[old[i].tb];

		slice_count(a, old[i].entry, (uint32_t)(tb >> 42), (uint32_t)(tb >> 20) & 0x3fffff,
			    (tb & (OS_SLICE_BUCKETS - 1)) / 2, old[i].samples);
	}
	free(old);
	free(tbold);
	if (a->nslices > OS_SLICE_CAP / 4 * 3) { /* not time but threads x paths: give up */
		a->slices_off = true;
		free(a->slices);
		free(a->tb);
		a->slices = NULL;
		a->tb = NULL;
		a->nslices = a->slicecap = a->ntb = a->tbcap = 0;
		os_hmap_destroy(&a->tb_map);
		os_hmap_destroy(&a->slice_map);
		os_hmap_init(&a->tb_map);
		os_hmap_init(&a->slice_map);
	}
}

static uint32_t sample(struct os_attrib *a, uint32_t asid, uint64_t addr, uint64_t sp,
		       uint32_t access_node);

void os_attrib_sample(struct os_attrib *a, uint32_t asid, uint64_t addr, uint64_t sp,
		      uint32_t access_node)
{
	sample(a, asid, addr, sp, access_node);
}

void os_attrib_sample_at(struct os_attrib *a, uint32_t asid, uint64_t addr, uint64_t sp,
			 uint32_t access_node, uint32_t tid, uint64_t since_ns)
{
	uint32_t entry = sample(a, asid, addr, sp, access_node);
	struct os_aspace *as;

	if (entry == OS_NONE || a->slices_off)
		return;
	as = os_tasks_get(a->tasks, asid);
	slice_count(a, entry, as ? as->pid : 0, tid,
		    since_ns / (OS_SLICE_MS * 1000000ull * (a->slice_k ? a->slice_k : 1)), 1);
	if (a->nslices >= OS_SLICE_CAP)
		slices_widen(a);
}

/* Attributes one sample; returns the slice entry it was counted in
 * (OS_SLICE_CTX | ctx, or the acc index), OS_NONE if not attributed. */
static uint32_t sample(struct os_attrib *a, uint32_t asid, uint64_t addr, uint64_t sp,
		       uint32_t access_node)
{
	struct os_aspace *as = os_tasks_get(a->tasks, asid);
	uint64_t val, ci, key, *slot;
	double w;
	bool managed;

	if (!as)
		return OS_NONE;
	if (a->rt && a->rt->ops->sample_addr)
		addr = a->rt->ops->sample_addr(a->rt, asid, addr);
	managed = a->rt && a->rt->ops->in_heap && a->rt->ops->in_heap(a->rt, asid, addr);
	if (!os_iv_lookup(as->objects, addr, NULL, NULL, &val) &&
	    (!managed || !a->heap_miss ||
	     (val = a->heap_miss(a->heap_miss_arg, as, addr)) == OS_NONE || val >= a->nctx)) {
		if (managed) {
			a->c.samples_heap++;
			a->c.samples_java_heap++;
		} else if (os_aspace_is_heap(as, addr, sp)) {
			a->c.samples_heap++;
		}
		return OS_NONE;
	}
	ci = os_val_ctx(val);
	if (ci >= a->nctx) { /* never written so: counted, not attributed */
		a->c.samples_heap++;
		if (managed)
			a->c.samples_java_heap++;
		return OS_NONE;
	}
	w = os_val_weight(val);
	a->c.samples_heap++;
	a->c.samples_attributed++;
	a->est_attributed += w;
	if (managed) {
		a->c.samples_java_heap++;
		a->c.samples_java_attributed++;
		a->est_java_attributed += w;
	}
	a->ctx[ci].samples++;
	a->ctx[ci].est_samples += w;
	if (access_node == OS_CCT_NONE)
		return OS_SLICE_CTX | (uint32_t)ci;
	key = ci << 32 | access_node;
	slot = os_hmap_ref(&a->acc_map, key, UINT64_MAX);
	if (!slot)
		return OS_SLICE_CTX | (uint32_t)ci;
	if (*slot == UINT64_MAX) {
		if (a->nacc == a->acccap) {
			uint32_t cap = a->acccap ? a->acccap * 2 : 1024;
			struct os_acc *n = realloc(a->acc, cap * sizeof(*n));

			if (!n)
				return OS_SLICE_CTX | (uint32_t)ci;
			a->acc = n;
			a->acccap = cap;
		}
		memset(&a->acc[a->nacc], 0, sizeof(a->acc[0]));
		a->acc[a->nacc].ctx = (uint32_t)ci;
		a->acc[a->nacc].node = access_node;
		*slot = a->nacc++;
	}
	a->acc[*slot].samples++;
	a->acc[*slot].est_samples += w;
	return (uint32_t)*slot;
}
