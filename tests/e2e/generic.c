/* generic.c - end-to-end tests of the generic runtime adapter
 * (runtimes/generic/): HotSpot forced to be an unknown JVM (--runtime
 * generic, or OBJSCOPE_RUNTIME=generic) in launch and attach mode, checked
 * against what the full adapter (runtimes/hotspot/) gives on the same
 * fixture. The JVM tells its heap's bounds itself (-Xlog:gc+heap+coops),
 * which the generic adapter must find from the mappings alone.
 * Run from the repository root after `make all build/java/ObjFixture.class
 * build/java/AttachFixture.class build/java/JitNative.class`.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/e2e/helpers.h"

#define JAVA_CP "build/java"
#define RING "--ring-kb", "4096"
#define HEAP_LINE "[managed heap of an unknown runtime: objects not identified]"
/* The Java-heap share of addressed samples, generic against full adapter:
 * the same workload, two runs of a sampler: measured 0.5 to 2 points apart
 * (ObjFixture 93.2% / 93.8%); 10 points is far from any real difference
 * (a heap found wrong gives 0% or the whole address space). */
#define SHARE_TOLERANCE 0.10
#define MIN_ADDRESSED 500 /* samples with a data address, per run */

static char *tmp;

static void setup(void)
{
	cr_assert(access(JAVA_CP "/ObjFixture.class", R_OK) == 0 &&
			  access(JAVA_CP "/AttachFixture.class", R_OK) == 0 &&
			  access(JAVA_CP "/JitNative.class", R_OK) == 0,
		  "build/java/{ObjFixture,AttachFixture,JitNative}.class missing: run `make e2e`");
	tmp = e2e_suite_setup();
}

static void teardown(void)
{
	e2e_suite_teardown(&tmp);
}

TestSuite(e2e_generic, .init = setup, .fini = teardown, .timeout = 600);

/* The Java heap as the JVM reports it in the -Xlog file at path:
 * "Heap address: 0x0000000080000000, size: 2048 MB, ...". */
static void jvm_heap(const char *path, uint64_t *lo, uint64_t *hi)
{
	char line[512];
	unsigned long long a = 0, mb = 0;
	FILE *f = fopen(path, "r");
	const char *at;

	cr_assert_not_null(f, "no %s: the JVM did not log its heap", path);
	while (fgets(line, sizeof(line), f)) {
		at = strstr(line, "Heap address: ");
		if (at && sscanf(at, "Heap address: %llx, size: %llu MB", &a, &mb) == 2)
			break;
	}
	fclose(f);
	cr_assert_gt(mb, 0, "no heap address in %s", path);
	*lo = a;
	*hi = a + (mb << 20);
}

/* The managed heap the generic adapter took, from its note. */
static void generic_heap(json_object *report, uint64_t *lo, uint64_t *hi)
{
	const char *n = e2e_note(report, "managed heap taken as [");
	unsigned long long a, b;

	cr_assert_not_null(n, "no note on the managed heap");
	n = strstr(n, "taken as [");
	cr_assert_eq(sscanf(n, "taken as [0x%llx, 0x%llx)", &a, &b), 2, "%s", n);
	*lo = a;
	*hi = b;
}

static json_object *object_named(json_object *report, const char *first_frame)
{
	json_object *objects = e2e_get(report, "objects");

	for (size_t i = 0; objects && i < json_object_array_length(objects); i++) {
		json_object *o = json_object_array_get_idx(objects, i);
		const char *f = e2e_frame_text(e2e_get(o, "alloc_stack"), 0);

		if (f && strcmp(f, first_frame) == 0)
			return o;
	}
	return NULL;
}

/* Whether an access path of o has a frame containing text. */
static bool access_has(json_object *o, const char *text)
{
	json_object *acc = e2e_get(o, "accesses");

	for (size_t i = 0; acc && i < json_object_array_length(acc); i++) {
		json_object *st = e2e_get(json_object_array_get_idx(acc, i), "stack");

		for (size_t k = 0; st && k < json_object_array_length(st); k++) {
			const char *f = e2e_frame_text(st, k);

			if (f && strstr(f, text))
				return true;
		}
	}
	return false;
}

