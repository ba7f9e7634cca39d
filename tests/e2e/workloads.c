/* workloads.c - end-to-end tests of `objscope record` on real Java programs
 * (docs/WORKLOADS.md), under G1, Parallel and Serial:
 *   javac  compiling JAVAC_FILES of the JDK's own java.util sources
 *          (tests/workloads/javac_sources.sh, openjdk-17-source);
 *   H2     an in-memory database filled with H2_ROWS rows, joined and
 *          aggregated through org.h2.tools.RunScript
 *          (tests/workloads/h2_script.sh, libh2-java).
 * Each runs once alone and once under objscope: stdout, stderr and exit
 * status must be identical (javac: also the number of .class files); the
 * report must attribute heap samples (to Java objects among others), count
 * collections when the JVM's own GC log shows some, and name the Java
 * frames of its top Java objects.
 * Run from the repository root after `make all`.
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <ftw.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/e2e/helpers.h"

/* Sizes: the seven tests of the suite took 2-3 minutes on 2 busy cores. */
#define JAVAC_FILES "150"
#define H2_ROWS "150000"
#define H2_JAR "/usr/share/java/h2.jar"
#define JAVA_TOP 5    /* Java objects whose alloc_stack must be named */
#define STACK_DEPTH 3 /* a named Java frame within the first frames */

static char *tmp;

static void setup(void)
{
	tmp = e2e_suite_setup();
}

static void teardown(void)
{
	e2e_suite_teardown(&tmp);
}

TestSuite(e2e_workloads, .init = setup, .fini = teardown, .timeout = 600);

/* Runs a preparation script. When it fails: skips the test if `package`
 * (the Debian package it needs) is given, fails it otherwise. */
static void prepare(const char *const argv[], const char *package)
{
	struct e2e_result res;
	int status;

	cr_assert_eq(e2e_run(tmp, argv, NULL, &res), 0, "cannot run %s", argv[1]);
	status = res.status;
	if (status != 0)
		/* not cr_log_error: a logged error makes the run exit 1 even when
		 * the test is then skipped */
		e2e_diag("%s exited %d: %.300s", argv[1], status, res.err);
	e2e_result_free(&res);
	if (status != 0 && package)
		cr_skip_test("%s failed (install the Debian package %s: make deps)", argv[1],
			     package);
	cr_assert_eq(status, 0, "%s failed", argv[1]);
}

/* Lines of a JVM unified GC log (-Xlog:gc) containing `what` (" Pause ":
 * pauses, " Pause Full": full collections); -1 when there is no log. */
static int gc_log_count(const char *path, const char *what)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, what) != NULL;
	fclose(f);
	return n;
}

static size_t class_files;

static int count_class(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	size_t len = strlen(path);

	(void)st;
	(void)ftw;
	if (flag == FTW_F && len > 6 && !strcmp(path + len - 6, ".class"))
		class_files++;
	return 0;
}

static size_t count_class_files(const char *dir)
{
	class_files = 0;
	nftw(dir, count_class, 16, FTW_PHYS);
	return class_files;
}

/* A named Java frame: "pkg.Class.method" (optionally followed by
 * "(File.java:LINE)"): dotted identifiers, no "::", no spaces, no
 * "[unknown]", not a bare "Interpreter". */
static int java_frame(const char *frame)
{
	size_t dots = 0;
	const char *p;

	if (!frame || !(isalpha((unsigned char)frame[0]) || frame[0] == '_' || frame[0] == '$'))
		return 0;
	for (p = frame; *p && *p != '('; p++) {
		if (*p == '.')
			dots++;
		else if (!(isalnum((unsigned char)*p) || strchr("_$<>", *p)))
			return 0;
	}
	return dots >= 1 && p[-1] != '.';
}

static int frame_synthetic(json_object *obj)
{
	json_object *st = e2e_get(obj, "alloc_stack");
	const char *f = e2e_frame_text(st, 0);

	return f && f[0] == '[';
}

