/* options.c - option parsing for record/attach. */
#include "attacher/cli/options.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attacher/sampling/sampler.h"
#include "attacher/watch/watch.h"
#include "common/log.h"
#include "common/shm.h"
#include "attacher/core/budget.h"
#include "runtimes/runtime.h"

enum { OPT_MIN_SIZE = 256, OPT_SMALL_SAMPLE, OPT_RING_KB, OPT_THREADS, OPT_PROGRESS, OPT_NO_MMAP, OPT_REPLICAS,
       OPT_LIFETIMES, OPT_REUSE, OPT_NUMA, OPT_PERF_PAGES, OPT_CALL_GRAPH, OPT_JAVA_OBJECTS, OPT_WATCH_ROUTE,
       OPT_JAVA_TLAB, OPT_DEBUG_LINES, OPT_JAVA_FP, OPT_JIT_THREADS, OPT_RUNTIME,
       OPT_MAX_OVERHEAD, OPT_NATIVE_OBJECTS, OPT_PER_THREAD };

static const struct option longopts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "event", required_argument, NULL, 'e' },
	{ "freq", required_argument, NULL, 'F' },
	{ "interval", required_argument, NULL, 'i' },
	{ "include", required_argument, NULL, 'I' },
	{ "exclude", required_argument, NULL, 'X' },
	{ "file", required_argument, NULL, 'f' },
	{ "threads-apart", no_argument, NULL, OPT_PER_THREAD },
	{ "max-overhead", required_argument, NULL, OPT_MAX_OVERHEAD },
	{ "duration", required_argument, NULL, 'd' },
	{ "min-size", required_argument, NULL, OPT_MIN_SIZE },
	{ "small-sample", required_argument, NULL, OPT_SMALL_SAMPLE },
	{ "native-objects", required_argument, NULL, OPT_NATIVE_OBJECTS },
	{ "ring-kb", required_argument, NULL, OPT_RING_KB },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "perf-pages", required_argument, NULL, OPT_PERF_PAGES },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
	{ "no-mmap", no_argument, NULL, OPT_NO_MMAP },
	{ "debug-lines", no_argument, NULL, OPT_DEBUG_LINES },
	{ "java-objects", required_argument, NULL, OPT_JAVA_OBJECTS },
	{ "java-tlab", required_argument, NULL, OPT_JAVA_TLAB },
	{ "java-frame-pointers", no_argument, NULL, OPT_JAVA_FP },
	{ "jit-threads", no_argument, NULL, OPT_JIT_THREADS },
	{ "runtime", required_argument, NULL, OPT_RUNTIME },
	{ "replicas", no_argument, NULL, OPT_REPLICAS },
	{ "watch-route", required_argument, NULL, OPT_WATCH_ROUTE },
	{ "lifetimes", no_argument, NULL, OPT_LIFETIMES },
	{ "reuse", no_argument, NULL, OPT_REUSE },
	{ "numa", no_argument, NULL, OPT_NUMA },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* The registry's names, ", " between them. */
static const char *runtime_names(char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = 0;
	for (size_t i = 0; i < os_nruntimes && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ", " : "",
				       os_runtimes[i].name);
	return buf;
}

