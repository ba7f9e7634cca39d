/* hotspot_notes.c - the HotSpot adapter's notes (runtime.h op notes): per
 * JVM, what its figures mean and which parts are best effort. The profile
 * keeps them as counters (common/profile.h os_note_counters, kinds
 * "hotspot.*"); os_hotspot_render_note makes the sentences of them when a
 * report reads the profile (the registry's render_note).
 */
#include "runtimes/hotspot/hotspot_int.h"

/* The figures of one note: a group of p (0 when out of memory: the note is
 * then missing, as a note that could not be added was). */
struct hs_ng {
	struct os_profile *p;
	uint32_t g;
};

static struct hs_ng ng_begin(struct os_profile *p, const char *kind, uint32_t pid)
{
	struct hs_ng n = { p, os_profile_note_group(p, kind) };

	if (n.g != OS_NONE && pid)
		os_profile_note_u64(p, n.g, "pid", pid);
	return n;
}

static void ng_u64(struct hs_ng n, const char *key, uint64_t v)
{
	if (n.g != OS_NONE)
		os_profile_note_u64(n.p, n.g, key, v);
}

static void ng_f64(struct hs_ng n, const char *key, double v)
{
	if (n.g != OS_NONE)
		os_profile_note_f64(n.p, n.g, key, v);
}

static void ng_str(struct hs_ng n, const char *key, const char *s)
{
	if (n.g != OS_NONE)
		os_profile_note_str(n.p, n.g, key, s);
}

