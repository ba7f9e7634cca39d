/* profile.h - the objscope profile file: in-memory model, writer, reader.
 *
 * The collector fills a struct os_profile (symbolized, aggregated per
 * allocation context and per access path) and writes it with
 * os_profile_write(); `objscope report` loads one or many with
 * os_profile_read() and merges them with os_profile_merge().
 * The on-disk layout (version OS_PROFILE_VERSION) is documented in
 * docs/PROFILE-FORMAT.md.
 *
 * Return convention: 0 on success, -errno on failure (-EINVAL for a file that
 * is not a profile, -EPROTO for a corrupt/truncated one, -ENOTSUP for an
 * unknown version, -ENOMEM); on failure `err` (if non-NULL, size errlen)
 * receives one human-readable line naming what is wrong (os_profile_read
 * prefixes it with "PATH: ", os_profile_read_mem does not).
 *
 * Ids: strings, frames and stacks are referred to by their index in the
 * tables below; OS_NONE means "none" where a field allows it. A profile read
 * from a file can be extended with the builder functions like a new one
 * (the interning tables are built on first use).
 */
#ifndef OBJSCOPE_PROFILE_H
#define OBJSCOPE_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OS_PROFILE_MAGIC "OBJSCOPE"
#define OS_PROFILE_VERSION 3 /* 2: SLICES section; 3: variances of the estimates
			      * (ESTIMATES, PATHEST records); older files still read */
#define OS_PROFILE_VERSION_MIN 1
#define OS_NONE UINT32_MAX /* "no string / no stack" */
/* Header flags. UNFINISHED: a checkpoint written while recording (the
 * collector ended before its final profile: killed, crashed); complete
 * and valid, but the run's last seconds are missing. */
#define OS_PROFILE_F_UNFINISHED 0x1u
/* Time buckets of SLICES a reader accepts (a collector writes at most
 * 1000): what a report derives from them stays small. */
#define OS_PROFILE_BUCKETS_MAX (1u << 20)
/* Figures a reader accepts in a double (estimates, lifetimes, reuse, costs,
 * the duration): at most 2^53 in size (exact integers; a sum over a merge
 * of up to 2^10 profiles still fits an int64). */
#define OS_PROFILE_FIGURE_MAX 0x1p53

/* Section types of the file (docs/PROFILE-FORMAT.md). Readers skip types
 * they do not know. */
enum os_section {
	OS_SEC_META = 1,
	OS_SEC_COUNTERS = 2,
	OS_SEC_STRINGS = 3,
	OS_SEC_FRAMES = 4,
	OS_SEC_STACKS = 5,
	OS_SEC_CONTEXTS = 6,
	OS_SEC_ACCESSES = 7,
	OS_SEC_THREADS = 8,
	OS_SEC_REPLICAS = 9, /* optional: struct os_replica per context (--replicas) */
	OS_SEC_ESTIMATES = 10, /* optional: sample estimates of weighted objects (Java
				* hybrid / sampled modes) */
	OS_SEC_SLICES = 11,  /* optional (version 2): samples by thread and time bucket */
	OS_SEC_NOTE_COUNTERS = 12, /* optional: runtime notes kept as counters */
	OS_SEC_LIFETIMES = 13, /* optional: object lifetimes per context (docs/LIFETIMES.md) */
	OS_SEC_MEMSRC = 14,  /* optional: struct os_memsrc per context (PMU data
			      * sources, --numa page placement) */
	OS_SEC_REUSE = 15,   /* optional: reuse distance signatures per context (docs/REUSE.md) */
	OS_SEC_OVERHEAD = 16, /* optional: struct os_overhead, what objscope cost
			       * (--max-overhead) */
	OS_SEC_PATHEST = 17, /* optional: struct os_pathest per context (estimated
			      * allocation paths of Java objects) */
};
#define OS_SEC_END 0xFFFFFFFFu /* last section: CRC32 of all bytes before it */

enum os_frame_kind {
	OS_FRAME_NATIVE = 0,   /* function from an ELF symbol */
	OS_FRAME_JAVA = 1,     /* compiled or interpreted Java method */
	OS_FRAME_UNKNOWN = 2,  /* unresolved: printed as "[unknown] 0xADDR" */
	OS_FRAME_KERNEL = 3,
	OS_FRAME_SYNTHETIC = 4 /* e.g. "[allocated before attach]" */
};

/* Sampled-metric slots carried per object and per access path. */
enum os_metric {
	OS_M_LATENCY = 0,   /* sum of load latency cycles (PMU samplers) */
	OS_M_L1_MISS = 1,   /* samples that missed L1 */
	OS_M_REMOTE = 2,    /* samples served from a remote NUMA node */
	OS_M_COUNT
};
#define OS_M_ALL ((1u << OS_M_COUNT) - 1)