/* A Java object a JVM thread of its own allocated outside any Java code
 * (a JIT compiler or the VM thread making a class mirror): its path is the
 * thread's entry alone once the JVM's internal frames are trimmed
 * (hotspot.c hs_trim_jvm_frames). Seen once in javac -XX:+UseSerialGC, a
 * java.lang.Class with 0 samples: "thread_native_entry(Thread*) <-
 * start_thread". */
static int jvm_thread_entry_only(json_object *obj)
{
	json_object *st = e2e_get(obj, "alloc_stack");
	size_t n = st ? json_object_array_length(st) : 0;
	const char *f = n ? e2e_frame_text(st, 0) : NULL;

	return n && n <= 2 && f && !strncmp(f, "thread_native_entry", 19) &&
	       (n == 1 || !strncmp(e2e_frame_text(st, 1), "start_thread", 12));
}

static int stack_has_java_frame(json_object *obj, size_t depth)
{
	json_object *st = e2e_get(obj, "alloc_stack");
	size_t n = st ? json_object_array_length(st) : 0;

	for (size_t i = 0; i < n && i < depth; i++)
		if (java_frame(e2e_frame_text(st, i)))
			return 1;
	return 0;
}

/* The report checks; `what` names the run in messages, `gc_log` is the
 * profiled run's own GC log. */
/* Compiled frames named from their nmethods' debug info, with the methods
 * inlined there (docs/JAVA.md "Compiled frames"). */
static void check_compiled_frames(const char *what, json_object *report)
{
	const char *note = e2e_note(report, "frames in compiled Java methods named");
	unsigned long long named = 0, frames = 0, inlined = 0;

	cr_expect(note, "%s: no note on compiled frames", what);
	if (!note)
		return;
	if (sscanf(strstr(note, ": ") + 2, "%llu of %llu frames in compiled Java methods named by "
		   "their nmethods' debug info, %llu more inlined", &named, &frames, &inlined) != 3) {
		cr_expect_fail("%s: note not understood: %s", what, note);
		return;
	}
	cr_log_info("%s: %s", what, note);
	cr_expect(frames > 0 && named >= frames * 9 / 10 && inlined > 0, "%s: %s", what, note);
}

/* Java frames with their source lines (docs/JAVA.md "Source lines"): the
 * JDK's and H2's classes carry line tables. */
static void check_source_lines(const char *what, json_object *report)
{
	const char *note = e2e_note(report, "Java frames with their source line");
	unsigned long long lined = 0, frames = 0;

	cr_expect(note, "%s: no note on source lines", what);
	if (!note)
		return;
	if (sscanf(strstr(note, ": ") + 2, "%llu of %llu Java frames", &lined, &frames) != 2) {
		cr_expect_fail("%s: note not understood: %s", what, note);
		return;
	}
	cr_log_info("%s: %s", what, note);
	cr_expect(frames > 0 && lined >= frames * 8 / 10, "%s: %s", what, note);
}

