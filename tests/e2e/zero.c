/* zero.c - end-to-end tests of the HotSpot Zero adapter (runtimes/zero/):
 * `objscope record -- java -zero ...` on tests/java/ObjFixture.java under
 * every collector Zero runs here, and `objscope attach` on a running
 * `java -zero` AttachFixture (tests/java/AttachFixture.java). The planted
 * answers are the ones of tests/e2e/java.c and tests/e2e/attach.c: on Zero
 * too, makeRandom's arrays take most access samples, their allocation path
 * begins at ObjFixture.makeRandom with its source line, the collections'
 * moves are followed, and the program's output and exit status are the same
 * as without objscope. Skipped where `java -zero` is not installed
 * (Debian: openjdk-17-jre-zero, scripts/install-deps.sh).
 * Run from the repository root after `make all build/java/ObjFixture.class
 * build/java/AttachFixture.class`.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/e2e/helpers.h"
#include "tests/e2e/stats.h"

#define JAVA_CP "build/java"
#define RING "--ring-kb", "4096"
#define MIN_JAVA_SAMPLES 200  /* Java-heap samples a planted-answer run needs */
#define MAX_ROUNDS 320        /* ObjFixture rounds: 20, doubled until enough samples */
#define ATTACH_OK "ready\nok 16 1024\n"
#define PLANTED_BYTES (4u << 20) /* AttachFixture.makeRandom's long[1 << 19] */

static char *tmp;

static void setup(void)
{
	tmp = e2e_suite_setup();
}

static void teardown(void)
{
	e2e_suite_teardown(&tmp);
}

TestSuite(e2e_zero, .init = setup, .fini = teardown, .timeout = 600);

/* Whether `java -zero` runs here with the fixture class built. */
static bool have_zero(const char *cls)
{
	const char *argv[] = { "java", "-zero", "-version", NULL };
	struct e2e_result r;
	bool ok;

	if (access(cls, R_OK) != 0)
		return false;
	if (e2e_run(tmp, argv, NULL, &r) != 0)
		return false;
	ok = r.status == 0 && r.err && strstr(r.err, "Zero VM");
	e2e_result_free(&r);
	return ok;
}

static void need_zero(const char *cls)
{
	if (!have_zero(cls))
		cr_skip_test("needs `java -zero` (openjdk-17-jre-zero) and %s", cls);
}

static bool method_is(const char *f, const char *name)
{
	size_t n = strlen(name);

	return f && strncmp(f, name, n) == 0 && (f[n] == 0 || f[n] == '(');
}

static const char *frame(json_object *obj, size_t i)
{
	json_object *st = e2e_get(obj, "alloc_stack");

	return st && i < json_object_array_length(st) ? e2e_frame_text(st, i) : NULL;
}

/* Of top's access samples: those whose path begins at readRandom with its
 * line (found from the sample's registers: the interpreter's state and
 * bytecode pointer), and those of them with ObjFixture.main as caller. */
static void read_random_paths(json_object *top, int64_t *leaf, int64_t *called)
{
	json_object *acc = e2e_get(top, "accesses");

	*leaf = *called = 0;
	for (size_t i = 0; acc && i < json_object_array_length(acc); i++) {
		json_object *a = json_object_array_get_idx(acc, i), *st = e2e_get(a, "stack");
		const char *f0 = st ? e2e_frame_text(st, 0) : NULL;

		if (!method_is(f0, "ObjFixture.readRandom") || !strstr(f0, "(ObjFixture.java:"))
			continue;
		*leaf += e2e_get_int(a, "samples");
		if (method_is(e2e_frame_text(st, 1), "ObjFixture.main"))
			*called += e2e_get_int(a, "samples");
	}
}