/* The metrics (bits 1u << OS_M_*) a sampler measures, by the name recorded
 * in meta.sampler: "soft" (task-clock, data address decoded from the
 * instruction) measures none of them. A sampler not listed in
 * common/profile_merge.c (or none recorded) counts as measuring none: its
 * metric slots are reported as not measured (JSON null), never as 0. A
 * sampler added to objscope must be listed there with what it fills. */
uint32_t os_sampler_metrics(const char *sampler);

/* Java frames: name is "pkg.Class.method" and file the source file name
 * ("Bench.java"). Native frames: name is the (demangled) function, module the
 * ELF path, file the source file. */
struct os_frame {
	uint32_t kind;     /* enum os_frame_kind */
	uint32_t name;     /* string id: function / method name, or OS_NONE */
	uint32_t module;   /* string id: object file path, or OS_NONE */
	uint32_t file;     /* string id: source file, or OS_NONE */
	uint32_t line;     /* 0 when unknown */
	uint64_t addr;     /* offset in module (native), or raw address (unknown) */
	/* Native frames without a name (stripped module): the nearest exported
	 * function before addr, a hint and not the frame's function (string id
	 * or OS_NONE), and addr's distance from its start. */
	uint32_t near_sym;
	uint32_t build_id; /* string id: hex GNU build-id of module, or OS_NONE */
	uint64_t near_off;
	/* Column of line (DWARF), 0 when unknown: with addr it tells apart two
	 * calls written on one line (two allocation contexts).
	 * OS_COLUMN_LINE_ONLY: a frame of a file written before columns
	 * existed, whose writer merged frames by line: it stays merged so. */
	uint32_t column;
};

#define OS_COLUMN_LINE_ONLY UINT32_MAX
/* The column of frame f to show, 0 when there is none to show. */
static inline uint32_t os_frame_column(const struct os_frame *f)
{
	return f->line && f->column != OS_COLUMN_LINE_ONLY ? f->column : 0;
}

struct os_stack {
	uint32_t nframes;
	uint32_t *frames;  /* frame ids, leaf first */
};

/* Replica analysis of one allocation context (--replicas, OJXPerf's method,
 * docs/REPLICAS.md). All zero when nothing was measured for the context. */
struct os_replica {
	uint64_t equivalent;   /* watchpoint comparisons: same value at the offset */
	uint64_t different;    /* ... different value */
	uint64_t full_checks;  /* whole-content comparisons of compared pairs */
	uint64_t full_differ;  /* of those: the two objects' contents differ */
	uint64_t full_differ_match; /* of those: yet the watched offset matched (alpha) */
	uint64_t exact_objects; /* objects whose whole content was hashed */
	uint64_t exact_twins;  /* of those: an identical twin was seen in the context */
	uint64_t full_match;   /* of full_checks: the watched offset matched (equivalent) */
};

/* Memory levels that serve a sampled access (PMU data source), in the
 * order of os_memsrc.level; names and JSON keys in common/memsrc.c. */
enum os_mem_level {
	OS_LVL_L1 = 0,
	OS_LVL_LFB,          /* line fill buffer: an L1 miss already on its way */
	OS_LVL_L2,
	OS_LVL_L3,
	OS_LVL_RAM,          /* local DRAM */
	OS_LVL_REMOTE_RAM,   /* another node's DRAM */
	OS_LVL_REMOTE_CACHE, /* another node's (or socket's) cache */
	OS_LVL_OTHER,        /* L4, PMEM, CXL, I/O, uncached */
	OS_LVL_UNKNOWN,      /* not reported */
	OS_LVL_COUNT
};
#define OS_LAT_BUCKETS 16 /* latency histogram: [2^i, 2^(i+1)) cycles, the last open */

/* Where the sampled data of one allocation context came from and lay;
 * all zero when nothing was measured for it. OS_AN_MEMSRC:
 * the PMU's data source of each sample (level, data TLB, latency);
 * OS_AN_NUMA (--numa): the node of each sampled page against the node of
 * the CPU that touched it. Raw sample counts (scaled like samples when
 * profiles of different periods are merged). */
struct os_memsrc {
	uint64_t level[OS_LVL_COUNT];      /* samples by level (OS_LVL_UNKNOWN: not said) */
	uint64_t tlb_known, tlb_miss;      /* samples whose data TLB result was said; misses */
	uint64_t lat_hist[OS_LAT_BUCKETS]; /* samples with a latency (> 0), by bucket */
	uint64_t numa_local, numa_remote;  /* page on the accessing CPU's node / another */
	uint64_t numa_unknown;             /* page's node or CPU's node not known */
	uint64_t numa_nodes;               /* bit n: a sampled page lay on node n (n < 64) */
};