static void check_report(const char *what, const char *profile, const char *gc_log)
{
	json_object *report, *meta, *objects;
	int64_t heap, attributed, gcs, java_samples = 0, checked = 0;
	int pauses = gc_log_count(gc_log, " Pause "), full = gc_log_count(gc_log, " Pause Full");
	char msg[512], buf[2048];

	report = e2e_report_json(tmp, profile, msg, sizeof(msg));
	cr_assert_not_null(report, "%s: %s", what, msg);
	meta = e2e_get(report, "meta");
	heap = e2e_get_int(meta, "samples_heap");
	attributed = e2e_get_int(meta, "samples_attributed");
	gcs = e2e_get_int(meta, "gc_count");
	objects = e2e_get(report, "objects");
	cr_assert(objects && json_object_array_length(objects) > 0, "%s: objects[] is empty", what);

	for (size_t i = 0; i < json_object_array_length(objects); i++) {
		json_object *o = json_object_array_get_idx(objects, i);
		const char *type = json_object_get_string(e2e_get(o, "type"));

		/* untyped, or the JVM's own native memory ("[JVM metaspace: class
		 * metadata]", docs/JAVA.md): not a Java object */
		if (!type || !*type || !strncmp(type, "[JVM", 4))
			continue;
		java_samples += e2e_get_int(o, "samples");
		/* a class without an allocation path: objects smaller than
		 * --min-size found at their samples ("[smaller than ...]") */
		if (frame_synthetic(o))
			continue;
		if (jvm_thread_entry_only(o)) {
			cr_log_info("%s: Java object #%zu (%s) allocated by a JVM thread outside "
				    "Java code: %s", what, i + 1, type, e2e_stack_str(o, buf, sizeof(buf)));
			continue;
		}
		if (checked >= JAVA_TOP)
			continue;
		checked++;
		cr_expect(stack_has_java_frame(o, STACK_DEPTH),
			  "%s: Java object #%zu (%s, %lld samples) has no named Java frame in its "
			  "first %d frames: %s",
			  what, i + 1, type, (long long)e2e_get_int(o, "samples"), STACK_DEPTH,
			  e2e_stack_str(o, buf, sizeof(buf)));
	}
	check_compiled_frames(what, report);
	check_source_lines(what, report);
	cr_expect_geq(e2e_get_int(meta, "samples_java_attributed"), 0,
		      "%s: meta.samples_java_attributed missing", what);
	cr_log_info("%s: Java heap: %lld samples, %lld on tracked Java objects", what,
		    (long long)e2e_get_int(meta, "samples_java_heap"),
		    (long long)e2e_get_int(meta, "samples_java_attributed"));
	cr_log_info("%s: samples total %lld, heap %lld, attributed %lld (%.1f%% of heap "
		    "samples; %lld to Java objects, the rest to malloc'd objects), gc_count %lld "
		    "(GC log: %d pauses, %d of them full), %zu contexts, dropped events %lld",
		    what, (long long)e2e_get_int(meta, "samples_total"), (long long)heap,
		    (long long)attributed, heap > 0 ? 100.0 * (double)attributed / (double)heap : 0.0,
		    (long long)java_samples, (long long)gcs, pauses, full,
		    json_object_array_length(objects), (long long)e2e_get_int(meta, "dropped_events"));

	cr_expect_gt(heap, 0, "%s: no heap samples", what);
	cr_expect_gt(attributed, 0, "%s: no sample attributed (%lld heap samples)", what,
		     (long long)heap);
	cr_expect_gt(java_samples, 0, "%s: no sample attributed to a Java object", what);
	cr_expect_gt(checked, 0, "%s: no Java object with a class and an allocation path in the "
		     "report", what);
	cr_expect_geq(pauses, 0, "%s: no GC log %s", what, gc_log);
	if (pauses > 0)
		cr_expect_gt(gcs, 0, "%s: the JVM logged %d GC pauses, report gc_count is %lld",
			     what, pauses, (long long)gcs);
	json_object_put(report);
}

/* Runs plain[] alone and prof[] under `objscope record -q -o PROFILE`
 * (the two differ only in output paths: GC log, javac's -d): same exit
 * status, stdout and stderr. */