void hs_notes(struct os_runtime *rt, struct os_profile *p)
{
	struct hotspot *h = hs_of(rt);

	hs_paths_estimate(h); /* before the profile's contexts are built */
	hs_focus_note(h, p);
	for (uint32_t i = 0; i < h->njvms; i++) {
		struct hs_jvm *j = h->jvms[i];
		const char *gc = j->have_info && j->info.gc[0] ? j->info.gc : "unknown";
		uint64_t unid = 0;
		struct hs_ng n;

		if (j->map.issue) { /* its perf map was refused (hs_before_symbolize) */
			n = ng_begin(p, "hotspot.perf_map", j->map.pid);
			ng_u64(n, "issue", j->map.issue);
			ng_u64(n, "why", j->map.why);
			ng_str(n, "path", j->map.path);
			ng_u64(n, "owner_known", j->map.owner_known);
			ng_u64(n, "owner_uid", j->map.owner_uid);
			ng_u64(n, "jvm_uid", j->map.jvm_uid);
		}
		n = ng_begin(p, "hotspot.objects", j->pid);
		ng_str(n, "gc", gc);
		ng_u64(n, "mode", j->info.mode);
		ng_u64(n, "objects", j->objects);
		ng_u64(n, "weighted", j->small);
		ng_f64(n, "estimated", j->estimated);
		ng_u64(n, "tlab", j->info.tlab_bytes);
		ng_u64(n, "dither", (j->info.flags & OS_JVM_F_TLAB_DITHER) != 0);
		ng_u64(n, "steered", (j->info.flags & OS_JVM_F_TLAB_STEERED) != 0);
		n = ng_begin(p, "hotspot.gc", j->pid);
		ng_u64(n, "collections", j->gcs);
		ng_u64(n, "moves", j->moves);
		ng_u64(n, "moves_lost", j->moves_lost);
		ng_u64(n, "small_moves", j->fwd[OS_HS_FWD_MOVED]);
		ng_u64(n, "small_unfollowed", j->fwd[OS_HS_FWD_FULL]);
		ng_u64(n, "small_unread", j->fwd[OS_HS_FWD_UNREAD]);
		ng_u64(n, "dropped", j->dropped);
		ng_u64(n, "checked", j->checked);
		ng_u64(n, "g1_in_target", j->gens.g1_in_target);
		ng_u64(n, "g1_read_late", j->gens.g1_read_late);
		ng_u64(n, "g1_failed", j->gens.g1_failed);
		if (j->info.flags & (OS_JVM_F_ZGC | OS_JVM_F_CONCURRENT)) {
			n = ng_begin(p, "hotspot.concurrent_gc", j->pid);
			ng_str(n, "gc", gc);
		}
		os_debug("hotspot: pid %u: allocation paths: %llu expanded, %llu found already "
			 "expanded (same class and raw frames, code unchanged)",
			 j->pid, (unsigned long long)j->paths_misses,
			 (unsigned long long)j->paths_hits);
		if (j->walks)
			os_debug("hotspot: pid %u: %llu access paths walked from JIT code (%llu frames, "
				 "%llu cut at an implausible return pc, %llu leaves at a return poll); "
				 "%llu code blob lookups, %llu misses read from the code heap (%llu "
				 "reads), cache flushed %llu times",
				 j->pid, (unsigned long long)j->walks,
				 (unsigned long long)j->walk_frames, (unsigned long long)j->walk_cut,
				 (unsigned long long)j->walk_popped,
				 (unsigned long long)j->blob_lookups,
				 (unsigned long long)j->blob_misses, (unsigned long long)j->blob_reads,
				 (unsigned long long)j->blob_flushes);
		if (j->line_frames || j->line_none || j->ml_failed) {
			n = ng_begin(p, "hotspot.lines", j->pid);
			ng_u64(n, "frames_with_line", j->line_frames);
			ng_u64(n, "frames_without", j->line_none);
			ng_u64(n, "tables_failed", j->ml_failed);
		}
		if (j->jit_frames || j->nm_failed || j->nm_full) {
			n = ng_begin(p, "hotspot.jit", j->pid);
			ng_u64(n, "frames", j->jit_frames);
			ng_u64(n, "expanded", j->jit_expanded);
			ng_u64(n, "outer", j->jit_outer);
			ng_u64(n, "inlined", j->jit_inlined);
			ng_u64(n, "nonsafepoint_debug",
			       (j->info.flags & OS_JVM_F_NONSAFEPOINT_DEBUG) != 0);
			ng_u64(n, "nmethods_read", j->nm_reads);
			ng_u64(n, "nmethods_replaced", j->nm_stale);
			ng_u64(n, "nmethods_failed", j->nm_failed);
			ng_u64(n, "frames_past_cap", j->nm_full);
			ng_u64(n, "nmethods_cap", HS_NMS_MAX);
		} else if (j->vm_ok && !j->scl.ok) {
			ng_begin(p, "hotspot.no_scopes", 0);
		}
		if (j->nm_reads) {
			size_t bytes = 0;

			for (size_t k = 0; k < j->nnms; k++)
				bytes += (size_t)j->nms[k].npcs * 8 + j->nms[k].ndata +
					 (size_t)j->nms[k].nmeta * 8;
			os_debug("hotspot: pid %u: %zu nmethods' debug info kept, %zu KiB; %llu "
				 "compiled frames expanded from the cache of %zu pcs", j->pid,
				 j->nnms, bytes >> 10, (unsigned long long)j->jx_hits, j->njx);
			os_debug("hotspot: pid %u: allocation path frames: %llu expanded from the memo "
				 "of raw frame words, %llu not", j->pid,
				 (unsigned long long)j->fx_hits, (unsigned long long)j->fx_misses);
		}
		if (!j->vm_ok)
			ng_begin(p, "hotspot.no_vmstructs", 0);
		for (int k = 0; k < HS_UNID_N; k++)
			unid += j->unid[k];
		if (unid) {
			n = ng_begin(p, "hotspot.unidentified", j->pid);
			ng_u64(n, "samples", unid);
			ng_u64(n, "gc_since", j->unid[HS_UNID_GC]);
			ng_u64(n, "during_gc", j->unid[HS_UNID_GC_RUNNING]);
			ng_u64(n, "no_header", j->unid[HS_UNID_NO_HEADER]);
			ng_u64(n, "skipped", j->unid[HS_UNID_SKIPPED]);
			ng_u64(n, "no_lookup", j->unid[HS_UNID_NO_LOOKUP]);
		}
		if (j->pe_held > 0) {
			n = ng_begin(p, "hotspot.paths", j->pid);
			ng_f64(n, "held", j->pe_held);
			ng_f64(n, "shared", j->pe_shared);
			ng_u64(n, "classes", j->pe_classes);
			ng_u64(n, "classes_shared", j->pe_classes_shared);
			ng_u64(n, "attach", h->att.on);
		}
		if (!h->att.on && (j->small_found || j->small_big || j->small_gc)) {
			n = ng_begin(p, "hotspot.small", j->pid);
			ng_u64(n, "charged", j->small_found);
			ng_u64(n, "enum_constants", j->enum_found);
			ng_u64(n, "min_size", h->a->min_size);
			ng_u64(n, "tracked_size", j->small_big);
			ng_u64(n, "during_gc", j->small_gc);
			ng_u64(n, "lookups", j->scan.scans);
			ng_u64(n, "found", j->scan.found);
			ng_u64(n, "not_found", j->scan.not_found);
			ng_u64(n, "skipped", j->scan.skipped);
			ng_u64(n, "max_per_sec", j->scan.max_per_sec);
			ng_f64(n, "cpu_ms", j->scan.cpu_ns / 1e6);
			ng_u64(n, "unverified_end", j->scan.unverified_end);
		}
		if (h->att.on && (j->pid == h->att.pid || h->njvms == 1)) {
			n = ng_begin(p, "hotspot.attached", j->pid);
			ng_u64(n, "hooks", h->att.hooks > 0);
			ng_u64(n, "before", j->before);
			ng_u64(n, "lookups", j->scan.scans);
			ng_u64(n, "found", j->scan.found);
			ng_u64(n, "not_found", j->scan.not_found);
			ng_u64(n, "rejected", j->scan.rejected);
			ng_u64(n, "skipped", j->scan.skipped);
			ng_u64(n, "max_per_sec", j->scan.max_per_sec);
			ng_u64(n, "during_gc", j->scan_gc);
			ng_f64(n, "cpu_ms", j->scan.cpu_ns / 1e6);
			ng_u64(n, "perf_map", h->att.map[0] != 0);
			ng_u64(n, "stacks", (uint64_t)(int64_t)h->att.preserve_fp);
		}
	}
}

