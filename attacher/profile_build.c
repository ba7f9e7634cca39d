/* profile_build.c - symbolizes the collected paths and fills an os_profile. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "attacher/collector.h"
#include "common/log.h"

struct builder {
	struct os_collector *c;
	struct os_profile *p;
	struct os_hmap frames;   /* asid << 48 | lookup addr (| leaf bit) -> frame id */
};

/* One frame of address space asid. Return addresses (all frames but the
 * leaf of an access path) are looked up at addr - 1 so that the call
 * instruction, not the next line, is named. */
static uint32_t frame_of(struct builder *b, uint32_t asid, uint64_t pc, bool exact)
{
	uint64_t look = exact ? pc : pc - 1;
	uint64_t key = ((uint64_t)asid << 48) | (look & ((1ULL << 48) - 1)), id;
	struct os_sym_result r;
	struct os_frame f;

	if (os_hmap_get(&b->frames, key, &id))
		return (uint32_t)id;
	memset(&f, 0, sizeof(f));
	f.name = f.module = f.file = OS_NONE;
	if (os_sym_resolve(b->c->sym, asid, look, &r) == 0 && r.func) {
		f.kind = r.is_java ? OS_FRAME_JAVA : OS_FRAME_NATIVE;
		f.name = os_profile_string(b->p, r.func);
		if (r.module)
			f.module = os_profile_string(b->p, r.module);
		if (r.file)
			f.file = os_profile_string(b->p, r.file);
		f.line = r.line;
		f.addr = r.offset;
	} else {
		f.kind = OS_FRAME_UNKNOWN;
		f.addr = pc;
		if (r.module)
			f.module = os_profile_string(b->p, r.module);
	}
	id = os_profile_frame(b->p, &f);
	os_hmap_put(&b->frames, key, id);
	return (uint32_t)id;
}

static uint32_t stack_of(struct builder *b, uint32_t node, bool leaf_exact)
{
	uint64_t pcs[OS_MAX_FRAMES];
	uint32_t ids[OS_MAX_FRAMES], asid, n;

	n = os_attrib_unpath(&b->c->attrib, node, pcs, OS_MAX_FRAMES, &asid);
	for (uint32_t i = 0; i < n; i++)
		ids[i] = frame_of(b, asid, pcs[i], leaf_exact && i == 0);
	/* a frame-pointer chain through code without frame pointers ends in
	 * garbage: cut the access path at the first frame outside any code */
	if (leaf_exact) {
		for (uint32_t i = 1; i < n; i++) {
			if (b->p->frames[ids[i]].kind == OS_FRAME_UNKNOWN &&
			    b->p->frames[ids[i]].module == OS_NONE) {
				n = i;
				break;
			}
		}
	}
	return os_profile_stack(b->p, ids, n);
}

static void fill_meta(struct builder *b, const char *mode, int argc, char *const argv[])
{
	struct os_collector *c = b->c;
	struct os_profile *p = b->p;
	char host[256] = "";
	uint64_t end = c->end_ns ? c->end_ns : os_now_ns();

	os_profile_set_argv(p, argc, argv);
	for (uint32_t i = 0; i < c->tasks.npids; i++)
		os_profile_add_pid(p, c->tasks.pids[i]);
	p->meta.duration_s = c->start_ns ? (double)(end - c->start_ns) / 1e9 : 0;
	p->meta.sampler = os_profile_string(p, c->sampler.ops->name);
	p->meta.event = os_profile_string(p, c->sampler.event);
	p->meta.period = c->sampler.period;
	p->meta.freq = c->opts->freq;
	p->meta.min_size = c->opts->min_size;
	p->meta.mode = os_profile_string(p, mode);
	gethostname(host, sizeof(host) - 1);
	p->meta.hostname = os_profile_string(p, host);
	p->meta.start_time = (uint64_t)time(NULL) - (uint64_t)p->meta.duration_s;
}

