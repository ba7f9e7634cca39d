/* hotspot_gens.c - the generations of a JVM's heap, for the collections the
 * adapter reports (attrib.h os_gc_report: a survivor promoted to the old
 * generation). Serial and Parallel keep the young generation in one
 * reserved range for the JVM's life: read once, through vmStructs. G1 types
 * its regions anew at every collection: the region table is read when the
 * collection's end is drained from the rings (the target alive, usually
 * before the next collection) and used when that end is applied. Other
 * collectors: not known. */
#include "runtimes/hotspot/hotspot_int.h"

#define GENS_FIELD_MAX (1 << 16) /* offsets inside the heap objects, believed below this */
#define G1_REGIONS_MAX (1u << 17)

/* A nonstatic field's offset (or a type's size) of at most GENS_FIELD_MAX. */
static bool field(const struct hs_jvm *j, const char *name, uint64_t *off)
{
	return os_hs_vm_get(&j->vm, name, off) == 0 && *off < GENS_FIELD_MAX;
}

/* The heap object (Universe::_collectedHeap's value). */
static uint64_t heap_obj(struct hotspot *h, struct hs_jvm *j)
{
	uint32_t total;
	bool active;

	if (!j->vm.heap)
		os_hs_gc_state(&j->vm, &h->mem, j->pid, &total, &active); /* reads it once */
	return j->vm.heap;
}

/* [lo, hi) of the MemRegion at addr. */
static bool mem_region(struct hotspot *h, struct hs_jvm *j, uint64_t addr, uint64_t *lo,
		       uint64_t *hi)
{
	uint64_t so, wo, words;

	if (!field(j, "MemRegion::_start", &so) || !field(j, "MemRegion::_word_size", &wo) ||
	    !hs_rd_u64(h, j, addr + so, lo) || !hs_rd_u64(h, j, addr + wo, &words) || !*lo)
		return false;
	*hi = *lo + words * 8;
	return *hi > *lo;
}

/* Serial: GenCollectedHeap::_young_gen->_reserved; Parallel: the static
 * ParallelScavengeHeap::_young_gen->_reserved. */
static void young_range(struct hotspot *h, struct hs_jvm *j)
{
	uint64_t gen = 0, off, heap = heap_obj(h, j);

	if (!strcmp(j->info.gc, "Serial")) {
		if (!heap || !field(j, "GenCollectedHeap::_young_gen", &off) ||
		    !hs_rd_u64(h, j, heap + off, &gen) || !field(j, "Generation::_reserved", &off))
			return;
	} else if (!strcmp(j->info.gc, "Parallel")) {
		if (os_hs_vm_get(&j->vm, "ParallelScavengeHeap::_young_gen", &off) != 0 ||
		    !hs_rd_u64(h, j, off, &gen) || !field(j, "PSYoungGen::_reserved", &off))
			return;
	} else {
		return;
	}
	if (gen && mem_region(h, j, gen + off, &j->gens.young_lo, &j->gens.young_hi))
		j->gens.kind = HS_GENS_RANGE;
}

/* G1: the offsets of the region table and of a region's type tag. */
static void g1_layout(struct hs_jvm *j)
{
	struct hs_gens *g = &j->gens;
	uint64_t hrm, regions, type, tag, mask;

	if (strcmp(j->info.gc, "G1") || !field(j, "G1CollectedHeap::_hrm", &hrm) ||
	    !field(j, "HeapRegionManager::_regions", &regions) ||
	    !field(j, "G1HeapRegionTable::_base", &g->g1_base) ||
	    !field(j, "G1HeapRegionTable::_length", &g->g1_length) ||
	    !field(j, "G1HeapRegionTable::_bias", &g->g1_bias) ||
	    !field(j, "G1HeapRegionTable::_shift_by", &g->g1_shift) ||
	    !field(j, "HeapRegion::_type", &type) || !field(j, "HeapRegionType::_tag", &tag) ||
	    os_hs_vm_get(&j->vm, "HeapRegionType::YoungMask", &mask) != 0 || !mask)
		return;
	g->g1_hrm = hrm;
	g->g1_regions = regions;
	g->g1_tag = type + tag;
	g->g1_young = mask;
	/* humongous regions: objects allocated there directly (optional) */
	if (os_hs_vm_get(&j->vm, "HeapRegionType::HumongousMask", &mask) == 0)
		g->g1_huge = mask;
	j->gens.kind = HS_GENS_G1;
}

void hs_gens_load(struct hotspot *h, struct hs_jvm *j)
{
	young_range(h, j);
	if (j->gens.kind == HS_GENS_NONE)
		g1_layout(j);
	os_debug("hotspot: pid %u: %s generations %s", j->pid, j->info.gc,
		 j->gens.kind == HS_GENS_RANGE ? "by the young range" :
		 j->gens.kind == HS_GENS_G1 ? "by G1 region types" : "not known");
}

