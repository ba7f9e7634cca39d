/* java.c - end-to-end tests of `objscope record -- java ...` (HotSpot launch
 * mode) on tests/java/ObjFixture.java, a workload with a planted answer:
 * makeRandom's arrays are read at random (most samples), makeSequential's
 * in order, makeShared is reached from two callers; garbage churn and
 * System.gc() copy and compact the arrays while they are read.
 * Run from the repository root after `make all build/java/ObjFixture.class`.
 */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "tests/e2e/helpers.h"
#include "tests/e2e/jdk.h"
#include "tests/e2e/stats.h"

#define JAVA_CP "build/java"
/* The fixture allocates 12000 tracked arrays in a burst at start-up; with
 * the default 1 MiB rings a collector starved of CPU (2 cores, the JVM's
 * compiler and GC threads busy) drops some of those events (counted in
 * dropped_events), which the planted-answer checks are not about. */
#define RING "--ring-kb", "4096"
#define STACK_DEPTH 3 /* the allocating method must be the leaf or near it */

static char *tmp;

static void setup(void)
{
	cr_assert(access(JAVA_CP "/ObjFixture.class", R_OK) == 0,
		  "%s/ObjFixture.class is missing: run `make e2e` (javac from "
		  "openjdk-17-jdk-headless)",
		  JAVA_CP);
	tmp = e2e_suite_setup();
}

static void teardown(void)
{
	e2e_suite_teardown(&tmp);
}

TestSuite(e2e_java, .init = setup, .fini = teardown, .timeout = 300);

/* Runs the fixture with and without objscope (extra record options in
 * opts; gc_flag2 a second JVM option, "-Xshare:auto" when none is needed):
 * same stdout, stderr and exit status. Returns the JSON report. */
static json_object *record_argv(const char *const argv[], const char *const opts[]);

/* The java the planted answers run: "java" (the JDK 17 of PATH), or a
 * JDK of another version (use_jdk). */
static const char *java_bin = "java";

/* Runs the rest of the test on JDK major, or skips it saying why. */
static void use_jdk(int major)
{
	static char bin[600];

	if (!e2e_find_jdk(major, bin, sizeof(bin)))
		cr_skip_test("no JDK %d found (set OBJSCOPE_JDK%d to a JDK's home, or install one "
			     "under /usr/lib/jvm)", major, major);
	java_bin = bin;
	e2e_diag("JDK %d: %s", major, bin);
}

static json_object *record_java(const char *gc_flag, const char *gc_flag2,
				const char *const opts[])
{
	const char *argv[] = { java_bin, gc_flag, gc_flag2, "-cp", JAVA_CP, "ObjFixture", NULL };

	return record_argv(argv, opts);
}

static json_object *record_argv(const char *const argv[], const char *const opts[])
{
	char *profile = e2e_path(tmp, "java.data");
	json_object *report;

	cr_assert_not_null(profile);
	report = e2e_record_unchanged(tmp, profile, opts, argv, true);
	free(profile);
	return report;
}

/* record_java with `-q --ring-kb 4096` and the options in extra, run
 * again with rings four and eight times larger (three runs at most) while
 * allocation events were dropped: a collector that falls behind (a loaded
 * machine, make asan) drops some of the start-up burst's events, and the
 * arrays whose allocations it lost are not makeRandom's context (exact
 * mode, G1: --ring-kb 256 dropped 5,186 events and left makeRandom a share
 * of 0.56, below the 0.6 asserted; 0.91-0.94 without drops), which the
 * planted-answer checks are not about. Returns the last run's report (the
 * drops of the runs before logged). */
static json_object *record_java_complete(const char *gc_flag, const char *gc_flag2,
					 const char *const extra[])
{
	static const char *const rings[] = { "4096", "16384", "32768" };
	json_object *report = NULL;

	for (size_t k = 0; k < sizeof(rings) / sizeof(rings[0]); k++) {
		const char *opts[16] = { "-q", "--ring-kb", rings[k] };
		size_t n = 3;
		int64_t dropped;

		for (size_t i = 0; extra[i] && n < 15; i++)
			opts[n++] = extra[i];
		opts[n] = NULL;
		if (report)
			json_object_put(report);
		report = record_java(gc_flag, gc_flag2, opts);
		dropped = e2e_get_int(e2e_get(report, "meta"), "dropped_events");
		if (dropped <= 0)
			break;
		e2e_diag("%s: %lld allocation events dropped with --ring-kb %s", gc_flag,
			 (long long)dropped, rings[k]);
	}
	return report;
}

/* Whether frame string f is method name, with or without its source line
 * ("Cls.m" or "Cls.m(Cls.java:12)"). */
static bool method_is(const char *f, const char *name)
{
	size_t n = strlen(name);

	return f && strncmp(f, name, n) == 0 && (f[n] == 0 || f[n] == '(');
}

static int frame_is(json_object *obj, size_t i, const char *name)
{
	json_object *st = e2e_get(obj, "alloc_stack");

	if (!st || i >= json_object_array_length(st))
		return 0;
	return method_is(e2e_frame_text(st, i), name);
}

/* The perf map the JVM wrote at exit was read and removed. */
static void check_no_perf_map(json_object *report)
{
	json_object *pids = e2e_get(e2e_get(report, "meta"), "pids");
	char path[64];

	cr_assert(pids && json_object_array_length(pids) > 0, "report has no pids");
	for (size_t i = 0; i < json_object_array_length(pids); i++) {
		snprintf(path, sizeof(path), "/tmp/perf-%d.map",
			 json_object_get_int(json_object_array_get_idx(pids, i)));
		cr_expect(access(path, F_OK) < 0, "%s was left behind", path);
	}
}

static bool stack_has_any(json_object *obj, const char *const names[])
{
	json_object *st = e2e_get(obj, "alloc_stack");

	for (size_t i = 0; st && i < json_object_array_length(st); i++) {
		const char *f = e2e_frame_text(st, i);

		for (size_t k = 0; f && names[k]; k++)
			if (method_is(f, names[k]))
				return true;
	}
	return false;
}

/* The JDK's start-up code runs interpreted inside JNI_CreateJavaVM, before
 * the JVM event: the preload reads the interpreter's bounds while it runs
 * and the collector names the Method* words once vmStructs is read. Every
 * context allocated there (objects and native memory, sampled or not) has
 * named frames, none "Interpreter"; before, 18 of 115 such contexts of this
 * fixture had one. */
static void check_startup_paths(json_object *objects)
{
	static const char *const interp[] = { "Interpreter", NULL };
	int startup = 0, named = 0, unnamed = 0;
	char buf[2048];

	for (size_t i = 0; i < json_object_array_length(objects); i++) {
		json_object *o = json_object_array_get_idx(objects, i);

		if (!e2e_stack_has(o, "JNI_CreateJavaVM", 256))
			continue;
		startup++;
		if (e2e_stack_has(o, "java.lang.System.initPhase1", 256) ||
		    e2e_stack_has(o, "java.lang.System.initPhase2", 256))
			named++;
		if (stack_has_any(o, interp)) {
			unnamed++;
			e2e_diag("start-up path with an unnamed interpreted frame: %s",
				 e2e_stack_str(o, buf, sizeof(buf)));
		}
	}
	cr_log_info("start-up contexts: %d, %d through System.initPhase1/2, %d with Interpreter",
		    startup, named, unnamed);
	cr_expect_gt(named, 0, "no start-up context names System.initPhase1/2 (of %d)", startup);
	cr_expect_eq(unnamed, 0, "%d of %d start-up contexts have an \"Interpreter\" frame",
		     unnamed, startup);
}

/* Launch mode runs the JVM without -XX:+PreserveFramePointer (its CPU cost
 * is 2-4%): allocation paths walk JIT frames by their code blobs' frame
 * sizes (runtimes/hotspot/hs_frames.h). Java objects' paths, and native allocations
 * made under compiled frames (tests/java/JitNative.java: zlib's callocs
 * under Deflater.init, called from the compiled JitNative.round), must
 * reach the thread's entry through every Java frame, interpreted ones named
 * (native paths carry Method* words too). With libunwind alone the native
 * paths stopped at JitNative.round (58670 of 59310 allocations); with plain
 * pcs for interpreted frames main showed as "Interpreter". */
