/* generic_names.h - the names VMs give their threads, as the generic
 * adapter tells them apart: shared by its collector side (thread_kind) and
 * its in-target side (copies by GC threads, target/generic_moves.c), so
 * that both judge a thread by the same table. */
#ifndef OBJSCOPE_GENERIC_NAMES_H
#define OBJSCOPE_GENERIC_NAMES_H

#include <stddef.h>
#include <string.h>

#include "common/profile.h"

/* enum os_thread_kind of a VM's thread by the names VMs give them (cut to
 * 15 characters by the kernel): GC workers, JIT compiler threads, the VM
 * thread; -1 for any other name (the adapter does not know what it runs).
 * HotSpot, OpenJ9 ("GC Worker", "JIT Compilation Thread-000"), GraalVM
 * (JVMCI compiler threads). */
static inline int os_gen_thread_kind(const char *name)
{
	static const struct {
		const char *prefix;
		int kind;
	} names[] = {
		{ "GC Thread#", OS_THR_GC },	     { "G1 ", OS_THR_GC },
		{ "ParGC", OS_THR_GC },		     { "ZWorker", OS_THR_GC },
		{ "Shenandoah", OS_THR_GC },	     { "GC Worker", OS_THR_GC },
		{ "GC Slave", OS_THR_GC },	     { "GC Main", OS_THR_GC },
		{ "C1 CompilerThre", OS_THR_JIT },   { "C2 CompilerThre", OS_THR_JIT },
		{ "JVMCI", OS_THR_JIT },	     { "CompilerThread", OS_THR_JIT },
		{ "JIT Compilation", OS_THR_JIT },   { "JIT Diagnostic", OS_THR_JIT },
		{ "JIT-SamplerThre", OS_THR_JIT },   { "JIT IProfiler", OS_THR_JIT },
		{ "VM Thread", OS_THR_VM },
	};

	for (size_t i = 0; name && i < sizeof(names) / sizeof(names[0]); i++)
		if (strncmp(name, names[i].prefix, strlen(names[i].prefix)) == 0)
			return names[i].kind;
	return -1;
}

#endif