static void run_pair(const char *what, const char *const plain[], const char *const prof[],
		     const char *profile)
{
	const char *opts[] = { "-q", NULL };
	struct e2e_result alone, under;

	cr_assert_eq(e2e_run(tmp, plain, NULL, &alone), 0, "cannot run %s", plain[0]);
	cr_assert_eq(alone.status, 0, "%s exited %d alone: %.500s", what, alone.status, alone.err);
	cr_assert_eq(e2e_record(tmp, profile, opts, prof, &under), 0, "cannot run objscope record");
	cr_assert_eq(under.status, alone.status, "%s: exit status %d under objscope, %d alone; "
		     "stderr: %.500s", what, under.status, alone.status, under.err);
	cr_expect(under.out_len == alone.out_len && !memcmp(under.out, alone.out, alone.out_len),
		  "%s: stdout differs under objscope (%zu bytes vs %zu alone)", what,
		  under.out_len, alone.out_len);
	cr_expect(under.err_len == alone.err_len && !memcmp(under.err, alone.err, alone.err_len),
		  "%s: stderr differs under objscope (%zu bytes vs %zu alone)", what,
		  under.err_len, alone.err_len);
	cr_log_info("%s: exit status %d, stdout %zu bytes, stderr %zu bytes (%zu lines): %s", what,
		    alone.status, alone.out_len, alone.err_len,
		    e2e_count_lines(alone.err, alone.err_len),
		    under.out_len == alone.out_len && under.err_len == alone.err_len &&
				    !memcmp(under.out, alone.out, alone.out_len) &&
				    !memcmp(under.err, alone.err, alone.err_len) ?
			    "identical under objscope" :
			    "DIFFERENT under objscope");
	e2e_result_free(&alone);
	e2e_result_free(&under);
}

/* Paths of one test, all in tmp. */
struct wl_paths {
	char *profile, *log_plain, *log_prof, *opt_plain, *opt_prof; /* opt: -Xlog:gc:file=... */
};

static void paths_init(struct wl_paths *p, const char *log_prefix)
{
	p->profile = e2e_path(tmp, "workload.data");
	p->log_plain = e2e_path(tmp, "gc-plain.log");
	p->log_prof = e2e_path(tmp, "gc-prof.log");
	cr_assert(p->profile && p->log_plain && p->log_prof);
	cr_assert(asprintf(&p->opt_plain, "%s-Xlog:gc:file=%s", log_prefix, p->log_plain) > 0);
	cr_assert(asprintf(&p->opt_prof, "%s-Xlog:gc:file=%s", log_prefix, p->log_prof) > 0);
}

static void paths_free(struct wl_paths *p)
{
	free(p->profile);
	free(p->log_plain);
	free(p->log_prof);
	free(p->opt_plain);
	free(p->opt_prof);
}

/* javac compiling JAVAC_FILES java.util sources as part of java.base, with
 * -Xlint:all so that stderr carries a few hundred warnings to compare. */
static void javac_workload(const char *gc_flag)
{
	char *src = e2e_path(tmp, "javac"), *out_plain = e2e_path(tmp, "classes-plain"),
	     *out_prof = e2e_path(tmp, "classes-prof"), *files = NULL, *patch = NULL, jgc[64],
	     what[64];
	const char *prep[] = { "sh", "tests/workloads/javac_sources.sh", src, JAVAC_FILES, NULL };
	struct wl_paths p;
	size_t n_plain, n_prof;

	cr_assert(src && out_plain && out_prof);
	prepare(prep, "openjdk-17-source");
	paths_init(&p, "-J");
	cr_assert(asprintf(&files, "@%s/files.txt", src) > 0);
	cr_assert(asprintf(&patch, "java.base=%s/src/java.base", src) > 0);
	cr_assert(mkdir(out_plain, 0755) == 0 && mkdir(out_prof, 0755) == 0);
	snprintf(jgc, sizeof(jgc), "-J%s", gc_flag);
	snprintf(what, sizeof(what), "javac %s", gc_flag);
	{
		const char *plain[] = { "javac", jgc, "-J-Xmx256m", p.opt_plain, "-Xlint:all",
					"-Xmaxwarns", "100000", "--patch-module", patch,
					"-d", out_plain, files, NULL };
		const char *prof[] = { "javac", jgc, "-J-Xmx256m", p.opt_prof, "-Xlint:all",
				       "-Xmaxwarns", "100000", "--patch-module", patch,
				       "-d", out_prof, files, NULL };

		run_pair(what, plain, prof, p.profile);
	}
	n_plain = count_class_files(out_plain);
	n_prof = count_class_files(out_prof);
	cr_log_info("%s: %s source files, %zu .class files alone, %zu under objscope", what,
		    JAVAC_FILES, n_plain, n_prof);
	cr_expect_gt(n_plain, 0, "%s: no .class file written", what);
	cr_expect_eq(n_prof, n_plain, "%s: %zu .class files under objscope, %zu alone", what,
		     n_prof, n_plain);
	check_report(what, p.profile, p.log_prof);
	paths_free(&p);
	free(patch);
	free(files);
	free(out_prof);
	free(out_plain);
	free(src);
}

