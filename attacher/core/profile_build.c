/* profile_build.c - symbolizes the collected paths and fills an os_profile. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "attacher/core/collector.h"
#include "common/log.h"

#define WORD_ASIDS 8
#define WORD_TYPE (1ULL << 32)

struct builder {
	struct os_collector *c;
	struct os_profile *p;
	struct os_hmap frames;   /* asid << 48 | lookup addr (| leaf bit) -> frame id */
	/* runtime words already named, per address space (the first WORD_ASIDS
	 * seen; others are named every time): word -> frame id, or
	 * WORD_TYPE | string id for a type word. A Java run has ~30 words per
	 * path and tens of thousands of paths sharing most of them. */
	uint32_t nword_asids, word_asid[WORD_ASIDS];
	struct os_hmap words[WORD_ASIDS];
	bool drops;              /* allocation events were dropped: held samples unknown */
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
	f.name = f.module = f.file = f.near_sym = f.build_id = OS_NONE;
	if (os_sym_resolve(b->c->sym, asid, look, &r) == 0 && r.func) {
		const struct os_runtime *rt = b->c->attrib.rt;
		const char *name = r.func;
		char jit[512];

		/* JIT code: the runtime adapter turns perf map names into Class.method */
		if (r.is_java && rt && rt->ops->jit_name)
			name = rt->ops->jit_name(b->c->attrib.rt, asid, r.func, jit, sizeof(jit));
		f.kind = r.is_java ? OS_FRAME_JAVA : OS_FRAME_NATIVE;
		f.name = os_profile_string(b->p, name ? name : r.func);
		/* Java frames are their method, whatever tier runs it: no module */
		if (r.module && !r.is_java)
			f.module = os_profile_string(b->p, r.module);
		if (r.file)
			f.file = os_profile_string(b->p, r.file);
		f.line = r.line;
		f.column = r.column;
		f.addr = r.is_java ? 0 : r.offset;
		/* A return address is a call site (its offset tells two calls on
		 * one line apart when the DWARF has no column); a sampled leaf pc
		 * is no call site: without a column it stands for its function,
		 * at the function's offset, so that the leaves of one function
		 * stay one frame (common/profile_merge.c frame_addr_counts). */
		if (exact && !r.is_java && !r.column && r.sym_start && look >= r.sym_start)
			f.addr = r.offset - (look - r.sym_start);
		if (r.build_id && !r.is_java)
			f.build_id = os_profile_string(b->p, r.build_id);
	} else if (r.module && r.module[0] == '/') {
		/* a mapped file without a name for addr (stripped): module+offset,
		 * the same in every run, with the nearest exported function as a
		 * hint where there is a plausible one */
		f.kind = OS_FRAME_NATIVE;
		f.module = os_profile_string(b->p, r.module);
		f.addr = r.offset;
		if (r.near_func) {
			f.near_sym = os_profile_string(b->p, r.near_func);
			f.near_off = r.near_off;
		}
		if (r.build_id)
			f.build_id = os_profile_string(b->p, r.build_id);
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

/* A frame word that is not a user address (bits above 47): the runtime
 * adapter's (an interpreted Java method, or the context's type). Returns
 * the frame id, or OS_NONE for a type word (its name goes to *type). */
static uint32_t runtime_word_named(struct builder *b, uint32_t asid, uint64_t word,
				   uint32_t *type);

/* runtime_word_named, remembered per (asid, word). */
static uint32_t runtime_word(struct builder *b, uint32_t asid, uint64_t word, uint32_t *type)
{
	struct os_hmap *m = NULL;
	uint32_t id, t = OS_NONE;
	uint64_t v;

	for (uint32_t i = 0; i < b->nword_asids && !m; i++)
		if (b->word_asid[i] == asid)
			m = &b->words[i];
	if (!m && b->nword_asids < WORD_ASIDS) {
		b->word_asid[b->nword_asids] = asid;
		m = &b->words[b->nword_asids++];
	}
	if (m && os_hmap_get(m, word, &v)) {
		if (!(v & WORD_TYPE))
			return (uint32_t)v;
		if (type)
			*type = (uint32_t)v;
		return OS_NONE;
	}
	id = runtime_word_named(b, asid, word, &t);
	if (m && (id != OS_NONE || t != OS_NONE))
		os_hmap_put(m, word, id != OS_NONE ? id : WORD_TYPE | t);
	if (id == OS_NONE && type && t != OS_NONE)
		*type = t;
	return id;
}

/* Names one runtime word: a frame id, or OS_NONE with *type set for a type
 * word. */
static uint32_t runtime_word_named(struct builder *b, uint32_t asid, uint64_t word,
				   uint32_t *type)
{
	struct os_runtime *rt = b->c->attrib.rt;
	const char *name = NULL, *file = NULL;
	enum os_rt_word w = OS_RT_WORD_UNKNOWN;
	struct os_frame f;
	uint32_t line = 0;

	if (word == OS_SMALL_WORD && b->drops) { /* held samples: their blocks' events lost */
		w = OS_RT_WORD_SYNTHETIC;
		name = "[object unknown: allocation events dropped]";
	} else if (word == OS_SMALL_WORD) { /* attrib.h: native blocks, not sampled */
		w = OS_RT_WORD_SYNTHETIC;
		name = b->c->opts->native_exact
			       ? "[malloc blocks below --min-size, not sampled: allocation path "
				 "estimated]"
			       : "[malloc blocks not sampled by bytes: allocation path estimated]";
	} else if (word == OS_BEFORE_WORD) { /* attrib.h os_attrib.before_attach */
		w = OS_RT_WORD_SYNTHETIC;
		name = "[heap blocks born before attach: allocation paths unknown (allocations, "
		       "bytes: the mappings holding them)]";
	} else if (word == OS_QUIET_WORD) { /* shm.h os_slot.quiet */
		w = OS_RT_WORD_SYNTHETIC;
		name = "[blocks of JIT compiler threads: allocation paths not walked "
		       "(--jit-threads walks them)]";
	} else if (rt && rt->ops->name_word) {
		w = rt->ops->name_word(rt, asid, word, &name, &file, &line);
	}
	if (w == OS_RT_WORD_TYPE) {
		if (name)
			*type = os_profile_string(b->p, name);
		return OS_NONE;
	}
	memset(&f, 0, sizeof(f));
	f.name = f.module = f.file = f.near_sym = f.build_id = OS_NONE;
	f.kind = OS_FRAME_UNKNOWN;
	f.addr = word;
	if ((w == OS_RT_WORD_FRAME || w == OS_RT_WORD_SYNTHETIC) && name) {
		f.kind = w == OS_RT_WORD_FRAME ? OS_FRAME_JAVA : OS_FRAME_SYNTHETIC;
		f.addr = 0;
		f.name = os_profile_string(b->p, name);
		if (w == OS_RT_WORD_FRAME && file && line) { /* "Class.method(File.java:LINE)" */
			f.file = os_profile_string(b->p, file);
			f.line = line;
		}
	}
	return os_profile_frame(b->p, &f);
}

/* The stack of path `node`; *type (may be NULL) receives the context's
 * type when the path carries one. */
static uint32_t stack_of(struct builder *b, uint32_t node, bool leaf_exact, uint32_t *type)
{
	uint64_t pcs[OS_MAX_FRAMES];
	uint32_t ids[OS_MAX_FRAMES], asid, n, k = 0;

	n = os_attrib_unpath(&b->c->attrib, node, pcs, OS_MAX_FRAMES, &asid);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t id = pcs[i] >> 48 ? runtime_word(b, asid, pcs[i], type)
					   : frame_of(b, asid, pcs[i], leaf_exact && i == 0);

		if (id != OS_NONE)
			ids[k++] = id;
	}
	n = k;
	/* a Java object's path starts in the runtime's allocation machinery
	 * (libjvm, runtime stubs), which differs per compilation tier: it
	 * starts at the first Java method ("Class.method") instead */
	if (type && *type != OS_NONE) {
		for (uint32_t i = 0; i < n; i++) {
			const struct os_frame *f = &b->p->frames[ids[i]];
			const char *name = os_profile_str(b->p, f->name);

			if (f->kind == OS_FRAME_JAVA && name && strchr(name, '.')) {
				memmove(ids, ids + i, (n - i) * sizeof(*ids));
				n -= i;
				break;
			}
		}
	}
	/* no type word: the runtime may know the memory by who asked for it
	 * (a JVM's metaspace, code cache), after the cut above, which is for
	 * Java objects */
	if (type && *type == OS_NONE && b->c->attrib.rt && b->c->attrib.rt->ops->native_type) {
		const char *names[OS_MAX_FRAMES], *label;

		for (uint32_t i = 0; i < n; i++)
			names[i] = os_profile_str(b->p, b->p->frames[ids[i]].name);
		label = b->c->attrib.rt->ops->native_type(b->c->attrib.rt, asid, names, n);
		if (label)
			*type = os_profile_string(b->p, label);
	}
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
	p->meta.freq = c->sampler.pmu ? 0 : c->opts->freq; /* PMU: a period in events */
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
	/* the JIT threads' samples dropped in the kernel were taken and
	 * counted there (bpf_filter.h): samples of theirs like the others */
	k->samples_total = c->samples_total + c->samples_jit_kernel;
	k->samples_addressed = c->samples_addressed;
	k->unaddressed_nomem = c->unaddr_nomem;
	k->unaddressed_clobbered = c->unaddr_clobbered;
	k->unaddressed_undecodable = c->unaddr_undecodable;
	k->samples_jit = c->samples_jit + c->samples_jit_kernel;
	k->lost = c->lost + os_perf_bad_records(c->perf);
	if (c->shm_ready) {
		os_shm_host_totals(&c->shm, &t);
		k->dropped_events += t.dropped + atomic_load(&c->shm.hdr->no_slot_events);
		k->small_allocs = t.small_allocs;
		k->small_bytes = t.small_bytes;
		k->small_outside_tlab = t.small_outside_tlab;
		k->tracked_allocs = t.tracked_allocs;
		k->tracked_bytes = t.tracked_bytes;
		k->truncated_paths = t.truncated;
		k->bad_events = c->shm.bad_bytes;
	}
}