/* "N collections, M object moves applied" of the HotSpot adapter's note. */
static void gc_figures(json_object *report, uint64_t *gcs, uint64_t *moves)
{
	const char *n = e2e_note(report, "object moves applied");
	const char *p = n ? strstr(n, ": ") : NULL;

	*gcs = *moves = 0;
	if (p)
		sscanf(p, ": %" SCNu64 " collections, %" SCNu64 " object moves applied", gcs, moves);
}

/* ObjFixture ROUNDS under `java -zero FLAGS...` (at most 4), with and
 * without objscope: same stdout, stderr and exit status. Returns the JSON
 * report. */
static json_object *record_zero(const char *const flags[], const char *rounds)
{
	const char *argv[12] = { "java", "-zero" }, *opts[] = { "-q", RING, NULL };
	char *profile = e2e_path(tmp, "zero.data");
	json_object *report;
	int n = 2;

	for (int i = 0; flags[i] && i < 4; i++)
		argv[n++] = flags[i];
	argv[n++] = "-cp";
	argv[n++] = JAVA_CP;
	argv[n++] = "ObjFixture";
	argv[n++] = rounds;
	argv[n] = NULL;
	cr_assert_not_null(profile);
	report = e2e_record_unchanged(tmp, profile, opts, argv, true);
	free(profile);
	return report;
}

/* The planted answer under one collector: runs with more rounds until the
 * Java heap has MIN_JAVA_SAMPLES samples (machines differ), then checks
 * that makeRandom's context ranks first with its source line, that the
 * JVM was Zero's and its collections' moves were applied (moving
 * collectors). */
static void planted_answer(const char *const flags[], bool moving)
{
	const char *gc_flag = flags[0];
	json_object *report = NULL, *meta, *objects, *top;
	int64_t jheap = 0, jattr, leaf, called, total;
	uint64_t gcs, moves;
	char rounds[16], buf[2048];
	const char *f0;

	need_zero(JAVA_CP "/ObjFixture.class");
	for (int r = 20; r <= MAX_ROUNDS; r *= 2) {
		if (report)
			json_object_put(report);
		snprintf(rounds, sizeof(rounds), "%d", r);
		report = record_zero(flags, rounds);
		jheap = e2e_get_int(e2e_get(report, "meta"), "samples_java_heap");
		if (jheap >= MIN_JAVA_SAMPLES &&
		    e2e_get_int(e2e_get(report, "meta"), "samples_attributed") >=
			    e2e_binom_needed(0.7, 0.6, E2E_FALSE_FAIL))
			break;
		cr_log_info("%s: %lld Java-heap samples with %d rounds: again with more", gc_flag,
			    (long long)jheap, r);
	}
	cr_assert_geq(jheap, MIN_JAVA_SAMPLES, "%s: only %lld Java-heap samples", gc_flag,
		      (long long)jheap);
	meta = e2e_get(report, "meta");
	jattr = e2e_get_int(meta, "samples_java_attributed");
	/* Statistical assertions (tests/README.md), each false-failure chance
	 * <= 1e-4 (e2e_binom_needed; measured shares in the audit table):
	 * Java objects >= 0.8 of the Java heap's samples (true >= 0.9,
	 * n >= 155), makeRandom >= 0.6 of the attributed (true >= 0.7,
	 * n >= 308), readRandom >= 0.7 of makeRandom's (true >= 0.9, n >= 47),
	 * main as its caller >= 0.8 of readRandom's (true >= 0.95, n >= 50).
	 * The rounds double until the Java heap has MIN_JAVA_SAMPLES and the
	 * attributed samples what the makeRandom check needs. */
	e2e_assert_share_ge(jattr, jheap, 0.8, 0.9, "Java-heap samples on Java objects");
	/* the Zero adapter owned the JVM: its notes, HotSpot's figures */
	cr_expect(e2e_note(report, "HotSpot Zero pid") != NULL, "%s: no Zero note", gc_flag);
	cr_expect(e2e_note(report, "samples were taken in the bytecode interpreter") != NULL,
		  "%s: no note on access paths in the interpreter", gc_flag);

	objects = e2e_get(report, "objects");
	cr_assert(objects && json_object_array_length(objects) > 0, "objects[] is empty");
	top = json_object_array_get_idx(objects, 0);
	f0 = frame(top, 0);
	cr_expect(method_is(f0, "ObjFixture.makeRandom"), "%s: alloc_stack[0] is not "
		  "ObjFixture.makeRandom: %s", gc_flag, e2e_stack_str(top, buf, sizeof(buf)));
	cr_expect(f0 && strstr(f0, "(ObjFixture.java:"), "%s: no source line: %s", gc_flag,
		  f0 ? f0 : "(none)");
	cr_expect(method_is(frame(top, 1), "ObjFixture.build") &&
			  method_is(frame(top, 2), "ObjFixture.main"),
		  "%s: callers not named: %s", gc_flag, e2e_stack_str(top, buf, sizeof(buf)));
	cr_expect_str_eq(json_object_get_string(e2e_get(top, "type")), "long[]");
	/* access paths name the interpreted method, not BytecodeInterpreter::run:
	 * 96-98% of makeRandom's samples on this machine */
	total = e2e_get_int(top, "samples");
	read_random_paths(top, &leaf, &called);
	cr_log_info("%s: Java heap %lld, on Java objects %lld; makeRandom %lld of %lld attributed, "
		    "%lld in readRandom, %lld called from main", gc_flag, (long long)jheap,
		    (long long)jattr, (long long)total,
		    (long long)e2e_get_int(meta, "samples_attributed"), (long long)leaf,
		    (long long)called);
	e2e_assert_share_ge(total, e2e_get_int(meta, "samples_attributed"), 0.6, 0.7,
			    "makeRandom's share of the attributed samples");
	e2e_assert_share_ge(leaf, total, 0.7, 0.9, "makeRandom's samples named readRandom");
	e2e_assert_share_ge(called, leaf, 0.8, 0.95,
			    "readRandom's samples with ObjFixture.main as caller");
	/* every array reaches the hook: build() makes exactly 6000 there */
	if (e2e_get_int(meta, "dropped_events") == 0)
		cr_expect_eq(e2e_get_int(top, "allocations"), 6000, "%s: %lld allocations", gc_flag,
			     (long long)e2e_get_int(top, "allocations"));
	gc_figures(report, &gcs, &moves);
	if (moving) {
		cr_expect_gt(gcs, 0, "%s: no collection seen", gc_flag);
		cr_expect_gt(moves, 0, "%s: no object move applied", gc_flag);
	}
	json_object_put(report);
}