/* ---- the sentences (report time) ---- */

int hs_map_note(const struct hs_map_issue *m, char *buf, size_t len)
{
	static const char *const whys[] = {
		[HS_MAP_LINK] = "is a symbolic link",
		[HS_MAP_NOT_REGULAR] = "is not a regular file (a FIFO, device or directory)",
		[HS_MAP_OTHER_USER] = "is owned by another user than the JVM's",
		[HS_MAP_TOO_LARGE] = "is larger than 512 MiB",
	};
	char owner[48] = "";

	if (m->issue == HS_MAP_REFUSED_AT_START)
		return snprintf(buf, len,
				"HotSpot pid %u: /tmp/perf-%u.map was a link or another user's file "
				"when the JVM started: no perf map asked for (the JVM would have "
				"written through it) — JIT frames unnamed", m->pid, m->pid);
	if (m->issue == HS_MAP_NO_OPENAT2)
		return snprintf(buf, len,
				"HotSpot pid %u: perf map %s cannot be opened inside the target's "
				"root on this kernel (no openat2): not read — JIT frames unnamed",
				m->pid, m->path);
	if (m->owner_known)
		snprintf(owner, sizeof(owner), " (uid %u, the JVM runs as uid %u)",
			 (unsigned)m->owner_uid, (unsigned)m->jvm_uid);
	return snprintf(buf, len, "HotSpot pid %u: perf map %s %s%s: not read — JIT frames unnamed",
			m->pid, m->path,
			m->why < sizeof(whys) / sizeof(whys[0]) && whys[m->why] ? whys[m->why] : "?",
			owner);
}

struct hs_nr {
	const struct os_profile *p;
	const struct os_note_counters *g;
};

static unsigned long long nv_u(struct hs_nr r, const char *key)
{
	return (unsigned long long)os_profile_note_num(r.p, r.g, key);
}

static double nv_f(struct hs_nr r, const char *key)
{
	uint64_t v = 0;

	return os_profile_note_val(r.p, r.g, key, OS_NV_F64, &v) ? os_profile_note_f64_of(v) : 0;
}

static const char *nv_s(struct hs_nr r, const char *key)
{
	return os_profile_note_text(r.p, r.g, key);
}