void os_opts_usage(const char *cmd)
{
	char names[256];

	if (!strcmp(cmd, "attach"))
		printf("usage: objscope attach [options] [-o FILE] [-d SECONDS] PID [options]\n");
	else
		printf("usage: objscope record [options] [-o FILE] -- COMMAND [ARGS...]\n");
	printf("\n"
	       "  -o, --output FILE     profile file (default %s); -f FILE the same\n"
	       "      --max-overhead PCT  what sampling may cost, in %% of the target's CPU\n"
	       "                        (default %.1f, 0.1 to 50): the sampling is switched on\n"
	       "                        and off to keep it, from the cost measured; a quarter\n"
	       "                        of it once the top objects' shares have settled;\n"
	       "                        objscope's fixed costs come on top (docs/INTERFACE.md)\n"
	       "  -F, --freq HZ         a fixed rate instead of the budget: access samples per\n"
	       "                        second per thread (%d while the budget samples)\n"
	       "  -i, --interval TIME   the same as the time between samples, as async-profiler:\n"
	       "                        nanoseconds, or with a unit: 10ms, 500us, 1s\n"
	       "  -I, --include REGEX   keep only the samples whose allocation or access path\n"
	       "                        has a frame matching REGEX (extended, frames as the\n"
	       "                        text report writes them); applied before the profile\n"
	       "                        is written, said in its notes\n"
	       "  -X, --exclude REGEX   leave out the samples whose path has such a frame\n"
	       "  -t, --threads-apart   threads apart, as async-profiler's -t: every profile\n"
	       "                        keeps each sample's thread; report --per-thread shows it\n"
	       "  -e, --event NAME      sampling source: auto (the default: the PMU where the\n"
	       "                        kernel offers one, else soft), soft (the software sampler\n"
	       "                        on task-clock; task-clock is the same), or a PMU event:\n"
	       "                        mem-loads, mem-stores (PEBS; IBS op on AMD), ibs_op, or a\n"
	       "                        libpfm4 name (MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=30,\n"
	       "                        :period=N sets the period); -F is the software sampler's\n"
	       "  -d, --duration SEC    profile for SEC seconds (> 0, at most %d), then stop:\n"
	       "                        attach detaches and leaves the target running; record\n"
	       "                        writes the profile of the first SEC seconds and lets\n"
	       "                        COMMAND run on unprofiled, waiting for it and exiting\n"
	       "                        with its status\n"
	       "      --native-objects M  malloc blocks: sampled (default: every size sampled\n"
	       "                        by bytes, see --small-sample; blocks of at least\n"
	       "                        that many bytes always seen) or exact (every block of\n"
	       "                        at least --min-size tracked, smaller ones sampled;\n"
	       "                        slower on programs that allocate fast)\n"
	       "      --min-size BYTES  every block of at least BYTES tracked exactly (default\n"
	       "                        %d; given, it implies --native-objects exact); also\n"
	       "                        the smallest Java object of --java-objects exact\n"
	       "      --small-sample BYTES  one block sampled every BYTES allocated on average\n"
	       "                        (default 524288, raised at run time when the hooks'\n"
	       "                        cost passes the budget; 0: none, implies\n"
	       "                        --native-objects exact), its samples' paths\n"
	       "                        estimated for the blocks not sampled\n"
	       "      --no-mmap         do not track anonymous mmap regions as objects\n"
	       "      --java-objects M  Java programs: hybrid (default: TLABs of random size around\n"
	       "                        --java-tlab; objects >= 1.5x that all seen, smaller ones\n"
	       "                        sampled with probability size/TLAB and reweighted),\n"
	       "                        exact (every object >= --min-size; slower) or sampled\n"
	       "                        (objects seen at adaptive TLAB refills)\n"
	       "      --java-tlab BYTES hybrid mode's mean TLAB size (default %d, %d to %d)\n"
	       "      --java-frame-pointers  record: start the JVM with -XX:+PreserveFramePointer\n"
	       "                        (not needed: JIT frames are walked by their code blobs'\n"
	       "                        frame sizes; costs the JVM 2-4%% CPU)\n"
	       "      --jit-threads     JVMs: also decode and attribute the samples of JIT\n"
	       "                        compiler threads (their own arenas: JVM internals); by\n"
	       "                        default they are only counted, per thread\n"
	       "      --runtime NAME    the runtime adapter: auto (the adapter that recognises\n"
	       "                        the runtime, else the generic one) or one of:\n"
	       "                        %s\n"
	       "                        (generic: any JVM as an unknown one, managed heap from\n"
	       "                        the mappings, JIT names from /tmp/perf-PID.map);\n"
	       "                        default: $%s, else auto\n"
	       "      --call-graph M    access paths: dwarf[,SIZE] (a copy of SIZE bytes of the\n"
	       "                        stack per sample, default %u, at most %u, + CFI; the\n"
	       "                        default) or fp (frame pointers only: cheaper, shorter\n"
	       "                        paths in -O2 code)\n"
	       "      --debug-lines     source lines of native frames also from separate debug\n"
	       "                        files (/usr/lib/debug, e.g. libc6-dbg; costs ~60 ms of\n"
	       "                        CPU per run); by default only from a module's own DWARF\n"
	       "      --ring-kb KB      per-thread event ring size (default %u)\n"
	       "      --threads N       threads tracked at once (default %u)\n"
	       "      --progress        live status line even when stderr is not a terminal\n"
	       "  -q, --quiet           no summary line\n"
	       "  -v, --verbose         more messages (-vv: even more)\n"
	       "      --replicas        replica analysis (OJXPerf): objects of one allocation\n"
	       "                        context with equal contents, by hardware watchpoints,\n"
	       "                        checked against whole-content comparison\n"
	       "      --numa            NUMA: the node of each sampled access's page (move_pages)\n"
	       "                        against its CPU's node: local/remote per object\n"
	       "      --lifetimes       object lifetimes per allocation context: ages in\n"
	       "                        collections survived (Java), time to free, leaks and\n"
	       "                        peaks (native), with pretenuring advice\n"
	       "      --reuse           reuse distance per allocation context (ViRDA signatures,\n"
	       "                        estimated from watchpoint pairs: docs/REUSE.md)\n"
	       "      --watch-route R   watchpoints through perf breakpoint events (perf,\n"
	       "                        default) or ptrace debug registers (ptrace)\n",
	       OS_DEFAULT_OUTPUT, OS_BUDGET_DEFAULT_PCT, OS_DEFAULT_FREQ, OS_MAX_DURATION, OS_DEFAULT_MIN_SIZE, OS_DEFAULT_JAVA_TLAB,
	       OS_JAVA_TLAB_MIN, OS_JAVA_TLAB_MAX, runtime_names(names, sizeof(names)),
	       OS_RUNTIME_ENV, OS_DEFAULT_STACK_COPY, OS_MAX_STACK_COPY,
	       OS_DEFAULT_RING_BYTES / 1024, OS_DEFAULT_SLOTS);
}

