/* hotspot_notes.c - the HotSpot adapter's notes in the profile (runtime.h
 * op notes): per JVM, what its figures mean and which parts are best effort. */
#include "runtimes/hotspot/hotspot_int.h"

void hs_notes(struct os_runtime *rt, struct os_profile *p)
{
	struct hotspot *h = hs_of(rt);
	char note[1024];

	for (uint32_t i = 0; i < h->njvms; i++) {
		struct hs_jvm *j = h->jvms[i];
		const char *gc = j->have_info && j->info.gc[0] ? j->info.gc : "unknown";

		if (j->map_note[0]) /* hs_before_symbolize refused its perf map */
			os_profile_add_note(p, j->map_note);

		if (j->info.mode == OS_JVM_MODE_HYBRID) {
			unsigned long long t = (unsigned long long)j->info.tlab_bytes;
			int dither = (j->info.flags & OS_JVM_F_TLAB_DITHER) != 0;

			snprintf(note, sizeof(note),
				 "HotSpot pid %u (%s GC), hybrid objects: TLABs of %s%llu bytes%s; "
				 "objects >= %llu bytes are all seen, smaller ones >= min-size are "
				 "seen with probability %s and weighted by its inverse "
				 "(Horvitz-Thompson); %llu Java objects seen (%llu of them with a "
				 "weight above 1), estimated %.0f objects allocated; allocations and "
				 "bytes per object are estimates, and sample figures marked est. are "
				 "Horvitz-Thompson estimates (each sample counts its object's weight)",
				 j->pid, gc, dither ? "random size, mean " : "", t,
				 dither ? " (drawn from [T/2, 3T/2) at each refill)" : "",
				 dither ? t * 3 / 2 : t,
				 dither ? "size / T up to T/2 (then rising to 1)" : "size / T",
				 (unsigned long long)j->objects, (unsigned long long)j->small,
				 j->estimated);
		} else if (j->info.mode == OS_JVM_MODE_SAMPLED)
			snprintf(note, sizeof(note),
				 "HotSpot pid %u (%s GC), sampled objects: %llu objects seen at TLAB "
				 "refills and outside TLABs, each refill weighted by TLAB bytes / "
				 "object size (outside-TLAB objects weight 1), estimate %.0f objects "
				 "(objects_estimated counts Java objects only); allocations and bytes "
				 "per object are estimates, and sample figures marked est. are "
				 "Horvitz-Thompson estimates",
				 j->pid, gc, (unsigned long long)j->objects, j->estimated);
		else
			snprintf(note, sizeof(note),
				 "HotSpot pid %u (%s GC), exact objects: %llu Java objects seen; "
				 "allocations and bytes per object are counts of objects allocated",
				 j->pid, gc, (unsigned long long)j->objects);
		os_profile_add_note(p, note);
		snprintf(note, sizeof(note),
			 "HotSpot pid %u: %llu collections, %llu object moves applied (%llu not "
			 "delivered by the target), %llu dead objects dropped after collections "
			 "(checked at %llu of them; an object replaced by one of the same class "
			 "at the same address is kept)",
			 j->pid, (unsigned long long)j->gcs, (unsigned long long)j->moves,
			 (unsigned long long)j->moves_lost, (unsigned long long)j->dropped,
			 (unsigned long long)j->checked);
		os_profile_add_note(p, note);
		if (j->info.flags & (OS_JVM_F_ZGC | OS_JVM_F_CONCURRENT)) {
			snprintf(note, sizeof(note),
				 "HotSpot pid %u: %s GC moves objects concurrently: attribution "
				 "after its collections is best effort",
				 j->pid, gc);
			os_profile_add_note(p, note);
		}
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
			snprintf(note, sizeof(note),
				 "HotSpot pid %u: %llu of %llu Java frames with their source line "
				 "(File.java:LINE: the method's LineNumberTable at the frame's "
				 "bytecode index); the others have none (a method without a line "
				 "table or a class without its source file name, an interpreted "
				 "frame whose bytecode pointer was not known, a compiled frame named "
				 "as the compiled method alone); %llu methods whose line table could "
				 "not be read (their JVM had exited when a path of theirs was read)",
				 j->pid, (unsigned long long)j->line_frames,
				 (unsigned long long)(j->line_frames + j->line_none),
				 (unsigned long long)j->ml_failed);
			os_profile_add_note(p, note);
		}
		if (j->jit_frames || j->nm_failed || j->nm_full) {
			snprintf(note, sizeof(note),
				 "HotSpot pid %u: %llu of %llu frames in compiled Java methods named "
				 "by their nmethods' debug info, %llu more inlined methods shown as "
				 "frames of their own; %llu (interrupted pcs%s, or no scope "
				 "recorded there) as the compiled method alone, %llu by the perf map "
				 "(a method that could not be read); %llu nmethods read, %llu found "
				 "replaced, %llu whose debug info could not be read (their frames "
				 "by the perf map), %llu frames by the perf map once %u nmethods "
				 "were kept",
				 j->pid, (unsigned long long)(j->jit_expanded - j->jit_outer),
				 (unsigned long long)j->jit_frames, (unsigned long long)j->jit_inlined,
				 (unsigned long long)j->jit_outer,
				 (j->info.flags & OS_JVM_F_NONSAFEPOINT_DEBUG)
					 ? "" : " without -XX:+DebugNonSafepoints",
				 (unsigned long long)(j->jit_frames - j->jit_expanded),
				 (unsigned long long)j->nm_reads, (unsigned long long)j->nm_stale,
				 (unsigned long long)j->nm_failed, (unsigned long long)j->nm_full,
				 HS_NMS_MAX);
			os_profile_add_note(p, note);
		} else if (j->vm_ok && !j->scl.ok) {
			os_profile_add_note(p, "HotSpot: this JVM's vmStructs lack the nmethod debug-info "
					       "fields: compiled frames are named by the perf map, "
					       "methods inlined there are not shown");
		}
		if (j->nm_reads) {
			size_t bytes = 0;

			for (size_t i = 0; i < j->nnms; i++)
				bytes += (size_t)j->nms[i].npcs * 8 + j->nms[i].ndata +
					 (size_t)j->nms[i].nmeta * 8;
			os_debug("hotspot: pid %u: %zu nmethods' debug info kept, %zu KiB; %llu "
				 "compiled frames expanded from the cache of %zu pcs", j->pid,
				 j->nnms, bytes >> 10, (unsigned long long)j->jx_hits, j->njx);
		}
		if (!j->vm_ok)
			os_profile_add_note(p, "HotSpot: the vmStructs tables could not be read: "
					       "classes and interpreted frames are unnamed");
		if (!h->att.on && (j->small_found || j->small_big || j->small_gc)) {
			snprintf(note, sizeof(note),
				 "HotSpot pid %u: %llu Java-heap samples fell on objects smaller than "
				 "--min-size %llu (not tracked): each was found by reading the object "
				 "header at the sampled address and charged to the context of its "
				 "class marked \"" HS_SMALL_NAME "\" (class known, allocation path "
				 "not, allocations not counted); %llu fell on an untracked object of a "
				 "tracked size (left to the estimates), %llu were not looked up because "
				 "a collection had begun since the sample (%llu heap lookups: %llu "
				 "found, %llu not found, %llu skipped by the per-page negative cache "
				 "or the %u/s cap; %.1f ms collector CPU)",
				 j->pid, (unsigned long long)j->small_found,
				 (unsigned long long)h->a->min_size, (unsigned long long)j->small_big,
				 (unsigned long long)j->small_gc, (unsigned long long)j->scan.scans,
				 (unsigned long long)j->scan.found,
				 (unsigned long long)j->scan.not_found,
				 (unsigned long long)j->scan.skipped, j->scan.max_per_sec,
				 j->scan.cpu_ns / 1e6);
			os_profile_add_note(p, note);
		}
		if (h->att.on && (j->pid == h->att.pid || h->njvms == 1)) {
			snprintf(note, sizeof(note),
				 "HotSpot pid %u was attached while running: %s; %llu objects were "
				 "first seen moved by a collection and are shown as \"" HS_BEFORE_NAME
				 "\" with their class, %llu more were found by reading the object "
				 "header below a sampled Java-heap address (%llu heap lookups: %llu "
				 "found, %llu not found, %llu candidate headers rejected, %llu "
				 "skipped by the per-page negative cache or the %u/s cap, %llu "
				 "during a collection; %.1f ms collector CPU); JIT names %s; Java "
				 "call paths are %s",
				 j->pid,
				 h->att.hooks > 0 ? "allocation and GC hooks installed"
						  : "allocation hooks NOT installed (only samples)",
				 (unsigned long long)j->before,
				 (unsigned long long)j->scan.found,
				 (unsigned long long)j->scan.scans,
				 (unsigned long long)j->scan.found,
				 (unsigned long long)j->scan.not_found,
				 (unsigned long long)j->scan.rejected,
				 (unsigned long long)j->scan.skipped, j->scan.max_per_sec,
				 (unsigned long long)j->scan_gc, j->scan.cpu_ns / 1e6,
				 h->att.map[0] ? "from the perf map the JVM wrote on request "
						 "(Compiler.perfmap)"
					       : "unavailable (no perf map)",
				 h->att.preserve_fp == 2
					 ? "complete (JIT frames walked by their code blobs' frame sizes)"
				 : h->att.preserve_fp == 1
					 ? "complete (the JVM runs with -XX:+PreserveFramePointer)"
					 : "TRUNCATED at the first JIT-compiled frame (the JVM runs "
					   "without -XX:+PreserveFramePointer; start it with that "
					   "flag for complete Java stacks)");
			os_profile_add_note(p, note);
		}
	}
}