static int note_objects(struct hs_nr r, char *note, size_t len)
{
	unsigned pid = (unsigned)nv_u(r, "pid");
	const char *gc = nv_s(r, "gc");

	if (nv_u(r, "mode") == OS_JVM_MODE_HYBRID) {
		unsigned long long t = nv_u(r, "tlab");
		int dither = nv_u(r, "dither") != 0;

		return snprintf(note, len,
				"HotSpot pid %u (%s GC), hybrid objects: TLABs of %s%llu bytes%s; "
				"objects >= %llu bytes are all seen, smaller ones %s are "
				"seen with probability %s and weighted by its inverse "
				"(Horvitz-Thompson); %llu Java objects seen (%llu of them with a "
				"weight above 1), estimated %.0f objects allocated; allocations and "
				"bytes per object are estimates, and sample figures marked est. are "
				"Horvitz-Thompson estimates (each sample counts its object's weight; "
				"where allocation paths are estimated, see that note)%s",
				pid, gc, dither ? "random size, mean " : "", t,
				dither ? " (drawn from [T/2, 3T/2) at each refill)" : "",
				dither ? t * 3 / 2 : t,
				dither ? "of every size (below min-size too)" : ">= min-size",
				dither ? "size / T up to T/2 (then rising to 1)" : "size / T",
				nv_u(r, "objects"), nv_u(r, "weighted"), nv_f(r, "estimated"),
				nv_u(r, "steered")
					? "; TLABs steered in the running JVM from each thread's first "
					  "refill after the attach (objects born before stay apart; one "
					  "TLAB per thread and collection keeps the JVM's own size; its "
					  "own sizing is back at its first collection after the detach)"
					: "");
	}
	if (nv_u(r, "mode") == OS_JVM_MODE_SAMPLED)
		return snprintf(note, len,
				"HotSpot pid %u (%s GC), sampled objects: %llu objects seen at TLAB "
				"refills and outside TLABs, each refill weighted by TLAB bytes / "
				"object size (outside-TLAB objects weight 1), estimate %.0f objects "
				"(objects_estimated counts Java objects only); allocations and bytes "
				"per object are estimates, and sample figures marked est. are "
				"Horvitz-Thompson estimates",
				pid, gc, nv_u(r, "objects"), nv_f(r, "estimated"));
	return snprintf(note, len,
			"HotSpot pid %u (%s GC), exact objects: %llu Java objects seen; "
			"allocations and bytes per object are counts of objects allocated",
			pid, gc, nv_u(r, "objects"));
}

static int note_jit(struct hs_nr r, char *note, size_t len)
{
	unsigned long long frames = nv_u(r, "frames"), expanded = nv_u(r, "expanded"),
			   outer = nv_u(r, "outer");

	return snprintf(note, len,
			"HotSpot pid %u: %llu of %llu frames in compiled Java methods named "
			"by their nmethods' debug info, %llu more inlined methods shown as "
			"frames of their own; %llu (interrupted pcs%s, or no scope "
			"recorded there) as the compiled method alone, %llu by the perf map "
			"(a method that could not be read); %llu nmethods read, %llu found "
			"replaced, %llu whose debug info could not be read (their frames "
			"by the perf map), %llu frames by the perf map once %u nmethods "
			"were kept",
			(unsigned)nv_u(r, "pid"), expanded - outer, frames, nv_u(r, "inlined"), outer,
			nv_u(r, "nonsafepoint_debug") ? "" : " without -XX:+DebugNonSafepoints",
			frames - expanded, nv_u(r, "nmethods_read"), nv_u(r, "nmethods_replaced"),
			nv_u(r, "nmethods_failed"), nv_u(r, "frames_past_cap"),
			(unsigned)nv_u(r, "nmethods_cap"));
}

static int note_unidentified(struct hs_nr r, char *note, size_t len)
{
	return snprintf(note, len,
			"HotSpot pid %u: Java heap, object not identified: %llu Java-heap "
			"samples held by no tracked object and whose object could not be "
			"read (%llu: a collection was running when its header was to be read; "
			"%llu: a collection began between the sample and the read of its "
			"header; %llu: no object header found below the address; "
			"%llu: lookup skipped by the per-page negative cache or the rate cap; "
			"%llu: no lookups in this JVM (ZGC, Shenandoah, vmStructs not read)); "
			"counted, charged to no object",
			(unsigned)nv_u(r, "pid"), nv_u(r, "samples"), nv_u(r, "during_gc"),
			nv_u(r, "gc_since"), nv_u(r, "no_header"), nv_u(r, "skipped"), nv_u(r, "no_lookup"));
}

static int note_paths(struct hs_nr r, char *note, size_t len)
{
	double held = nv_f(r, "held"), shared = nv_f(r, "shared");

	return snprintf(note, len,
			"HotSpot pid %u: estimated allocation paths: %.0f Java-heap samples "
			"fell on objects not seen at allocation (class read from the header, "
			"%llu classes); %.0f of them (%.1f%%) were shared out to the sites of "
			"their class (%llu classes) by the sampled allocations of those sites "
			"(their access heat, per access path, and their bytes): those objects' "
			"figures are \"estimated\"; %.0f stay with their class, path not known "
			"(%s). Each sample counts once: sites are ranked by exact samples "
			"plus their estimated share",
			(unsigned)nv_u(r, "pid"), held, nv_u(r, "classes"), shared,
			held > 0 ? 100.0 * shared / held : 0.0, nv_u(r, "classes_shared"),
			held - shared,
			nv_u(r, "attach") ? "no site of the class seen, or born before the attach"
					  : "no site of the class seen allocating");
}