static double java_share(json_object *report)
{
	json_object *meta = e2e_get(report, "meta");
	int64_t addressed = e2e_get_int(meta, "samples_addressed");

	return addressed > 0 ? (double)e2e_get_int(meta, "samples_java_heap") / (double)addressed
			     : 0;
}

/* What every generic report must say: the heap's line holds every sample
 * of the managed heap (none goes to a mapping the heap was made of, with
 * its mmap call as allocation path), the notes say what is not known, and
 * the HotSpot adapter stayed off (no Java object, no collection seen). */
static json_object *check_generic(json_object *report, const char *jit_method)
{
	json_object *meta = e2e_get(report, "meta"), *line = object_named(report, HEAP_LINE);
	json_object *objects = e2e_get(report, "objects");
	int64_t jheap = e2e_get_int(meta, "samples_java_heap");
	char buf[2048];

	cr_assert_not_null(line, "no \"%s\" line", HEAP_LINE);
	cr_expect_gt(jheap, 0, "no sample in the managed heap");
	cr_expect_eq(e2e_get_int(line, "samples"), jheap,
		     "%lld managed-heap samples, %lld on the heap's line: the others went to "
		     "the heap's own mappings", (long long)jheap,
		     (long long)e2e_get_int(line, "samples"));
	cr_expect_eq(e2e_get_int(meta, "samples_java_attributed"), jheap);
	cr_expect(access_has(line, jit_method), "no access path through %s named from the perf "
		  "map: %s", jit_method, e2e_stack_str(line, buf, sizeof(buf)));
	cr_expect(e2e_note(report, "What the generic adapter cannot know is not guessed"),
		  "no note on what is not known");
	cr_expect(e2e_note(report, "JIT code named from /tmp/perf-"), "no note on the perf map");
	cr_expect_null(e2e_note(report, "HotSpot"), "the HotSpot adapter spoke: %s",
		       e2e_note(report, "HotSpot"));
	cr_expect_eq(e2e_get_int(meta, "gc_count"), 0, "collections seen: HotSpot's hooks ran");
	for (size_t i = 0; objects && i < json_object_array_length(objects); i++) {
		const char *type = json_object_get_string(
			e2e_get(json_object_array_get_idx(objects, i), "type"));

		cr_expect(!type || !strstr(type, "[]"), "a Java object (%s) in a generic report",
			  type);
	}
	return line;
}

/* Runs argv plainly and under `objscope record opts`: the same output and
 * exit status. The report, or NULL. */
static json_object *record(const char *const argv[], const char *const opts[])
{
	char *profile = e2e_path(tmp, "g.data");
	json_object *report = e2e_record_unchanged(tmp, profile, opts, argv, true);

	free(profile);
	return report;
}

static void remove_perf_map(json_object *report)
{
	json_object *pids = e2e_get(e2e_get(report, "meta"), "pids");
	char path[64];

	for (size_t i = 0; pids && i < json_object_array_length(pids); i++) {
		snprintf(path, sizeof(path), "/tmp/perf-%d.map",
			 json_object_get_int(json_object_array_get_idx(pids, i)));
		unlink(path);
	}
}

/* Launch mode, ObjFixture: the heap's bounds are the JVM's (512 MiB: smaller
 * than the 1 GiB class space HotSpot reserves too, so not the largest
 * reservation), its samples are about as many as the full adapter finds in
 * the Java heap, and compiled readRandom is named from the perf map the
 * user asked for. */