/* Estimated allocation paths (OS_AN_PATHEST, docs/JAVA.md "Samples on
 * objects not seen at allocation"): a sample on a Java object that was not
 * seen at its allocation has its class (read from the object's header) but
 * no path; it is held by the class-only context of that class and shared
 * out to the class's sites (contexts whose objects were seen allocated) by
 * the estimator. Then samples_est is samples + path_est for both kinds:
 * a site's samples on objects seen at allocation are exact, path_est is
 * its estimated share; a class-only context keeps what could not be given
 * (path_est <= 0: minus what it gave). */
enum os_path_kind {
	OS_PATH_NONE = 0,  /* samples_est as OS_AN_ESTIMATES says (Horvitz-Thompson) */
	OS_PATH_SITE = 1,  /* a site of a class: exact samples + estimated share */
	OS_PATH_CLASS = 2, /* class known, allocation path not: what was not shared */
};

struct os_pathest {
	uint32_t kind;        /* enum os_path_kind */
	uint32_t class_sites; /* evidence: sites of the class with objects seen */
	double path_est;      /* estimated part of samples_est (see above) */
	uint64_t seen;        /* objects of this context seen at allocation */
	uint64_t class_seen;  /* evidence: objects of the class seen at allocation */
	double evidence;      /* the samples of access evidence the split of the
			       * class's samples rests on (0: allocation volume
			       * alone); NaN: not stated (files before version 3) */
};

struct os_context {        /* one allocation context (== "object" in reports) */
	uint32_t type;     /* string id: class/type name, or OS_NONE */
	uint32_t stack;    /* stack id of the allocation path */
	uint64_t allocations;
	uint64_t bytes;
	uint64_t samples;  /* access samples attributed to its objects */
	uint64_t metrics[OS_M_COUNT];
	struct os_replica replica; /* meaningful when OS_AN_REPLICAS is set */
	struct os_memsrc mem;      /* meaningful when OS_AN_MEMSRC / OS_AN_NUMA is set */
	struct os_pathest pe;      /* meaningful when OS_AN_PATHEST is set */
	double samples_est; /* meaningful when OS_AN_ESTIMATES is set: sum over the
			     * samples of their object's weight (1 / probability
			     * the object was seen), a Horvitz-Thompson estimate
			     * of the samples all its objects would have had */
	double samples_var; /* OS_AN_EST_VAR: the variance of samples_est (the
			     * estimator's own: objects' and time weights,
			     * estimated paths' split, small-block votes) */
};

struct os_access {         /* samples of one context from one access path */
	uint32_t context;  /* context index */
	uint32_t stack;    /* stack id of the access path */
	uint64_t samples;
	uint64_t metrics[OS_M_COUNT];
	double samples_est; /* as os_context.samples_est */
	double path_est;    /* OS_AN_PATHEST: estimated part of samples_est, as
			     * os_pathest.path_est of its context */
};

/* Attributed samples of one (context, access path) taken on one thread in
 * one time bucket: [bucket * slice_ms, (bucket + 1) * slice_ms) from the
 * start of the run. Present when OS_AN_SLICES is set. */
struct os_slice {
	uint32_t context;  /* context index */
	uint32_t access;   /* access index, or OS_NONE (sample with no access path) */
	uint32_t thread;   /* thread index */
	uint32_t bucket;
	uint64_t samples;
};

/* Object lifetimes of one allocation context (OS_AN_LIFETIMES,
 * docs/LIFETIMES.md). Counts are estimates (sums of object weights: 1 / the
 * probability the object was tracked), equal to counts for weight 1.
 * Bins: managed (Java) objects by age, the collections they survived (bin
 * a: a collections, the last bin: OS_LT_BINS - 1 or more); native objects
 * by time from allocation to free: bin 0 under 1 us, bin k in [2^(k-1),
 * 2^k) us, the last bin 2^(OS_LT_BINS - 2) us or more. */
#define OS_LT_BINS 32
enum os_lt_kind { OS_LT_NONE = 0, OS_LT_MANAGED = 1, OS_LT_NATIVE = 2 };
#define OS_LT_F_PROMOTION 0x1u /* promoted / promoted_bytes measured (generations known) */

