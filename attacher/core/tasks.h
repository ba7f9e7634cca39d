/* tasks.h - the collector's view of the target's process tree: address
 * spaces (one per process image: a fork or an exec starts a new one),
 * processes (pid -> current address space) and threads (name, samples).
 *
 * An address space owns the live-object index of that image and the ranges
 * of its anonymous writable mappings (where heap objects can live).
 * Return convention: 0 / -errno; lookups return NULL when absent.
 */
#ifndef OBJSCOPE_TASKS_H
#define OBJSCOPE_TASKS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/hashmap.h"
#include "common/ivindex.h"
#include "symbolizer/symbolizer.h"

struct os_aspace {
	uint32_t id;               /* asid, index in os_tasks.as (>= 1) */
	uint32_t pid;
	struct os_ivindex *objects; /* [addr, end) -> context index */
	struct os_ivindex *anon;    /* anonymous writable mappings */
	uint64_t stack_lo, stack_hi; /* main "[stack]" mapping, if known */
	/* code of objscope's own library in the target (libobjscope.so) and
	 * of the libunwind it calls: the lowest start and highest end of
	 * their executable mappings (0, 0: not seen) */
	uint64_t self_lo, self_hi, unw_lo, unw_hi;
};

struct os_thread_info {
	uint32_t pid, tid;
	char name[32];
	uint64_t name_time;        /* when the name was current (CLOCK_MONOTONIC ns), 0 unknown */
	uint64_t samples;
	/* the collector's cache of "a JIT compiler thread" (collector.c) */
	uint64_t kind_time;        /* name_time it was decided at */
	bool kind_done, jit;
	bool jit_filtered;         /* its samples dropped in the kernel (bpf_filter.h) */
	bool jit_muted;            /* its own sampling events switched off (attach) */
	bool jit_quiet;            /* asked to send its blocks without paths (shm.h) */
	bool gc;                   /* a GC thread (its access paths marked apart) */
};

struct os_tasks {
	struct os_aspace **as;     /* as[0] unused */
	uint32_t nas, cap;
	struct os_hmap pid2as;     /* pid -> asid */
	struct os_hmap tid2thr;    /* tid -> index in threads */
	struct os_thread_info *threads;
	uint32_t nthreads, thrcap;
	uint32_t *pids;            /* every process seen, in order */
	uint32_t npids, pidcap;
	struct os_symbolizer *sym; /* mappings keyed by asid */
};

int os_tasks_init(struct os_tasks *t, struct os_symbolizer *sym);
void os_tasks_destroy(struct os_tasks *t);
/* Current address space of pid, created (with /proc maps when readable) if
 * pid was never seen. NULL on out of memory. */
struct os_aspace *os_tasks_aspace(struct os_tasks *t, uint32_t pid);
struct os_aspace *os_tasks_get(struct os_tasks *t, uint32_t asid);
/* fork of a new process: the child starts as a copy of the parent image. */
int os_tasks_fork(struct os_tasks *t, uint32_t ppid, uint32_t pid);
/* exec: pid gets a fresh, empty address space. */
int os_tasks_exec(struct os_tasks *t, uint32_t pid);
/* A mapping seen in a perf MMAP2 record or /proc maps. */
void os_tasks_mmap(struct os_tasks *t, uint32_t pid, uint64_t addr, uint64_t len, uint64_t pgoff,
		   uint32_t prot, const char *file);
/* ... with the mapped file's device and inode (ino 0: unknown), which the
 * symbolizer checks the file it opens by that name against. */
void os_tasks_mmap_id(struct os_tasks *t, uint32_t pid, uint64_t addr, uint64_t len,
		      uint64_t pgoff, uint32_t prot, const char *file, uint32_t maj, uint32_t min,
		      uint64_t ino);
/* The known thread tid of pid, or NULL; creates nothing. */
struct os_thread_info *os_tasks_find_thread(struct os_tasks *t, uint32_t pid, uint32_t tid);
/* Thread bookkeeping; name may be NULL (an undated name: /proc at attach). */
struct os_thread_info *os_tasks_thread(struct os_tasks *t, uint32_t pid, uint32_t tid,
				       const char *name);
/* The thread's name as it was at `time`: taken unless a name of a later
 * time is known already. Names come from the kernel's COMM records and
 * from the preload's thread announcement (the name when the thread first
 * used its ring, often before the runtime named it); the two are read in
 * different orders, so the time decides. */
struct os_thread_info *os_tasks_thread_named(struct os_tasks *t, uint32_t pid, uint32_t tid,
					     const char *name, uint64_t time);
/* True when addr lies in anonymous writable memory of the image that is not
 * the sampled thread's own stack (the mapping that contains sp). */
bool os_aspace_is_heap(struct os_aspace *a, uint64_t addr, uint64_t sp);
/* True when an access path (frames[0] the sampled instruction, then its
 * callers) is objscope's own work in the target: its leaf in
 * libobjscope.so, or in libunwind called (through libunwind only) from
 * libobjscope.so. A path through a hook that runs the real malloc is the
 * program's. */
bool os_aspace_is_self(const struct os_aspace *a, const uint64_t *frames, uint32_t n);

#endif