/* The ranking figure of a context: Horvitz-Thompson, or with estimated
 * allocation paths its samples plus (or less) its estimated part. */
static double ctx_est(const struct os_ctx *x)
{
	double d = x->path_kind == OS_PATH_NONE ? x->est_samples : x->tsamples + x->path_est;

	return d > 0 ? d : 0; /* all given away: 0, not a rounding error below it */
}

static double acc_est(const struct os_attrib *a, const struct os_acc *x)
{
	double d = a->ctx[x->ctx].path_kind == OS_PATH_NONE ? x->est_samples
							    : x->tsamples + x->path_est;

	return d > 0 ? d : 0;
}

/* Allocations and bytes of a context: with blocks sampled by bytes
 * (docs/NATIVE.md) their estimates (each sampled block stands for 1 / p),
 * as Java's weighted objects have theirs. */
static uint64_t ctx_allocs(const struct os_ctx *x)
{
	return x->small_seen ? (uint64_t)llround(x->est_allocations) : x->allocations;
}

static uint64_t ctx_bytes(const struct os_ctx *x)
{
	return x->small_seen ? (uint64_t)llround(x->est_bytes) : x->bytes;
}

static void add_pe(struct os_pathest *d, const struct os_ctx *x)
{
	if (x->path_kind > d->kind)
		d->kind = x->path_kind;
	d->path_est += x->path_est;
	if (x->evidence > d->evidence) /* a class's, the same for its sites */
		d->evidence = x->evidence;
	d->seen += x->seen;
	if (x->class_seen > d->class_seen)
		d->class_seen = x->class_seen;
	if (x->class_sites > d->class_sites)
		d->class_sites = x->class_sites;
}