Test(e2e_generic, launch_like_the_full_adapter)
{
	/* a fixed rate in both: the budget (the default) samples the first
	 * 2 CPU-seconds in full and then little where a sample is dear (38 us
	 * on a Firecracker guest), so two runs would weigh ObjFixture's phases
	 * differently (under ASan there: 0.784 against 0.902) */
	const char *gen_opts[] = { "-q", RING, "-F", "1000", "--runtime", "generic", NULL };
	const char *hs_opts[] = { "-q", RING, "-F", "1000", NULL };
	char *log = e2e_path(tmp, "heap.log"), xlog[PATH_MAX + 64], rounds[16];
	const char *argv[] = { "java", "-Xmx512m", "-XX:+UnlockDiagnosticVMOptions",
			       "-XX:+DumpPerfMapAtExit", xlog, "-cp", JAVA_CP, "ObjFixture",
			       rounds, NULL };
	json_object *gen = NULL, *hs;
	uint64_t lo, hi, glo, ghi;
	double gshare, hshare;

	snprintf(xlog, sizeof(xlog), "-Xlog:gc+heap+coops=debug:file=%s", log);
	/* enough samples: the work doubles until there are */
	for (int r = 60; r <= 60 * 16; r *= 2) {
		snprintf(rounds, sizeof(rounds), "%d", r);
		if (gen) {
			remove_perf_map(gen);
			json_object_put(gen);
		}
		gen = record(argv, gen_opts);
		if (e2e_get_int(e2e_get(gen, "meta"), "samples_addressed") >= MIN_ADDRESSED)
			break;
	}
	cr_assert_geq(e2e_get_int(e2e_get(gen, "meta"), "samples_addressed"), MIN_ADDRESSED);
	jvm_heap(log, &lo, &hi);
	generic_heap(gen, &glo, &ghi);
	cr_expect(glo == lo && ghi == hi, "managed heap [0x%llx, 0x%llx), the JVM's [0x%llx, 0x%llx)",
		  (unsigned long long)glo, (unsigned long long)ghi, (unsigned long long)lo,
		  (unsigned long long)hi);
	cr_expect(e2e_note(gen, "the one with the most memory committed in it"), "heap not from "
		  "the VM's reservations");
	check_generic(gen, "ObjFixture.readRandom");
	/* the fixture's collections copy its 4 KiB arrays with memcpy/memmove
	 * from GC threads */
	{
		const char *mv = e2e_note(gen, "its GC copied");
		unsigned long long mib = 0, copies = 0;

		cr_assert_not_null(mv, "no note on the GC's copies");
		mv = strstr(mv, "its GC copied");
		cr_expect_eq(sscanf(mv, "its GC copied %llu MiB in %llu copies", &mib, &copies), 2,
			     "%s", mv);
		cr_expect_gt(copies, 100, "%s", mv);
	}
	remove_perf_map(gen);

	hs = record(argv, hs_opts);
	gshare = java_share(gen);
	hshare = java_share(hs);
	cr_log_info("Java-heap share of addressed samples: generic %.3f, hotspot %.3f", gshare,
		    hshare);
	cr_expect(gshare > hshare - SHARE_TOLERANCE && gshare < hshare + SHARE_TOLERANCE,
		  "Java-heap share %.3f (generic) against %.3f (hotspot)", gshare, hshare);
	cr_expect_gt(e2e_get_int(e2e_get(hs, "meta"), "gc_count"), 0, "the full adapter saw no "
		     "collection: the comparison is not with it");
	cr_expect_null(object_named(hs, HEAP_LINE), "the generic line in a HotSpot report");
	remove_perf_map(hs);
	json_object_put(gen);
	json_object_put(hs);
	free(log);
}

static int64_t zlib_allocations(json_object *report)
{
	json_object *objects = e2e_get(report, "objects");
	int64_t n = 0;

	for (size_t i = 0; objects && i < json_object_array_length(objects); i++) {
		json_object *o = json_object_array_get_idx(objects, i);

		if (e2e_stack_has(o, "Java_java_util_zip_Deflater_init", 4))
			n += e2e_get_int(o, "allocations");
	}
	return n;
}

/* Native allocations of a Java program (zlib's, under compiled frames of
 * tests/java/JitNative.java) are the same objects under both adapters; with
 * the generic one their paths stop at the JIT frame (no unwind information
 * there: never stepped through by guess) and the program runs unchanged. */