/* G1: every region's generation now, read while the target runs (when the
 * collection's end is drained: applied in time order later, the JVM may be
 * gone by then). */
/* Keeps snapshot sn (its gen array taken). */
static void snap_keep(struct hs_gens *g, struct hs_gsnap *sn)
{
	if (g->nsnap == HS_GSNAPS) { /* the oldest goes: its end was never applied */
		free(g->snap[0].gen);
		memmove(g->snap, g->snap + 1, (HS_GSNAPS - 1) * sizeof(g->snap[0]));
		g->nsnap--;
	}
	g->snap[g->nsnap++] = *sn;
	sn->gen = NULL;
}

/* The generations the target read at the collection's end (hotspot_abi.h
 * OS_HS_GENS_*): exact whatever the collector's delay (lag 0). False when
 * w holds none. */
static bool snap_from_target(struct hs_gens *g, uint32_t total, const uint64_t *w, uint32_t nw)
{
	static const uint8_t map[] = { [OS_HS_GENS_UNKNOWN] = OS_GEN_UNKNOWN,
				       [OS_HS_GENS_FREE] = OS_GEN_FREE,
				       [OS_HS_GENS_YOUNG] = OS_GEN_YOUNG,
				       [OS_HS_GENS_OLD] = OS_GEN_OLD,
				       [OS_HS_GENS_HUGE] = OS_GEN_OLD_DIRECT };
	struct hs_gsnap sn = { .total = total };
	uint64_t n, shift;

	if (!w || nw < OS_HS_GENS_HDR || (w[0] & 0xff) != OS_HS_GENS_MAGIC)
		return false;
	shift = (w[0] >> 8) & 0xff;
	n = w[2];
	if (shift < 16 || shift >= 40 || !n || n > OS_HS_GENS_MAX_REGIONS ||
	    nw < OS_HS_GENS_HDR + (n + OS_HS_GENS_PER_WORD - 1) / OS_HS_GENS_PER_WORD)
		return false;
	sn.gen = malloc(n);
	if (!sn.gen)
		return false;
	for (uint64_t r = 0; r < n; r++) {
		unsigned v = (unsigned)(w[OS_HS_GENS_HDR + r / OS_HS_GENS_PER_WORD] >>
					(4 * (r % OS_HS_GENS_PER_WORD))) & 0xf;

		sn.gen[r] = v < sizeof(map) ? map[v] : OS_GEN_UNKNOWN;
	}
	sn.lo = w[1];
	sn.shift = (uint32_t)shift;
	sn.n = n;
	sn.lag = 0;
	snap_keep(g, &sn);
	g->g1_in_target++;
	return true;
}

void hs_gens_drained(struct hotspot *h, struct hs_jvm *j, uint32_t total, const uint64_t *w,
		     uint32_t nw)
{
	struct hs_gens *g = &j->gens;
	uint64_t t = 0, base = 0, len = 0, bias = 0, heap, *addrs = NULL;
	struct hs_gsnap sn = { .total = total };
	bool *ok = NULL;
	int32_t sh = 0;

	if (g->kind != HS_GENS_G1 || snap_from_target(g, total, w, nw) ||
	    !(heap = heap_obj(h, j)))
		return;
	g->g1_read_late++;
	/* _hrm is the manager itself in some JDKs, a pointer to it in others
	 * (JDK 12-17): the table whose fields make sense */
	for (int k = 0; k < 2; k++) {
		uint64_t hrm = heap + g->g1_hrm;

		if (k == 1 && !hs_rd_u64(h, j, hrm, &hrm))
			break;
		t = hrm + g->g1_regions;
		if (hs_rd_u64(h, j, t + g->g1_base, &base) &&
		    hs_rd_u64(h, j, t + g->g1_length, &len) &&
		    hs_rd_u64(h, j, t + g->g1_bias, &bias) && hs_rd_i32(h, j, t + g->g1_shift, &sh) &&
		    base && len && len <= G1_REGIONS_MAX && sh >= 16 && sh < 40)
			break;
		len = 0;
	}
	if (!len) {
		g->g1_failed++;
		return;
	}
	if (len > g->g1_cap) {
		uint64_t *w = realloc(g->g1_words, len * sizeof(*w));

		if (!w)
			return;
		g->g1_words = w;
		g->g1_cap = len;
	}
	addrs = malloc(len * sizeof(*addrs));
	ok = malloc(len * sizeof(*ok));
	sn.gen = malloc(len);
	if (!addrs || !ok || !sn.gen)
		goto out;
	/* the table's entries (HeapRegion*), then each region's tag word */
	for (uint64_t i = 0; i < len; i++)
		addrs[i] = base + 8 * i;
	if (os_hs_mem_words(&h->mem, j->pid, addrs, len, g->g1_words, ok) != len) {
		g->g1_failed++;
		goto out;
	}
	for (uint64_t i = 0; i < len; i++)
		addrs[i] = ok[i] && g->g1_words[i] ? g->g1_words[i] + g->g1_tag : 0;
	os_hs_mem_words(&h->mem, j->pid, addrs, len, g->g1_words, ok);
	for (uint64_t i = 0; i < len; i++) {
		uint32_t tag = (uint32_t)g->g1_words[i];

		if (!addrs[i] || !ok[i])
			sn.gen[i] = OS_GEN_UNKNOWN;
		else if (!tag)
			sn.gen[i] = OS_GEN_FREE;
		else
			sn.gen[i] = (tag & g->g1_young)			? OS_GEN_YOUNG
				    : g->g1_huge && (tag & g->g1_huge) ? OS_GEN_OLD_DIRECT
								       : OS_GEN_OLD;
	}
	sn.lo = bias << (uint32_t)sh;
	sn.shift = (uint32_t)sh;
	sn.n = len;
	/* read after later collections began: one later collection frees the
	 * regions of this one's survivors (young regions are all collected)
	 * and reuses them as young regions (G1 takes young regions from one
	 * end of its free list, old ones from the other); after two, a region
	 * may have become anything: only "old" stands then */
	{
		uint32_t now;
		bool active;

		if (os_hs_gc_state(&j->vm, &h->mem, j->pid, &now, &active) < 0)
			sn.lag = 2;
		else
			sn.lag = (now - total) + active;
	}
	snap_keep(g, &sn);
out:
	free(sn.gen);
	free(addrs);
	free(ok);
}

