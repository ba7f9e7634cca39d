/* options.h - options of `objscope record` and `objscope attach`, in one
 * struct (parsed by os_opts_parse, shared by both commands). */
#ifndef OBJSCOPE_OPTIONS_H
#define OBJSCOPE_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#define OS_DEFAULT_FREQ 1000
#define OS_DEFAULT_STACK_COPY 8192 /* as perf's --call-graph dwarf */
#define OS_MAX_STACK_COPY 65528    /* the kernel's limit (below 64 KiB, 8-aligned) */
#define OS_DEFAULT_MIN_SIZE 1024
#define OS_DEFAULT_SMALL_SAMPLE (512 * 1024) /* --small-sample: mean bytes */
#define OS_DEFAULT_OUTPUT "objscope.data"
#define OS_MAX_DURATION (7 * 24 * 3600) /* -d: a week, in seconds */
#define OS_DEFAULT_JAVA_TLAB 32768 /* = OS_JAVA_TLAB_DEFAULT (hotspot_abi.h) */
#define OS_JAVA_TLAB_MIN 4096 /* below: no random TLAB sizes (hotspot.c), and JDK 17 refuses TLABSize < MinTLABSize (2048) */
#define OS_JAVA_TLAB_MAX (256 * 1024) /* G1 caps TLABs at half a region (>= 512 KiB) */
#define OS_RUNTIME_ENV "OBJSCOPE_RUNTIME" /* --runtime's default */

struct os_opts {
	const char *output;      /* -o */
	const char *event;       /* -e: "auto" (default), "soft" / "task-clock", a PMU event */
	uint64_t freq;           /* -F samples per second per thread */
	bool freq_fixed;         /* -F given: the rate is fixed, no budget */
	double max_overhead;     /* --max-overhead PCT: the budget in % of the target's
				  * CPU (attacher/core/budget.h); 0 with -F */
	uint64_t min_size;       /* --min-size */
	uint64_t small_sample;   /* --small-sample: mean bytes between sampled malloc
				  * blocks (docs/NATIVE.md), 0: off */
	bool native_exact;       /* --native-objects exact (or --min-size given, or
				  * --small-sample 0): every malloc block >= min_size
				  * tracked; else every size sampled by bytes */
	double duration;         /* -d seconds of profiling, 0 = until the target exits */
	unsigned ring_kb;        /* --ring-kb per thread ring (power of two) */
	unsigned slots;          /* --threads max concurrently tracked threads */
	unsigned perf_pages;     /* perf buffer pages per CPU */
	bool progress;           /* --progress: live status even if not a tty */
	bool quiet;              /* -q: no summary line */
	bool no_mmap;            /* --no-mmap: do not track anonymous mmaps as objects */
	bool debug_lines;        /* --debug-lines: lines from separate debug files too */
	bool call_graph_dwarf;   /* --call-graph dwarf (default) | fp */
	unsigned stack_copy;     /* --call-graph dwarf,SIZE: user stack bytes per sample */
	bool replicas;           /* --replicas */
	bool reuse;              /* --reuse (docs/REUSE.md) */
	bool numa;               /* --numa: page placement per object (memsrc.h) */
	bool lifetimes;          /* --lifetimes (docs/LIFETIMES.md) */
	int watch_route;         /* --watch-route perf (default) | ptrace: enum watch_route */
	const char *java_objects; /* --java-objects hybrid (default) | exact | sampled (HotSpot) */
	uint64_t java_tlab;      /* --java-tlab: hybrid mode's fixed TLAB size in bytes */
	bool java_fp;            /* --java-frame-pointers: add -XX:+PreserveFramePointer */
	bool jit_threads;        /* --jit-threads: decode and attribute JIT threads' samples */
	const char *runtime;     /* --runtime NAME (or OBJSCOPE_RUNTIME): a name of
				  * runtimes/registry.c, or NULL for auto */
	int verbose;             /* -v */
	/* async-profiler's short options, its meanings: -i INTERVAL (the rate
	 * as the time between samples), -t (threads apart: always recorded),
	 * -I/-X (only / not the samples whose allocation or access path has a
	 * frame matching the pattern: applied to the profile before it is
	 * written, report/filter.h), -f FILE (= -o) */
	bool per_thread;         /* -t, --threads-apart */
	const char *include;     /* -I, --include REGEX */
	const char *exclude;     /* -X, --exclude REGEX */
};

/* Parses options up to the first non-option (or "--"); for "attach",
 * options may follow the PID too (`attach 12 -d 5`: the PID is moved last).
 * Returns the index of the first remaining argument, or -1 after printing a
 * one-line error, or -2 when --help was printed. `cmd` names the command in
 * messages. */
int os_opts_parse(struct os_opts *o, const char *cmd, int argc, char **argv);
void os_opts_usage(const char *cmd);

#endif