static int note_small(struct hs_nr r, char *note, size_t len)
{
	return snprintf(note, len,
			"HotSpot pid %u: %llu Java-heap samples fell on objects smaller than "
			"--min-size %llu and %llu on untracked objects of a tracked size (not "
			"sampled at allocation): each object was found by reading its header "
			"at the sampled address and its sample charged to its class, "
			"\"" HS_SMALL_NAME "\" (%llu on enum constants: their path is their "
			"enum's class initializer, \"E.<clinit>\", then \"" HS_ENUM_NAME "\"); "
			"%llu were not looked up because "
			"a collection had begun since the sample (%llu heap lookups: %llu "
			"found, %llu of them followed by old data, the newest object of a TLAB; "
			"%llu not found, %llu skipped by the per-page negative cache "
			"or the %u/s cap; %.1f ms collector CPU)",
			(unsigned)nv_u(r, "pid"), nv_u(r, "charged"), nv_u(r, "min_size"),
			nv_u(r, "tracked_size"), nv_u(r, "enum_constants"), nv_u(r, "during_gc"), nv_u(r, "lookups"), nv_u(r, "found"),
			nv_u(r, "unverified_end"), nv_u(r, "not_found"), nv_u(r, "skipped"), (unsigned)nv_u(r, "max_per_sec"),
			nv_f(r, "cpu_ms"));
}

static int note_attached(struct hs_nr r, char *note, size_t len)
{
	int64_t stacks = (int64_t)nv_u(r, "stacks");

	return snprintf(note, len,
			"HotSpot pid %u was attached while running: %s; %llu objects were "
			"first seen moved by a collection and are shown as \"" HS_BEFORE_NAME
			"\" with their class, %llu more were found by reading the object "
			"header below a sampled Java-heap address (%llu heap lookups: %llu "
			"found, %llu not found, %llu candidate headers rejected, %llu "
			"skipped by the per-page negative cache or the %u/s cap, %llu "
			"during a collection; %.1f ms collector CPU); JIT names %s; Java "
			"call paths are %s",
			(unsigned)nv_u(r, "pid"),
			nv_u(r, "hooks") ? "allocation and GC hooks installed"
				      : "allocation hooks NOT installed (only samples)",
			nv_u(r, "before"), nv_u(r, "found"), nv_u(r, "lookups"), nv_u(r, "found"),
			nv_u(r, "not_found"), nv_u(r, "rejected"), nv_u(r, "skipped"),
			(unsigned)nv_u(r, "max_per_sec"), nv_u(r, "during_gc"), nv_f(r, "cpu_ms"),
			nv_u(r, "perf_map") ? "from the perf map the JVM wrote on request "
					   "(Compiler.perfmap)"
					 : "unavailable (no perf map)",
			stacks == 2
				? "complete (JIT frames walked by their code blobs' frame sizes)"
			: stacks == 1
				? "complete (the JVM runs with -XX:+PreserveFramePointer)"
				: "TRUNCATED at the first JIT-compiled frame (the JVM runs "
				  "without -XX:+PreserveFramePointer; start it with that "
				  "flag for complete Java stacks)");
}

/* The GC note's tail on small objects' moves read from forwarding pointers
 * (runtimes/hotspot/target/hotspot_fwd.c); "" when none were. */
static const char *small_moves_note(struct hs_nr r, char *buf, size_t len)
{
	if (!nv_u(r, "small_moves") && !nv_u(r, "small_unfollowed") && !nv_u(r, "small_unread"))
		return "";
	snprintf(buf, len,
		 "; %llu moves of objects of 64 bytes or less read from their forwarding "
		 "pointers (%llu such objects not followed: the target's table was full; %llu "
		 "mark words unreadable)",
		 nv_u(r, "small_moves"), nv_u(r, "small_unfollowed"), nv_u(r, "small_unread"));
	return buf;
}

static const char *g1_gens_note(struct hs_nr r, char *buf, size_t len)
{
	if (!nv_u(r, "g1_in_target") && !nv_u(r, "g1_read_late") && !nv_u(r, "g1_failed"))
		return "";
	snprintf(buf, len,
		 "; G1 region types: read by the target at %llu collection ends, by objscope "
		 "when it drained %llu others (regions retyped by a later collection make "
		 "promotions uncertain there), unreadable at %llu",
		 nv_u(r, "g1_in_target"), nv_u(r, "g1_read_late"), nv_u(r, "g1_failed"));
	return buf;
}