/* --runtime NAME (or $OBJSCOPE_RUNTIME, from): "auto" (NULL) or a name of
 * the registry (runtimes/registry.c). */
static int parse_runtime(struct os_opts *o, const char *s, const char *from)
{
	char names[256];

	if (!strcmp(s, "auto")) {
		o->runtime = NULL;
		return 0;
	}
	for (size_t i = 0; i < os_nruntimes; i++) {
		if (!strcmp(s, os_runtimes[i].name)) {
			o->runtime = os_runtimes[i].name;
			return 0;
		}
	}
	os_err("%s '%s' is not a runtime: auto, or one of %s", from, s,
	       runtime_names(names, sizeof(names)));
	return -1;
}

static int parse_u64(const char *opt, const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || v < lo || v > hi || *s == '-') {
		os_err("invalid value '%s' for %s (expected a number from %llu to %llu)", s, opt,
		       (unsigned long long)lo, (unsigned long long)hi);
		return -1;
	}
	*out = v;
	return 0;
}

/* -i TIME: nanoseconds between samples (async-profiler's unit), or with a
 * unit ns, us, ms, s; as -F, 1 to 100000 samples a second. */
static int parse_interval(const char *s, uint64_t *freq)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = { { "", 1 }, { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 } };
	char *end;
	double v, hz;
	size_t i;

	errno = 0;
	v = strtod(s, &end);
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit))
			break;
	if (errno || end == s || i == sizeof(units) / sizeof(units[0]) || !isfinite(v) || v <= 0) {
		os_err("invalid value '%s' for -i (expected the time between samples: "
		       "nanoseconds, or 10ms, 500us, 1s)", s);
		return -1;
	}
	hz = 1e9 / (v * units[i].ns);
	if (hz < 1 || hz > 100000) {
		os_err("invalid value '%s' for -i (%.3g samples a second; expected 10us to 1s "
		       "between samples, nanoseconds without a unit)", s, hz);
		return -1;
	}
	*freq = (uint64_t)(hz + 0.5);
	return 0;
}