/* H2: H2_ROWS rows in an in-memory database, joins and aggregates printed
 * by RunScript -showResults (the statements and their results). */
static void h2_workload(const char *gc_flag)
{
	char *script = e2e_path(tmp, "h2.sql"), what[64];
	const char *prep[] = { "sh", "tests/workloads/h2_script.sh", script, H2_ROWS, NULL };
	struct wl_paths p;

	cr_assert_not_null(script);
	if (access(H2_JAR, R_OK) != 0)
		cr_skip_test("%s is missing: install the Debian package libh2-java (make deps)",
			     H2_JAR);
	prepare(prep, NULL);
	paths_init(&p, "");
	snprintf(what, sizeof(what), "H2 %s", gc_flag);
	{
		const char *plain[] = { "java", gc_flag, "-Xmx512m", p.opt_plain, "-cp", H2_JAR,
					"org.h2.tools.RunScript", "-url", "jdbc:h2:mem:wl",
					"-script", script, "-showResults", NULL };
		const char *prof[] = { "java", gc_flag, "-Xmx512m", p.opt_prof, "-cp", H2_JAR,
				       "org.h2.tools.RunScript", "-url", "jdbc:h2:mem:wl",
				       "-script", script, "-showResults", NULL };

		run_pair(what, plain, prof, p.profile);
	}
	check_report(what, p.profile, p.log_prof);
	paths_free(&p);
	free(script);
}

Test(e2e_workloads, javac_g1)
{
	javac_workload("-XX:+UseG1GC");
}

/* Parallel with the default number of GC threads (2 here): not reduced to
 * one, so that objects lost at full collections show. */
Test(e2e_workloads, javac_parallel)
{
	javac_workload("-XX:+UseParallelGC");
}

Test(e2e_workloads, javac_serial)
{
	javac_workload("-XX:+UseSerialGC");
}

Test(e2e_workloads, h2_g1)
{
	h2_workload("-XX:+UseG1GC");
}

Test(e2e_workloads, h2_parallel)
{
	h2_workload("-XX:+UseParallelGC");
}

Test(e2e_workloads, h2_serial)
{
	h2_workload("-XX:+UseSerialGC");
}

/* bench/overhead_java.sh --quick (one round, tiny workloads), so that the
 * benchmark cannot rot: every run succeeds with unchanged output and the
 * table has the objscope rows of both workloads. */
Test(e2e_workloads, overhead_java_quick)
{
	const char *argv[] = { "sh", "bench/overhead_java.sh", "--quick", NULL };
	const char *rows[] = { "javac  objscope ", "javac  objscope10", "h2     objscope ",
			       "h2     objscope10" };
	struct e2e_result res;

	if (access(H2_JAR, R_OK) != 0)
		cr_skip_test("%s is missing: install the Debian package libh2-java (make deps)",
			     H2_JAR);
	cr_assert_eq(e2e_run(tmp, argv, NULL, &res), 0, "cannot run sh");
	cr_expect_eq(res.status, 0, "overhead_java.sh --quick exited %d:\n%s\n%s", res.status,
		     res.out, res.err);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		cr_expect(strstr(res.out, rows[i]) != NULL, "no '%s' row in:\n%s", rows[i], res.out);
	cr_log_info("overhead_java.sh --quick:\n%s", res.out);
	e2e_result_free(&res);
}