Test(e2e_java, allocation_paths_without_frame_pointers)
{
	const char *flags[] = { "java", "-XX:+PrintFlagsFinal", "-version", NULL };
	const char *jitnative[] = { "java", "-Xshare:auto", "-cp", JAVA_CP, "JitNative", NULL };
	const char *entries[] = { "JavaMain", "ThreadJavaMain", "start_thread", NULL };
	const char *opts[] = { "-q", RING, NULL };
	/* the tracked callocs only: zlib's smaller blocks sampled by bytes sit
	 * deeper (zcalloc, deflateInit2_) and count their estimates */
	const char *zopts[] = { "-q", RING, "--small-sample", "0", NULL };
	char *profile = e2e_path(tmp, "flags.data"), buf[2048];
	json_object *report, *objects, *top;
	struct e2e_result r;
	int64_t under = 0, whole = 0, ctor = 0;

	cr_assert_eq(e2e_record(tmp, profile, opts, flags, &r), 0, "cannot run objscope record");
	cr_assert_eq(r.status, 0, "java -version exited %d: %s", r.status, r.err);
	cr_assert(strstr(r.out, "PreserveFramePointer"), "no PreserveFramePointer in the flags");
	cr_expect(!strstr(r.out, "bool PreserveFramePointer                     = true"),
		  "launch mode turned -XX:+PreserveFramePointer on");
	e2e_result_free(&r);
	/* ... unless asked to */
	{
		const char *fp_opts[] = { "-q", "--java-frame-pointers", NULL };

		cr_assert_eq(e2e_record(tmp, profile, fp_opts, flags, &r), 0,
			     "cannot run objscope record");
		cr_expect(strstr(r.out, "bool PreserveFramePointer                     = true"),
			  "--java-frame-pointers did not turn -XX:+PreserveFramePointer on");
		e2e_result_free(&r);
	}
	free(profile);

	report = record_java("-XX:+UseG1GC", "-Xshare:auto", opts);
	objects = e2e_get(report, "objects");
	cr_assert(objects && json_object_array_length(objects) > 0, "objects[] is empty");
	top = json_object_array_get_idx(objects, 0);
	cr_expect(frame_is(top, 0, "ObjFixture.makeRandom") &&
			  e2e_stack_has(top, "ObjFixture.main", 4) && stack_has_any(top, entries),
		  "top object's path does not run from makeRandom through main to the thread "
		  "entry: %s", e2e_stack_str(top, buf, sizeof(buf)));
	check_startup_paths(objects);
	json_object_put(report);

	report = record_argv(jitnative, zopts);
	objects = e2e_get(report, "objects");
	cr_assert(objects, "no objects[]");
	for (size_t i = 0; i < json_object_array_length(objects); i++) {
		json_object *o = json_object_array_get_idx(objects, i);
		int64_t n = e2e_get_int(o, "allocations");

		if (!e2e_stack_has(o, "Java_java_util_zip_Deflater_init", 4) ||
		    !e2e_stack_has(o, "JitNative.round", 8))
			continue;
		under += n;
		/* the native method's Java caller, whether it ran interpreted or
		 * inlined into the compiled round(): with compiled frames named by
		 * the perf map, 64,710 of 100,000 paths lacked it */
		if (frame_is(o, 2, "java.util.zip.Deflater.init") &&
		    frame_is(o, 3, "java.util.zip.Deflater.<init>"))
			ctor += n;
		/* main is interpreted (or OSR-compiled): named either way */
		if (stack_has_any(o, entries) && e2e_stack_has(o, "JitNative.main", 16))
			whole += n;
		else
			e2e_diag("cut or unnamed path: %s", e2e_stack_str(o, buf, sizeof(buf)));
	}
	cr_log_info("zlib allocations under JitNative.round: %lld, %lld with whole paths",
		    (long long)under, (long long)whole);
	/* 20000 rounds, 3-5 tracked callocs each */
	cr_expect_gt(under, 40000, "only %lld zlib allocations under JitNative.round",
		     (long long)under);
	cr_expect_eq(whole, under, "%lld of %lld paths cut short or without JitNative.main",
		     (long long)(under - whole),
		     (long long)under);
	cr_expect_eq(ctor, under, "%lld of %lld paths without Deflater.<init> above the native "
		     "method", (long long)(under - ctor), (long long)under);
	json_object_put(report);
}

/* The planted answer under one collector, exact mode (every object seen:
 * exact counts). */
static void planted_answer(const char *gc_flag, const char *gc_flag2)
{
	const char *exact[] = { "--java-objects", "exact", NULL };
	json_object *report = record_java_complete(gc_flag, gc_flag2, exact), *meta, *objects, *top;
	int64_t heap, attributed, jheap, jattr;
	char buf[2048];

	meta = e2e_get(report, "meta");
	heap = e2e_get_int(meta, "samples_heap");
	attributed = e2e_get_int(meta, "samples_attributed");
	jheap = e2e_get_int(meta, "samples_java_heap");
	jattr = e2e_get_int(meta, "samples_java_attributed");
	cr_log_info("%s: %lld samples, %lld on the heap, %lld attributed; Java heap %lld, %lld on "
		    "Java objects; %lld allocation events dropped", gc_flag,
		    (long long)e2e_get_int(meta, "samples_total"), (long long)heap,
		    (long long)attributed, (long long)jheap, (long long)jattr,
		    (long long)e2e_get_int(meta, "dropped_events"));
	/* Statistical assertions (tests/README.md), each false-failure chance
	 * <= 1e-4 (e2e_binom_needed): attributed >= 0.8 of the heap samples
	 * and Java objects >= 0.8 of the Java heap's (true >= 0.9), the Java
	 * heap >= 0.5 of the heap (true >= 0.8), makeRandom >= 0.6 of the
	 * attributed (true >= 0.75: more than half, it ranks first); measured
	 * in the audit table. One run gives ~700 heap samples here, 4 times
	 * the most these need; a run with fewer fails with the counts it had. */
	cr_assert_gt(heap, 0, "no heap samples");
	/* 94-98% with every collector (up to 99.4-99.9%, ASan too);
	 * lost moves gave 65-74% (Parallel). Once (CI, ASan build, G1) 348 of
	 * 689: the counters and notes say which moves or collections were
	 * missing when it happens again. */
	if (attributed * 10 < heap * 8) {
		json_object *k = e2e_get(meta, "counters");

		cr_log_error("%s: attribution low; counters %s; notes %s", gc_flag,
			     k ? json_object_to_json_string(k) : "none",
			     json_object_to_json_string(e2e_get(meta, "notes")));
	}
	e2e_assert_share_ge(attributed, heap, 0.8, 0.9, "attributed heap samples");
	cr_expect_gt(e2e_get_int(meta, "gc_count"), 0, "%s: no collection seen", gc_flag);
	/* the fixture's reads land in the Java heap, on tracked arrays */
	e2e_assert_share_ge(jheap, heap, 0.5, 0.8, "heap samples in the Java heap");
	e2e_assert_share_ge(jattr, jheap, 0.8, 0.9, "Java-heap samples on Java objects");

	objects = e2e_get(report, "objects");
	cr_assert(objects && json_object_array_length(objects) > 0, "objects[] is empty");
	top = json_object_array_get_idx(objects, 0);
	cr_log_info("%s: top object %lld samples, share %.3f", gc_flag,
		    (long long)e2e_get_int(top, "samples"), e2e_get_double(top, "share"));
	cr_expect(e2e_stack_has(top, "ObjFixture.makeRandom", STACK_DEPTH),
		  "%s: top object is not from ObjFixture.makeRandom: %s", gc_flag,
		  e2e_stack_str(top, buf, sizeof(buf)));
	e2e_assert_share_ge(e2e_get_int(top, "samples"), attributed, 0.6, 0.75,
			    "makeRandom's share of the attributed samples");
	cr_expect_str_eq(json_object_get_string(e2e_get(top, "type")), "long[]");
	/* the path starts at the Java method, not in libjvm's allocation code,
	 * and the arrays allocated by interpreted, C1 and C2 code are one
	 * context: build() makes exactly ARRAYS (6000) of them */
	cr_expect(frame_is(top, 0, "ObjFixture.makeRandom"), "%s: alloc_stack[0] is not "
		  "ObjFixture.makeRandom: %s", gc_flag, e2e_stack_str(top, buf, sizeof(buf)));
	if (e2e_get_int(meta, "dropped_events") == 0)
		cr_expect_eq(e2e_get_int(top, "allocations"), 6000, "%s: %lld allocations", gc_flag,
			     (long long)e2e_get_int(top, "allocations"));
	check_no_perf_map(report);
	/* the JVM's own native memory is named, not "(unknown type)": class
	 * loading commits metaspace in every run */
	{
		size_t meta_ctx = 0;

		for (size_t i = 0; i < json_object_array_length(objects); i++) {
			const char *t = json_object_get_string(
				e2e_get(json_object_array_get_idx(objects, i), "type"));

			meta_ctx += t && !strcmp(t, "[JVM metaspace: class metadata]");
		}
		cr_expect_gt(meta_ctx, 0, "%s: no context typed as the JVM's metaspace", gc_flag);
	}
	json_object_put(report);
}

Test(e2e_java, g1)
{
	planted_answer("-XX:+UseG1GC", "-Xshare:auto");
}

Test(e2e_java, parallel)
{
	/* the default number of GC workers (2 here): ParallelCompact fills
	 * shadow regions and copies them back, reusing them within a pause */
	planted_answer("-XX:+UseParallelGC", "-Xshare:auto");
}

Test(e2e_java, serial)
{
	planted_answer("-XX:+UseSerialGC", "-Xshare:auto");
}

/* The same planted answers on JDK 25 (its layouts: runtimes/hotspot/hs_layout.h),
 * compact object headers (a product flag there) with Parallel. */
Test(e2e_java, g1_jdk25)
{
	use_jdk(25);
	planted_answer("-XX:+UseG1GC", "-Xshare:auto");
}

Test(e2e_java, parallel_compact_headers_jdk25)
{
	use_jdk(25);
	planted_answer("-XX:+UseParallelGC", "-XX:+UseCompactObjectHeaders");
}

Test(e2e_java, serial_jdk25)
{
	use_jdk(25);
	planted_answer("-XX:+UseSerialGC", "-Xshare:auto");
}

/* The samples of the long[] objects allocated under site (their
 * alloc_stack's first frame; other: those allocated elsewhere) that were
 * accessed from DeadSiteFixture.main (its read loops), of one report. */
static int64_t main_samples_of(json_object *objects, const char *site, bool other)
{
	int64_t n = 0;

	for (size_t i = 0; i < json_object_array_length(objects); i++) {
		json_object *o = json_object_array_get_idx(objects, i), *acc;
		const char *type = json_object_get_string(e2e_get(o, "type"));

		if (!type || strcmp(type, "long[]") || (frame_is(o, 0, site) != 0) == other)
			continue;
		acc = e2e_get(o, "accesses");
		for (size_t k = 0; acc && k < json_object_array_length(acc); k++) {
			json_object *a = json_object_array_get_idx(acc, k);
			json_object *st = e2e_get(a, "stack");

			if (st && json_object_array_length(st) &&
			    method_is(e2e_frame_text(st, 0), "DeadSiteFixture.main"))
				n += e2e_get_int(a, "samples");
		}
	}
	return n;
}

/* A dead site's objects must not rank (tests/java/DeadSiteFixture.java):
 * its arrays are replaced by liveSite's of the same class and size and the
 * heap compacted, then only the live ones are read. Of the samples main's
 * reads take on long[] arrays, at most 1% may be charged to another site
 * than liveSite: deadSite's, or a wrong one (a profiler that kept the dead
 * objects charged deadSite 33-60%; one that named them by a stale perf
 * map, java.lang.String.isLatin1 36 of 601). Gathers until the reads have 300
 * samples (rounds doubled, three runs at most). main reads the dead arrays
 * 4096 times before they die, of ROUNDS * 4096 reads (ROUNDS >= 6000): a
 * true share p <= 1.7e-4, so more than 1% of n >= 300 samples (4 or more)
 * comes by chance with P(X >= 4 | n = 300, p = 2.5e-4) < 1e-8. */