Test(e2e_zero, serial)
{
	const char *flags[] = { "-XX:+UseSerialGC", NULL };

	planted_answer(flags, true);
}

Test(e2e_zero, parallel)
{
	const char *flags[] = { "-XX:+UseParallelGC", NULL };

	planted_answer(flags, true);
}

Test(e2e_zero, g1)
{
	const char *flags[] = { "-XX:+UseG1GC", NULL };

	planted_answer(flags, true);
}

/* Concurrent: its moves are best effort (HotSpot's note says so) and may
 * be none in a short run; the planted answer stands. */
Test(e2e_zero, shenandoah)
{
	const char *flags[] = { "-XX:+UseShenandoahGC", NULL };

	planted_answer(flags, false);
}

/* No collection moves anything (System.gc() does nothing); its start-up
 * warnings carry timestamps on stdout: logging off. */
Test(e2e_zero, epsilon)
{
	const char *flags[] = { "-XX:+UnlockExperimentalVMOptions", "-XX:+UseEpsilonGC",
				"-Xlog:disable", NULL };
	const char *argv[] = { "java", "-zero", flags[0], flags[1], "-version", NULL };
	struct e2e_result r;
	int st;

	need_zero(JAVA_CP "/ObjFixture.class");
	cr_assert_eq(e2e_run(tmp, argv, NULL, &r), 0);
	st = r.status;
	e2e_result_free(&r);
	if (st != 0)
		cr_skip_test("this Zero VM has no Epsilon GC");
	planted_answer(flags, false);
}

