/* generic_probe.c - what the mappings of a process say, for the generic
 * adapter: whether it is a VM (a VM library mapped), which reservations its
 * VM made and how much it committed in each (op mapping: the mmap events of
 * launch mode, the caller of mmap in a VM library) and the maps' own view of its heap (op sample_taken:
 * /proc/PID/maps read at its first sample, again later while no heap is
 * known: attach mode, where the reservation came before). */
#include "runtimes/generic/generic_int.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/clock.h"
#include "common/grow.h"
#include "common/log.h"

/* The maps are read again while no heap is known, at most this often
 * (doubling from 1 s: a process that is no VM costs a few reads). */
#define GEN_PROBE_NS 1000000000ULL
#define GEN_PROBE_MAX_SHIFT 6

struct probe {
	struct gen_vm *v;
	struct os_gen_maps m;
	bool oom;
};

static int probe_entry(const struct os_maps_entry *e, void *arg)
{
	struct probe *p = arg;
	struct gen_vm *v = p->v;
	struct gen_mod *n;

	os_gen_maps_add(&p->m, e);
	if (!os_maps_is_exec(e) || !e->path || e->path[0] != '/' || p->oom)
		return 0;
	n = os_grow(v->mods, &v->capmods, v->nmods + 1, sizeof(*n), 64);
	if (!n) {
		p->oom = true;
		return 0;
	}
	v->mods = n;
	v->mods[v->nmods++] = (struct gen_mod){ e->start, e->end, os_gen_vm_library(e->path) };
	return 0;
}

/* Reads the maps of v's process: its modules, whether it is a VM, the
 * maps' view of its heap. */
static void probe(struct gen_vm *v)
{
	struct probe p = { .v = v };
	int rc;

	v->probed_ns = os_now_ns();
	v->probes++;
	v->nmods = 0;
	os_gen_maps_init(&p.m);
	rc = os_maps_foreach_pid((pid_t)v->pid, probe_entry, &p);
	os_gen_maps_end(&p.m);
	if (rc < 0) {
		os_debug("generic: pid %u: its maps: %s", v->pid, strerror(-rc));
		return;
	}
	if (p.m.vm && !v->vm) {
		v->vm = true;
		v->seen_ns = v->probed_ns;
	}
	if (p.m.vm && !v->lib[0]) {
		memcpy(v->lib, p.m.vm_lib, sizeof(v->lib));
		os_debug("generic: pid %u: %s mapped: a VM", v->pid, v->lib);
	}
	v->maps_lo = p.m.heap_lo;
	v->maps_hi = p.m.heap_hi;
	gen_heap_update(v);
}

/* The module of pc, read again when pc is in none known: NULL when it is
 * in no file mapping. */
static const struct gen_mod *module_of(struct gen_vm *v, uint64_t pc)
{
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < v->nmods; i++)
			if (pc >= v->mods[i].lo && pc < v->mods[i].hi)
				return &v->mods[i];
		if (pass == 0)
			probe(v);
	}
	return NULL;
}

void gen_mapping(struct os_runtime *rt, struct os_aspace *as, const struct os_event *ev)
{
	struct generic *g = gen_of(rt);
	struct gen_vm *v = gen_vm_get(g, as);
	uint32_t prot, flags;
	const struct gen_mod *mod;

	if (!v || v->forgotten)
		return;
	if (ev->type == OS_EV_MUNMAP || ev->type == OS_EV_MREMAP) {
		uint64_t lo = ev->type == OS_EV_MUNMAP ? ev->addr : ev->aux;
		uint64_t len = ev->type == OS_EV_MUNMAP ? ev->size : ev->aux2;

		if (v->resvs.n && len) { /* a heap trimmed (or given back) */
			os_gen_resv_cut(&v->resvs, lo, lo + len);
			gen_heap_update(v);
		}
		return;
	}
	if (ev->type != OS_EV_MMAP)
		return;
	prot = (uint32_t)ev->aux;
	flags = (uint32_t)(ev->aux >> 32);
	/* committed (or given back) inside a reservation: which one is the heap */
	if ((flags & MAP_FIXED) && v->resvs.n) {
		os_gen_resv_commit(&v->resvs, ev->addr, ev->addr + ev->size, prot != PROT_NONE);
		gen_heap_update(v);
		return;
	}
	/* a reservation: address space only, committed later piecewise */
	if (prot != PROT_NONE || !(flags & MAP_NORESERVE) || (flags & MAP_FIXED) || !ev->nframes)
		return;
	v->resv_seen++;
	/* made by the VM: mmap's caller is in a VM library (a malloc arena or
	 * a thread stack the VM asked for is made by libc) */
	mod = module_of(v, ev->frames[0]);
	if (!mod || !mod->vm)
		return;
	if (!v->vm) {
		v->vm = true;
		v->seen_ns = os_now_ns();
	}
	if (os_gen_resv_add(&v->resvs, ev->addr, ev->addr + ev->size) == 0)
		gen_heap_update(v);
}

void gen_sample_taken(struct os_runtime *rt, struct os_aspace *as, uint64_t addr)
{
	struct generic *g = gen_of(rt);
	struct gen_vm *v = gen_vm_get(g, as);
	uint32_t shift;

	(void)addr;
	if (!v || v->forgotten)
		return;
	shift = v->probes < GEN_PROBE_MAX_SHIFT ? v->probes : GEN_PROBE_MAX_SHIFT;
	if (!v->probes ||
	    ((!v->vm || !v->heap_hi) && os_now_ns() - v->probed_ns > (GEN_PROBE_NS << shift)))
		probe(v);
}
