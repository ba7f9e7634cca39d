/* numa.c - the NUMA observer (--numa, memsrc.h): the node of each sampled
 * access's page against the node of the CPU that made the access.
 *
 * The page's node is read in `take`, while the target runs and the page is
 * where the access found it: move_pages(2) on the target without target
 * nodes (a query, nothing moves), one call per page not seen before. A
 * page's node is cached for PAGE_TTL_NS: pages rarely move (the kernel's
 * NUMA balancing, migrate_pages), and a cache for the whole run would keep
 * a freed and reused page's old node. A page not present (never touched
 * since it was mapped, swapped out) or a failing call is "unknown", not
 * cached. */
#include "attacher/analyses/memsrc.h"

#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attacher/core/collector.h"
#include "common/clock.h"
#include "common/grow.h"
#include "common/hashmap.h"

#define PAGE_TTL_NS 1000000000ULL

const struct os_numa_topo *os_numa_topo_override;

/* What take keeps with the queued sample. */
struct taken {
	int16_t page_node, cpu_node; /* -1: unknown */
	uint8_t has;
	uint8_t pad[3];
};

struct numa {
	struct os_collector *c;
	struct os_numa_topo topo;
	struct os_hmap pages;  /* asid << 48 | page >> 12 -> time << 8 | node + 1 */
	struct os_memsrc *ctx; /* numa_* per attribution context */
	size_t nctx;
	uint64_t local, remote, unknown, queries;
	long page_size;
};

static int sys_cpu_node(void *arg, uint32_t cpu)
{
	(void)arg;
	return numa_node_of_cpu((int)cpu);
}

static int sys_page_node(void *arg, pid_t pid, uint64_t page)
{
	void *pages[1] = { (void *)(uintptr_t)page };
	int status = -1;

	(void)arg;
	if (move_pages(pid, 1, pages, NULL, &status, 0) < 0)
		return -1;
	return status; /* a node, or -errno (-ENOENT: not present) */
}

static int nm_start(void **self, struct os_collector *c, char *err, size_t errlen)
{
	struct numa *n;

	if (!os_numa_topo_override && numa_available() < 0) {
		snprintf(err, errlen, "--numa: the kernel has no NUMA support (libnuma: "
			 "numa_available fails)");
		return -ENOTSUP;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->c = c;
	if (os_numa_topo_override) {
		n->topo = *os_numa_topo_override;
	} else {
		n->topo.nodes = numa_num_configured_nodes();
		n->topo.cpu_node = sys_cpu_node;
		n->topo.page_node = sys_page_node;
	}
	if (n->topo.nodes < 1)
		n->topo.nodes = 1;
	n->page_size = sysconf(_SC_PAGESIZE);
	os_hmap_init(&n->pages);
	*self = n;
	return 0;
}

static int page_node(struct numa *n, pid_t pid, uint32_t asid, uint64_t addr)
{
	uint64_t page = addr & ~(uint64_t)(n->page_size - 1);
	uint64_t key = (uint64_t)asid << 48 | (page >> 12 & ((1ULL << 48) - 1)), v;
	uint64_t now = os_now_ns();
	int node;

	if (os_hmap_get(&n->pages, key, &v) && now - (v >> 8) < PAGE_TTL_NS)
		return (int)(v & 0xff) - 1;
	n->queries++;
	node = n->topo.page_node(n->topo.arg, pid, page);
	if (node < 0 || node > 254)
		return -1;
	os_hmap_put(&n->pages, key, now << 8 | (uint64_t)(node + 1));
	return node;
}

static void nm_take(void *self, const struct os_obs_take *t, void *data)
{
	struct numa *n = self;
	struct taken *k = data;

	k->has = 1;
	k->page_node = (int16_t)page_node(n, t->pid, t->asid, t->addr);
	k->cpu_node = t->ps && (t->ps->has & OS_PS_CPU)
			      ? (int16_t)n->topo.cpu_node(n->topo.arg, t->ps->cpu)
			      : -1;
}

static void nm_sample(void *self, const struct os_obs_sample *s)
{
	struct numa *n = self;
	const struct taken *k = s->data;
	struct os_memsrc *f;

	if (!k->has || s->ctx == OS_NONE)
		return;
	if (s->ctx >= n->nctx) {
		size_t want = (size_t)s->ctx + 1, cap = n->nctx;
		struct os_memsrc *g = os_grow(n->ctx, &cap, want, sizeof(*g), 64);

		if (!g)
			return;
		memset(g + n->nctx, 0, (cap - n->nctx) * sizeof(*g));
		n->ctx = g;
		n->nctx = cap;
	}
	f = &n->ctx[s->ctx];
	if (k->page_node < 0 || k->cpu_node < 0) {
		f->numa_unknown++;
		n->unknown++;
	} else if (k->page_node == k->cpu_node) {
		f->numa_local++;
		n->local++;
	} else {
		f->numa_remote++;
		n->remote++;
	}
	if (k->page_node >= 0 && k->page_node < 64)
		f->numa_nodes |= 1ULL << k->page_node;
}

static void nm_notes(void *self, struct os_profile *p)
{
	struct numa *n = self;
	char note[256];

	p->analyses |= OS_AN_NUMA;
	p->numa_nodes = (uint32_t)n->topo.nodes;
	if (n->topo.nodes == 1)
		snprintf(note, sizeof(note),
			 "NUMA (--numa): 1 node: all local (%llu attributed samples; %llu pages "
			 "queried, %llu samples on pages not present)",
			 (unsigned long long)(n->local + n->remote + n->unknown),
			 (unsigned long long)n->queries, (unsigned long long)n->unknown);
	else
		snprintf(note, sizeof(note),
			 "NUMA (--numa): %d nodes; of %llu attributed samples %llu touched a page on "
			 "the CPU's own node, %llu a page on another node, %llu unknown (page not "
			 "present)",
			 n->topo.nodes, (unsigned long long)(n->local + n->remote + n->unknown),
			 (unsigned long long)n->local, (unsigned long long)n->remote,
			 (unsigned long long)n->unknown);
	os_profile_add_note(p, note);
}

static int nm_sections(void *self, const struct os_obs_build *b)
{
	struct numa *n = self;

	for (size_t i = 0; i < n->nctx && i < b->c->attrib.nctx; i++) {
		struct os_memsrc *d;

		if (b->ctxmap[i] == OS_NONE)
			continue;
		d = &b->p->contexts[b->ctxmap[i]].mem;
		d->numa_local += n->ctx[i].numa_local;
		d->numa_remote += n->ctx[i].numa_remote;
		d->numa_unknown += n->ctx[i].numa_unknown;
		d->numa_nodes |= n->ctx[i].numa_nodes;
	}
	return 0;
}

static void nm_destroy(void *self)
{
	struct numa *n = self;

	if (!n)
		return;
	os_hmap_destroy(&n->pages);
	free(n->ctx);
	free(n);
}

const struct os_observer_ops os_numa_observer = {
	.name = "numa",
	.sample_data = sizeof(struct taken),
	.start = nm_start,
	.take = nm_take,
	.sample = nm_sample,
	.profile_notes = nm_notes,
	.profile_sections = nm_sections,
	.destroy = nm_destroy,
};