/* The context whose allocation path begins at method m, or NULL. */
static json_object *context_of(json_object *report, const char *m)
{
	json_object *objects = e2e_get(report, "objects");

	for (size_t i = 0; objects && i < json_object_array_length(objects); i++) {
		json_object *o = json_object_array_get_idx(objects, i);

		if (method_is(frame(o, 0), m))
			return o;
	}
	return NULL;
}

/* ZeroInstances N in --java-objects mode: the arrays' and the instances'
 * allocation counts (estimates where weighed). */
static void instances_run(const char *mode, int64_t *arrays, int64_t *instances)
{
	const char *argv[] = { "java", "-zero", "-cp", JAVA_CP, "ZeroInstances", "4000", NULL };
	const char *opts[] = { "-q", RING, "--java-objects", mode, NULL };
	char *profile = e2e_path(tmp, "zi.data");
	json_object *report, *a, *o;

	report = e2e_record_unchanged(tmp, profile, opts, argv, true);
	a = context_of(report, "ZeroInstances.makeArray");
	o = context_of(report, "ZeroInstances.makeInstance");
	cr_assert(a && o, "%s: no context of makeArray or makeInstance", mode);
	cr_expect_str_eq(json_object_get_string(e2e_get(a, "type")), "long[]");
	cr_expect_str_eq(json_object_get_string(e2e_get(o, "type")), "ZeroInstances");
	*arrays = e2e_get_int(a, "allocations");
	*instances = e2e_get_int(o, "allocations");
	cr_log_info("%s: %lld arrays, %lld instances of 4000 each", mode, (long long)*arrays,
		    (long long)*instances);
	if (e2e_get_int(e2e_get(report, "meta"), "dropped_events") != 0)
		*arrays = *instances = -1; /* not about the weights */
	json_object_put(report);
	free(profile);
}

/* Arrays are all seen, weight 1, in every mode; instances (1616 bytes)
 * are all seen in exact mode (TLABs of 1 KiB: none fits) and estimated
 * from the TLAB refills they cause in hybrid mode (32 KiB TLABs: about
 * one in twenty seen, weighed T / size; one standard error ~7% of 4000,
 * the bound 25%). */
Test(e2e_zero, arrays_exact_instances_weighed)
{
	int64_t arrays, instances;

	need_zero(JAVA_CP "/ZeroInstances.class");
	instances_run("exact", &arrays, &instances);
	if (arrays >= 0) {
		cr_expect_eq(arrays, 4000, "exact: %lld arrays", (long long)arrays);
		cr_expect_eq(instances, 4000, "exact: %lld instances", (long long)instances);
	}
	instances_run("hybrid", &arrays, &instances);
	if (arrays >= 0) {
		cr_expect_eq(arrays, 4000, "hybrid: %lld arrays (weight 1 each)", (long long)arrays);
		cr_expect(instances >= 3000 && instances <= 5000,
			  "hybrid: %lld instances estimated for 4000", (long long)instances);
	}
}

/* ---- attach ------------------------------------------------------------ */

static const char *slurp(const char *name, const char *ext)
{
	return e2e_slurp(tmp, name, ext);
}

/* `java -zero -cp build/java AttachFixture SECONDS`, once it said "ready". */
static pid_t start_zero_jvm(const char *name, const char *seconds)
{
	char cp[PATH_MAX];
	const char *argv[] = { "java", "-zero", "-cp", cp, "AttachFixture", seconds, NULL };
	pid_t pid;

	cr_assert_not_null(realpath(JAVA_CP, cp));
	pid = e2e_spawn_logged(tmp, name, argv, tmp);
	if (e2e_wait_output(tmp, name, pid, "ready", 60000))
		return pid;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	cr_assert_fail("AttachFixture did not start: %s", slurp(name, "err"));
	return -1;
}