struct os_lifetime {
	uint32_t kind;             /* enum os_lt_kind; OS_LT_NONE: nothing measured */
	uint32_t flags;            /* OS_LT_F_* */
	double ended[OS_LT_BINS];  /* objects whose end was seen (freed / died), by bin */
	double ended_bytes[OS_LT_BINS];
	double live[OS_LT_BINS];   /* objects live at the end of the run, by their age /
				    * time since allocation then (native: leak candidates) */
	double live_bytes[OS_LT_BINS];
	double promoted, promoted_bytes; /* managed, with OS_LT_F_PROMOTION: survivors moved
					  * into the old generation */
	double peak_bytes;         /* live bytes of the context at their peak */
	uint64_t peak_ns;          /* ... when (from the start of the run) */
};

/* Profile-level lifetime figures (OS_AN_LIFETIMES). */
#define OS_LTP_F_ATTACH 0x1u   /* attach mode: ages and times count from the attach */
struct os_lifetimes {
	uint32_t flags;            /* OS_LTP_F_* */
	uint32_t nctx;             /* entries of ctx (<= ncontexts; the rest: none) */
	struct os_lifetime *ctx;   /* by context index */
	double peak_bytes;         /* native objects' live bytes at their peak */
	uint64_t peak_ns;
	uint64_t collections;      /* collections seen (managed heaps) */
	uint64_t collections_unjudged; /* ... that aged nothing: moves lost, concurrent
					* collector */
	uint64_t unaged;           /* managed objects not aged (docs/LIFETIMES.md) */
	/* managed: bytes the collections left in the young generation, by the
	 * age they reached there, summed over the collections whose
	 * generations were known (HotSpot's age table, -Xlog:gc+age=trace,
	 * summed over its collections: for the tracked objects) */
	double survivor_bytes[OS_LT_BINS];
};

/* Reuse distance signature of one allocation context (OS_AN_REUSE,
 * docs/REUSE.md): ESTIMATED reuses by ViRDA bin (common/reuse_math.h:
 * bin 0 = 0 bytes, bin n = [2^(n-1), 2^n - 1] bytes, the last bin: no
 * reuse seen within the watchpoint's age). All zero: nothing measured. */
#define OS_REUSE_NBINS 40
struct os_reuse {
	double bins[OS_REUSE_NBINS];
};

/* Profile-level reuse figures (OS_AN_REUSE): the model's inputs. */
struct os_reuses {
	uint32_t nctx;             /* entries of ctx (<= ncontexts; the rest: none) */
	struct os_reuse *ctx;      /* by context index */
	uint64_t cache[3];         /* L1d, L2, LLC bytes of the recording machine, 0 unknown */
	double bytes_per_ns;       /* access rate of the model (bytes per ns of CPU), 0: none */
	uint32_t rate_source;      /* enum os_reuse_rate_source: where bytes_per_ns comes from */
	/* the calibrated rate's factors (its product is bytes_per_ns when
	 * rate_source is OS_RU_RATE_CALIBRATED): instructions per ns, */
	double insn_per_ns;
	double mem_share;          /* share of sampled instructions that access memory, */
	double width;              /* mean access width of the reuses (bytes) */
	double trap_ns;            /* calibrated watchpoint cost subtracted from each time */
	uint64_t pairs;            /* reuses measured (watchpoint pairs completed) */
	uint64_t censored;         /* pairs with no reuse within the age (the last bin) */
	uint64_t max_age_ns;       /* the watchpoints' age */
};

/* The model's access rate (docs/REUSE.md "Access rate"). */
enum os_reuse_rate_source {
	OS_RU_RATE_CALIBRATED = 0, /* a calibration loop's instructions/ns x memory share x width */
	OS_RU_RATE_OBJECTS = 1,    /* the sampled objects' sizes over their mean reuse times (Kac) */
};

enum os_thread_kind { OS_THR_NATIVE = 0, OS_THR_JAVA, OS_THR_GC, OS_THR_JIT, OS_THR_VM };

struct os_thread {
	uint32_t kind;     /* enum os_thread_kind */
	uint32_t name;     /* string id */
	uint32_t pid, tid;
	uint64_t samples;  /* all access samples taken on this thread */
};