static void dead_site(const char *gc_flag)
{
	const char *opts[] = { "-q", RING, "--java-objects", "exact", NULL };
	json_object *report = NULL, *objects, *top;
	int64_t live = 0, dead = 0;
	char rounds[16], buf[2048];

	for (int k = 0, r = 6000; k < 3 && live < 300; k++, r *= 2) {
		const char *argv[] = { java_bin, gc_flag, "-cp", JAVA_CP, "DeadSiteFixture",
				       rounds, NULL };

		snprintf(rounds, sizeof(rounds), "%d", r);
		if (report)
			json_object_put(report);
		report = record_argv(argv, opts);
		objects = e2e_get(report, "objects");
		cr_assert(objects && json_object_array_length(objects) > 0, "objects[] is empty");
		live = main_samples_of(objects, "DeadSiteFixture.liveSite", false);
		dead = main_samples_of(objects, "DeadSiteFixture.liveSite", true);
		cr_log_info("%s, %s rounds: main's reads: %lld samples on liveSite's arrays, %lld on "
			    "other long[] arrays", gc_flag, rounds, (long long)live, (long long)dead);
	}
	cr_assert_geq(live, 300, "%s: only %lld samples of main's reads on liveSite's arrays",
		      gc_flag, (long long)live);
	top = json_object_array_get_idx(objects, 0);
	cr_expect(frame_is(top, 0, "DeadSiteFixture.liveSite"), "%s: the top object is not "
		  "liveSite's: %s", gc_flag, e2e_stack_str(top, buf, sizeof(buf)));
	cr_expect_leq(dead * 100, live + dead, "%s: %lld of %lld samples of main's reads charged "
		      "to another site than liveSite", gc_flag, (long long)dead,
		      (long long)(live + dead));
	json_object_put(report);
}

Test(e2e_java, dead_site_does_not_rank)
{
	dead_site("-XX:+UseG1GC");
}

Test(e2e_java, dead_site_does_not_rank_jdk25)
{
	use_jdk(25);
	dead_site("-XX:+UseG1GC");
}

/* One site reached from two callers: two contexts, both named; Java
 * threads and GC threads classified. */
Test(e2e_java, two_callers_and_threads)
{
	const char *opts[] = { "-q", RING, "--java-objects", "exact", NULL };
	json_object *report = record_java("-XX:+UseG1GC", "-Xshare:auto", opts), *objects,
											   *threads;
	int one = 0, two = 0, gc = 0, java = 0;

	objects = e2e_get(report, "objects");
	cr_assert(objects, "no objects[]");
	for (size_t i = 0; i < json_object_array_length(objects); i++) {
		json_object *o = json_object_array_get_idx(objects, i);

		if (!frame_is(o, 0, "ObjFixture.makeShared"))
			continue;
		one += frame_is(o, 1, "ObjFixture.callerOne");
		two += frame_is(o, 1, "ObjFixture.callerTwo");
	}
	cr_expect_eq(one, 1, "%d contexts makeShared <- callerOne", one);
	cr_expect_eq(two, 1, "%d contexts makeShared <- callerTwo", two);

	threads = e2e_get(report, "threads");
	cr_assert(threads, "no threads[]");
	for (size_t i = 0; i < json_object_array_length(threads); i++) {
		const char *kind =
			json_object_get_string(e2e_get(json_object_array_get_idx(threads, i), "kind"));

		gc += kind && !strcmp(kind, "gc");
		java += kind && !strcmp(kind, "java");
	}
	cr_expect_gt(gc, 0, "no GC thread classified");
	cr_expect_gt(java, 0, "no Java thread classified");
	json_object_put(report);
}

/* Sampled mode: objects seen at TLAB refills, estimates reweighted. */
Test(e2e_java, sampled_mode)
{
	const char *opts[] = { "-q", "--java-objects", "sampled", NULL };
	json_object *report = record_java("-XX:+UseG1GC", "-Xshare:auto", opts), *c;

	c = e2e_get(e2e_get(report, "meta"), "counters");
	cr_assert_not_null(c, "no meta.counters");
	cr_expect_gt(e2e_get_int(c, "objects_seen"), 0);
	cr_expect_geq(e2e_get_int(c, "objects_estimated"), e2e_get_int(c, "objects_seen"),
		      "sampled mode estimates at least the objects it saw");
	json_object_put(report);
}

static bool has_note(json_object *report, const char *what)
{
	return e2e_note(report, what) != NULL;
}

/* One count per sample: the objects' figures (exact samples plus estimated
 * shares, less what class-only objects gave) add up to the attributed
 * samples. */
static void check_one_count(json_object *report)
{
	json_object *objects = e2e_get(report, "objects");
	int64_t attr = e2e_get_int(e2e_get(report, "meta"), "samples_attributed");
	double sum = 0;

	for (size_t i = 0; objects && i < json_object_array_length(objects); i++)
		sum += e2e_get_double(json_object_array_get_idx(objects, i), "samples_estimated");
	cr_log_info("objects' figures add up to %.2f, %lld samples attributed", sum,
		    (long long)attr);
	cr_expect(sum > attr - 0.5 - attr * 1e-6 && sum < attr + 0.5 + attr * 1e-6,
		  "the objects' figures add up to %.2f, %lld samples attributed", sum,
		  (long long)attr);
}

/* GC threads' accesses are apart from the program's: every
 * access path run by a GC worker (GangWorker::loop) ends in the GC-thread
 * frame. Returns the samples so marked. */
static int64_t check_gc_marked(json_object *report)
{
	json_object *objects = e2e_get(report, "objects");
	int64_t marked = 0;

	for (size_t i = 0; objects && i < json_object_array_length(objects); i++) {
		json_object *acc = e2e_get(json_object_array_get_idx(objects, i), "accesses");

		for (size_t k = 0; acc && k < json_object_array_length(acc); k++) {
			json_object *a = json_object_array_get_idx(acc, k), *st = e2e_get(a, "stack");
			size_t n = st ? json_object_array_length(st) : 0;
			const char *last = n ? e2e_frame_text(st, n - 1) : NULL;
			bool gc_mark = last && strstr(last, "[GC thread"), worker = false;

			for (size_t j = 0; j < n; j++) {
				const char *f = e2e_frame_text(st, j);

				worker |= f && strstr(f, "GangWorker::loop") != NULL;
			}
			if (gc_mark)
				marked += e2e_get_int(a, "samples");
			cr_expect(gc_mark || !worker,
				  "a GC worker's access path without the GC-thread frame");
		}
	}
	return marked;
}

/* Whether object o's estimated-path kind ("site", "class_only") is kind. */
static bool path_kind_is(json_object *o, const char *kind)
{
	json_object *k = e2e_get(e2e_get(o, "path"), "kind");

	return k && !strcmp(json_object_get_string(k), kind);
}

/* The default mode, hybrid (TLABs of random size, mean 32 KiB): the fixture's
 * 4 KiB arrays are seen with probability ~1/8 and weighted ~8; ranked by the
 * Horvitz-Thompson estimates, the planted answer still comes out. */
Test(e2e_java, hybrid_default_planted_answer)
{
	/* hybrid objects, the default; a fixed rate: the budget weighs each
	 * sample by its interval's share (os_attrib.tw), below 1 in a warm-up
	 * sampled in full, so an estimate may fall under the raw count where a
	 * sample is dear (CI under ASan on a Firecracker guest: 6 objects) */
	const char *rate[] = { "-F", "1000", NULL };
	json_object *report = record_java_complete("-XX:+UseG1GC", "-Xshare:auto", rate), *meta,
		    *objects, *top, *c;
	double est_attr, est_jattr, prev = -1;
	int64_t jheap, seen, estimated;
	char buf[2048];

	meta = e2e_get(report, "meta");
	c = e2e_get(meta, "counters");
	cr_assert_not_null(c, "no meta.counters");
	cr_assert(e2e_get(meta, "samples_attributed_estimated") != NULL,
		  "meta.samples_attributed_estimated is null or missing");
	est_attr = e2e_get_double(meta, "samples_attributed_estimated");
	est_jattr = e2e_get_double(meta, "samples_java_attributed_estimated");
	jheap = e2e_get_int(meta, "samples_java_heap");
	seen = e2e_get_int(c, "objects_seen");
	estimated = e2e_get_int(c, "objects_estimated");
	cr_log_info("hybrid: samples attributed %lld (est. %.0f), Java heap %lld, Java attributed "
		    "%lld (est. %.0f); objects seen %lld, estimated %lld",
		    (long long)e2e_get_int(meta, "samples_attributed"), est_attr, (long long)jheap,
		    (long long)e2e_get_int(meta, "samples_java_attributed"), est_jattr,
		    (long long)seen, (long long)estimated);
	cr_assert_gt(jheap, 0, "no Java-heap samples");
	cr_expect_geq(est_attr, (double)e2e_get_int(meta, "samples_java_attributed"),
		      "estimates are never below the counts");
	cr_expect_geq(est_jattr * 2, (double)jheap,
		      "estimated attributed Java-heap samples %.0f below half of %lld", est_jattr,
		      (long long)jheap);
	cr_expect_gt(estimated, seen, "small objects weigh more than 1: %lld seen, %lld estimated",
		     (long long)seen, (long long)estimated);
	cr_expect(has_note(report, "hybrid objects: TLABs of random size, mean 32768 bytes"),
		  "no note naming hybrid mode");
	cr_expect(has_note(report, "Horvitz-Thompson"), "no note on the estimates");

	objects = e2e_get(report, "objects");
	cr_assert(objects && json_object_array_length(objects) > 0, "objects[] is empty");
	for (size_t i = 0; i < json_object_array_length(objects); i++) {
		json_object *o = json_object_array_get_idx(objects, i);
		double e = e2e_get_double(o, "samples_estimated");

		cr_expect(prev < 0 || e <= prev, "object %zu: estimate %.1f above the previous %.1f",
			  i + 1, e, prev);
		/* a class-only context keeps what it did not share out (path) */
		if (!path_kind_is(o, "class_only"))
			cr_expect_geq(e, (double)e2e_get_int(o, "samples"), "object %zu", i + 1);
		prev = e;
	}
	top = json_object_array_get_idx(objects, 0);
	cr_expect(frame_is(top, 0, "ObjFixture.makeRandom"),
		  "top object by estimate is not from ObjFixture.makeRandom: %s",
		  e2e_stack_str(top, buf, sizeof(buf)));
	cr_expect_geq(e2e_get_double(top, "share"), 0.6, "estimated share of makeRandom is %.3f",
		      e2e_get_double(top, "share"));
	cr_log_info("hybrid: top object %lld samples, est. %.0f, share %.3f, allocations %lld",
		    (long long)e2e_get_int(top, "samples"), e2e_get_double(top, "samples_estimated"),
		    e2e_get_double(top, "share"), (long long)e2e_get_int(top, "allocations"));
	/* Both 6,000-array sites are estimated near 6,000: with one fixed TLAB
	 * size the TLAB ends locked to the fixture's allocation cycle, one site
	 * was never seen and the other counted twice; random TLAB lengths break
	 * that, and the per-thread correction of the lengths (hs_dither) keeps
	 * equal 4 KiB arrays from being estimated ~10% low. One standard error
	 * of the estimate is ~3.4% here (p = 1/8 over 6,000 arrays): the bound
	 * is 4.4 of them. */
	{
		const char *sites[] = { "ObjFixture.makeRandom", "ObjFixture.makeSequential" };

		for (int k = 0; k < 2; k++) {
			int64_t allocs = 0;

			for (size_t i = 0; i < json_object_array_length(objects); i++) {
				json_object *o = json_object_array_get_idx(objects, i);

				if (frame_is(o, 0, sites[k]) &&
				    e2e_stack_has(o, "ObjFixture.build", STACK_DEPTH))
					allocs += e2e_get_int(o, "allocations");
			}
			cr_log_info("hybrid: %s estimated %lld allocations (6000 made)", sites[k],
				    (long long)allocs);
			cr_expect(allocs >= 5100 && allocs <= 6900,
				  "%s: estimated %lld allocations, 6000 were made", sites[k],
				  (long long)allocs);
		}
	}
	cr_log_info("hybrid: %lld samples of GC threads' accesses, apart",
		    (long long)check_gc_marked(report));
	check_one_count(report);
	check_no_perf_map(report);
	json_object_put(report);
}

