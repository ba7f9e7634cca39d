/* generic_vm.c - the pure parts of the generic adapter (generic.h): which
 * library makes a process a VM, its address-space reservations and the
 * maps' view of its heap (thread names: generic_names.h). Nothing here
 * reads a process: unit tested on plain values. */
#include "runtimes/generic/generic.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/profile.h"

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool ends(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

bool os_gen_vm_library(const char *path)
{
	static const char *const prefixes[] = { "libjvm", "libj9vm", "libj9gc", "libj9prt",
						"libj9jit", NULL };
	const char *base;

	if (!path)
		return false;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (!ends(base, ".so"))
		return false;
	for (int i = 0; prefixes[i]; i++)
		if (starts(base, prefixes[i]))
			return true; /* libjvm.so, libjvmcicompiler.so, libj9vm29.so, ... */
	return false;
}

/* Removes entry i (order does not matter). */
static void resv_drop(struct os_gen_resvs *r, size_t i)
{
	r->v[i] = r->v[--r->n];
}

int os_gen_resv_add(struct os_gen_resvs *r, uint64_t lo, uint64_t hi)
{
	struct os_gen_resv *v;

	if (hi <= lo)
		return 0;
	for (size_t i = 0; i < r->n;) { /* a new mapping replaces what it overlaps */
		if (r->v[i].lo < hi && lo < r->v[i].hi)
			resv_drop(r, i);
		else
			i++;
	}
	v = os_grow(r->v, &r->cap, r->n + 1, sizeof(*v), 8);
	if (!v)
		return -ENOMEM;
	r->v = v;
	r->v[r->n++] = (struct os_gen_resv){ lo, hi, 0 };
	return 0;
}

void os_gen_resv_cut(struct os_gen_resvs *r, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < r->n;) {
		struct os_gen_resv *e = &r->v[i];

		if (hi <= e->lo || lo >= e->hi) {
			i++;
			continue;
		}
		if (lo <= e->lo && hi >= e->hi) {
			resv_drop(r, i);
			continue;
		}
		if (lo <= e->lo)
			e->lo = hi;
		else if (hi >= e->hi)
			e->hi = lo;
		else if (lo - e->lo >= e->hi - hi) /* a hole: the larger side stays */
			e->hi = lo;
		else
			e->lo = hi;
		i++;
	}
}

void os_gen_resv_commit(struct os_gen_resvs *r, uint64_t lo, uint64_t hi, bool accessible)
{
	for (size_t i = 0; i < r->n; i++) {
		struct os_gen_resv *e = &r->v[i];
		uint64_t a = lo > e->lo ? lo : e->lo, b = hi < e->hi ? hi : e->hi;

		if (a >= b)
			continue;
		if (accessible)
			e->committed += b - a;
		else
			e->committed -= b - a < e->committed ? b - a : e->committed;
	}
}

bool os_gen_resv_heap(const struct os_gen_resvs *r, uint64_t *lo, uint64_t *hi)
{
	const struct os_gen_resv *best = NULL;

	for (size_t i = 0; i < r->n; i++) {
		const struct os_gen_resv *e = &r->v[i];

		if (!best || e->committed > best->committed ||
		    (e->committed == best->committed && e->hi - e->lo > best->hi - best->lo))
			best = e;
	}
	if (!best)
		return false;
	*lo = best->lo;
	*hi = best->hi;
	return true;
}

void os_gen_resv_free(struct os_gen_resvs *r)
{
	free(r->v);
	memset(r, 0, sizeof(*r));
}

void os_gen_maps_init(struct os_gen_maps *m)
{
	memset(m, 0, sizeof(*m));
}

/* The region walked so far ends: the reserved one with the most committed
 * (the largest among equals) is kept. */
static void region_close(struct os_gen_maps *m)
{
	if (m->cur_hi > m->cur_lo && m->cur_reserved &&
	    (m->cur_committed > m->heap_committed ||
	     (m->cur_committed == m->heap_committed &&
	      m->cur_hi - m->cur_lo > m->heap_hi - m->heap_lo))) {
		m->heap_lo = m->cur_lo;
		m->heap_hi = m->cur_hi;
		m->heap_committed = m->cur_committed;
	}
	m->cur_lo = m->cur_hi = m->cur_committed = 0;
	m->cur_reserved = false;
}

void os_gen_maps_add(struct os_gen_maps *m, const struct os_maps_entry *e)
{
	bool anon = !e->path || !e->path[0];

	if (!m->vm && e->path && os_gen_vm_library(e->path)) {
		const char *base = strrchr(e->path, '/');

		m->vm = true;
		snprintf(m->vm_lib, sizeof(m->vm_lib), "%s", base ? base + 1 : e->path);
	}
	/* private anonymous memory, adjacent to the region walked: the same
	 * reservation, committed or not (the kernel splits it by protection) */
	if (!anon || e->perms[3] != 'p' || e->perms[2] == 'x') {
		region_close(m);
		return;
	}
	if (m->cur_hi != e->start)
		region_close(m);
	if (!m->cur_hi)
		m->cur_lo = e->start;
	m->cur_hi = e->end;
	if (e->perms[0] == '-' && e->perms[1] == '-')
		m->cur_reserved = true;
	else
		m->cur_committed += e->end - e->start;
}

void os_gen_maps_end(struct os_gen_maps *m)
{
	region_close(m);
}