/* Counters; every one is shown by the report. */
struct os_counters {
	uint64_t samples_total;      /* access samples taken */
	uint64_t samples_addressed;  /* with a data address */
	uint64_t samples_heap;       /* address inside a tracked heap/arena/mapping */
	uint64_t samples_attributed; /* inside a tracked object */
	uint64_t lost;               /* samples the kernel lost (PERF_RECORD_LOST) */
	uint64_t dropped_events;     /* allocation events dropped (rings full, no slot) */
	uint64_t bad_events;         /* malformed ring bytes skipped */
	uint64_t unaddressed_nomem;  /* instruction has no memory operand */
	uint64_t unaddressed_clobbered; /* address register overwritten by the access */
	uint64_t unaddressed_undecodable; /* code unreadable or no boundary found */
	uint64_t small_allocs;       /* below min_size: counted, not tracked */
	uint64_t small_bytes;
	uint64_t tracked_allocs;
	uint64_t tracked_bytes;
	uint64_t frees;
	uint64_t gc_count;
	uint64_t moves;              /* object moves applied */
	uint64_t objects_seen;       /* objects individually seen */
	uint64_t objects_estimated;  /* objects estimated (sampling modes), 0 if none */
	uint64_t truncated_paths;    /* alloc paths cut at the frame limit */
	uint64_t samples_java_heap;  /* of samples_heap: inside a Java heap */
	uint64_t samples_java_attributed; /* of samples_attributed: on a Java object */
	uint64_t samples_jit;        /* of samples_total: JIT compiler threads', not decoded */
	uint64_t small_outside_tlab; /* of small_allocs: hybrid mode, outside TLABs: never sampled */
};

/* The share of small Java allocations made outside TLABs in hybrid mode
 * (never sampled) above which the profile's note and the report's "lost"
 * line say so: HotSpot makes 0.003-0.04% so on its own (docs/JAVA.md). */
#define OS_OUTSIDE_TLAB_SAID 0.01
static inline bool os_counters_outside_tlab_many(const struct os_counters *c)
{
	return (double)c->small_outside_tlab >
	       OS_OUTSIDE_TLAB_SAID * (double)(c->objects_estimated + c->small_outside_tlab);
}

struct os_meta {
	uint32_t argc;
	uint32_t *argv;            /* string ids of the command */
	uint32_t npids;
	uint32_t *pids;
	double duration_s;
	uint32_t sampler;          /* string id: "soft", "pebs", ... */
	uint32_t event;            /* string id: "task-clock", ... */
	uint64_t period;           /* sample period in event units */
	uint64_t freq;             /* requested samples/s/thread, 0 if period given */
	uint64_t min_size;
	uint32_t mode;             /* string id: "record" / "attach" */
	uint32_t hostname;         /* string id */
	uint64_t start_time;       /* unix seconds */
	uint32_t nnotes;
	uint32_t *notes;           /* string ids: degradations the report must show */
};

enum { OS_AN_REPLICAS = 1u << 0, OS_AN_ESTIMATES = 1u << 1, OS_AN_SLICES = 1u << 2,
       OS_AN_MEMSRC = 1u << 3, /* PMU data sources per context (os_memsrc) */
       OS_AN_NUMA = 1u << 4,   /* --numa per context (os_memsrc numa_*) */
       OS_AN_LIFETIMES = 1u << 5, /* --lifetimes: os_profile.lt (docs/LIFETIMES.md) */
       OS_AN_REUSE = 1u << 6,  /* --reuse: os_profile.ru (docs/REUSE.md) */
       OS_AN_OVERHEAD = 1u << 7,  /* os_profile.ovh: the cost and the budget */
       OS_AN_PATHEST = 1u << 8,   /* estimated allocation paths (os_pathest) */
       OS_AN_EST_VAR = 1u << 9,   /* with OS_AN_ESTIMATES: samples_var of contexts */
};

/* What objscope cost while it sampled, the budget it was given and the
 * rate it took (OS_SEC_OVERHEAD; attacher/core/overhead.h). Seconds are
 * CPU seconds. NaN: not measured (JSON null). One run's figures: a merge
 * of several profiles drops them. */