/* The perf map launch mode has the JVM write at exit is removed once read;
 * one the user asked for stays. The short `java -version` exits before the
 * collector reads its JVM event: deciding there whether the map was the
 * user's (it existed by then) left 2 maps per test run in /tmp. */
static int version_map(const char *const argv[], int *pid)
{
	const char *opts[] = { "-q", NULL };
	char *profile = e2e_path(tmp, "version.data"), msg[512], path[64];
	struct e2e_result r;
	json_object *report, *pids;
	int left;

	cr_assert_eq(e2e_record(tmp, profile, opts, argv, &r), 0, "cannot run objscope record");
	cr_assert_eq(r.status, 0, "%s exited %d: %s", argv[1], r.status, r.err);
	e2e_result_free(&r);
	report = e2e_report_json(tmp, profile, msg, sizeof(msg));
	cr_assert_not_null(report, "%s", msg);
	pids = e2e_get(e2e_get(report, "meta"), "pids");
	cr_assert(pids && json_object_array_length(pids) == 1, "report has no single pid");
	*pid = json_object_get_int(json_object_array_get_idx(pids, 0));
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", *pid);
	left = access(path, F_OK) == 0;
	unlink(path);
	json_object_put(report);
	free(profile);
	return left;
}

Test(e2e_java, perf_map_removed_unless_asked)
{
	const char *plain[] = { "java", "-version", NULL };
	const char *asked[] = { "java", "-XX:+UnlockDiagnosticVMOptions",
				"-XX:+DumpPerfMapAtExit", "-version", NULL };
	const char *undone[] = { "java", "-XX:+UnlockDiagnosticVMOptions",
				 "-XX:+DumpPerfMapAtExit", "-XX:-DumpPerfMapAtExit", "-version",
				 NULL };
	int pid;

	for (int i = 0; i < 3; i++)
		cr_expect(!version_map(plain, &pid), "run %d: /tmp/perf-%d.map was left behind",
			  i + 1, pid);
	cr_expect(version_map(asked, &pid), "the map asked for on the command line "
		  "(/tmp/perf-%d.map) was removed", pid);
	cr_expect(!version_map(undone, &pid), "/tmp/perf-%d.map was left behind although the "
		  "command line turned DumpPerfMapAtExit off again", pid);
	setenv("JAVA_TOOL_OPTIONS", "-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit", 1);
	cr_expect(version_map(plain, &pid), "the map asked for in JAVA_TOOL_OPTIONS "
		  "(/tmp/perf-%d.map) was removed", pid);
	unsetenv("JAVA_TOOL_OPTIONS");
}

/* The line of tests/java/InlineFixture.java that ends in "// @marker", as
 * the frame string of method there: "InlineFixture.M(InlineFixture.java:N)". */
static void inline_frame(const char *method, const char *marker, char *out, size_t len)
{
	char line[512], tag[64];
	FILE *f = fopen("tests/java/InlineFixture.java", "r");
	int n = 0, at = 0;

	cr_assert_not_null(f, "cannot read tests/java/InlineFixture.java");
	snprintf(tag, sizeof(tag), "// @%s\n", marker);
	while (!at && fgets(line, sizeof(line), f)) {
		n++;
		if (strlen(line) >= strlen(tag) && !strcmp(line + strlen(line) - strlen(tag), tag))
			at = n;
	}
	fclose(f);
	cr_assert(at, "no line marked @%s in InlineFixture.java", marker);
	snprintf(out, len, "InlineFixture.%s(InlineFixture.java:%d)", method, at);
}

/* Frame i of a stack array is exactly s. */
static bool stack_at(json_object *st, size_t i, const char *s)
{
	const char *f = e2e_frame_text(st, i);

	return f && !strcmp(f, s);
}

struct lines_tally {
	int64_t total, exact, samples, at_get;
};

/* The long[] contexts allocated from main in report, and the samples on
 * them (source_lines_of_interpreted_frames). */
static void tally_lines(json_object *report, const char *alloc, const char *make,
			const char *build, const char *get, const char *scan, struct lines_tally *t)
{
	json_object *objects = e2e_get(report, "objects");
	char buf[2048];

	memset(t, 0, sizeof(*t));
	cr_assert(objects, "no objects[]");
	for (size_t i = 0; i < json_object_array_length(objects); i++) {
		json_object *o = json_object_array_get_idx(objects, i), *acc;
		const char *type = json_object_get_string(e2e_get(o, "type"));
		json_object *st = e2e_get(o, "alloc_stack");
		int64_t n = json_object_get_int64(e2e_get(o, "allocations"));

		if (!type || strcmp(type, "long[]") != 0 || !e2e_stack_has(o, "InlineFixture.main", 8))
			continue;
		t->total += n;
		if (!stack_at(st, 0, alloc) || !stack_at(st, 1, make) || !stack_at(st, 2, build)) {
			e2e_diag("long[] context: %s", e2e_stack_str(o, buf, sizeof(buf)));
			continue;
		}
		t->exact += n;
		acc = e2e_get(o, "accesses");
		for (size_t k = 0; acc && k < json_object_array_length(acc); k++) {
			json_object *a = json_object_array_get_idx(acc, k);
			int64_t c = json_object_get_int64(e2e_get(a, "samples"));

			t->samples += c;
			if (stack_at(e2e_get(a, "stack"), 0, get) && stack_at(e2e_get(a, "stack"), 1, scan))
				t->at_get += c;
		}
	}
}

/* Java frames carry their source lines: interpreted frames by their
 * bytecode pointer (the preload's allocation paths: the pointer's low bits
 * in the frame word; access paths: the interrupted frame's r13, callers'
 * frame slots), compiled ones by their scopes' bytecode indexes (in
 * inlined_methods_are_frames). -Xint: every frame interpreted. The reads
 * double until the arrays have 30 samples (a slow or busy machine gives
 * fewer per read), at most four runs. */
static void interpreted_lines(void)
{
	const char *opts[] = { "-q", NULL };
	char alloc[128], make[128], build[128], get[128], scan[128], reads[32];
	const char *argv[] = { java_bin, "-Xint", "-XX:+UseG1GC", "-cp", JAVA_CP, "InlineFixture",
			       "30", reads, NULL };
	struct lines_tally t = { 0 };

	inline_frame("make", "alloc", alloc, sizeof(alloc));
	inline_frame("build", "make", make, sizeof(make));
	inline_frame("main", "build", build, sizeof(build));
	inline_frame("get", "get", get, sizeof(get));
	inline_frame("scan", "scan", scan, sizeof(scan));
	for (int run = 0; run < 4 && t.samples < 30; run++) {
		json_object *report;

		snprintf(reads, sizeof(reads), "%d", 300000 << run);
		report = record_argv(argv, opts);
		tally_lines(report, alloc, make, build, get, scan, &t);
		json_object_put(report);
		cr_log_info("%s reads: %lld samples on the arrays", reads, (long long)t.samples);
	}
	cr_assert(t.total >= 10000, "only %lld long[] allocations from main", (long long)t.total);
	cr_expect(t.exact >= t.total * 99 / 100, "%lld of %lld long[] allocations at %s <- %s <- %s",
		  (long long)t.exact, (long long)t.total, alloc, make, build);
	cr_assert(t.samples >= 30, "only %lld samples on the arrays after %s reads",
		  (long long)t.samples, reads);
	cr_expect(t.at_get * 10 >= t.samples * 9, "%lld of %lld samples on the arrays read at %s <- %s",
		  (long long)t.at_get, (long long)t.samples, get, scan);
}

