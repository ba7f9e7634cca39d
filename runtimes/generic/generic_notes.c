/* generic_notes.c - the generic adapter's notes (runtime.h op notes): per
 * unknown VM, where its managed heap was taken from, how many samples fell
 * there, what the adapter cannot know, and what named its JIT code. The
 * profile keeps them as counters (kinds "generic.*"); os_generic_render_note
 * makes their sentences when a report reads the profile.
 */
#include "runtimes/generic/generic_int.h"

#include <stdio.h>
#include <string.h>

#include "common/profile.h"

static void note_u64(struct os_profile *p, uint32_t g, const char *key, uint64_t v)
{
	if (g != OS_NONE)
		os_profile_note_u64(p, g, key, v);
}

void gen_notes(struct os_runtime *rt, struct os_profile *p)
{
	struct generic *g = gen_of(rt);

	for (size_t i = 0; i < g->nvms; i++) {
		struct gen_vm *v = g->vms[i];
		uint32_t n;

		if (!v->vm || v->forgotten)
			continue;
		n = os_profile_note_group(p, "generic.heap");
		note_u64(p, n, "pid", v->pid);
		if (n != OS_NONE)
			os_profile_note_str(p, n, "library", v->lib);
		note_u64(p, n, "from", v->heap_from);
		note_u64(p, n, "lo", v->heap_lo);
		note_u64(p, n, "hi", v->heap_hi);
		note_u64(p, n, "reservations", v->resvs.n);
		note_u64(p, n, "samples", v->heap_samples);
		note_u64(p, n, "grace", v->grace_samples);
		note_u64(p, n, "grace_s", g->grace_ns / 1000000000ULL);
		/* measured: forced, launch mode (the heap from the mmap events, or
		 * copies seen: attach mode sees none) */
		if (g->moves && (v->heap_from == GEN_HEAP_EVENTS || v->gc_copies ||
				 v->gc_copies_out)) {
			n = os_profile_note_group(p, "generic.moves");
			note_u64(p, n, "pid", v->pid);
			note_u64(p, n, "copies", v->gc_copies);
			note_u64(p, n, "bytes", v->gc_bytes);
			note_u64(p, n, "outside", v->gc_copies_out);
		}
		n = os_profile_note_group(p, "generic.jit");
		note_u64(p, n, "pid", v->pid);
		note_u64(p, n, "map", v->map);
		note_u64(p, n, "err", (uint64_t)v->map_err);
	}
}

/* The figures of a group being rendered. */
struct gen_nr {
	const struct os_profile *p;
	const struct os_note_counters *g;
};

static unsigned long long nv_u(struct gen_nr r, const char *key)
{
	return (unsigned long long)os_profile_note_num(r.p, r.g, key);
}

static int note_heap(struct gen_nr r, char *buf, size_t len)
{
	unsigned pid = (unsigned)nv_u(r, "pid");
	unsigned long long lo = nv_u(r, "lo"), hi = nv_u(r, "hi");
	const char *lib = os_profile_note_text(r.p, r.g, "library");
	int n;

	n = snprintf(buf, len, "unknown runtime pid %u (%s mapped, no adapter of its own: "
		     "the generic one sees it from outside): ", pid, lib[0] ? lib : "a VM library");
	if (n < 0 || (size_t)n >= len)
		return n;
	if (nv_u(r, "from") == GEN_HEAP_NONE)
		return n + snprintf(buf + n, len - n,
				    "no managed heap found (no reservation by the VM's library was "
				    "seen, nor one in its maps): its samples are counted with the "
				    "native heap or as not attributed, and no object of the runtime "
				    "is identified");
	n += snprintf(buf + n, len - n,
		      "managed heap taken as [0x%llx, 0x%llx) (%llu MiB: %s); %llu samples there "
		      "are shown as \"%s\" with their access paths",
		      lo, hi, (hi - lo) >> 20,
		      nv_u(r, "from") == GEN_HEAP_EVENTS
			      ? "of the address-space reservations (PROT_NONE, MAP_NORESERVE) the "
				"VM's library made, the one with the most memory committed in it"
			      : "of the partly uncommitted anonymous regions of its "
				"/proc/PID/maps, the one with the most committed, its "
				"reservation not seen (made before the attach, or --no-mmap)",
		      nv_u(r, "samples"), GEN_HEAP_NAME);
	if ((size_t)n < len && nv_u(r, "grace"))
		n += snprintf(buf + n, len - n,
			      ", %llu more (in the first %llu s after the runtime was found: the "
			      "time an adapter of its own has to claim it) counted in the managed "
			      "heap only",
			      nv_u(r, "grace"), nv_u(r, "grace_s"));
	if ((size_t)n < len)
		n += snprintf(buf + n, len - n,
			      ". What the generic adapter cannot know is not guessed: which objects "
			      "those are, their classes, where and when they were allocated, how "
			      "long they live; the runtime collector's object moves are not "
			      "followed (no managed object is tracked, so none is misattributed by "
			      "one; native objects never move), and its copy volume is measured only "
			      "in launch mode with --runtime generic. Native objects (malloc, and mmap "
			      "outside that heap) are tracked as in any program");
	return n;
}

static int note_jit(struct gen_nr r, char *buf, size_t len)
{
	unsigned pid = (unsigned)nv_u(r, "pid");

	switch (nv_u(r, "map")) {
	case GEN_MAP_READ:
		return snprintf(buf, len,
				"unknown runtime pid %u: JIT code named from /tmp/perf-%u.map, "
				"which the runtime wrote when asked (names as it writes them)",
				pid, pid);
	case GEN_MAP_REFUSED:
		return snprintf(buf, len,
				"unknown runtime pid %u: /tmp/perf-%u.map was not read (%s): frames "
				"in JIT code are unnamed addresses",
				pid, pid, strerror((int)nv_u(r, "err")));
	default:
		return snprintf(buf, len,
				"unknown runtime pid %u: no /tmp/perf-%u.map: frames in JIT code are "
				"unnamed addresses. Asking the runtime for one is the user's part "
				"(HotSpot: -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit, or "
				"jcmd PID Compiler.perfmap while it runs; OpenJ9: -Xjit:perfTool)",
				pid, pid);
	}
}

size_t os_generic_render_note(const struct os_profile *p, const struct os_note_counters *g,
			      char *buf, size_t len)
{
	struct gen_nr r = { p, g };
	const char *kind = g->kind < p->nstrings ? p->strings[g->kind] : "";
	int n;

	if (!len)
		return 0;
	if (!strcmp(kind, "generic.heap"))
		n = note_heap(r, buf, len);
	else if (!strcmp(kind, "generic.jit"))
		n = note_jit(r, buf, len);
	else if (!strcmp(kind, "generic.moves"))
		n = snprintf(buf, len,
			     "unknown runtime pid %u: its GC copied %llu MiB in %llu copies inside "
			     "the managed heap (memcpy/memmove of threads named as GC threads: the "
			     "collector's copy volume, less what it copies inline; %llu more copies "
			     "of theirs had an end outside the heap); no tracked object moved with "
			     "them",
			     (unsigned)nv_u(r, "pid"), nv_u(r, "bytes") >> 20, nv_u(r, "copies"),
			     nv_u(r, "outside"));
	else
		return 0;
	if (n <= 0)
		return 0;
	return (size_t)n < len ? (size_t)n : len - 1;
}