struct os_overhead {
	double max_pct;           /* the budget (--max-overhead); NaN: -F fixed the rate */
	double spent_pct;         /* estimate: sampling's cost (collector_sampling_s +
				   * kernel_s) / target x 100: what the budget steers */
	double target_cpu_s;      /* the target's CPU while sampled (measured, /proc) */
	double collector_cpu_s;   /* objscope's CPU while sampling (measured, getrusage) */
	double collector_sampling_s; /* ... of it on the samples (measured, thread clock) */
	double fixed_pct;         /* (collector_cpu_s - collector_sampling_s) / target x 100:
				   * objscope's costs that do not move with the rate */
	double kernel_s;          /* the kernel's sampling: samples x sample_ns (estimate) */
	double hooks_s;           /* the in-target hooks' time: NaN (not measured yet) */
	double sample_ns;         /* the kernel's cost of one sample (calibrated estimate) */
	double calibration_s;     /* the calibration's CPU time (outside the budget) */
	double sampled_share;     /* share of the time the sampling events were on */
	double samples_per_s;     /* the effective rate: samples per second (whole process) */
	double samples_per_cpu_s; /* ... per CPU-second of the target */
	double build_s;           /* objscope's CPU building this profile at the end
				   * (symbolizing, estimates; measured, the process's CPU
				   * clock): after the target, outside collector_cpu_s */
	double settled_s;         /* when the answer settled (OS_OVH_SETTLE_SE: the
				   * budget then spent at a share of itself), seconds
				   * from the sampling's start; NaN: never, or not steered */
	double settled_share;     /* share of the budget's decisions taken settled */
	double answer_se;         /* estimate: the largest standard error of a share
				   * among the top contexts at the end (os_attrib_top_se) */
	double settled_spent_pct; /* estimate: spent_pct's measure over the stretches run
				   * settled only (their share of the target's CPU);
				   * NaN: never settled, or not steered */
	double drop_ns;           /* the kernel's cost of a sample a BPF filter drops (the
				   * JIT threads'; calibrated estimate; = sample_ns where
				   * not measured); NaN with -F */
	double dropped_samples;   /* samples dropped in the kernel, in kernel_s at drop_ns;
				   * NaN with -F */
	double settled_by;        /* how the answer first settled: 1 the top shares'
				   * errors narrow enough (OS_OVH_SETTLE_SE), 2 the top
				   * objects' intervals apart (their ranking told apart);
				   * NaN: never, or not steered */
	double answer_apart;      /* at the end: 1 the top objects' 90% intervals were
				   * apart, 0 some overlapped; NaN: not known */
	uint32_t calibrated;      /* sample_ns measured on this machine (else a constant) */
	uint32_t steered;         /* the budget steered the sampling (not -F) */
};
#define OS_OVERHEAD_NF 22 /* doubles of struct os_overhead, in order */

/* Names of the levels as reports show them ("L1", ... "remote RAM") and
 * as JSON keys ("l1", ... "remote_ram"). */
extern const char *const os_mem_level_name[OS_LVL_COUNT];
extern const char *const os_mem_level_key[OS_LVL_COUNT];
/* Latency bucket of `cycles` (> 0), and the lower bound of bucket b. */
unsigned os_lat_bucket(uint64_t cycles);
static inline uint64_t os_lat_bucket_lo(unsigned b)
{
	return 1ULL << b;
}
/* The q-quantile (0 < q <= 1) of a latency histogram as the upper bound of
 * the bucket it falls in (an estimate: "at most"); 0 when it is empty,
 * UINT64_MAX when it falls in the last, open bucket. */
uint64_t os_lat_quantile_max(const uint64_t *hist, double q);

/* What os_profile_merge did; in memory only (not in the file). All zero for
 * a profile read or built and not merged. */
struct os_merge_info {
	uint32_t inputs;      /* profiles merged (a non-empty dst counts as one) */
	uint32_t unmeasured;  /* OS_M_* bits some input did not measure */
	uint64_t period_min;  /* smallest and largest sample period of the inputs */
	uint64_t period_max;  /* (0 when an input's period is unknown) */
	bool scaled;          /* sample counts were scaled to meta.period */
	bool inexact;         /* ... by a ratio that is not a whole number: rounded */
	bool raw;             /* periods differ but could not be normalised (an input
			       * of unknown period or of another event): summed raw */
	uint32_t note;        /* 1 + index in meta.notes of the note saying so; 0: none */
};

/* Profile-level sample estimates (OS_AN_ESTIMATES), as samples_est. */
struct os_estimates {
	double samples_attributed;      /* estimate of c.samples_attributed */
	double samples_java_attributed; /* estimate of c.samples_java_attributed */
};

/* A figure of a note kept as counters. */
enum os_nv_type {
	OS_NV_U64 = 0, /* v: the count */
	OS_NV_F64 = 1, /* v: the bits of a double */
	OS_NV_STR = 2, /* v: a string id */
};

struct os_note_val {
	uint32_t key;  /* string id: the figure's name ("objects") */
	uint32_t type; /* enum os_nv_type */
	uint64_t v;
};

/* A note kept as counters (section NOTE_COUNTERS): the sentence `kind`
 * (string id, "<runtime>.<what>": its runtime renders it, runtime.h
 * os_runtime_factory.render_note) with its figures. It stands where
 * meta.notes had `at` notes when it was added: os_profile_render_notes
 * turns it into a note there. */
struct os_note_counters {
	uint32_t kind;
	uint32_t at;
	uint32_t nvals;
	struct os_note_val *vals;
};

