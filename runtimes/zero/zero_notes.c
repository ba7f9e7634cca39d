/* zero_notes.c - the Zero adapter's notes (runtime.h op notes), per Zero
 * JVM, kept as counters (kinds "zero.objects", "zero.access"), and
 * os_zero_render_note, their sentences at report time. The HotSpot notes
 * of the same JVM (collections, moves, objects) come from the HotSpot
 * adapter it holds. */
#include <stdio.h>
#include <string.h>

#include "common/profile.h"
#include "runtimes/hotspot/hotspot_abi.h"
#include "runtimes/zero/zero.h"
#include "runtimes/zero/zero_int.h"

static void group(struct os_profile *p, const char *kind, const char *const keys[],
		  const uint64_t vals[], size_t n)
{
	uint32_t g = os_profile_note_group(p, kind);

	for (size_t i = 0; g != OS_NONE && i < n; i++)
		os_profile_note_u64(p, g, keys[i], vals[i]);
}

void zero_notes(struct zero *z, struct os_profile *p)
{
	static const char *const ok[] = { "pid", "mode", "allocs", "arrays", "no_java", "mismatch" };
	static const char *const ak[] = { "pid", "samples", "interpreter", "named", "chain_bad" };

	for (size_t i = 0; i < z->njvms; i++) {
		const struct zero_jvm *j = &z->jvms[i];
		const uint64_t ov[] = { j->pid, j->mode, j->allocs, j->arrays, j->no_java, j->mismatch };
		const uint64_t av[] = { j->pid, j->samples, j->interp, j->named, j->chain_bad };

		group(p, "zero.objects", ok, ov, sizeof(ok) / sizeof(ok[0]));
		group(p, "zero.access", ak, av, sizeof(ak) / sizeof(ak[0]));
	}
}

static uint64_t nv(const struct os_profile *p, const struct os_note_counters *g, const char *key)
{
	return os_profile_note_num(p, g, key);
}

static const char *mode_name(uint64_t mode)
{
	switch (mode) {
	case OS_JVM_MODE_EXACT:
		return "exact";
	case OS_JVM_MODE_SAMPLED:
		return "sampled";
	case OS_JVM_MODE_HYBRID:
		return "hybrid";
	default:
		return "unknown";
	}
}

size_t os_zero_render_note(const struct os_profile *p, const struct os_note_counters *g,
			   char *buf, size_t len)
{
	const char *kind = g->kind < p->nstrings ? p->strings[g->kind] : "";
	unsigned pid = (unsigned)nv(p, g, "pid");
	int n;

	if (!strcmp(kind, "zero.objects")) {
		n = snprintf(buf, len,
			     "HotSpot Zero pid %u: Java objects are seen where the VM allocates "
			     "them (MemAllocator::allocate): every array (the interpreter makes "
			     "them all in the VM: exact, weight 1), and the instances that do "
			     "not fit the thread's TLAB, weighed as the %s mode weighs them; "
			     "instances the interpreter places in its TLAB itself are seen only "
			     "through those weights. %llu allocations recorded (%llu arrays), "
			     "%llu of them with native frames only (the Zero stack could not be "
			     "walked), %llu not recorded (the allocator did not match the "
			     "object it returned)",
			     pid, mode_name(nv(p, g, "mode")), (unsigned long long)nv(p, g, "allocs"),
			     (unsigned long long)nv(p, g, "arrays"),
			     (unsigned long long)nv(p, g, "no_java"),
			     (unsigned long long)nv(p, g, "mismatch"));
	} else if (!strcmp(kind, "zero.access")) {
		n = snprintf(buf, len,
			     "HotSpot Zero pid %u: %llu of %llu addressed samples were taken "
			     "in the bytecode interpreter (BytecodeInterpreter::run); %llu of "
			     "them name their Java method and line, found from the sample's "
			     "registers (the interpreter's state and bytecode pointer, checked "
			     "against the method's bytecodes), with the callers read from the "
			     "Zero stack after the sample (best effort; %llu chains cut off its "
			     "rules); the others stop at the interpreter, without the Java "
			     "method",
			     pid, (unsigned long long)nv(p, g, "interpreter"),
			     (unsigned long long)nv(p, g, "samples"),
			     (unsigned long long)nv(p, g, "named"),
			     (unsigned long long)nv(p, g, "chain_bad"));
	} else {
		return 0;
	}
	return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len ? len - 1 : 0;
}