Test(e2e_generic, native_objects_as_with_the_full_adapter)
{
	const char *argv[] = { "java", "-cp", JAVA_CP, "JitNative", NULL };
	/* --small-sample 0: only the tracked callocs, not zlib's small blocks
	 * sampled by bytes, whose estimated counts differ from run to run */
	const char *gen_opts[] = { "-q", RING, "--small-sample", "0", "--runtime", "generic", NULL };
	const char *hs_opts[] = { "-q", RING, "--small-sample", "0", NULL };
	json_object *gen = record(argv, gen_opts), *hs = record(argv, hs_opts);
	int64_t g = zlib_allocations(gen), h = zlib_allocations(hs);

	cr_log_info("zlib allocations: generic %lld, hotspot %lld", (long long)g, (long long)h);
	/* 20000 rounds, 5 tracked callocs each */
	cr_expect_gt(h, 40000, "the full adapter saw %lld zlib allocations", (long long)h);
	if (!e2e_get_int(e2e_get(gen, "meta"), "dropped_events") &&
	    !e2e_get_int(e2e_get(hs, "meta"), "dropped_events"))
		cr_expect_eq(g, h, "zlib allocations: %lld generic, %lld hotspot", (long long)g,
			     (long long)h);
	remove_perf_map(gen);
	remove_perf_map(hs);
	json_object_put(gen);
	json_object_put(hs);
}

Test(e2e_generic, unknown_runtime_name_refused)
{
	const char *argv[] = { E2E_OBJSCOPE, "record", "--runtime", "j9", "--", "true", NULL };
	struct e2e_result r;

	cr_assert_eq(e2e_run(tmp, argv, NULL, &r), 0);
	cr_expect_neq(r.status, 0);
	cr_expect(strstr(r.err, "objscope: --runtime 'j9' is not a runtime: auto, or one of") &&
			  strstr(r.err, "generic"),
		  "%s", r.err);
	cr_expect_eq(e2e_count_lines(r.err, r.err_len), 1, "%s", r.err);
	e2e_result_free(&r);
	setenv("OBJSCOPE_RUNTIME", "j9", 1);
	argv[2] = "-q";
	argv[3] = "-q";
	cr_assert_eq(e2e_run(tmp, argv, NULL, &r), 0);
	unsetenv("OBJSCOPE_RUNTIME");
	cr_expect_neq(r.status, 0);
	cr_expect(strstr(r.err, "$OBJSCOPE_RUNTIME 'j9' is not a runtime"), "%s", r.err);
	e2e_result_free(&r);
}

/* ---- attach mode ---------------------------------------------------------- */

#define ATTACH_OK "ready\nok 16 1024\n"

static const char *slurp(const char *name, const char *ext)
{
	static char buf[8192];
	char *base = e2e_path(tmp, name), path[PATH_MAX];
	FILE *f;
	size_t n = 0;

	snprintf(path, sizeof(path), "%s.%s", base, ext);
	free(base);
	f = fopen(path, "r");
	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = 0;
	return buf;
}