/* G1: the generations read when collection `total`'s end was drained, for
 * hs_gen_of until the next; false when there are none. Older ones go.
 * Selecting the same collection again keeps what was selected (the end of
 * a collection asks twice: small objects' drop, then its report). */
bool hs_gens_select(struct hs_jvm *j, uint32_t total)
{
	struct hs_gens *g = &j->gens;
	unsigned k = 0, keep = 0;

	if (g->cur.gen && g->cur.total == total)
		return true;
	free(g->cur.gen);
	memset(&g->cur, 0, sizeof(g->cur));
	for (k = 0; k < g->nsnap; k++) {
		struct hs_gsnap *sn = &g->snap[k];

		if (sn->total == total && !g->cur.gen)
			g->cur = *sn;
		else if ((int32_t)(sn->total - total) <= 0)
			free(sn->gen);
		else
			g->snap[keep++] = *sn;
	}
	g->nsnap = keep;
	return g->cur.gen != NULL;
}

/* The generation of region of addr as read (OS_GEN_FREE included). */
static uint32_t g1_region(const struct hs_gens *g, uint64_t addr)
{
	uint64_t i;

	if (!g->cur.gen || addr < g->cur.lo)
		return OS_GEN_UNKNOWN;
	i = (addr - g->cur.lo) >> g->cur.shift;
	return i < g->cur.n ? g->cur.gen[i] : OS_GEN_UNKNOWN;
}

uint32_t hs_gen_of(const struct hs_jvm *j, uint64_t addr)
{
	const struct hs_gens *g = &j->gens;
	uint32_t r;

	switch (g->kind) {
	case HS_GENS_RANGE:
		/* the old generation takes objects by promotion or directly:
		 * never a young region made old */
		return addr >= g->young_lo && addr < g->young_hi ? OS_GEN_YOUNG : OS_GEN_OLD_DIRECT;
	case HS_GENS_G1:
		r = g1_region(g, addr);
		/* free when the collection had just ended: what was there died
		 * (G1 frees dead humongous objects' regions at once) */
		if (r == OS_GEN_FREE)
			return g->cur.lag ? OS_GEN_UNKNOWN : OS_GEN_FREE;
		if (g->cur.lag > 1 && r != OS_GEN_OLD && r != OS_GEN_OLD_DIRECT)
			return OS_GEN_UNKNOWN;
		return r;
	default:
		return OS_GEN_UNKNOWN;
	}
}

uint32_t hs_gen_of_dest(const struct hs_jvm *j, uint64_t addr)
{
	uint32_t r;

	if (j->gens.kind == HS_GENS_RANGE)
		return hs_gen_of(j, addr) == OS_GEN_YOUNG ? OS_GEN_YOUNG : OS_GEN_OLD;
	if (j->gens.kind != HS_GENS_G1)
		return OS_GEN_UNKNOWN;
	/* a survivor's region free when read: a later (young) collection
	 * freed it, so it was a young region (an old one is freed by mixed
	 * and full collections only) */
	r = g1_region(&j->gens, addr);
	if (r == OS_GEN_FREE)
		return j->gens.cur.lag ? OS_GEN_YOUNG : OS_GEN_UNKNOWN;
	return r == OS_GEN_OLD_DIRECT ? OS_GEN_OLD : r;
}

void hs_gens_free(struct hs_jvm *j)
{
	for (unsigned k = 0; k < j->gens.nsnap; k++)
		free(j->gens.snap[k].gen);
	free(j->gens.cur.gen);
	free(j->gens.g1_words);
	memset(&j->gens, 0, sizeof(j->gens));
}