Test(e2e_java, source_lines_of_interpreted_frames)
{
	interpreted_lines();
}

Test(e2e_java, source_lines_of_interpreted_frames_jdk25)
{
	use_jdk(25);
	interpreted_lines();
}

/* Compiled frames are named from their nmethods' debug info, so a method
 * the JIT inlined into its caller stays a frame of its own, the same one
 * as when it ran interpreted (tests/java/InlineFixture.java: the arrays are
 * allocated in make(), inlined into build()). Named by the perf map alone,
 * the compiled build() took 27,381 of 120,746 allocations (23%) as its
 * own. */
static void inlined_frames(void)
{
	const char *argv[] = { java_bin, "-XX:+UseG1GC", "-cp", JAVA_CP, "InlineFixture", NULL };
	const char *opts[] = { "-q", NULL };
	json_object *report = record_argv(argv, opts), *objects = e2e_get(report, "objects");
	int64_t in_make = 0, in_build = 0, total = 0, lines = 0;
	unsigned long long named = 0, frames = 0, inlined = 0, lined = 0, jframes = 0;
	const char *note = e2e_note(report, "frames in compiled Java methods named");
	const char *lnote = e2e_note(report, "Java frames with their source line");
	char buf[2048], alloc[128], make[128];

	inline_frame("make", "alloc", alloc, sizeof(alloc));
	inline_frame("build", "make", make, sizeof(make));
	cr_assert(objects, "no objects[]");
	for (size_t i = 0; i < json_object_array_length(objects); i++) {
		json_object *o = json_object_array_get_idx(objects, i);
		const char *type = json_object_get_string(e2e_get(o, "type"));
		int64_t n = json_object_get_int64(e2e_get(o, "allocations"));

		if (!type || strcmp(type, "long[]") != 0 || !e2e_stack_has(o, "InlineFixture.main", 8))
			continue;
		total += n;
		if (frame_is(o, 0, "InlineFixture.make") && frame_is(o, 1, "InlineFixture.build")) {
			in_make += n;
			/* the inlined make()'s line from its scope's bci */
			if (stack_at(e2e_get(o, "alloc_stack"), 0, alloc) &&
			    stack_at(e2e_get(o, "alloc_stack"), 1, make))
				lines += n;
		} else if (frame_is(o, 0, "InlineFixture.build"))
			in_build += n;
		else
			e2e_diag("long[] context: %s", e2e_stack_str(o, buf, sizeof(buf)));
	}
	cr_assert(total >= 100000, "only %lld long[] allocations from main", (long long)total);
	cr_expect(in_make >= total * 99 / 100, "%lld of %lld long[] allocations at make <- build",
		  (long long)in_make, (long long)total);
	cr_expect(in_build == 0, "%lld long[] allocations charged to build, make missing",
		  (long long)in_build);
	cr_expect(lines >= total * 99 / 100, "%lld of %lld long[] allocations at %s <- %s",
		  (long long)lines, (long long)total, alloc, make);
	cr_assert(lnote, "no note on source lines");
	cr_assert_eq(sscanf(strstr(lnote, ": ") + 2, "%llu of %llu Java frames", &lined, &jframes),
		     2, "note not understood: %s", lnote);
	cr_expect(lined >= jframes * 9 / 10 && jframes > 0, "%s", lnote);
	cr_assert(note, "no note on compiled frames");
	cr_assert_eq(sscanf(strstr(note, ": ") + 2, "%llu of %llu frames in compiled Java methods "
			    "named by their nmethods' debug info, %llu more inlined", &named, &frames,
			    &inlined), 3, "note not understood: %s", note);
	cr_expect(named > frames / 2 && inlined > 0, "%s", note);
	json_object_put(report);
}

Test(e2e_java, inlined_methods_are_frames)
{
	inlined_frames();
}

Test(e2e_java, inlined_methods_are_frames_jdk25)
{
	use_jdk(25);
	inlined_frames();
}

/* Concurrent collectors: the program must run as without objscope. */
Test(e2e_java, zgc_runs)
{
	const char *opts[] = { "-q", NULL };

	json_object_put(record_java("-XX:+UseZGC", "-Xshare:auto", opts));
}

Test(e2e_java, shenandoah_runs)
{
	const char *opts[] = { "-q", NULL };

	json_object_put(record_java("-XX:+UseShenandoahGC", "-Xshare:auto", opts));
}

/* Objects smaller than --min-size are not tracked; a Java-heap sample on
 * one is charged to its class, found by the object header at the sampled
 * address (tests/java/PreAttachFixture.java in launch mode: 40,000 small
 * PreAttachFixture$Node instances read at random, a third of the reads). */
static int64_t java_heap_samples(json_object *report, void *ctx)
{
	(void)ctx;
	return e2e_get_int(e2e_get(report, "meta"), "samples_java_heap");
}

Test(e2e_java, small_objects_get_estimated_paths)
{
	const char *argv[] = { "java", "-XX:+UseG1GC", "-Xms256m", "-Xmx256m", "-cp", JAVA_CP,
			       "PreAttachFixture", "3", NULL };
	const char *opts[] = { "-q", NULL };
	/* Statistical assertions (tests/README.md), each false-failure chance
	 * <= 1e-4: attributed >= 0.85 of the Java-heap samples (true >= 0.95;
	 * measured 1.0), the nodes' estimated samples >= 0.15 of them (true
	 * >= 0.19: 0.23-0.28 here, 0.194 once under CI load; in launch mode
	 * the one site of Node gets every sample its class holds, so the
	 * estimate counts samples). A 3 s run gives ~540 Java-heap samples
	 * here: runs are added, their profiles merged, until the 1,275 the
	 * nodes' check needs are there. */
	struct e2e_gather g = { .name = "small.data", .opts = opts, .argv = argv,
				.check_unchanged = true, .same_err = true,
				.count = java_heap_samples,
				.need = e2e_binom_needed(0.19, 0.15, E2E_FALSE_FAIL),
				.max_runs = 8 };
	json_object *report = e2e_gather(tmp, &g), *meta, *objects;
	int64_t jheap, jattr, node = 0, pos = -1;

	meta = e2e_get(report, "meta");
	jheap = e2e_get_int(meta, "samples_java_heap");
	jattr = e2e_get_int(meta, "samples_java_attributed");
	cr_log_info("small objects: %lld of %lld Java-heap samples attributed", (long long)jattr,
		    (long long)jheap);
	/* without the header lookup the nodes' third was unattributed (~65%) */
	e2e_assert_share_ge(jattr, jheap, 0.85, 0.95, "attributed Java-heap samples");
	objects = e2e_get(report, "objects");
	cr_assert(objects, "no objects[]");
	/* the nodes' samples, found by their headers, are given to the site
	 * the sampled allocations of Node show (estimated path) */
	for (size_t i = 0; i < json_object_array_length(objects); i++) {
		json_object *o = json_object_array_get_idx(objects, i);
		const char *type = json_object_get_string(e2e_get(o, "type"));

		if (type && !strcmp(type, "PreAttachFixture$Node") && path_kind_is(o, "site") &&
		    e2e_stack_has(o, "PreAttachFixture.main", STACK_DEPTH)) {
			node = (int64_t)(e2e_get_double(o, "samples_estimated") + 0.5);
			pos = (int64_t)i;
			break;
		}
	}
	cr_log_info("PreAttachFixture$Node at PreAttachFixture.main: est. %lld of %lld Java-heap "
		    "samples, rank %lld", (long long)node, (long long)jheap, (long long)pos + 1);
	/* A third of the read() calls read nodes, but the node set's time also
	 * goes to the tracked Node[] and the other sets' reads cost more: the
	 * nodes got 23-27% locally and 19.4% once under CI load,
	 * 0 without the header lookup. */
	e2e_assert_share_ge(node, jheap, 0.15, 0.19,
			    "PreAttachFixture$Node's share of the Java-heap samples (a third of the "
			    "reads)");
	cr_expect(pos >= 0 && pos < 3, "PreAttachFixture$Node ranks %lld", (long long)pos + 1);
	check_one_count(report);
	cr_expect(has_note(report, "fell on objects smaller than --min-size"),
		  "no note on the objects found at samples");
	check_no_perf_map(report);
	json_object_put(report);
}

/* Access paths through JIT code without frame pointers: the user's
 * -XX:-PreserveFramePointer (after objscope's options: it wins) leaves
 * compiled frames without them, and the collector walks them by their code
 * blobs' frame sizes (runtimes/hotspot/hs_frames.h). makeRandom's arrays are read by
 * readRandom, compiled (OSR and C2) early, called from main: the kernel's
 * frame-pointer chain stopped at readRandom (3 of 100 samples had a caller). */
/* What jit_access_paths_without_frame_pointers asserts on: the samples of
 * the objects seen allocated by ObjFixture's methods (fixture), of those by
 * makeRandom (random), of makeRandom's first object (top: total), of top's
 * accesses with readRandom as the leaf (leaf) and of those with main as its
 * caller (called). */
struct jit_paths {
	json_object *top;
	int64_t fixture, random, total, leaf, called;
};

static void jit_paths_of(json_object *report, struct jit_paths *jp)
{
	json_object *objects = e2e_get(report, "objects"), *acc;

	memset(jp, 0, sizeof(*jp));
	for (size_t i = 0; objects && i < json_object_array_length(objects); i++) {
		json_object *o = json_object_array_get_idx(objects, i);
		const char *f0 = e2e_frame_text(e2e_get(o, "alloc_stack"), 0);

		if (!f0 || strncmp(f0, "ObjFixture.", 11))
			continue;
		jp->fixture += e2e_get_int(o, "samples");
		if (!frame_is(o, 0, "ObjFixture.makeRandom"))
			continue;
		jp->random += e2e_get_int(o, "samples");
		if (!jp->top)
			jp->top = o;
	}
	if (!jp->top)
		return;
	jp->total = e2e_get_int(jp->top, "samples");
	acc = e2e_get(jp->top, "accesses");
	for (size_t i = 0; acc && i < json_object_array_length(acc); i++) {
		json_object *a = json_object_array_get_idx(acc, i), *st = e2e_get(a, "stack");
		int64_t n = e2e_get_int(a, "samples");
		const char *f0, *f1;

		if (!st || json_object_array_length(st) < 1)
			continue;
		f0 = e2e_frame_text(st, 0);
		if (!f0 || strncmp(f0, "ObjFixture.readRandom", 21))
			continue;
		jp->leaf += n;
		f1 = e2e_frame_text(st, 1);
		if (f1 && !strncmp(f1, "ObjFixture.main", 15))
			jp->called += n;
	}
}