static void fill_counters(struct builder *b)
{
	struct os_collector *c = b->c;
	struct os_counters *k = &b->p->c;
	struct os_slot_stats_total t;

	*k = c->attrib.c;
	k->samples_total = c->samples_total;
	k->samples_addressed = c->samples_addressed;
	k->unaddressed_nomem = c->unaddr_nomem;
	k->unaddressed_clobbered = c->unaddr_clobbered;
	k->unaddressed_undecodable = c->unaddr_undecodable;
	k->lost = c->lost + os_perf_bad_records(c->perf);
	if (c->shm_ready) {
		os_shm_host_totals(&c->shm, &t);
		k->dropped_events += t.dropped + atomic_load(&c->shm.hdr->no_slot_events);
		k->small_allocs = t.small_allocs;
		k->small_bytes = t.small_bytes;
		k->tracked_allocs = t.tracked_allocs;
		k->tracked_bytes = t.tracked_bytes;
		k->truncated_paths = t.truncated;
		k->bad_events = c->shm.bad_bytes;
	}
}

struct os_profile *os_collector_profile(struct os_collector *c, const char *mode, int argc,
					char *const argv[])
{
	struct builder b = { .c = c };
	struct os_hmap accs;
	uint32_t *ctxmap = NULL;
	char note[256];

	b.p = os_profile_new();
	if (!b.p)
		return NULL;
	os_hmap_init(&b.frames);
	os_hmap_init(&accs);
	fill_meta(&b, mode, argc, argv);
	fill_counters(&b);
	if (c->sampler.ops == &os_sampler_soft_ops)
		os_profile_add_note(b.p, "software sampler: data addresses decoded from the "
					 "instruction before each task-clock sample");
	snprintf(note, sizeof(note),
		 "access paths: %llu unwound with DWARF CFI from a stack copy, %llu from the "
		 "frame-pointer chain%s",
		 (unsigned long long)c->unwound_dwarf, (unsigned long long)c->unwound_fp,
		 c->unw ? "" : " (--call-graph fp)");
	os_profile_add_note(b.p, note);
	if (c->shm_ready && atomic_load(&c->shm.hdr->processes) == 0)
		os_profile_add_note(b.p, "the preload library was not loaded by the target (static "
					 "binary, or LD_PRELOAD cleared): no objects were tracked");
	ctxmap = calloc(c->attrib.nctx ? c->attrib.nctx : 1, sizeof(*ctxmap));
	if (!ctxmap)
		goto oom;
	for (uint32_t i = 0; i < c->attrib.nctx; i++) {
		const struct os_ctx *x = &c->attrib.ctx[i];
		struct os_context pc;

		memset(&pc, 0, sizeof(pc));
		pc.type = OS_NONE;
		pc.stack = stack_of(&b, x->node, false);
		pc.allocations = x->allocations;
		pc.bytes = x->bytes;
		pc.samples = x->samples;
		memcpy(pc.metrics, x->metrics, sizeof(pc.metrics));
		ctxmap[i] = os_profile_add_context(b.p, &pc);
	}
	for (uint32_t i = 0; i < c->attrib.nacc; i++) {
		const struct os_acc *x = &c->attrib.acc[i];
		uint32_t stack = stack_of(&b, x->node, true);
		uint64_t key = (uint64_t)ctxmap[x->ctx] << 32 | stack, idx;

		/* paths that differ only in a cut-off tail become one */
		if (os_hmap_get(&accs, key, &idx)) {
			b.p->accesses[idx].samples += x->samples;
			for (int m = 0; m < OS_M_COUNT; m++)
				b.p->accesses[idx].metrics[m] += x->metrics[m];
		} else {
			struct os_access pa = { .context = ctxmap[x->ctx], .stack = stack,
						.samples = x->samples };

			memcpy(pa.metrics, x->metrics, sizeof(pa.metrics));
			os_hmap_put(&accs, key, os_profile_add_access(b.p, &pa));
		}
	}
	for (uint32_t i = 0; i < c->tasks.nthreads; i++) {
		const struct os_thread_info *t = &c->tasks.threads[i];
		struct os_thread pt = { .kind = OS_THR_NATIVE, .pid = t->pid, .tid = t->tid,
					.samples = t->samples };

		pt.name = os_profile_string(b.p, t->name);
		os_profile_add_thread(b.p, &pt);
	}
	free(ctxmap);
	os_hmap_destroy(&b.frames);
	os_hmap_destroy(&accs);
	return b.p;
oom:
	free(ctxmap);
	os_hmap_destroy(&b.frames);
	os_hmap_destroy(&accs);
	os_profile_free(b.p);
	return NULL;
}