static int wait_exit(pid_t pid)
{
	int st = 0;

	cr_assert_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* `java -Xmx512m [xlog] AttachFixture SECONDS` started without objscope,
 * attached to for `secs` seconds (generic: through OBJSCOPE_RUNTIME, the
 * user asking the JVM for its perf map with jcmd meanwhile); its output
 * unchanged. The report. */
static json_object *attach_run(bool generic, int secs, const char *xlog)
{
	char cp[PATH_MAX], life[16], dur[16], spid[16], jcmd[128], msg[512];
	char *profile = e2e_path(tmp, "a.data");
	const char *argv[] = { "java", "-Xmx512m", xlog, "-cp", cp, "AttachFixture", life, NULL };
	const char *att[] = { E2E_OBJSCOPE, "attach", "-q", "-d", dur, "-o", profile, spid, NULL };
	const char *ask[] = { "sh", "-c", jcmd, NULL };
	struct e2e_result res;
	json_object *report;
	pid_t pid, asker = 0;

	cr_assert_not_null(realpath(JAVA_CP, cp));
	snprintf(life, sizeof(life), "%d", secs + 6);
	snprintf(dur, sizeof(dur), "%d", secs);
	pid = e2e_spawn_logged(tmp, "jvm", argv, tmp);
	for (int i = 0; i < 3000 && !strstr(slurp("jvm", "out"), "ready"); i++)
		usleep(10000);
	cr_assert(strstr(slurp("jvm", "out"), "ready"), "AttachFixture did not start: %s",
		  slurp("jvm", "err"));
	usleep(500000); /* into its steady loop */
	snprintf(spid, sizeof(spid), "%d", (int)pid);
	if (generic) {
		/* the user's part: the JVM writes its perf map while attached */
		snprintf(jcmd, sizeof(jcmd), "sleep %d; jcmd %d Compiler.perfmap", secs / 2,
			 (int)pid);
		asker = e2e_spawn_logged(tmp, "jcmd", ask, NULL);
		setenv("OBJSCOPE_RUNTIME", "generic", 1);
	}
	cr_assert_eq(e2e_run(tmp, att, NULL, &res), 0);
	unsetenv("OBJSCOPE_RUNTIME");
	cr_assert_eq(res.status, 0, "attach exited %d: %s", res.status, res.err);
	e2e_result_free(&res);
	if (asker)
		cr_expect_eq(wait_exit(asker), 0, "jcmd failed: %s", slurp("jcmd", "err"));
	cr_expect_eq(wait_exit(pid), 0, "the JVM failed after the attach: %s", slurp("jvm", "err"));
	cr_expect_str_eq(slurp("jvm", "out"), ATTACH_OK, "JVM output changed");
	cr_expect_str_eq(slurp("jvm", "err"), "", "JVM wrote on stderr");
	report = e2e_report_json(tmp, profile, msg, sizeof(msg));
	cr_assert_not_null(report, "%s", msg);
	free(profile);
	return report;
}

/* Attach mode: the reservation came before objscope, so the heap is the
 * maps' view (the largest partly uncommitted anonymous region); it starts
 * where the JVM's heap starts and covers it but for what the JVM maps
 * there from files (the CDS archive's heap region at its top): at least
 * 99% of it, nothing outside it. */
Test(e2e_generic, attach_like_the_full_adapter)
{
	char *log = e2e_path(tmp, "aheap.log"), xlog[PATH_MAX + 64];
	json_object *gen = NULL, *hs;
	uint64_t lo, hi, glo, ghi;
	double gshare, hshare;
	int secs;

	snprintf(xlog, sizeof(xlog), "-Xlog:gc+heap+coops=debug:file=%s", log);
	for (secs = 3; secs <= 12; secs *= 2) {
		if (gen) {
			remove_perf_map(gen);
			json_object_put(gen);
		}
		gen = attach_run(true, secs, xlog);
		if (e2e_get_int(e2e_get(gen, "meta"), "samples_addressed") >= MIN_ADDRESSED)
			break;
	}
	cr_assert_geq(e2e_get_int(e2e_get(gen, "meta"), "samples_addressed"), MIN_ADDRESSED);
	jvm_heap(log, &lo, &hi);
	generic_heap(gen, &glo, &ghi);
	cr_log_info("attach: managed heap [0x%llx, 0x%llx), the JVM's [0x%llx, 0x%llx)",
		    (unsigned long long)glo, (unsigned long long)ghi, (unsigned long long)lo,
		    (unsigned long long)hi);
	cr_expect_eq(glo, lo, "managed heap from 0x%llx, the JVM's from 0x%llx",
		     (unsigned long long)glo, (unsigned long long)lo);
	cr_expect(ghi <= hi && (ghi - glo) * 100 >= (hi - lo) * 99,
		  "managed heap [0x%llx, 0x%llx), the JVM's [0x%llx, 0x%llx)",
		  (unsigned long long)glo, (unsigned long long)ghi, (unsigned long long)lo,
		  (unsigned long long)hi);
	cr_expect(e2e_note(gen, "partly uncommitted anonymous regions of its /proc/PID/maps"),
		  "heap not from the maps");
	check_generic(gen, "AttachFixture.");
	remove_perf_map(gen);

	hs = attach_run(false, secs > 12 ? 12 : secs, xlog);
	gshare = java_share(gen);
	hshare = java_share(hs);
	cr_log_info("attach: Java-heap share of addressed samples: generic %.3f, hotspot %.3f",
		    gshare, hshare);
	cr_expect(gshare > hshare - SHARE_TOLERANCE && gshare < hshare + SHARE_TOLERANCE,
		  "Java-heap share %.3f (generic) against %.3f (hotspot)", gshare, hshare);
	cr_expect(e2e_note(hs, "HotSpot"), "the full adapter wrote no note");
	remove_perf_map(hs);
	json_object_put(gen);
	json_object_put(hs);
	free(log);
}