struct os_profile {
	struct os_meta meta;
	struct os_counters c;
	uint32_t nstrings;
	char **strings;
	uint32_t nframes;
	struct os_frame *frames;
	uint32_t nstacks;
	struct os_stack *stacks;
	uint32_t ncontexts;
	struct os_context *contexts;
	uint32_t naccesses;
	struct os_access *accesses;
	uint32_t nthreads;
	struct os_thread *threads;
	uint32_t nslices;          /* OS_AN_SLICES: samples by thread and time */
	struct os_slice *slices;
	uint32_t slice_ms;         /* width of a time bucket (> 0 with OS_AN_SLICES) */
	uint32_t analyses;         /* OS_AN_* bits: analyses that were run / sections present */
	uint32_t numa_nodes;       /* OS_AN_NUMA: NUMA nodes of the machine (>= 1) */
	struct os_estimates est;   /* meaningful when OS_AN_ESTIMATES is set */
	struct os_lifetimes lt;    /* meaningful when OS_AN_LIFETIMES is set */
	struct os_reuses ru;       /* meaningful when OS_AN_REUSE is set */
	struct os_overhead ovh;    /* meaningful when OS_AN_OVERHEAD is set */
	uint32_t nnote_counters;   /* notes kept as counters, not rendered yet */
	struct os_note_counters *note_counters;
	struct os_merge_info merge; /* set by os_profile_merge */
	bool unfinished;           /* OS_PROFILE_F_UNFINISHED: written as a checkpoint */
	void *priv;                /* builder state (interning tables) */
};

/* Builder: an empty profile whose strings/frames/stacks are interned. */
struct os_profile *os_profile_new(void);
void os_profile_free(struct os_profile *p);

/* Interning; return the id, or OS_NONE on out of memory. Equal content gives
 * the same id. */
uint32_t os_profile_string(struct os_profile *p, const char *s);
uint32_t os_profile_frame(struct os_profile *p, const struct os_frame *f);
uint32_t os_profile_stack(struct os_profile *p, const uint32_t *frames, uint32_t n);
/* Appends; return the index or OS_NONE. Contexts are NOT deduplicated here. */
uint32_t os_profile_add_context(struct os_profile *p, const struct os_context *c);
uint32_t os_profile_add_access(struct os_profile *p, const struct os_access *a);
uint32_t os_profile_add_thread(struct os_profile *p, const struct os_thread *t);
/* The lifetime entry of context ctx, made (OS_LT_NONE, zero) when there is
 * none yet; sets OS_AN_LIFETIMES. NULL on out of memory. */
struct os_lifetime *os_profile_lifetime(struct os_profile *p, uint32_t ctx);
/* Adds the figures of s into d (a peak: the larger one; promotions
 * measured where both measured them). */
void os_lifetime_add(struct os_lifetime *d, const struct os_lifetime *s);
/* The reuse entry of context ctx (zero when new); sets OS_AN_REUSE. NULL on
 * out of memory. */
struct os_reuse *os_profile_reuse(struct os_profile *p, uint32_t ctx);
/* Appends a slice (sets OS_AN_SLICES); returns its index or OS_NONE. */
uint32_t os_profile_add_slice(struct os_profile *p, const struct os_slice *s);
int os_profile_add_pid(struct os_profile *p, uint32_t pid);
int os_profile_add_note(struct os_profile *p, const char *note);
int os_profile_set_argv(struct os_profile *p, int argc, char *const argv[]);

/* Notes kept as counters. os_profile_note_group starts one (kind as
 * "<runtime>.<what>") at the current end of meta.notes and returns its
 * index (OS_NONE: out of memory); os_profile_note_u64/f64/str add figures
 * to group g (0, or -ENOMEM). */
uint32_t os_profile_note_group(struct os_profile *p, const char *kind);
int os_profile_note_u64(struct os_profile *p, uint32_t g, const char *key, uint64_t v);
int os_profile_note_f64(struct os_profile *p, uint32_t g, const char *key, double v);
int os_profile_note_str(struct os_profile *p, uint32_t g, const char *key, const char *s);
/* The figure key of group g: true and *v (os_nv_type type) when it is there. */
bool os_profile_note_val(const struct os_profile *p, const struct os_note_counters *g,
			 const char *key, uint32_t type, uint64_t *v);
double os_profile_note_f64_of(uint64_t bits);
/* The number (OS_NV_U64) or string (OS_NV_STR) figure key of group g: 0 or
 * "" when it is not there (a renderer's reads). */
uint64_t os_profile_note_num(const struct os_profile *p, const struct os_note_counters *g,
			     const char *key);
const char *os_profile_note_text(const struct os_profile *p, const struct os_note_counters *g,
				 const char *key);

/* Renders each group of p->note_counters through render (into buf, its
 * length > 0, or 0 when it knows no such sentence: then the figures are
 * listed as "kind: key value, ...") and puts the note where the group
 * stood in meta.notes (a note already there is not repeated); the groups
 * are gone afterwards. 0, or -ENOMEM. */
typedef size_t (*os_note_render_fn)(const struct os_profile *p, const struct os_note_counters *g,
				    char *buf, size_t len);