/* A context of AttachFixture's planted site allocated while attached. */
static bool is_planted(json_object *o)
{
	int64_t allocs = e2e_get_int(o, "allocations"), bytes = e2e_get_int(o, "bytes");

	return strcmp(json_object_get_string(e2e_get(o, "type")), "long[]") == 0 && allocs > 0 &&
	       bytes / allocs >= PLANTED_BYTES && bytes / allocs < 2 * PLANTED_BYTES &&
	       e2e_stack_has(o, "AttachFixture.makeRandom", 2);
}

/* A `seconds` attach to pid into profile, then the checks of the report:
 * the 4 MiB arrays renewed while attached rank first, named from the Zero
 * stack with their caller, and both adapters' notes are there. */
static void attach_check(pid_t pid, const char *profile, const char *seconds)
{
	char spid[16], msg[512], buf[2048];
	const char *argv[] = { E2E_OBJSCOPE, "attach", "-q", "-d", seconds, "-o", profile, spid,
			       NULL };
	struct e2e_result res;
	json_object *report, *top;

	snprintf(spid, sizeof(spid), "%d", (int)pid);
	cr_assert_eq(e2e_run(tmp, argv, NULL, &res), 0);
	cr_assert_eq(res.status, 0, "attach exited %d: %s", res.status, res.err);
	e2e_result_free(&res);
	report = e2e_report_json(tmp, profile, msg, sizeof(msg));
	cr_assert_not_null(report, "%s", msg);
	cr_assert_gt(e2e_get_int(e2e_get(report, "meta"), "samples_total"), 300, "too few samples");
	top = json_object_array_get_idx(e2e_get(report, "objects"), 0);
	cr_assert_not_null(top, "no objects in the report");
	cr_expect(is_planted(top), "top object is not the 4 MiB arrays: %s",
		  e2e_stack_str(top, buf, sizeof(buf)));
	cr_expect(e2e_stack_has(top, "AttachFixture.main", 4), "no caller: %s",
		  e2e_stack_str(top, buf, sizeof(buf)));
	cr_expect(e2e_note(report, "was attached while running: allocation and GC hooks "
			   "installed") != NULL, "no attach note");
	cr_expect(e2e_note(report, "HotSpot Zero pid") != NULL, "no Zero note");
	json_object_put(report);
}

/* The JVM (started by start_zero_jvm as name) ends with its own output. */
static void zero_jvm_ok(const char *name, pid_t pid)
{
	int st = 0;

	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "JVM failed after the attach: %s %s",
		  slurp(name, "out"), slurp(name, "err"));
	cr_expect_str_eq(slurp(name, "out"), ATTACH_OK, "JVM output changed");
	cr_expect_str_eq(slurp(name, "err"), "", "JVM wrote on stderr");
}

/* objscope attach on a running Zero JVM started without any objscope flag. */
Test(e2e_zero, attach_planted_site_ranks_first)
{
	char *profile;
	pid_t pid;

	need_zero(JAVA_CP "/AttachFixture.class");
	profile = e2e_path(tmp, "za.data");
	pid = start_zero_jvm("za", "12");
	usleep(500000); /* into the steady loop */
	attach_check(pid, profile, "4");
	zero_jvm_ok("za", pid);
	free(profile);
}

/* A second attach to the same JVM: the library and its detours stayed
 * after the first detach; the JVM is announced as Zero again. */
Test(e2e_zero, attach_twice)
{
	char *p1, *p2;
	pid_t pid;

	need_zero(JAVA_CP "/AttachFixture.class");
	p1 = e2e_path(tmp, "zt1.data");
	p2 = e2e_path(tmp, "zt2.data");
	pid = start_zero_jvm("zt", "14");
	usleep(500000);
	attach_check(pid, p1, "3");
	attach_check(pid, p2, "3");
	zero_jvm_ok("zt", pid);
	free(p1);
	free(p2);
}