/* The gathering's count: readRandom's samples, the smaller of the two
 * denominators (top's samples >= leaf). */
static int64_t jit_paths_count(json_object *report, void *ctx)
{
	struct jit_paths jp;

	(void)ctx;
	jit_paths_of(report, &jp);
	return jp.leaf;
}

Test(e2e_java, jit_access_paths_without_frame_pointers)
{
	const char *argv[] = { "java", "-XX:-PreserveFramePointer", "-Xshare:auto", "-cp", JAVA_CP,
			       "ObjFixture", NULL };
	const char *opts[] = { "-q", RING, NULL };
	/* Statistical assertions (tests/README.md): readRandom's share of
	 * makeRandom's samples >= 0.8 and main's share of readRandom's >= 0.8,
	 * true shares >= 0.95 (measured 0.99-1.0); makeRandom's objects hold
	 * more than half of the samples on objects seen allocated by
	 * ObjFixture, true share >= 0.8 (measured 0.9+). Each false-failure
	 * chance <= 1e-4 (e2e_binom_needed, e2e_binom_needed_majority). A run
	 * gives 60-90 such samples here (26 on a loaded CI machine): runs are
	 * added, their profiles merged, until readRandom has what the checks
	 * need. */
	const double p_paths = 0.95, t_paths = 0.8, p_top = 0.8;
	int64_t need = e2e_binom_needed(p_paths, t_paths, E2E_FALSE_FAIL);
	struct e2e_gather g = { .name = "jit.data", .opts = opts, .argv = argv,
				.check_unchanged = true, .same_err = true,
				.count = jit_paths_count, .need = need, .max_runs = 8 };
	json_object *report = e2e_gather(tmp, &g), *objects;
	struct jit_paths jp;
	char buf[2048];

	objects = e2e_get(report, "objects");
	cr_assert(objects && json_object_array_length(objects) > 0, "objects[] is empty");
	jit_paths_of(report, &jp);
	cr_log_info("JIT access paths: %lld of %lld samples in readRandom, %lld with main as "
		    "its caller; makeRandom %lld of ObjFixture's %lld seen samples (%d run(s))",
		    (long long)jp.leaf, (long long)jp.total, (long long)jp.called,
		    (long long)jp.random, (long long)jp.fixture, g.runs);
	cr_assert_not_null(jp.top, "no object allocated by ObjFixture.makeRandom");
	e2e_assert_majority(jp.random, jp.fixture, p_top,
			    "makeRandom's share of the samples seen on ObjFixture's objects");
	/* then first by estimate: the samples of objects not seen at
	 * allocation go to the sites in proportion to the seen ones' (JAVA.md,
	 * the estimator) */
	cr_assert(frame_is(json_object_array_get_idx(objects, 0), 0, "ObjFixture.makeRandom"),
		  "top object: %s",
		  e2e_stack_str(json_object_array_get_idx(objects, 0), buf, sizeof(buf)));
	e2e_assert_share_ge(jp.leaf, jp.total, t_paths, p_paths,
			    "readRandom's share of makeRandom's samples");
	e2e_assert_share_ge(jp.called, jp.leaf, t_paths, p_paths,
			    "share of readRandom's samples with ObjFixture.main as caller");
	cr_expect(has_note(report, "walked through JIT code"), "no note on JIT walks");
	check_no_perf_map(report);
	json_object_put(report);
}

/* Counts, over every object's access paths, the samples whose path has a
 * frame of HotSpot's JIT compilers (C2's Phase* / Compile::, C1's
 * GraphBuilder / LinearScan): only compiler threads run those (not
 * CompileBroker::, which Java threads call to ask for a compilation). The
 * first such frame goes to `first`. */
static int64_t compiler_access_samples(json_object *report, char *first, size_t len)
{
	static const char *const prefixes[] = { "Phase", "Compile::", "Parse::", "GraphBuilder::",
						"LinearScan::", "Compilation::", NULL };
	json_object *objects = e2e_get(report, "objects");
	int64_t n = 0;

	if (len)
		first[0] = 0;
	for (size_t i = 0; objects && i < json_object_array_length(objects); i++) {
		json_object *acc = e2e_get(json_object_array_get_idx(objects, i), "accesses");

		for (size_t k = 0; acc && k < json_object_array_length(acc); k++) {
			json_object *a = json_object_array_get_idx(acc, k), *st = e2e_get(a, "stack");
			bool hit = false;

			for (size_t f = 0; st && f < json_object_array_length(st) && !hit; f++) {
				const char *s =
					e2e_frame_text(st, f);

				for (size_t p = 0; s && prefixes[p] && !hit; p++)
					hit = !strncmp(s, prefixes[p], strlen(prefixes[p]));
			}
			bool fill = hit && len && !first[0];

			for (size_t f = 0; fill && f < json_object_array_length(st); f++) {
				size_t used = strlen(first);

				snprintf(first + used, len - used, "%s%s", f ? " <- " : "",
					 e2e_frame_text(st, f));
			}
			if (hit)
				n += e2e_get_int(a, "samples");
		}
	}
	return n;
}

/* Sum of the samples of the threads of one kind. */
static int64_t kind_samples(json_object *report, const char *kind)
{
	json_object *threads = e2e_get(report, "threads");
	int64_t n = 0;

	for (size_t i = 0; threads && i < json_object_array_length(threads); i++) {
		json_object *t = json_object_array_get_idx(threads, i);
		const char *k = json_object_get_string(e2e_get(t, "kind"));

		if (k && !strcmp(k, kind))
			n += e2e_get_int(t, "samples");
	}
	return n;
}

/* Allocations of the context of JIT compiler threads' blocks tracked
 * without paths (shm.h os_slot.quiet). */
static int64_t quiet_allocations(json_object *report)
{
	json_object *objects = e2e_get(report, "objects");
	int64_t n = 0;

	for (size_t i = 0; objects && i < json_object_array_length(objects); i++) {
		json_object *o = json_object_array_get_idx(objects, i);
		json_object *st = e2e_get(o, "alloc_stack"), *f0;
		const char *fn;

		f0 = st && json_object_array_length(st) ? json_object_array_get_idx(st, 0) : NULL;
		fn = f0 ? json_object_get_string(e2e_get(f0, "function")) : NULL;
		if (fn && !strncmp(fn, "[blocks of JIT compiler threads", 31))
			n += e2e_get_int(o, "allocations");
	}
	return n;
}

/* JIT compiler threads touch the compilers' own arenas (JVM internals, most
 * of a short run's samples): by default their samples are counted (per
 * thread, meta.counters.samples_jit, meta.unaddressed.jit_threads) and not
 * decoded or attributed, and once a thread is known as one (its name) its
 * blocks are tracked without allocation paths (no stack walked in the
 * target, none expanded by the collector); --jit-threads includes them. */
Test(e2e_java, jit_threads_counted_not_attributed)
{
	const char *deflt[] = { "-q", RING, "-F", "4000", NULL };
	const char *with[] = { "-q", RING, "-F", "4000", "--jit-threads", NULL };
	json_object *report, *meta, *c;
	int64_t skipped, jit, comp, total, addressed;
	char first[2048];

	report = record_java("-XX:+UseG1GC", "-Xshare:auto", deflt);
	meta = e2e_get(report, "meta");
	c = e2e_get(meta, "counters");
	cr_assert(c, "no meta.counters");
	skipped = e2e_get_int(c, "samples_jit");
	jit = kind_samples(report, "jit");
	comp = compiler_access_samples(report, first, sizeof(first));
	total = e2e_get_int(meta, "samples_total");
	addressed = e2e_get_int(meta, "samples_addressed");
	cr_log_info("default: %lld of %lld samples of JIT threads not decoded (%lld on JIT threads "
		    "in threads[]), %lld attributed with compiler frames",
		    (long long)skipped, (long long)total, (long long)jit, (long long)comp);
	cr_assert_gt(jit, 0, "no samples on JIT compiler threads");
	/* decided by the name in /proc at the thread's first sample */
	cr_expect(skipped <= jit && skipped * 10 >= jit * 9,
		  "%lld skipped, %lld on JIT threads (%lld lost samples)", (long long)skipped,
		  (long long)jit, (long long)e2e_get_int(meta, "lost"));
	cr_expect_eq(e2e_get_int(e2e_get(meta, "unaddressed"), "jit_threads"), skipped);
	cr_expect_leq(addressed + skipped, total);
	cr_expect_eq(comp, 0, "%lld attributed samples have compiler frames, first: %s",
		     (long long)comp, first);
	cr_expect_gt(quiet_allocations(report), 0, "no JIT compiler thread's block without a path");
	cr_expect(e2e_note(report, "without allocation paths once known as such"),
		  "no note on the JIT threads' blocks without paths");
	json_object_put(report);

	report = record_java("-XX:+UseG1GC", "-Xshare:auto", with);
	c = e2e_get(e2e_get(report, "meta"), "counters");
	jit = kind_samples(report, "jit");
	comp = compiler_access_samples(report, first, sizeof(first));
	cr_log_info("--jit-threads: %lld samples on JIT threads, %lld attributed with compiler "
		    "frames", (long long)jit, (long long)comp);
	cr_expect_eq(e2e_get_int(c, "samples_jit"), 0);
	cr_expect_gt(jit, 0, "no samples on JIT compiler threads");
	cr_expect_gt(comp, 0, "no attributed sample with a compiler frame under --jit-threads");
	cr_expect_eq(quiet_allocations(report), 0, "--jit-threads: blocks without paths");
	json_object_put(report);
}