struct os_profile *os_collector_profile(struct os_collector *c, const char *mode, int argc,
					char *const argv[])
{
	struct builder b = { .c = c };
	struct os_hmap accs, ctxs;
	uint32_t *ctxmap = NULL, *accmap = NULL;
	char note[512];
	struct timespec cpu0, cpu1;
	bool timed = clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu0) == 0;

	b.p = os_profile_new();
	if (!b.p)
		return NULL;
	os_hmap_init(&b.frames);
	os_hmap_init(&accs);
	os_hmap_init(&ctxs);
	fill_meta(&b, mode, argc, argv);
	if (!c->in_checkpoint) /* the BPF map is the parent's (checkpoint.h) */
		os_collector_jit_filter_collect(c);
	os_debug("paths: %u nodes; %llu of %llu inserts served whole from the memo",
		 c->attrib.cct.count, (unsigned long long)c->attrib.cct.memo_hits,
		 (unsigned long long)c->attrib.cct.inserts);
	fill_counters(&b);
	/* the first note: allocation events dropped (a ring was full): a heap sample that no
	 * seen block holds may lie on a block whose event was lost, so held
	 * samples are not shared out to sampled sites: they stay one group,
	 * "object unknown" (docs/NATIVE.md) */
	b.drops = b.p->c.dropped_events > 0;
	if (b.drops) {
		snprintf(note, sizeof(note),
			 "ALLOCATION EVENTS DROPPED: %llu (event rings full; --ring-kb raises "
			 "them): the %llu heap samples outside every seen block (%.1f%% of the "
			 "attributed ones) are \"[object unknown: allocation events dropped]\", "
			 "not estimated; objects whose free was dropped may hold samples of "
			 "later blocks at their address",
			 (unsigned long long)b.p->c.dropped_events,
			 (unsigned long long)c->attrib.small_held,
			 c->attrib.c.samples_attributed
				 ? 100.0 * (double)c->attrib.small_held /
					   (double)c->attrib.c.samples_attributed
				 : 0.0);
		os_profile_add_note(b.p, note);
	}
	if (c->sampler.ops == &os_sampler_soft_ops)
		os_profile_add_note(b.p, "software sampler: data addresses decoded from the "
					 "instruction before each task-clock sample");
	if (c->sampler.note[0]) /* -e auto fell back to the software sampler */
		os_profile_add_note(b.p, c->sampler.note);
	if (c->sampler.pmu)
		os_profile_add_note(b.p, "PMU sampler: data address, latency and data source "
					 "from the hardware with each sample");
	snprintf(note, sizeof(note),
		 "access paths: %llu unwound with DWARF CFI from a stack copy, %llu from the "
		 "frame-pointer chain%s",
		 (unsigned long long)c->unwound_dwarf, (unsigned long long)c->unwound_fp,
		 c->unw ? "" : " (--call-graph fp)");
	if (c->unwound_java) /* through the runtime adapter (runtime.h java_walk) */
		snprintf(note + strlen(note), sizeof(note) - strlen(note),
			 ", %llu walked through JIT code by the code blobs' frame sizes",
			 (unsigned long long)c->unwound_java);
	if (c->paths_full)
		snprintf(note + strlen(note), sizeof(note) - strlen(note),
			 "; %llu reached the %d-frame limit (their outermost callers are cut)",
			 (unsigned long long)c->paths_full, OS_MAX_FRAMES);
	os_profile_add_note(b.p, note);
	/* HotSpot makes a few such allocations on its own (0.003-0.04% on
	 * tests/java/SmallSites.java, with or without objscope: JFR's
	 * ObjectAllocationOutsideTLAB); many mean a thread's TLABs were refused
	 * (runtimes/hotspot/hs_tlab.h) */
	if (os_counters_outside_tlab_many(&b.p->c)) {
		snprintf(note, sizeof(note),
			 "hybrid Java objects: %llu allocations below --min-size were made outside "
			 "any TLAB, against %llu objects estimated from those sampled (%.1f%%): they "
			 "were never sampled (hybrid mode sees an object when it starts a TLAB), so "
			 "the estimates of their sites miss them (causes: a "
			 "-XX:TLABRefillWasteFraction above objscope's 1 given to the JVM, a JVM "
			 "that refused a thread's TLABs, threads' first allocations after an "
			 "attach)",
			 (unsigned long long)b.p->c.small_outside_tlab,
			 (unsigned long long)b.p->c.objects_estimated,
			 100.0 * (double)b.p->c.small_outside_tlab /
				 (double)(b.p->c.objects_estimated + b.p->c.small_outside_tlab));
		os_profile_add_note(b.p, note);
	}
	if (c->shm_ready && atomic_load(&c->shm.hdr->processes) == 0)
		os_profile_add_note(b.p, "the preload library was not loaded by the target (static "
					 "binary, or LD_PRELOAD cleared): no objects were tracked");
	os_overhead_profile(c, b.p); /* what objscope cost (OS_SEC_OVERHEAD) */
	if (c->attrib.before_samples) {
		snprintf(note, sizeof(note),
			 "attach: %llu heap samples fell in memory that no block seen allocated "
			 "holds (born before the attach): charged to \"[heap blocks born before "
			 "attach ...]\", whose allocations and bytes are the %llu anonymous "
			 "mappings holding them (the blocks' bytes are at most that much)",
			 (unsigned long long)c->attrib.before_samples,
			 (unsigned long long)c->attrib.before_nmaps);
		os_profile_add_note(b.p, note);
	}
	if (c->jit_quiet || c->attrib.quiet_blocks) {
		snprintf(note, sizeof(note),
			 "JIT compiler threads: %u of them sent their blocks of --min-size and more "
			 "without allocation paths once known as such (the compiler's own memory, "
			 "whose samples are not attributed without --jit-threads): %llu blocks, %llu "
			 "of them mappings made inside a range another path mapped (a runtime's "
			 "reservation) and charged to that range's object, the others under "
			 "\"[blocks of JIT compiler threads: allocation paths not walked]\"",
			 c->jit_quiet, (unsigned long long)c->attrib.quiet_blocks,
			 (unsigned long long)c->attrib.quiet_commits);
		os_profile_add_note(b.p, note);
	}
	if (c->jit_muted) {
		snprintf(note, sizeof(note),
			 "JIT compiler threads: the sampling events of %u of them were switched off "
			 "at their first sample (attach: each thread has events of its own), so the "
			 "kernel took none of their later samples: their sample counts stop there "
			 "and cost nothing after", c->jit_muted);
		os_profile_add_note(b.p, note);
	}
	if (os_bpf_filter_on(&c->jitf) && (c->jitf.added || c->samples_jit_kernel || !c->jit_muted)) {
		snprintf(note, sizeof(note),
			 "JIT compiler threads: %llu of their samples were dropped in the kernel by "
			 "objscope's BPF filter once each thread was known as one (%u threads; "
			 "counted there, never copied: part of the samples and JIT threads' counts, "
			 "and of the budget's cost at their own calibrated cost)%s",
			 (unsigned long long)c->samples_jit_kernel, c->jitf.added,
			 c->jitf.full ? "; the filter's map was full for some threads" : "");
		os_profile_add_note(b.p, note);
	} else if (c->jitf_why[0] && c->samples_jit) {
		snprintf(note, sizeof(note),
			 "JIT compiler threads: their samples were taken and counted in user space "
			 "(no BPF filter: %s)", c->jitf_why);
		os_profile_add_note(b.p, note);
	}
	/* under the budget, a sample stands for 1 / the sampled share of its
	 * interval (attrib.h tw): scaled to the samples' count, before the
	 * estimators share held samples out */
	os_attrib_time_normalize(&c->attrib);
	if (c->attrib.time_weighted) {
		snprintf(note, sizeof(note),
			 "overhead budget: sampling was on %.0f%% of the time (from %.1f%% to 100%% "
			 "of a 200 ms interval; the first 2 CPU-seconds in full), so each sample is "
			 "weighted by 1 / the share of its interval: objects' figures and shares are "
			 "these estimates, in which stretches sampled less count as much as the "
			 "others (sample counts are as taken)",
			 100.0 * b.p->ovh.sampled_share, 100.0 * c->ovh.b.min_duty);
		os_profile_add_note(b.p, note);
	}
	for (unsigned i = 0; i < c->nobs; i++) /* analyses: their notes */
		if (c->obs[i].ops->profile_notes)
			c->obs[i].ops->profile_notes(c->obs[i].self, b.p);
	/* a checkpoint leaves the JVMs' perf maps (read, maybe removed) alone */
	if (c->attrib.rt && c->attrib.rt->ops->before_symbolize && !c->in_checkpoint)
		c->attrib.rt->ops->before_symbolize(c->attrib.rt);
	if (c->attrib.rt && c->attrib.rt->ops->notes)
		c->attrib.rt->ops->notes(c->attrib.rt, b.p);
	/* objscope's own code in the target: apart (collector.c take_sample) */
	if (c->samples_self) {
		snprintf(note, sizeof(note),
			 "objscope in the target: %llu of %llu addressed samples (%.1f%%) were "
			 "taken in objscope's own code in the target (its hooks, their stack "
			 "walks in libunwind, the event rings): counted apart, never attributed "
			 "to the program's objects nor shown as their access paths",
			 (unsigned long long)c->samples_self,
			 (unsigned long long)(c->samples_addressed),
			 c->samples_addressed ? 100.0 * (double)c->samples_self /
							(double)c->samples_addressed
					      : 0.0);
		os_profile_add_note(b.p, note);
	}
	if (c->shm_ready && atomic_load(&c->shm.hdr->sample_table_full)) {
		snprintf(note, sizeof(note),
			 "byte sampling: %llu sampled malloc blocks were not taken because the "
			 "target's table of sampled blocks alive was full there (counted as blocks "
			 "not sampled: the native estimates are low by them)",
			 (unsigned long long)atomic_load(&c->shm.hdr->sample_table_full));
		os_profile_add_note(b.p, note);
	}
	/* native blocks not sampled: held samples shared out to the sites of
	 * byte-sampled blocks (small_paths.c, docs/NATIVE.md) */
	if (!b.drops)
		os_small_estimate(&c->attrib);
	if (c->attrib.small_seen || c->attrib.small_held) {
		snprintf(note, sizeof(note),
			 "malloc blocks (%s, docs/NATIVE.md): %llu sampled by bytes "
			 "(one per %llu bytes on average%s); %llu heap samples outside any seen "
			 "block, %.0f of them given estimated allocation paths (%.0f by their "
			 "nearest sampled blocks, the rest by the sites' heat and bytes), %.0f "
			 "without (no sampled small block in their process)",
			 c->opts->native_exact ? "below --min-size" : "every size",
			 (unsigned long long)c->attrib.small_seen,
			 (unsigned long long)c->shm_mean_max,
			 c->shm_mean_max > c->attrib.small_sample ? " at most: raised by the budget"
								  : "",
			 (unsigned long long)c->attrib.small_held, c->attrib.small_given,
			 c->attrib.small_voted, c->attrib.small_no_evidence);
		os_profile_add_note(b.p, note);
	}
	/* weighted objects (Java hybrid / sampled): Horvitz-Thompson sample
	 * estimates next to the counts (OS_SEC_ESTIMATES); the runtime's notes
	 * op may have shared class-only samples out to sites (os_ctx.path_kind:
	 * estimated allocation paths, OS_SEC_PATHEST) */
	if (c->attrib.weighted) {
		b.p->analyses |= OS_AN_ESTIMATES | OS_AN_EST_VAR;
		b.p->est.samples_attributed =
			c->attrib.est_attributed > 0 ? c->attrib.est_attributed : 0;
		b.p->est.samples_java_attributed =
			c->attrib.est_java_attributed > 0 ? c->attrib.est_java_attributed : 0;
	}
	ctxmap = calloc(c->attrib.nctx ? c->attrib.nctx : 1, sizeof(*ctxmap));
	accmap = calloc(c->attrib.nacc ? c->attrib.nacc : 1, sizeof(*accmap));
	if (!ctxmap || !accmap)
		goto oom;
	for (uint32_t i = 0; i < c->attrib.nctx; i++) {
		const struct os_ctx *x = &c->attrib.ctx[i];
		struct os_context pc;
		uint64_t key, idx;

		memset(&pc, 0, sizeof(pc));
		pc.type = OS_NONE;
		pc.stack = stack_of(&b, x->node, false, &pc.type);
		/* paths equal once symbolized (and trimmed) are one context */
		key = (uint64_t)pc.type << 32 | pc.stack;
		if (pc.stack != OS_NONE && os_hmap_get(&ctxs, key, &idx)) {
			struct os_context *d = &b.p->contexts[idx];

			d->allocations += ctx_allocs(x);
			d->bytes += ctx_bytes(x);
			d->samples += x->samples;
			d->samples_est += ctx_est(x);
			d->samples_var += os_ctx_var(x);
			add_pe(&d->pe, x);
			for (int m = 0; m < OS_M_COUNT; m++)
				d->metrics[m] += x->metrics[m];
			ctxmap[i] = (uint32_t)idx;
			continue;
		}
		pc.allocations = ctx_allocs(x);
		pc.bytes = ctx_bytes(x);
		pc.samples = x->samples;
		pc.samples_est = ctx_est(x);
		pc.samples_var = os_ctx_var(x);
		add_pe(&pc.pe, x);
		if (x->path_kind != OS_PATH_NONE)
			b.p->analyses |= OS_AN_PATHEST;
		memcpy(pc.metrics, x->metrics, sizeof(pc.metrics));
		ctxmap[i] = os_profile_add_context(b.p, &pc);
		if (pc.stack != OS_NONE)
			os_hmap_put(&ctxs, key, ctxmap[i]);
	}
	for (uint32_t i = 0; i < c->attrib.nacc; i++) {
		const struct os_acc *x = &c->attrib.acc[i];
		uint32_t stack = stack_of(&b, x->node, true, NULL);
		uint64_t key = (uint64_t)ctxmap[x->ctx] << 32 | stack, idx;

		/* paths that differ only in a cut-off tail become one */
		if (os_hmap_get(&accs, key, &idx)) {
			accmap[i] = (uint32_t)idx;
			b.p->accesses[idx].samples += x->samples;
			b.p->accesses[idx].samples_est += acc_est(&c->attrib, x);
			b.p->accesses[idx].path_est += x->path_est;
			for (int m = 0; m < OS_M_COUNT; m++)
				b.p->accesses[idx].metrics[m] += x->metrics[m];
		} else {
			struct os_access pa = { .context = ctxmap[x->ctx], .stack = stack,
						.samples = x->samples,
						.samples_est = acc_est(&c->attrib, x),
						.path_est = x->path_est };

			memcpy(pa.metrics, x->metrics, sizeof(pa.metrics));
			accmap[i] = os_profile_add_access(b.p, &pa);
			os_hmap_put(&accs, key, accmap[i]);
		}
	}
	for (uint32_t i = 0; i < c->tasks.nthreads; i++) {
		const struct os_thread_info *t = &c->tasks.threads[i];
		struct os_thread pt = { .kind = OS_THR_NATIVE, .pid = t->pid, .tid = t->tid,
					.samples = t->samples };
		struct os_runtime *rt = c->attrib.rt;
		int kind = rt && rt->ops->thread_kind ? rt->ops->thread_kind(rt, t->pid, t->name)
						      : -1;

		if (kind >= 0)
			pt.kind = (uint32_t)kind;

		pt.name = os_profile_string(b.p, t->name);
		os_profile_add_thread(b.p, &pt);
	}
	/* analyses: their figures per context, their sections */
	for (unsigned i = 0; i < c->nobs; i++) {
		struct os_obs_build ob = { c, b.p, ctxmap, accmap };

		if (c->obs[i].ops->profile_sections &&
		    c->obs[i].ops->profile_sections(c->obs[i].self, &ob) < 0)
			goto oom;
	}
	free(ctxmap);
	free(accmap);
	os_hmap_destroy(&b.frames);
	for (uint32_t i = 0; i < b.nword_asids; i++)
		os_hmap_destroy(&b.words[i]);
	os_hmap_destroy(&accs);
	os_hmap_destroy(&ctxs);
	/* what this build cost (the write that follows is not in it) */
	if ((b.p->analyses & OS_AN_OVERHEAD) && timed &&
	    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu1) == 0)
		b.p->ovh.build_s = (double)(cpu1.tv_sec - cpu0.tv_sec) +
				   (double)(cpu1.tv_nsec - cpu0.tv_nsec) / 1e9;
	return b.p;
oom:
	free(ctxmap);
	free(accmap);
	os_hmap_destroy(&b.frames);
	for (uint32_t i = 0; i < b.nword_asids; i++)
		os_hmap_destroy(&b.words[i]);
	os_hmap_destroy(&accs);
	os_hmap_destroy(&ctxs);
	os_profile_free(b.p);
	return NULL;
}