size_t os_hotspot_render_note(const struct os_profile *p, const struct os_note_counters *g,
			      char *buf, size_t len)
{
	char small[256], g1[256];
	struct hs_nr r = { p, g };
	const char *kind = g->kind < p->nstrings ? p->strings[g->kind] : "";
	char note[1024]; /* the notes were made in such a buffer: as long as before */
	int n;

	if (!strcmp(kind, "hotspot.perf_map")) {
		struct hs_map_issue m = {
			.issue = (uint32_t)nv_u(r, "issue"), .why = (uint32_t)nv_u(r, "why"),
			.pid = (uint32_t)nv_u(r, "pid"), .owner_known = nv_u(r, "owner_known") != 0,
			.owner_uid = (uint32_t)nv_u(r, "owner_uid"),
			.jvm_uid = (uint32_t)nv_u(r, "jvm_uid"),
		};

		snprintf(m.path, sizeof(m.path), "%s", nv_s(r, "path"));
		n = hs_map_note(&m, note, 400); /* as long as the notes were */
	}
	else if (!strcmp(kind, "hotspot.objects"))
		n = note_objects(r, note, sizeof(note));
	else if (!strcmp(kind, "hotspot.gc"))
		n = snprintf(note, sizeof(note),
			     "HotSpot pid %u: %llu collections, %llu object moves applied (%llu not "
			     "delivered by the target), %llu dead objects dropped after collections "
			     "(checked at %llu of them: one left unmoved in a region the collection "
			     "freed (G1) is dead; elsewhere one whose header no longer shows its "
			     "class, so one replaced by another of its class at the same address "
			     "is kept)%s%s",
			     (unsigned)nv_u(r, "pid"), nv_u(r, "collections"), nv_u(r, "moves"),
			     nv_u(r, "moves_lost"), nv_u(r, "dropped"), nv_u(r, "checked"),
			     small_moves_note(r, small, sizeof(small)), g1_gens_note(r, g1, sizeof(g1)));
	else if (!strcmp(kind, "hotspot.concurrent_gc"))
		n = snprintf(note, sizeof(note),
			     "HotSpot pid %u: %s GC moves objects concurrently: attribution "
			     "after its collections is best effort",
			     (unsigned)nv_u(r, "pid"), nv_s(r, "gc"));
	else if (!strcmp(kind, "hotspot.lines"))
		n = snprintf(note, sizeof(note),
			     "HotSpot pid %u: %llu of %llu Java frames with their source line "
			     "(File.java:LINE: the method's LineNumberTable at the frame's "
			     "bytecode index); the others have none (a method without a line "
			     "table or a class without its source file name, an interpreted "
			     "frame whose bytecode pointer was not known, a compiled frame named "
			     "as the compiled method alone); %llu methods whose line table could "
			     "not be read (their JVM had exited when a path of theirs was read)",
			     (unsigned)nv_u(r, "pid"), nv_u(r, "frames_with_line"),
			     nv_u(r, "frames_with_line") + nv_u(r, "frames_without"), nv_u(r, "tables_failed"));
	else if (!strcmp(kind, "hotspot.jit"))
		n = note_jit(r, note, sizeof(note));
	else if (!strcmp(kind, "hotspot.no_scopes"))
		n = snprintf(note, sizeof(note), "%s",
			     "HotSpot: this JVM's vmStructs lack the nmethod debug-info "
			     "fields: compiled frames are named by the perf map, "
			     "methods inlined there are not shown");
	else if (!strcmp(kind, "hotspot.no_vmstructs"))
		n = snprintf(note, sizeof(note), "%s",
			     "HotSpot: the vmStructs tables could not be read: "
			     "classes and interpreted frames are unnamed");
	else if (!strcmp(kind, "hotspot.small"))
		n = note_small(r, note, sizeof(note));
	else if (!strcmp(kind, "hotspot.unidentified"))
		n = note_unidentified(r, note, sizeof(note));
	else if (!strcmp(kind, "hotspot.paths"))
		n = note_paths(r, note, sizeof(note));
	else if (!strcmp(kind, "hotspot.attached"))
		n = note_attached(r, note, sizeof(note));
	else
		return 0;
	if (n <= 0 || !len)
		return 0;
	return (size_t)snprintf(buf, len, "%s", note) < len ? strlen(buf) : len - 1;
}