/* Under the budget (defaults), every sample the kernel took is counted in
 * what the budget spent: the JIT threads' samples too, whether dropped in
 * the kernel by the BPF filter or counted in user space (each costs the
 * kernel its interrupt: 0.8-0.9 of a sample taken, measured here, and is
 * charged at that cost, calibrated at start). The
 * budget's own count is overhead.samples_per_cpu_s x target_cpu_s. */
Test(e2e_java, budget_counts_the_jit_threads_samples)
{
	const char *opts[] = { "-q", RING, NULL };
	/* -Xcomp: every method compiled at its first call, the compiler
	 * threads busy (a third or more of the samples) */
	json_object *report = record_java("-XX:+UseG1GC", "-Xcomp", opts);
	json_object *meta = e2e_get(report, "meta"), *o = e2e_get(meta, "overhead");
	int64_t total = e2e_get_int(meta, "samples_total");
	int64_t jit = e2e_get_int(e2e_get(meta, "counters"), "samples_jit");
	double counted;

	cr_assert_not_null(o, "no overhead figures");
	counted = e2e_get_double(o, "samples_per_cpu_s") * e2e_get_double(o, "target_cpu_s");
	cr_log_info("budget: %.0f samples counted; the profile %lld (%lld of JIT threads); %s",
		    counted, (long long)total, (long long)jit,
		    e2e_note(report, "dropped in the kernel") ? "BPF filter on" : "no BPF filter");
	cr_assert_gt(jit, total / 10, "%lld of %lld samples on JIT threads: too few to check",
		     (long long)jit, (long long)total);
	cr_expect(counted >= 0.97 * (double)total && counted <= 1.03 * (double)total,
		  "the budget counted %.0f samples, the profile has %lld (%lld of JIT threads)",
		  counted, (long long)total, (long long)jit);
	/* those the filter dropped are charged at their own calibrated cost
	 * (no stack copy: at most a kept one's) in the kernel's estimate */
	{
		double drop_ns = e2e_get_double(o, "dropped_sample_cost_ns");
		double sample_ns = e2e_get_double(o, "sample_cost_ns");
		double dropped = e2e_get_double(o, "kernel_dropped_samples");
		double kern = e2e_get_double(o, "kernel_sampling_s_estimated");
		double want = ((counted - dropped) * sample_ns + dropped * drop_ns) / 1e9;

		cr_log_info("a sample costs %.0f ns, one dropped %.0f ns; %.0f dropped in the kernel",
			    sample_ns, drop_ns, dropped);
		cr_expect(drop_ns > 0 && drop_ns <= sample_ns, "dropped %.0f ns, kept %.0f ns", drop_ns,
			  sample_ns);
		if (e2e_note(report, "dropped in the kernel"))
			cr_expect(dropped > 0 && dropped <= (double)jit,
				  "%.0f dropped in the kernel, %lld samples of JIT threads", dropped,
				  (long long)jit);
		else
			cr_expect_eq(dropped, 0, "no BPF filter, %.0f dropped in the kernel", dropped);
		cr_expect(kern >= 0.97 * want && kern <= 1.03 * want,
			  "kernel %.4f s, kept x %.0f + dropped x %.0f = %.4f s", kern, sample_ns,
			  drop_ns, want);
	}
	json_object_put(report);
}

/* A --min-size below the JVM's own small blocks: the JVM's
 * pthread_getattr_np allocates while it holds its thread's lock, and the
 * path walk of that allocation needs the thread's stack bounds
 * (pthread_getattr_np again). It hung at start-up (killed after 30 s here)
 * before preload/hooks_thread.c; now the program runs as without objscope. */
Test(e2e_java, small_min_size_does_not_deadlock)
{
	const char *argv[] = { "java", "-cp", JAVA_CP, "AllocCount", "2000", "100", NULL };
	const char *opts[] = { "-q", "--min-size", "72", NULL };
	char *profile = e2e_path(tmp, "small.data");
	json_object *report = e2e_record_unchanged(tmp, profile, opts, argv, true);

	cr_expect_gt(e2e_get_int(e2e_get(report, "meta"), "samples_total"), 0, "no samples");
	json_object_put(report);
	free(profile);
}

/* tests/java/SmallSites.java in `mode`, recorded with `java_objects`
 * (--java-objects) at 4 kHz for 8 seconds, 16 and 32 while the figures
 * compared have fewer than `want` samples (the shared machine is slow; a
 * collector that falls behind, make asan, may leave samples without a
 * site): the two sites' samples of class `type`, or with other_type the
 * samples of the two classes. It fills in
 * the samples (estimated, where there are estimates) of the objects of
 * class `type` allocated at makeHot and at makeCold, and of class
 * `other_type` (split mode: the cold site's own class) wherever allocated. */
struct two_sites {
	double hot, cold, other, all;
};

static void site_figures(json_object *report, const char *type, const char *other_type,
			 struct two_sites *t)
{
	json_object *objects = e2e_get(report, "objects");

	memset(t, 0, sizeof(*t));
	for (size_t i = 0; objects && i < json_object_array_length(objects); i++) {
		json_object *o = json_object_array_get_idx(objects, i);
		const char *ty = json_object_get_string(e2e_get(o, "type"));
		json_object *est = e2e_get(o, "samples_estimated");
		double v = est ? json_object_get_double(est) : (double)e2e_get_int(o, "samples");

		if (!ty)
			continue;
		if (other_type && !strcmp(ty, other_type))
			t->other += v;
		if (strcmp(ty, type))
			continue;
		t->all += v;
		if (e2e_stack_has(o, "SmallSites.makeHot", STACK_DEPTH))
			t->hot += v;
		else if (e2e_stack_has(o, "SmallSites.makeCold", STACK_DEPTH))
			t->cold += v;
	}
}

static json_object *small_sites(const char *mode, const char *java_objects, const char *tlab,
				const char *type, const char *other_type, double want,
				struct two_sites *t)
{
	const char *opts[] = { "-q", RING, "-F", "4000", "--java-objects", java_objects,
			       "--java-tlab", tlab, NULL };
	json_object *report = NULL;

	for (int secs = 8; secs <= 32; secs *= 2) {
		char s[16];
		const char *argv[] = { "java", "-XX:+UseG1GC", "-cp", JAVA_CP, "SmallSites", mode,
				       s, NULL };

		snprintf(s, sizeof(s), "%d", secs);
		if (report)
			json_object_put(report);
		report = record_argv(argv, opts);
		site_figures(report, type, other_type, t);
		cr_log_info("SmallSites %s (%s, %d s): %s hot %.1f, cold %.1f, all %.1f; other "
			    "class %.1f; %lld allocation events dropped", mode, java_objects, secs,
			    type, t->hot, t->cold, t->all, t->other,
			    (long long)e2e_get_int(e2e_get(report, "meta"), "dropped_events"));
		/* the figures compared: the two sites' (a sample of `type` left
		 * without a site, class-only, counts in all but not here), or the
		 * two classes' */
		if ((other_type ? t->all + t->other : t->hot + t->cold) >= want)
			break;
	}
	return report;
}

/* Hybrid mode samples a small object when it starts a TLAB: one made
 * outside every TLAB is never sampled. counters.small_outside_tlab counts
 * them; HotSpot makes 0.003-0.04% of them on its own (tests/java/SmallSites.java,
 * with or without objscope), and a note names them from 1%. `many`: the
 * run is expected to make more than 10% so, with the note. */
static void check_outside_tlab(json_object *report, bool many)
{
	json_object *counters = e2e_get(e2e_get(report, "meta"), "counters");
	double outside = (double)e2e_get_int(counters, "small_outside_tlab");
	double est = (double)e2e_get_int(counters, "objects_estimated");
	const char *note = e2e_note(report, "were made outside any TLAB");
	double share = outside / (est + outside > 0 ? est + outside : 1);

	cr_log_info("%.0f small allocations outside TLABs, %.0f objects estimated: %.4f", outside,
		    est, share);
	cr_expect_not_null(e2e_get(counters, "small_outside_tlab"), "no counters.small_outside_tlab");
	if (many) {
		cr_expect_gt(share, 0.1, "%.0f small allocations outside TLABs of %.0f: %.4f",
			     outside, est + outside, share);
		cr_expect_not_null(note, "no note on the allocations outside TLABs (share %.4f)",
				   share);
		if (note)
			cr_expect(strstr(note, "TLABRefillWasteFraction"), "note: %s", note);
	} else {
		/* before the next TLAB size was held at MinTLABSize (hs_tlab.h)
		 * a run in ~12 had nearly all of them there */
		cr_expect_lt(share, 0.01, "%.0f small allocations outside TLABs of %.0f: %.4f",
			     outside, est + outside, share);
		cr_expect_null(note, "note: %s", note);
	}
}

/* A -XX:TLABRefillWasteFraction of the user's own (64, HotSpot's default,
 * above the 1 objscope sets) keeps a TLAB whose rest is larger than 1/64 of
 * it: 1,616-byte arrays below --min-size 4096 that do not fit the rest then
 * go outside TLABs, unsampled (38% of them in one run): counted and said in
 * a note; the same run without the flag has almost none. */
Test(e2e_java, hybrid_objects_outside_tlabs_are_counted, .timeout = 300)
{
	const char *opts[] = { "-q", RING, "--min-size", "4096", NULL };
	const char *plain[] = { "java", "-cp", JAVA_CP, "SmallSites", "arrays", "3", NULL };
	const char *waste[] = { "java", "-XX:TLABRefillWasteFraction=64", "-cp", JAVA_CP,
				"SmallSites", "arrays", "3", NULL };
	json_object *report = record_argv(plain, opts);

	check_outside_tlab(report, false);
	json_object_put(report);
	report = record_argv(waste, opts);
	check_outside_tlab(report, true);
	json_object_put(report);
}

/* Planted answer: 48-byte objects of one class from two sites,
 * the hot one read four times as often. None is tracked exactly (below
 * --min-size); hybrid mode samples their allocations by bytes and the
 * samples on the others, found by their headers, are shared out to the
 * sites by what the sampled ones got: the hot site ranks first, and its
 * share matches the reference within 0.05, the run where the cold site
 * allocates a class of its own (the class then tells the site exactly). */