int os_opts_parse(struct os_opts *o, const char *cmd, int argc, char **argv)
{
	bool runtime_given = false, overhead_given = false, interval_given = false, permute;
	uint64_t v;
	int c, arg = 1;
	char errbuf[256];

	memset(o, 0, sizeof(*o));
	o->output = OS_DEFAULT_OUTPUT;
	o->event = "auto";
	o->freq = OS_DEFAULT_FREQ;
	o->max_overhead = OS_BUDGET_DEFAULT_PCT;
	o->min_size = OS_DEFAULT_MIN_SIZE;
	o->small_sample = OS_DEFAULT_SMALL_SAMPLE;
	o->ring_kb = OS_DEFAULT_RING_BYTES / 1024;
	o->slots = OS_DEFAULT_SLOTS;
	o->perf_pages = 256;
	o->call_graph_dwarf = true;
	o->stack_copy = OS_DEFAULT_STACK_COPY;
	o->java_objects = "hybrid";
	o->java_tlab = OS_DEFAULT_JAVA_TLAB;
	o->watch_route = WATCH_ROUTE_PERF;
	optind = 1;
	opterr = 0;
	/* attach: GNU getopt moves the PID after the options (`attach 12 -d 5`);
	 * record stops at the command */
	permute = !strcmp(cmd, "attach");
	while ((c = getopt_long(argc, argv, permute ? ":o:f:e:F:i:I:X:d:tqvh" : "+:o:f:e:F:i:I:X:d:tqvh",
				longopts, NULL)) != -1) {
		/* the element being read: argv[optind - 1] once getopt moved past
		 * it (a permuted PID lies before it), else argv[arg] */
		if (permute && optind > 1 && (c == '?' || c == ':'))
			arg = optind - 1;
		switch (c) {
		case 'o':
		case 'f':
			o->output = optarg;
			break;
		case 'i':
			if (parse_interval(optarg, &o->freq))
				return -1;
			if (interval_given || o->freq_fixed) {
				os_err("%s: -i and -F both set the rate: give one of them", cmd);
				return -1;
			}
			interval_given = true;
			o->freq_fixed = true;
			break;
		case 'I':
		case 'X':
			if (c == 'I' ? o->include != NULL : o->exclude != NULL) {
				os_err("%s: -%c given twice: one pattern (alternatives: 'a|b')", cmd, c);
				return -1;
			}
			{
				regex_t re;
				int e = regcomp(&re, optarg, REG_EXTENDED | REG_NOSUB);

				if (e) {
					regerror(e, &re, errbuf, sizeof(errbuf));
					os_err("%s: -%c '%s': %s", cmd, c, optarg, errbuf);
					return -1;
				}
				regfree(&re);
			}
			*(c == 'I' ? &o->include : &o->exclude) = optarg;
			break;
		case 't':
		case OPT_PER_THREAD:
			o->per_thread = true;
			break;
		case 'e':
			/* soft, task-clock, auto or a PMU event: checked against the
			 * kernel and libpfm4 when the sampler is made (sampler.c) */
			if (!*optarg) {
				os_err("%s: -e needs an event name", cmd);
				return -1;
			}
			if (os_sampler_check(optarg, errbuf, sizeof(errbuf)) < 0) {
				os_err("%s: %s", cmd, errbuf);
				return -1;
			}
			o->event = optarg;
			break;
		case 'F':
			if (interval_given) {
				os_err("%s: -i and -F both set the rate: give one of them", cmd);
				return -1;
			}
			if (parse_u64("-F", optarg, 1, 100000, &o->freq))
				return -1;
			o->freq_fixed = true;
			break;
		case OPT_MAX_OVERHEAD: {
			char *end;

			errno = 0;
			o->max_overhead = strtod(optarg, &end);
			if (errno || end == optarg || *end || !isfinite(o->max_overhead) ||
			    o->max_overhead < 0.1 || o->max_overhead > 50) {
				os_err("invalid value '%s' for --max-overhead (expected a percentage "
				       "of the target's CPU, 0.1 to 50)", optarg);
				return -1;
			}
			overhead_given = true;
			break;
		}
		case 'd': {
			char *end;

			errno = 0;
			o->duration = strtod(optarg, &end);
			if (errno || end == optarg || *end || !isfinite(o->duration) ||
			    !(o->duration > 0) || o->duration > OS_MAX_DURATION) {
				os_err("invalid value '%s' for -d (expected seconds > 0, at most %d)",
				       optarg, OS_MAX_DURATION);
				return -1;
			}
			break;
		}
		case OPT_MIN_SIZE:
			if (parse_u64("--min-size", optarg, 1, 1ULL << 40, &o->min_size))
				return -1;
			o->native_exact = true;
			break;
		case OPT_SMALL_SAMPLE:
			if (parse_u64("--small-sample", optarg, 0, 1ULL << 40, &o->small_sample))
				return -1;
			if (!o->small_sample)
				o->native_exact = true;
			break;
		case OPT_NATIVE_OBJECTS:
			if (strcmp(optarg, "exact") && strcmp(optarg, "sampled")) {
				os_err("--native-objects takes 'sampled' or 'exact', not '%s'", optarg);
				return -1;
			}
			o->native_exact = !strcmp(optarg, "exact");
			break;
		case OPT_RING_KB:
			if (parse_u64("--ring-kb", optarg, 16, 1 << 20, &v))
				return -1;
			if (v & (v - 1)) {
				os_err("--ring-kb must be a power of two");
				return -1;
			}
			o->ring_kb = (unsigned)v;
			break;
		case OPT_THREADS:
			if (parse_u64("--threads", optarg, 1, 65536, &v))
				return -1;
			o->slots = (unsigned)v;
			break;
		case OPT_PERF_PAGES:
			if (parse_u64("--perf-pages", optarg, 1, 1 << 16, &v))
				return -1;
			if (v & (v - 1)) {
				os_err("--perf-pages must be a power of two");
				return -1;
			}
			o->perf_pages = (unsigned)v;
			break;
		case OPT_CALL_GRAPH:
			if (!strcmp(optarg, "dwarf")) {
				o->call_graph_dwarf = true;
			} else if (!strncmp(optarg, "dwarf,", 6)) {
				if (parse_u64("--call-graph dwarf,SIZE", optarg + 6, 8,
					      OS_MAX_STACK_COPY, &v))
					return -1;
				if (v % 8) {
					os_err("--call-graph dwarf,SIZE: SIZE must be a multiple of 8, "
					       "not %llu", (unsigned long long)v);
					return -1;
				}
				o->call_graph_dwarf = true;
				o->stack_copy = (unsigned)v;
			} else if (!strcmp(optarg, "fp")) {
				o->call_graph_dwarf = false;
			} else {
				os_err("--call-graph takes 'dwarf', 'dwarf,SIZE' or 'fp', not '%s'",
				       optarg);
				return -1;
			}
			break;
		case OPT_JAVA_OBJECTS:
			if (strcmp(optarg, "exact") && strcmp(optarg, "hybrid") &&
			    strcmp(optarg, "sampled")) {
				os_err("--java-objects takes 'hybrid', 'exact' or 'sampled', not '%s'",
				       optarg);
				return -1;
			}
			o->java_objects = optarg;
			break;
		case OPT_JAVA_TLAB:
			if (parse_u64("--java-tlab", optarg, OS_JAVA_TLAB_MIN, OS_JAVA_TLAB_MAX,
				      &o->java_tlab))
				return -1;
			break;
		case OPT_PROGRESS:
			o->progress = true;
			break;
		case OPT_NO_MMAP:
			o->no_mmap = true;
			break;
		case OPT_DEBUG_LINES:
			o->debug_lines = true;
			break;
		case OPT_JAVA_FP:
			o->java_fp = true;
			break;
		case OPT_JIT_THREADS:
			o->jit_threads = true;
			break;
		case OPT_RUNTIME:
			if (parse_runtime(o, optarg, "--runtime"))
				return -1;
			runtime_given = true;
			break;
		case OPT_REPLICAS:
			o->replicas = true;
			break;
		case OPT_NUMA:
			o->numa = true;
			break;
		case OPT_WATCH_ROUTE: {
			int route = watch_route_parse(optarg);

			if (route < 0) {
				os_err("--watch-route takes 'perf' or 'ptrace', not '%s'", optarg);
				return -1;
			}
			o->watch_route = route;
			break;
		}
		/* analyses of later issues: an error until they land, so that
		 * no run is taken believing they were done */
		case OPT_LIFETIMES:
			o->lifetimes = true;
			break;
		case OPT_REUSE:
			o->reuse = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'v':
			o->verbose++;
			os_verbose = o->verbose;
			break;
		case 'h':
			os_opts_usage(cmd);
			return -2;
		case '?':
		default:
			/* argv[arg]: the element getopt was reading (no permutation:
			 * "+"; optind moves past a group of short options only at its
			 * end), so the message names what the user typed */
			if (!strncmp(argv[arg], "--", 2) && strchr(argv[arg], '='))
				os_err("%s: option '%s' is unknown or takes no value — see "
				       "'objscope %s --help'", cmd, argv[arg], cmd);
			else if (!strncmp(argv[arg], "--", 2))
				os_err("%s: unknown or ambiguous option '%s' — see 'objscope %s "
				       "--help'", cmd, argv[arg], cmd);
			else
				os_err("%s: unknown option '-%c' — see 'objscope %s --help'", cmd,
				       optopt, cmd);
			return -1;
		case ':':
			os_err("%s: option '%s' needs a value", cmd, argv[arg]);
			return -1;
		}
		arg = optind;
	}
	if (o->freq_fixed && overhead_given) {
		os_err("%s: -F fixes the rate, --max-overhead steers it: give one of them", cmd);
		return -1;
	}
	if (o->freq_fixed)
		o->max_overhead = 0;
	/* both trap through the debug registers (any route, the target's own
	 * breakpoints too): where breakpoints never fire nothing would be
	 * measured. Said before the command runs or the target is joined. */
	if ((o->reuse || o->replicas) && watch_fires() == -EIO) {
		os_err("%s: %s: %s", cmd, o->reuse ? "--reuse" : "--replicas", WATCH_NO_FIRE_REASON);
		return -1;
	}
	/* the environment's choice, when the command line made none */
	if (!runtime_given && getenv(OS_RUNTIME_ENV) &&
	    parse_runtime(o, getenv(OS_RUNTIME_ENV), "$" OS_RUNTIME_ENV))
		return -1;
	return optind;
}