int os_profile_render_notes(struct os_profile *p, os_note_render_fn render);

/* Writes atomically, mode 0600 (as perf.data: it holds the target's command
 * line and symbols): into a file only objscope can have created in path's
 * directory (O_TMPFILE, else an O_EXCL|O_NOFOLLOW random name), fsync,
 * rename over `path` (a symbolic link there is replaced, never written
 * through). A regular file already at `path` is kept as "<path>.old" (if
 * that fails the profile is still written, returns 0 and `err` says so).
 * An existing FIFO, /dev/null or terminal is written in place, other
 * special files are refused (common/safefs.h, os_out_open). Never leaves a
 * file at `path` that is incomplete. */
int os_profile_write(const struct os_profile *p, const char *path, char *err, size_t errlen);
/* As os_profile_write; keep_old false: a file at `path` is replaced, not
 * kept as "<path>.old" (a checkpoint replacing the one before). */
int os_profile_write_keep(const struct os_profile *p, const char *path, bool keep_old, char *err,
			  size_t errlen);
/* Checks before a run that os_profile_write could write `path` (the
 * directory exists and is writable, the name is not a directory or an
 * unusable special file); nothing is left behind. 0 or -errno and `err`. */
int os_profile_check_output(const char *path, char *err, size_t errlen);

/* Reads and fully validates (every id in range, checksums). */
int os_profile_read(const char *path, struct os_profile **out, char *err, size_t errlen);
/* Same, from memory (used by the fuzzer and tests). */
int os_profile_read_mem(const void *buf, size_t len, struct os_profile **out, char *err,
			size_t errlen);

/* Adds `src` into `dst`:
 * - counters summed; duration_s is the maximum (profiles merged are usually
 *   of processes that ran side by side, so wall time does not add up);
 * - pids and notes unioned; meta fields still unset in dst (OS_NONE / 0 /
 *   empty command) are taken from src, so the first profile's meta is kept;
 * - contexts equal when their type string and their allocation frames are
 *   equal (kind, name, module, file, line; and the address for frames with no
 *   name) are summed, other contexts appended; accesses likewise per
 *   (context, access path); threads equal by (pid, tid, kind, name) summed.
 * Merging into a fresh os_profile_new() therefore also folds duplicate
 * contexts of src. Sample estimates (OS_AN_ESTIMATES) are summed; a side
 * without them counts its samples (every weight 1).
 * Periods: a sample stands for `period` events, so profiles taken at
 * different periods (-F) of the same event are normalised: every sample
 * count (samples, samples_est, metrics of contexts, accesses and threads,
 * the sample counters, estimates) is scaled to the smallest period of the
 * inputs, which becomes meta.period: a sample at period 2P counts as 2 at
 * period P (rounded to the nearest when the ratio is not whole: totals and
 * the sums of their parts may then differ by rounding). Allocation, byte,
 * replica and event counts are not scaled. Inputs of different events, or
 * of an unknown period (0), cannot be normalised: they are summed as they
 * are. Either way dst->merge records it and a note says it.
 * Metrics measured (os_profile_metrics) after a merge: those every input
 * measured.
 * Returns 0 or -ENOMEM (dst then holds a partial merge). */
int os_profile_merge(struct os_profile *dst, const struct os_profile *src);
/* As os_profile_merge, and ctxmap[i] (src->ncontexts entries) receives the
 * index in dst of src's context i: the context it was summed into, or the
 * one appended (how `report --diff` matches objects across profiles). */
int os_profile_merge_map(struct os_profile *dst, const struct os_profile *src, uint32_t *ctxmap);

/* Metrics (bits 1u << OS_M_*) measured for this profile: its sampler's
 * (os_sampler_metrics), less those some merged input did not measure. A
 * metric not measured reads 0 in the profile and must be shown as absent. */
uint32_t os_profile_metrics(const struct os_profile *p);

/* String `id`, or NULL for OS_NONE / out of range. */
const char *os_profile_str(const struct os_profile *p, uint32_t id);

/* Formats frame `id` into buf (always NUL-terminated), as docs/INTERFACE.md says:
 *   Java     "Class.method(File.java:LINE)", "Class.method" without a file
 *   native   "function (file.c:LINE)" (basename), "function" without a line,
 *            "module+0xOFF" (basename) when only the module is known,
 *            "module+0xOFF (nearest export: function+0xD)" with a near_sym
 *   kernel   "function [kernel]"
 *   synthetic the name as is ("[allocated before attach]")
 *   anything unresolved "[unknown] 0xADDR". */
void os_profile_frame_str(const struct os_profile *p, uint32_t id, char *buf, size_t len);

#endif