Test(e2e_java, small_objects_two_sites_hot_site_first, .timeout = 900)
{
	struct two_sites est, ref;
	/* hybrid TLABs of 4 KiB on average (the smallest with random sizes): a
	 * 48-byte object's allocation is sampled with probability 1/85 (1/341
	 * at the default 16 KiB), so 6,000 samples hold about 70 on sampled
	 * objects, a standard error of the share near 0.05 (docs/JAVA.md) */
	json_object *report = small_sites("cells", "hybrid", "4096", "SmallSites$Cell", NULL, 6000,
					  &est);
	double share, ref_share;

	/* CI had no sample on either site once (hot 0.0, cold 0.0, a share of
	 * nan) and all on one site another time (hot 0.0, cold 15873.0): in
	 * the second (and most likely the first), TLABs of T/4 = 1 KiB, below MinTLABSize, had ended the main
	 * thread's TLABs for good, every allocation outside them, unsampled
	 * (the next TLAB size is now held at MinTLABSize, hs_tlab.h). Too few
	 * samples on the sites fail here, with the class's samples left
	 * without a site in the message */
	cr_assert_gt(est.hot + est.cold, 1000, "too few samples on the two sites: hot %.1f, cold "
		     "%.1f, of %.1f on the class", est.hot, est.cold, est.all);
	cr_expect_gt(est.hot, est.cold, "the hot site (%.1f) does not rank above the cold one (%.1f)",
		     est.hot, est.cold);
	check_outside_tlab(report, false);
	check_one_count(report);
	json_object_put(report);
	report = small_sites("split", "hybrid", "4096", "SmallSites$Cell", "SmallSites$ColdCell",
			     6000, &ref);
	json_object_put(report);
	share = est.hot / (est.hot + est.cold);
	ref_share = ref.all / (ref.all + ref.other);
	cr_log_info("hot site's share: estimated %.3f, by class %.3f", share, ref_share);
	cr_expect(fabs(share - ref_share) <= 0.05, "hot site's estimated share %.3f, %.3f by class",
		  share, ref_share);
}

/* Estimated paths converge to --java-objects exact: 1,616-byte arrays from
 * the same two sites, every one tracked in exact mode, about one in ten
 * in hybrid mode (the others' samples shared out by the estimator). The
 * program's own split moves from run to run with the machine's load (CI,
 * a loaded sitting: exact 0.686 against hybrid 0.740; 0.722 and 0.720
 * unloaded): two runs of each mode, in the order hybrid, exact, exact,
 * hybrid so that a drift of the load weighs on both alike, their figures
 * summed. */
Test(e2e_java, estimated_paths_match_exact_mode, .timeout = 900)
{
	static const char *const order[] = { "hybrid", "exact", "exact", "hybrid" };
	struct two_sites hy = { 0 }, ex = { 0 };
	double sh_hy, sh_ex;

	for (size_t k = 0; k < 4; k++) {
		struct two_sites t;
		bool hybrid = !strcmp(order[k], "hybrid");
		json_object *report = small_sites("arrays", order[k], "16384", "long[]", NULL,
						  3000, &t);

		if (hybrid)
			check_one_count(report);
		json_object_put(report);
		cr_log_info("run %zu (%s): hot site's share %.3f", k + 1, order[k],
			    t.hot + t.cold > 0 ? t.hot / (t.hot + t.cold) : -1.0);
		(hybrid ? &hy : &ex)->hot += t.hot;
		(hybrid ? &hy : &ex)->cold += t.cold;
	}
	cr_assert_gt(hy.hot + hy.cold, 1000, "too few samples on the arrays (hybrid)");
	cr_assert_gt(ex.hot + ex.cold, 1000, "too few samples on the arrays (exact)");
	sh_hy = hy.hot / (hy.hot + hy.cold);
	sh_ex = ex.hot / (ex.hot + ex.cold);
	cr_log_info("hot site's share of the two sites, two runs each: hybrid (estimated) %.3f, "
		    "exact %.3f", sh_hy, sh_ex);
	cr_expect(fabs(sh_hy - sh_ex) <= 0.05, "hot site's share: hybrid %.3f, exact %.3f", sh_hy,
		  sh_ex);
}

/* Estimates that know what they do not know (docs/JAVA.md "Intervals"):
 * tests/java/TwoSitesFixture.java, 48-byte cells from two sites (newHot,
 * newCold) read 4:1, recorded at the defaults for 10 s, 20 s while the two
 * sites have fewer than 400 estimated samples. The report's figures carry
 * their 90% intervals and are never a confident wrong answer:
 * - the hot site's share of the two, s = H / (H + C), is within 3.9
 *   standard errors of 0.8 (delta method over the two figures' stated
 *   errors; a false failure at most 1e-4 where the errors are right);
 * - where the two intervals are apart, the hot site ranks first;
 * - where they overlap and the sites are neighbours, the row says so
 *   (interval.overlaps_next), and a split with no evidence says it rests
 *   on allocation volume (path.split_by_volume).
 * While recording, the collector focuses on the cells (smaller TLABs, no
 * thinning: more of them seen at allocation); the report's note says so.
 * The stricter target (hot first, within 0.1 of 0.8, intervals
 * apart at the defaults in 20 s) is logged, not asserted: the evidence a
 * 20 s run gathers (5-15 samples) leaves a share's error near 0.1. */
struct site_fig {
	double est, var, evidence;
	long rank;
	bool by_volume, overlaps_next, found;
};

static void two_sites_fig(json_object *report, struct site_fig *hot, struct site_fig *cold)
{
	json_object *objects = e2e_get(report, "objects");

	memset(hot, 0, sizeof(*hot));
	memset(cold, 0, sizeof(*cold));
	for (size_t i = 0; objects && i < json_object_array_length(objects); i++) {
		json_object *o = json_object_array_get_idx(objects, i);
		json_object *iv = e2e_get(o, "interval"), *path = e2e_get(o, "path");
		const char *ty = json_object_get_string(e2e_get(o, "type"));
		struct site_fig *f;
		double se;

		if (!ty || strcmp(ty, "TwoSitesFixture$Cell"))
			continue;
		if (e2e_stack_has(o, "TwoSitesFixture.newHot", STACK_DEPTH))
			f = hot;
		else if (e2e_stack_has(o, "TwoSitesFixture.newCold", STACK_DEPTH))
			f = cold;
		else
			continue;
		se = iv ? e2e_get_double(iv, "samples_estimated_se") : NAN;
		if (!f->found) {
			f->rank = (long)i;
			f->overlaps_next = iv && json_object_get_boolean(e2e_get(iv, "overlaps_next"));
		}
		f->found = true;
		f->est += e2e_get_double(o, "samples_estimated");
		f->var += se * se;
		if (path && e2e_get(path, "evidence_samples")) {
			f->evidence = e2e_get_double(path, "evidence_samples");
			f->by_volume |= json_object_get_boolean(e2e_get(path, "split_by_volume"));
		}
	}
}

Test(e2e_java, two_sites_intervals_never_a_confident_wrong_answer, .timeout = 600)
{
	const char *opts[] = { "-q", RING, NULL };
	json_object *report = NULL;
	struct site_fig hot, cold;
	double s, se_s, h, c, z = 1.6448536269514722;
	bool apart;

	for (int secs = 10; secs <= 20; secs *= 2) {
		char sec[16];
		const char *argv[] = { "java", "-cp", JAVA_CP, "TwoSitesFixture", sec, NULL };

		snprintf(sec, sizeof(sec), "%d", secs);
		if (report)
			json_object_put(report);
		report = record_argv(argv, opts);
		two_sites_fig(report, &hot, &cold);
		e2e_diag("TwoSitesFixture %d s: hot %.1f (se %.1f), cold %.1f (se %.1f), evidence "
			 "%.1f", secs, hot.est, sqrt(hot.var), cold.est, sqrt(cold.var),
			 hot.evidence);
		apart = hot.est - z * sqrt(hot.var) > cold.est + z * sqrt(cold.var) ||
			cold.est - z * sqrt(cold.var) > hot.est + z * sqrt(hot.var);
		if (hot.est + cold.est >= 400 && apart)
			break;
	}
	/* the focus: the hot class's sites had no evidence at the start */
	{
		const char *note = e2e_note(report, "focus: the sites of TwoSitesFixture$Cell");

		e2e_diag("%s", note ? note : "no focus note");
		cr_expect_not_null(note, "no focus on the cells' sites");
	}
	cr_assert(hot.found && cold.found, "the two sites are not both in the report");
	h = hot.est;
	c = cold.est;
	cr_assert_gt(h + c, 0, "no sample on either site");
	cr_assert(isfinite(hot.var) && isfinite(cold.var), "no interval stated");
	s = h / (h + c);
	se_s = sqrt(hot.var * c * c + cold.var * h * h) / ((h + c) * (h + c));
	apart = h - z * sqrt(hot.var) > c + z * sqrt(cold.var) ||
		c - z * sqrt(cold.var) > h + z * sqrt(hot.var);
	e2e_diag("hot site's share %.3f, se %.3f; intervals %s; strict target (first, within "
		 "0.1, apart): %s", s, se_s, apart ? "apart" : "overlap",
		 apart && h > c && fabs(s - 0.8) <= 0.1 ? "met" : "not met");
	cr_expect_leq(fabs(s - 0.8), 3.9 * se_s, "hot site's share %.3f, truth 0.8, se %.3f", s,
		      se_s);
	if (apart)
		cr_expect_gt(h, c, "intervals apart, cold site first: hot %.1f, cold %.1f", h, c);
	else if (labs(hot.rank - cold.rank) == 1)
		cr_expect((hot.rank < cold.rank ? hot : cold).overlaps_next,
			  "overlapping neighbours not marked: hot %.1f, cold %.1f", h, c);
	if (hot.evidence == 0)
		cr_expect(hot.by_volume && cold.by_volume,
			  "no evidence, split by volume not said");
	json_object_put(report);
}
