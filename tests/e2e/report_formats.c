/* report_formats.c - end-to-end tests of the report formats html, pprof and
 * collapsed, of merging, and of record's live status line; the
 * JSON report against its schema (docs/report.schema.json, validated by
 * tests/schema/validate_report.py with python3-jsonschema), merges of
 * different periods, binary output refused on a terminal, the status line
 * beside a target writing to the same terminal.
 *
 * The fixture three_sites plants its answer: the object allocated in
 * alloc_random_block takes most access samples, from random_phase. The HTML
 * report is opened in headless Chromium by tests/browser/html_report.js
 * (node + playwright-core from package-lock.json); its screenshot is kept in
 * build/artifacts/. The pprof output is read by `go tool pprof`. */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/profile.h"
#include "tests/e2e/helpers.h"

#define ARTIFACTS "build/artifacts"
#define SCHEMA "docs/report.schema.json"
#define VALIDATOR "tests/schema/validate_report.py"
#define TTY_REFUSAL "objscope: report: pprof output is binary: use -o FILE or a pipe"
#define BROWSER_TEST "tests/browser/html_report.js"
#define SCALE "0.4"

static char *tmp;

static void setup(void)
{
	tmp = e2e_suite_setup();
}

static void teardown(void)
{
	e2e_suite_teardown(&tmp);
}

TestSuite(e2e_formats, .init = setup, .fini = teardown, .timeout = 180);

/* Records three_sites into tmp/NAME; returns the malloc'd path. */
static char *record_fixture(const char *name)
{
	const char *argv[] = { E2E_FIXTURE("three_sites"), SCALE, NULL };
	char *profile = e2e_path(tmp, name);
	struct e2e_result res;

	cr_assert_eq(e2e_record(tmp, profile, NULL, argv, &res), 0);
	cr_assert_eq(res.status, 0, "objscope record exited %d: %s", res.status, res.err);
	e2e_result_free(&res);
	return profile;
}

/* Runs `objscope report --format FMT [-o out] files...` and asserts success. */
static void report(const char *fmt, const char *out, const char *f1, const char *f2,
		   struct e2e_result *res)
{
	const char *argv[10];
	size_t n = 0;

	argv[n++] = E2E_OBJSCOPE;
	argv[n++] = "report";
	argv[n++] = "--format";
	argv[n++] = fmt;
	if (out) {
		argv[n++] = "-o";
		argv[n++] = out;
	}
	argv[n++] = f1;
	if (f2)
		argv[n++] = f2;
	argv[n] = NULL;
	cr_assert_eq(e2e_run(tmp, argv, NULL, res), 0);
	cr_assert(!res->signaled, "report --format %s crashed (signal %d)", fmt, res->status - 128);
	cr_assert_eq(res->status, 0, "report --format %s exited %d: %s", fmt, res->status, res->err);
}

/* samples_attributed of the JSON report, checked against its objects. */
static int64_t json_attributed(const char *profile, char *top_fn, size_t top_len)
{
	char msg[512];
	json_object *root = e2e_report_json(tmp, profile, msg, sizeof(msg)), *objs;
	int64_t attributed, sum = 0;
	size_t i;

	cr_assert_not_null(root, "%s", msg);
	attributed = e2e_get_int(e2e_get(root, "meta"), "samples_attributed");
	objs = e2e_get(root, "objects");
	cr_assert_not_null(objs);
	for (i = 0; i < json_object_array_length(objs); i++)
		sum += e2e_get_int(json_object_array_get_idx(objs, i), "samples");
	cr_assert_eq(sum, attributed, "JSON objects hold %" PRId64 " samples, meta says %" PRId64,
		     sum, attributed);
	if (top_fn) {
		json_object *st = e2e_get(json_object_array_get_idx(objs, 0), "alloc_stack");

		snprintf(top_fn, top_len, "%s",
			 st && json_object_array_length(st)
				 ? e2e_frame_text(st, 0)
				 : "");
	}
	json_object_put(root);
	return attributed;
}

/* Sum of the counts of folded stacks; every line must be "stack COUNT". */
static int64_t collapsed_total(const char *text, size_t *lines)
{
	const char *s = text;
	int64_t total = 0;

	*lines = 0;
	while (*s) {
		const char *nl = strchr(s, '\n'), *sp;
		char *end;
		long long v;

		cr_assert_not_null(nl, "collapsed output ends without a newline");
		for (sp = nl; sp > s && sp[-1] != ' '; sp--)
			;
		cr_assert(sp > s, "collapsed line without a count: %.*s", (int)(nl - s), s);
		v = strtoll(sp, &end, 10);
		cr_assert(end == nl && v > 0, "bad count in: %.*s", (int)(nl - s), s);
		total += v;
		(*lines)++;
		s = nl + 1;
	}
	return total;
}

Test(e2e_formats, collapsed_totals_and_merge)
{
	char *profile = record_fixture("a.data");
	struct e2e_result one, two;
	int64_t attributed = json_attributed(profile, NULL, 0), t1, t2;
	const char *top, *alloc, *access;
	size_t l1, l2;

	cr_assert_gt(attributed, 50, "too few attributed samples (%" PRId64 ") to test", attributed);
	report("collapsed", NULL, profile, NULL, &one);
	t1 = collapsed_total(one.out, &l1);
	cr_expect_eq(t1, attributed, "collapsed total %" PRId64 " != JSON samples_attributed %" PRId64,
		     t1, attributed);
	/* Root first: the planted object's allocation, then its access path. */
	top = one.out;
	alloc = strstr(top, "[alloc] alloc_random_block");
	access = strstr(top, "random_phase");
	cr_expect(alloc && access && alloc < access && alloc < strchr(top, '\n') &&
			  access < strchr(top, '\n'),
		  "first line is not alloc_random_block below random_phase: %.400s", top);
	cr_expect(strncmp(top, "[alloc] ", 8) == 0, "stack does not start at the allocation root");

	/* The same profile twice: equal contexts are summed, not appended. */
	report("collapsed", NULL, profile, profile, &two);
	t2 = collapsed_total(two.out, &l2);
	cr_expect_eq(t2, 2 * t1, "merged total %" PRId64 " is not twice %" PRId64, t2, t1);
	cr_expect_eq(l2, l1, "merging equal profiles gave %zu lines instead of %zu", l2, l1);
	e2e_result_free(&one);
	e2e_result_free(&two);
	free(profile);
}

Test(e2e_formats, pprof_reads_in_go_tool_pprof)
{
	char *profile = record_fixture("a.data"), *pb = e2e_path(tmp, "a.pb.gz");
	const char *top_argv[] = { "go", "tool", "pprof", "-top", "-nodecount=200", pb, NULL };
	const char *tags_argv[] = { "go", "tool", "pprof", "-tags", pb, NULL };
	const char *lines_argv[] = { "go", "tool", "pprof", "-top", "-lines", pb, NULL };
	const char *raw_argv[] = { "go", "tool", "pprof", "-raw", pb, NULL };
	int64_t attributed = json_attributed(profile, NULL, 0), total;
	unsigned char magic[2] = { 0 };
	struct e2e_result res;
	const char *at;
	FILE *f;

	report("pprof", pb, profile, NULL, &res);
	e2e_result_free(&res);
	f = fopen(pb, "rb");
	cr_assert_not_null(f, "report -o %s wrote nothing", pb);
	cr_expect_eq(fread(magic, 1, 2, f), 2);
	fclose(f);
	cr_expect(magic[0] == 0x1f && magic[1] == 0x8b, "pprof output is not gzip");

	cr_assert_eq(e2e_run(tmp, top_argv, NULL, &res), 0);
	cr_assert_neq(res.status, 127, "`go` not found: install golang-go (make deps)");
	cr_assert_eq(res.status, 0, "go tool pprof -top failed (%d): %s%s", res.status, res.err,
		     res.out);
	cr_expect_not_null(strstr(res.out, "random_phase"),
			   "pprof -top does not list random_phase:\n%s", res.out);
	cr_expect_not_null(strstr(res.out, "[alloc] alloc_random_block"),
			   "pprof -top does not list the allocation chain:\n%s", res.out);
	/* the total on pprof's "Showing nodes accounting for N, P% of T total"
	 * line: the comments above it hold "% of" too (the budget's note) */
	at = strstr(res.out, "Showing nodes accounting for");
	at = at ? strstr(at, "% of ") : NULL;
	cr_assert_not_null(at, "no total in pprof -top:\n%s", res.out);
	total = strtoll(at + 5, NULL, 10);
	cr_expect_eq(total, attributed, "pprof total %" PRId64 " != JSON samples_attributed %" PRId64,
		     total, attributed);
	cr_expect_not_null(strstr(res.out, "Type: samples"),
			   "default sample type is not samples:\n%s", res.out);
	e2e_result_free(&res);

	/* Functions carry their source file and locations their line. */
	cr_assert_eq(e2e_run(tmp, lines_argv, NULL, &res), 0);
	cr_assert_eq(res.status, 0, "go tool pprof -lines failed: %s", res.err);
	cr_expect_not_null(strstr(res.out, "random_phase tests/fixtures/three_sites.c:"),
			   "no file:line for random_phase:\n%s", res.out);
	e2e_result_free(&res);

	/* native locations point to the module's mapping, marked symbolized */
	cr_assert_eq(e2e_run(tmp, raw_argv, NULL, &res), 0);
	cr_assert_eq(res.status, 0, "go tool pprof -raw failed: %s", res.err);
	at = strstr(res.out, "Mappings");
	cr_expect_not_null(at, "no mappings in pprof -raw:\n%s", res.out);
	cr_expect(at && strstr(at, "three_sites  [FN][FL][LN]"),
		  "no symbolized mapping of three_sites:\n%s", at ? at : res.out);
	/* the software sampler measures no latency, L1 miss or
	 * remote access: only the sample count is carried, not three columns
	 * of zeros */
	cr_expect_not_null(strstr(res.out, "\nSamples:\nsamples/count[dflt]\n"),
			   "sample types other than samples/count:\n%.600s", res.out);
	e2e_result_free(&res);

	cr_assert_eq(e2e_run(tmp, tags_argv, NULL, &res), 0);
	cr_assert_eq(res.status, 0, "go tool pprof -tags failed: %s", res.err);
	cr_expect_not_null(strstr(res.out, "#1 alloc_random_block"),
			   "the object label is missing:\n%s", res.out);
	e2e_result_free(&res);
	free(pb);
	free(profile);
}

/* node tests/browser/html_report.js REPORT SHOT [args...]; asserts exit 0. */
static void browser_check(const char *html, const char *shot, const char *a1, const char *a2,
			  const char *a3, const char *a4, const char *a5, const char *a6,
			  int64_t attributed)
{
	char n[32];
	const char *argv[] = { "node", BROWSER_TEST, html, shot, "--attributed", n, a1, a2, a3, a4,
			       a5, a6, NULL };
	struct e2e_result res;

	snprintf(n, sizeof(n), "%" PRId64, attributed);
	cr_assert_eq(e2e_run(tmp, argv, NULL, &res), 0);
	cr_assert_neq(res.status, 127, "`node` not found: install nodejs (make deps)");
	cr_expect_eq(res.status, 0, "browser check of %s failed (%d):\n%s%s", html, res.status,
		     res.err, res.out);
	e2e_result_free(&res);
}

Test(e2e_formats, html_in_headless_chromium)
{
	char *profile = record_fixture("a.data");
	const char *html = ARTIFACTS "/html_report.html", *shot = ARTIFACTS "/html_report.png";
	char top[1024];
	struct e2e_result res;
	struct stat st;
	int64_t attributed = json_attributed(profile, top, sizeof(top));

	cr_assert_not_null(strstr(top, "alloc_random_block"),
			   "the fixture's planted object is not first (%s): cannot test", top);
	mkdir(ARTIFACTS, 0755);
	unlink(shot);
	report("html", html, profile, NULL, &res);
	e2e_result_free(&res);
	browser_check(html, shot, "--alloc", "alloc_random_block", "--access", "random_phase",
		      "--timeline", "yes", attributed);
	cr_expect(stat(shot, &st) == 0 && st.st_size > 10000, "no screenshot at %s", shot);
	free(profile);
}

/* A version-1 profile (no time slices, tests/fuzz/corpus): the page has no
 * timeline and says why. */
Test(e2e_formats, html_timeline_of_an_old_profile)
{
	const char *profile = "tests/fuzz/corpus/three_sites.prof";
	const char *html = ARTIFACTS "/html_report_old.html", *shot = ARTIFACTS "/html_report_old.png";
	struct e2e_result res;
	struct os_profile *p = NULL;
	char err[256];

	cr_assert_eq(os_profile_read(profile, &p, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(p->analyses & OS_AN_SLICES, 0, "%s has slices: cannot test", profile);
	os_profile_free(p);
	mkdir(ARTIFACTS, 0755);
	report("html", html, profile, NULL, &res);
	e2e_result_free(&res);
	browser_check(html, shot, "--timeline", "no", NULL, NULL, NULL, NULL,
		      json_attributed(profile, NULL, 0));
}

/* A frame of the synthetic profile below. */
static uint32_t frame(struct os_profile *p, uint32_t kind, const char *name, const char *module,
		      const char *file, uint32_t line)
{
	struct os_frame f = { .kind = kind, .line = line, .addr = 0x1000 + line };

	f.name = os_profile_string(p, name);
	f.module = module ? os_profile_string(p, module) : OS_NONE;
	f.file = file ? os_profile_string(p, file) : OS_NONE;
	return os_profile_frame(p, &f);
}

/* The HTML report of a Java-like profile of 120 objects (the last 7 without
 * samples) with long type and method names, frames of the four kinds and a
 * long note: the objects table leaves out those without samples, its
 * "show 7 objects without samples" toggle lists them, the table fits its
 * card at 1280 px and pages 50 rows at a time, the search
 * box finds the 11 objects allocated in allocateRecordBuffer7* and
 * highlights their frames, the inverted flame graph puts the allocation
 * sites on top, each kind has its colour (checked in screenshots). */
#define UNSAMPLED_FROM 113
Test(e2e_formats, html_many_objects_in_headless_chromium)
{
	static const char jvm[] = "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so";
	struct os_profile *p = os_profile_new();
	char *profile = e2e_path(tmp, "many.data"), name[256], err[256], note[640];
	const char *html = ARTIFACTS "/html_report_many.html";
	const char *shot = ARTIFACTS "/html_report_many.png";
	const char *argv[] = { "node", BROWSER_TEST, html, shot, "--alloc",
			       "StockKeepingUnitRepositoryImplementation.allocateRecordBuffer0(",
			       "--search", "allocateRecordBuffer7", "--pages", "3", "--kinds",
			       "java,jvm,native,kernel", "--verbose", NULL };
	const char *rargv[] = { E2E_OBJSCOPE, "report", "--format", "html", "-v", "-o", html,
				NULL, NULL };
	const char *dargv[] = { E2E_OBJSCOPE, "report", "--format", "html", "-o", NULL, NULL, NULL };
	char *plain = e2e_path(tmp, "many-default.html");
	struct stat st_v, st_d;
	uint32_t main_f, call, start, sys, f[5];
	struct e2e_result res;
	uint64_t total = 0;

	cr_assert_not_null(p);
	main_f = frame(p, OS_FRAME_JAVA, "com.example.inventory.Main.main", "Main.java", NULL, 42);
	call = frame(p, OS_FRAME_NATIVE, "JavaCalls::call_helper(JavaValue*, methodHandle const&, "
		     "JavaCallArguments*, JavaThread*)", jvm, NULL, 0);
	start = frame(p, OS_FRAME_NATIVE, "start_thread", "/usr/lib/x86_64-linux-gnu/libc.so.6",
		      NULL, 0);
	sys = frame(p, OS_FRAME_KERNEL, "entry_SYSCALL_64_after_hwframe", NULL, NULL, 0);
	for (uint32_t i = 0; i < 120; i++) {
		uint32_t n = 0;

		snprintf(name, sizeof(name), "com.example.inventory.warehouse.persistence."
			 "StockKeepingUnitRepositoryImplementation.allocateRecordBuffer%u", i);
		f[n++] = frame(p, OS_FRAME_JAVA, name, NULL,
			       "StockKeepingUnitRepositoryImplementation.java", 100 + i);
		f[n++] = main_f;
		f[n++] = call;
		f[n++] = start;
		if (i % 3 == 0)
			f[n++] = sys;
		snprintf(name, sizeof(name),
			 "com.example.inventory.warehouse.StockKeepingUnitRecord$Entry%u[]", i);
		os_profile_add_context(p, &(struct os_context){
			.type = os_profile_string(p, name), .stack = os_profile_stack(p, f, n),
			.allocations = 10 + i, .bytes = 4096 * (i + 1),
			.samples = i < UNSAMPLED_FROM ? 200 - i : 0 });
		total += i < UNSAMPLED_FROM ? 200 - i : 0;
	}
	p->c.samples_total = p->c.samples_addressed = p->c.samples_heap = total;
	p->c.samples_attributed = total;
	memset(note, 'n', sizeof(note) - 1);
	note[sizeof(note) - 1] = 0;
	memcpy(note, "a long note: ", 13);
	os_profile_add_note(p, note);
	os_profile_add_note(p, "a short note");
	os_profile_add_thread(p, &(struct os_thread){ .kind = OS_THR_JAVA, .pid = 7, .tid = 8,
						      .name = os_profile_string(p, "main"),
						      .samples = total });
	cr_assert_eq(os_profile_write(p, profile, err, sizeof(err)), 0, "%s", err);
	os_profile_free(p);

	mkdir(ARTIFACTS, 0755);
	rargv[7] = profile;
	cr_assert_eq(e2e_run(tmp, rargv, NULL, &res), 0);
	cr_assert_eq(res.status, 0, "report -v --format html: %s", res.err);
	e2e_result_free(&res);
	/* without -v the page leaves the 7 objects without samples out */
	dargv[5] = plain;
	dargv[6] = profile;
	cr_assert_eq(e2e_run(tmp, dargv, NULL, &res), 0);
	cr_assert_eq(res.status, 0, "report --format html: %s", res.err);
	e2e_result_free(&res);
	cr_assert_eq(stat(html, &st_v), 0);
	cr_assert_eq(stat(plain, &st_d), 0);
	cr_expect_lt(st_d.st_size, st_v.st_size, "the page without -v (%lld bytes) is not smaller "
		     "than with the objects without samples (%lld)", (long long)st_d.st_size,
		     (long long)st_v.st_size);
	free(plain);
	cr_assert_eq(e2e_run(tmp, argv, NULL, &res), 0);
	cr_assert_neq(res.status, 127, "`node` not found: install nodejs (make deps)");
	cr_expect_eq(res.status, 0, "browser check of %s failed (%d):\n%s%s", html, res.status,
		     res.err, res.out);
	e2e_result_free(&res);
	free(profile);
}

/* A profile with no samples and no objects: every format gives a
 * well-formed report; the HTML page says why. */
Test(e2e_formats, empty_profile)
{
	struct os_profile *p = os_profile_new();
	char *profile = e2e_path(tmp, "empty.data"), *pb = e2e_path(tmp, "empty.pb.gz");
	const char *html = ARTIFACTS "/html_report_empty.html";
	const char *shot = ARTIFACTS "/html_report_empty.png";
	const char *argv[] = { "sleep", "0", NULL };
	const char *top_argv[] = { "go", "tool", "pprof", "-top", pb, NULL };
	struct e2e_result res;
	char err[256];
	size_t lines;

	cr_assert_not_null(p);
	cr_assert_eq(os_profile_set_argv(p, 2, (char *const *)argv), 0);
	cr_assert_eq(os_profile_write(p, profile, err, sizeof(err)), 0, "%s", err);
	os_profile_free(p);

	report("collapsed", NULL, profile, NULL, &res);
	cr_expect_eq(collapsed_total(res.out, &lines), 0);
	e2e_result_free(&res);
	report("text", NULL, profile, NULL, &res);
	cr_expect_not_null(strstr(res.out, "no access samples were taken"), "%s", res.out);
	e2e_result_free(&res);

	report("pprof", pb, profile, NULL, &res);
	e2e_result_free(&res);
	cr_assert_eq(e2e_run(tmp, top_argv, NULL, &res), 0);
	cr_expect_eq(res.status, 0, "go tool pprof rejects the empty profile: %s", res.err);
	cr_expect_not_null(strstr(res.out, "no samples were attributed to objects"),
			   "the pprof comments do not say why it is empty:\n%s", res.out);
	e2e_result_free(&res);

	mkdir(ARTIFACTS, 0755);
	report("html", html, profile, NULL, &res);
	e2e_result_free(&res);
	browser_check(html, shot, "--empty", NULL, NULL, NULL, NULL, NULL, 0);
	free(pb);
	free(profile);
}

/* The live status line: on stderr with --progress (stderr is a file here),
 * never in the target's own output, absent without --progress when stderr
 * is not a terminal; the summary line unless -q. */
Test(e2e_formats, record_status_line)
{
	const char *argv[] = { E2E_FIXTURE("three_sites"), "1.0", NULL };
	const char *progress[] = { "--progress", NULL }, *quiet[] = { "-q", NULL };
	char *profile = e2e_path(tmp, "s.data");
	struct e2e_result res;

	cr_assert_eq(e2e_record(tmp, profile, progress, argv, &res), 0);
	cr_assert_eq(res.status, 0, "record exited %d: %s", res.status, res.err);
	cr_expect_not_null(strstr(res.err, "\r\033[Kobjscope: "), "no status line on stderr:\n%s",
			   res.err);
	cr_expect_not_null(strstr(res.err, " samples ("), "status line lacks samples/s:\n%s",
			   res.err);
	cr_expect(strstr(res.err, " objects ") && strstr(res.err, " GCs ") &&
			  strstr(res.err, " lost"),
		  "status line lacks objects, GCs or lost:\n%s", res.err);
	cr_expect_not_null(strstr(res.err, "objscope: wrote "), "no summary line:\n%s", res.err);
	cr_expect_not_null(strstr(res.out, "three_sites checksum"), "target output lost: %s",
			   res.out);
	cr_expect_null(strstr(res.out, "objscope"), "status text in the target's output:\n%s",
		       res.out);
	e2e_result_free(&res);

	cr_assert_eq(e2e_record(tmp, profile, NULL, argv, &res), 0);
	cr_assert_eq(res.status, 0);
	cr_expect_null(strchr(res.err, '\r'), "status line without --progress on a file:\n%s",
		       res.err);
	cr_expect_not_null(strstr(res.err, "objscope: wrote "), "no summary line:\n%s", res.err);
	e2e_result_free(&res);

	cr_assert_eq(e2e_record(tmp, profile, quiet, argv, &res), 0);
	cr_assert_eq(res.status, 0);
	cr_expect_null(strstr(res.err, "objscope: wrote "), "summary line despite -q:\n%s",
		       res.err);
	e2e_result_free(&res);
	free(profile);
}

/* On a terminal (script(1) gives objscope a pty), the status line appears
 * without --progress; the target's stdout, sent to a file, stays clean. */
Test(e2e_formats, record_status_on_terminal)
{
	char *out = e2e_path(tmp, "target.out"), *log = e2e_path(tmp, "tty.log");
	char *profile = e2e_path(tmp, "t.data"), *cmd = NULL, *text = NULL;
	struct e2e_result res;
	size_t len = 0;
	FILE *f;

	cr_assert(asprintf(&cmd, "%s record -o %s -- sh -c '%s 1.0 > %s'", E2E_OBJSCOPE, profile,
			   E2E_FIXTURE("three_sites"), out) > 0);
	{
		const char *argv[] = { "script", "-qec", cmd, log, NULL };

		cr_assert_eq(e2e_run(tmp, argv, NULL, &res), 0);
		/* script -e: objscope's exit status, 127 if script(1) is missing */
		cr_assert_eq(res.status, 0, "record under script(1) exited %d: %s%s", res.status,
			     res.out, res.err);
		e2e_result_free(&res);
	}
	f = fopen(log, "r");
	cr_assert_not_null(f);
	cr_assert_eq(getdelim(&text, &len, '\0', f) > 0, 1, "empty terminal log");
	fclose(f);
	cr_expect_not_null(strstr(text, "\r\033[Kobjscope: "), "no status line on the terminal:\n%s",
			   text);
	cr_expect_null(strstr(text, "three_sites checksum"), "target stdout leaked to the terminal");
	free(text);
	text = NULL;
	len = 0;
	f = fopen(out, "r");
	cr_assert_not_null(f);
	cr_assert(getdelim(&text, &len, '\0', f) > 0);
	fclose(f);
	cr_expect_not_null(strstr(text, "three_sites checksum"));
	cr_expect_null(strstr(text, "objscope"), "status text in the target's output: %s", text);
	free(text);
	free(cmd);
	free(out);
	free(log);
	free(profile);
}

/* A screen of a terminal as the bytes objscope and its target wrote would
 * leave it: printable text, \r, \n (scrolling the region), cursor save and
 * restore, CUP, CUU, EL, DECSTBM — what the status line uses. */
#define SCR_ROWS 24
#define SCR_COLS 100
struct screen {
	char cell[SCR_ROWS][SCR_COLS + 1];
	int row, col, top, bot, srow, scol;
};

static void scr_linefeed(struct screen *s)
{
	if (s->row == s->bot) {
		memmove(s->cell[s->top], s->cell[s->top + 1],
			(size_t)(s->bot - s->top) * sizeof(s->cell[0]));
		memset(s->cell[s->bot], ' ', SCR_COLS);
	} else if (s->row < SCR_ROWS - 1) {
		s->row++;
	}
}

static void scr_feed(struct screen *s, const char *p, const char *end)
{
	memset(s, 0, sizeof(*s));
	for (int r = 0; r < SCR_ROWS; r++)
		memset(s->cell[r], ' ', SCR_COLS);
	s->bot = SCR_ROWS - 1;
	while (p < end) {
		int n[2] = { 0, 0 }, k = 0;

		if (*p == '\r') {
			s->col = 0;
		} else if (*p == '\n') {
			scr_linefeed(s);
		} else if (*p == '\033' && p + 1 < end && (p[1] == '7' || p[1] == '8')) {
			if (p[1] == '7')
				s->srow = s->row, s->scol = s->col;
			else
				s->row = s->srow, s->col = s->scol;
			p++;
		} else if (*p == '\033' && p + 1 < end && p[1] == '[') {
			for (p += 2; p < end && (*p == ';' || (*p >= '0' && *p <= '9')); p++)
				if (*p == ';')
					k = k < 1 ? k + 1 : k;
				else
					n[k] = n[k] * 10 + (*p - '0');
			if (p == end)
				break;
			if (*p == 'H')
				s->row = (n[0] ? n[0] : 1) - 1, s->col = (n[1] ? n[1] : 1) - 1;
			else if (*p == 'A') /* up, stopping at the region's top */
				s->row = s->row - (n[0] ? n[0] : 1) < s->top
						 ? s->top
						 : s->row - (n[0] ? n[0] : 1);
			else if (*p == 'K')
				memset(s->cell[s->row] + (n[0] == 2 ? 0 : s->col), ' ',
				       (size_t)(SCR_COLS - (n[0] == 2 ? 0 : s->col)));
			else if (*p == 'r') {
				s->top = (n[0] ? n[0] : 1) - 1;
				s->bot = (n[1] ? n[1] : SCR_ROWS) - 1;
				s->row = s->col = 0;
			}
		} else if ((unsigned char)*p >= 0x20) {
			if (s->col == SCR_COLS) {
				s->col = 0;
				scr_linefeed(s);
			}
			s->cell[s->row][s->col++] = *p;
		}
		p++;
	}
	for (int r = 0; r < SCR_ROWS; r++) { /* rows without their trailing blanks */
		int c = SCR_COLS;

		while (c > 0 && s->cell[r][c - 1] == ' ')
			c--;
		s->cell[r][c] = 0;
	}
}

/* The target writes to the terminal while the status line is shown:
 * its line is a line of its own, never glued to the status
 * text nor overwritten by the next redraw; at the end no status text is
 * left, the scroll region is given back and the output ends with a newline. */
Test(e2e_formats, record_status_with_target_output)
{
	char *log = e2e_path(tmp, "tty2.log"), *profile = e2e_path(tmp, "t2.data");
	char *cmd = NULL, *text = NULL, *start, *end;
	struct screen *s = malloc(sizeof(*s));
	bool hello = false, wrote = false;
	struct e2e_result res;
	size_t len = 0;
	FILE *f;

	cr_assert_not_null(s);
	cr_assert(asprintf(&cmd,
			   "stty rows %d cols %d && %s record --progress -o %s -- sh -c 'sleep 1; "
			   "echo hello; sleep 1'",
			   SCR_ROWS, SCR_COLS, E2E_OBJSCOPE, profile) > 0);
	{
		const char *argv[] = { "script", "-qec", cmd, log, NULL };

		cr_assert_eq(e2e_run(tmp, argv, NULL, &res), 0);
		cr_assert_eq(res.status, 0, "record under script(1) exited %d: %s%s", res.status,
			     res.out, res.err);
		e2e_result_free(&res);
	}
	f = fopen(log, "r");
	cr_assert_not_null(f);
	cr_assert_eq(getdelim(&text, &len, '\0', f) > 0, 1, "empty terminal log");
	fclose(f);
	/* script(1) may frame the session with "Script started/done" lines */
	start = strncmp(text, "Script started", 14) ? text : strchr(text, '\n') + 1;
	end = strstr(start, "\nScript done");
	end = end ? end + 1 : start + strlen(start);
	cr_assert_not_null(strstr(start, "objscope: 0."), "no status line was drawn:\n%s", text);
	cr_expect(end > start && end[-1] == '\n', "output does not end with a newline:\n%s", text);
	scr_feed(s, start, end);
	for (int r = 0; r < SCR_ROWS; r++) {
		hello |= !strcmp(s->cell[r], "hello");
		wrote |= !strncmp(s->cell[r], "objscope: wrote ", 16);
		cr_expect_null(strstr(s->cell[r], " samples ("), "status text left on row %d: '%s'",
			       r + 1, s->cell[r]);
		cr_expect(!strstr(s->cell[r], "hello") || !strcmp(s->cell[r], "hello"),
			  "the target's line shares row %d: '%s'", r + 1, s->cell[r]);
	}
	cr_expect(hello, "no row holds the target's 'hello' alone:\n%s", text);
	cr_expect(wrote, "the summary does not start a row:\n%s", text);
	cr_expect(s->top == 0 && s->bot == SCR_ROWS - 1, "scroll region left set: %d..%d",
		  s->top + 1, s->bot + 1);
	free(s);
	free(text);
	free(cmd);
	free(profile);
	free(log);
}

/* A profile with what a recorded native one lacks: replicas, estimates,
 * every thread and frame kind, a context with no allocation path. */
static void write_synthetic(const char *path, uint64_t period)
{
	struct os_profile *p = os_profile_new();
	const char *argv[] = { "java", "Bench", NULL };
	struct os_frame f[5] = {
		{ .kind = OS_FRAME_JAVA, .line = 12 },
		{ .kind = OS_FRAME_NATIVE, .addr = 0x9a0 },
		{ .kind = OS_FRAME_UNKNOWN, .name = OS_NONE, .module = OS_NONE, .file = OS_NONE,
		  .addr = 0x7f0012345678 },
		{ .kind = OS_FRAME_KERNEL, .module = OS_NONE, .file = OS_NONE },
		{ .kind = OS_FRAME_SYNTHETIC, .module = OS_NONE, .file = OS_NONE },
	};
	uint32_t ids[5], stack, i;
	char err[256];

	cr_assert_not_null(p);
	cr_assert_eq(os_profile_set_argv(p, 2, (char *const *)argv), 0);
	p->meta.sampler = os_profile_string(p, "soft");
	p->meta.event = os_profile_string(p, "task-clock");
	p->meta.period = period;
	p->meta.duration_s = 1.5;
	f[0].name = os_profile_string(p, "Bench.makeData");
	f[0].module = OS_NONE;
	f[0].file = os_profile_string(p, "Bench.java");
	f[1].name = os_profile_string(p, "malloc");
	f[1].module = os_profile_string(p, "/lib/libc.so.6");
	f[1].file = OS_NONE;
	f[3].name = os_profile_string(p, "clear_page");
	f[4].name = os_profile_string(p, "[allocated before attach]");
	for (i = 0; i < 5; i++)
		ids[i] = os_profile_frame(p, &f[i]);
	stack = os_profile_stack(p, ids, 5);
	p->c.samples_total = p->c.samples_addressed = p->c.samples_heap = 40;
	p->c.samples_attributed = p->c.samples_java_attributed = 30;
	cr_assert_eq(os_profile_add_context(p, &(struct os_context){
		.type = os_profile_string(p, "double[]"), .stack = stack, .allocations = 3,
		.bytes = 4096, .samples = 20, .metrics = { 7, 8, 9 }, .samples_est = 45.5,
		.replica = { 9, 1, 4, 2, 1, 3, 2, 2 } }), 0);
	cr_assert_eq(os_profile_add_context(p, &(struct os_context){
		.type = OS_NONE, .stack = OS_NONE, .allocations = 1, .bytes = 64,
		.samples = 10, .samples_est = 10 }), 1);
	cr_assert_eq(os_profile_add_access(p, &(struct os_access){
		.context = 0, .stack = stack, .samples = 20, .samples_est = 45.5 }), 0);
	for (i = OS_THR_NATIVE; i <= OS_THR_VM; i++)
		cr_assert_neq(os_profile_add_thread(p, &(struct os_thread){
			.kind = i, .name = os_profile_string(p, "t"), .pid = 7, .tid = 7 + i,
			.samples = 8 }), OS_NONE);
	p->est.samples_attributed = 55.5;
	p->est.samples_java_attributed = 45.5;
	p->analyses = OS_AN_REPLICAS | OS_AN_ESTIMATES;
	cr_assert_eq(os_profile_write(p, path, err, sizeof(err)), 0, "%s", err);
	os_profile_free(p);
}

/* Field `key` of obj, asserting it is present (NULL: a JSON null). */
static json_object *member(json_object *obj, const char *key)
{
	json_object *v = NULL;

	cr_assert(json_object_object_get_ex(obj, key, &v), "no field %s", key);
	return v;
}

/* Real reports (one profile, --top, merges of different -F, a
 * profile with replicas and estimates, an empty one) validate against
 * docs/report.schema.json, closed: no field the schema does not list; a
 * metric the sampler did not measure is null. */
Test(e2e_formats, json_reports_match_the_schema)
{
	const char *opts_f500[] = { "-F", "500", NULL };
	const char *argv[] = { E2E_FIXTURE("three_sites"), SCALE, NULL };
	char *a = record_fixture("a.data"), *b = e2e_path(tmp, "b.data");
	char *syn = e2e_path(tmp, "syn.data"), *empty = e2e_path(tmp, "empty.data");
	char *out[7], msg[512];
	const char *vargv[11] = { "python3", VALIDATOR, SCHEMA };
	json_object *ra, *rb, *rm, *meta, *merge, *o;
	struct os_profile *p = os_profile_new();
	struct e2e_result res;
	int64_t attr_a, attr_b;
	size_t i;

	cr_assert_eq(e2e_record(tmp, b, opts_f500, argv, &res), 0);
	cr_assert_eq(res.status, 0, "record -F 500 exited %d: %s", res.status, res.err);
	e2e_result_free(&res);
	write_synthetic(syn, 250000);
	cr_assert_eq(os_profile_write(p, empty, msg, sizeof(msg)), 0, "%s", msg);
	os_profile_free(p);
	for (i = 0; i < 7; i++) {
		snprintf(msg, sizeof(msg), "r%zu.json", i);
		out[i] = e2e_path(tmp, msg);
		vargv[3 + i] = out[i];
	}
	report("json", out[0], a, NULL, &res);
	e2e_result_free(&res);
	report("json", out[1], a, b, &res);
	e2e_result_free(&res);
	report("json", out[2], syn, NULL, &res);
	e2e_result_free(&res);
	report("json", out[3], syn, a, &res);
	e2e_result_free(&res);
	report("json", out[4], empty, NULL, &res);
	e2e_result_free(&res);
	{
		const char *top[] = { E2E_OBJSCOPE, "report", "--format", "json", "--top", "1",
				      "-o", out[5], a, NULL };

		cr_assert_eq(e2e_run(tmp, top, NULL, &res), 0);
		cr_assert_eq(res.status, 0, "%s", res.err);
		e2e_result_free(&res);
	}
	{
		const char *tab[] = { E2E_OBJSCOPE, "report", "--format", "json", "--tables",
				      "-o", out[6], a, NULL };

		cr_assert_eq(e2e_run(tmp, tab, NULL, &res), 0);
		cr_assert_eq(res.status, 0, "%s", res.err);
		e2e_result_free(&res);
	}
	cr_assert_eq(e2e_run(tmp, vargv, NULL, &res), 0);
	cr_assert_neq(res.status, 127, "python3 not found");
	cr_assert_neq(res.status, 2, "validator cannot run: %s", res.err);
	cr_assert_eq(res.status, 0, "reports do not match %s:\n%s", SCHEMA, res.err);
	e2e_result_free(&res);

	/* The merge of -F 1000 and -F 500: b's samples count twice. */
	ra = e2e_report_json(tmp, a, msg, sizeof(msg));
	cr_assert_not_null(ra, "%s", msg);
	rb = e2e_report_json(tmp, b, msg, sizeof(msg));
	cr_assert_not_null(rb, "%s", msg);
	attr_a = e2e_get_int(e2e_get(ra, "meta"), "samples_attributed");
	attr_b = e2e_get_int(e2e_get(rb, "meta"), "samples_attributed");
	cr_assert_eq(e2e_get_int(e2e_get(ra, "meta"), "period"), 1000000);
	cr_assert_eq(e2e_get_int(e2e_get(rb, "meta"), "period"), 2000000);
	cr_assert_null(member(e2e_get(ra, "meta"), "merge"), "one profile: merge is null");
	rm = json_object_from_file(out[1]);
	cr_assert_not_null(rm);
	meta = e2e_get(rm, "meta");
	cr_expect_eq(e2e_get_int(meta, "period"), 1000000);
	cr_expect_eq(e2e_get_int(meta, "samples_attributed"), attr_a + 2 * attr_b,
		     "merged %" PRId64 ", profiles %" PRId64 " at 1 ms and %" PRId64 " at 2 ms",
		     e2e_get_int(meta, "samples_attributed"), attr_a, attr_b);
	merge = member(meta, "merge");
	cr_assert_not_null(merge);
	cr_expect_eq(e2e_get_int(merge, "profiles"), 2);
	cr_expect_str_eq(json_object_get_string(e2e_get(merge, "normalisation")), "scaled");
	cr_expect_not_null(e2e_note(rm, "sample counts scaled to period 1000000"),
			   "the merge is not said in the notes");
	/* soft sampler: no metric measured, each null */
	cr_expect_eq(json_object_array_length(e2e_get(meta, "metrics_measured")), 0);
	o = json_object_array_get_idx(e2e_get(rm, "objects"), 0);
	cr_assert_not_null(o);
	cr_expect_null(member(member(o, "metrics"), "latency_cycles"));
	cr_expect_null(member(member(o, "metrics"), "l1_miss"));
	cr_expect_null(member(member(o, "metrics"), "remote"));
	json_object_put(ra);
	json_object_put(rb);
	json_object_put(rm);
	for (i = 0; i < 7; i++)
		free(out[i]);
	free(a);
	free(b);
	free(syn);
	free(empty);
}

/* A stack of a --tables report (an index into "stacks", or null) as the
 * array of frame objects the inline report writes. */
static json_object *resolved(json_object *root, json_object *ref)
{
	json_object *stacks = e2e_get(root, "stacks"), *frames = e2e_get(root, "frames");
	json_object *out = json_object_new_array(), *st;
	size_t i;

	if (!ref)
		return out;
	cr_assert(json_object_is_type(ref, json_type_int), "a stack reference is not an index");
	st = json_object_array_get_idx(stacks, (size_t)json_object_get_int64(ref));
	cr_assert_not_null(st, "stack index %lld out of the table", (long long)json_object_get_int64(ref));
	for (i = 0; i < json_object_array_length(st); i++) {
		json_object *f = json_object_array_get_idx(
			frames, (size_t)json_object_get_int64(json_object_array_get_idx(st, i)));

		cr_assert_not_null(f, "frame index out of the table");
		json_object_array_add(out, json_object_get(f));
	}
	return out;
}

/* report --format json --tables keeps frames and stacks once: every stack
 * resolves to exactly the frames the inline report writes, each frame and
 * stack is in its table once, and the objects without samples are left out
 * (counted) unless -v, which keeps every object. */
Test(e2e_formats, json_tables_resolve_to_the_inline_stacks)
{
	char *a = record_fixture("a.data"), *ti = e2e_path(tmp, "t.json"), *tv = e2e_path(tmp, "tv.json");
	const char *targv[] = { E2E_OBJSCOPE, "report", "--format", "json", "--tables", "-o", ti, a, NULL };
	const char *vargv[] = { E2E_OBJSCOPE, "report", "--format", "json", "--tables", "-v", "-o", tv, a,
				NULL };
	json_object *inl, *tab, *verb, *byid[4096] = { NULL }, *objs, *stacks, *frames;
	struct e2e_result res;
	char msg[512];
	size_t i, j, n, unsampled = 0;

	cr_assert_eq(e2e_run(tmp, targv, NULL, &res), 0);
	cr_assert_eq(res.status, 0, "%s", res.err);
	e2e_result_free(&res);
	cr_assert_eq(e2e_run(tmp, vargv, NULL, &res), 0);
	cr_assert_eq(res.status, 0, "%s", res.err);
	e2e_result_free(&res);
	inl = e2e_report_json(tmp, a, msg, sizeof(msg));
	cr_assert_not_null(inl, "%s", msg);
	tab = json_object_from_file(ti);
	verb = json_object_from_file(tv);
	cr_assert(tab && verb, "the --tables reports do not parse");
	objs = e2e_get(inl, "objects");
	n = json_object_array_length(objs);
	cr_assert_lt(n, 4096);
	for (i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(objs, i);

		byid[e2e_get_int(o, "id")] = o;
		unsampled += e2e_get_int(o, "samples") == 0 &&
			     !(member(o, "samples_estimated") &&
			       json_object_get_double(member(o, "samples_estimated")) >= 0.5);
	}
	cr_expect_eq(json_object_array_length(e2e_get(verb, "objects")), n,
		     "-v --tables leaves objects out");
	cr_expect_eq(json_object_array_length(e2e_get(tab, "objects")) +
			     (size_t)e2e_get_int(tab, "objects_without_samples_left_out"), n,
		     "objects kept + left out is not every object");
	cr_expect_eq((size_t)e2e_get_int(tab, "objects_without_samples_left_out"), unsampled,
		     "%zu objects without samples, %lld left out", unsampled,
		     (long long)e2e_get_int(tab, "objects_without_samples_left_out"));
	objs = e2e_get(tab, "objects");
	cr_assert_gt(json_object_array_length(objs), 0);
	for (i = 0; i < json_object_array_length(objs); i++) {
		json_object *o = json_object_array_get_idx(objs, i), *want = byid[e2e_get_int(o, "id")];
		json_object *got = resolved(tab, member(o, "alloc_stack")), *acc, *wacc;

		cr_assert_not_null(want, "object #%lld is not in the inline report",
				   (long long)e2e_get_int(o, "id"));
		cr_expect(json_object_equal(got, e2e_get(want, "alloc_stack")),
			  "object #%lld: the table's allocation path differs from the inline one",
			  (long long)e2e_get_int(o, "id"));
		json_object_put(got);
		acc = e2e_get(o, "accesses");
		wacc = e2e_get(want, "accesses");
		cr_assert_eq(json_object_array_length(acc), json_object_array_length(wacc));
		for (j = 0; j < json_object_array_length(acc); j++) {
			got = resolved(tab, member(json_object_array_get_idx(acc, j), "stack"));
			cr_expect(json_object_equal(got, e2e_get(json_object_array_get_idx(wacc, j), "stack")),
				  "object #%lld access %zu: the table's path differs", (long long)e2e_get_int(o, "id"), j);
			json_object_put(got);
		}
	}
	/* once: no two entries of a table alike */
	stacks = e2e_get(tab, "stacks");
	frames = e2e_get(tab, "frames");
	for (i = 0; i < json_object_array_length(stacks); i++)
		for (j = i + 1; j < json_object_array_length(stacks); j++)
			cr_expect(!json_object_equal(json_object_array_get_idx(stacks, i),
						     json_object_array_get_idx(stacks, j)),
				  "stacks %zu and %zu are the same", i, j);
	for (i = 0; i < json_object_array_length(frames); i++)
		for (j = i + 1; j < json_object_array_length(frames); j++)
			cr_expect(!json_object_equal(json_object_array_get_idx(frames, i),
						     json_object_array_get_idx(frames, j)),
				  "frames %zu and %zu are the same", i, j);
	json_object_put(inl);
	json_object_put(tab);
	json_object_put(verb);
	free(a);
	free(ti);
	free(tv);
}

/* The validator is not a test that cannot fail: a field the schema does not
 * list, a metric 0 where not measured, a missing field are each caught. */
Test(e2e_formats, schema_validator_catches_drift)
{
	char *syn = e2e_path(tmp, "syn.data"), *good = e2e_path(tmp, "good.json");
	char *bad = e2e_path(tmp, "bad.json");
	const char *vargv[] = { "python3", VALIDATOR, SCHEMA, bad, NULL };
	static const struct {
		const char *from, *to, *want;
	} cases[] = {
		{ "\"objects_total\": ", "\"objects_new\": 1, \"objects_total\": ",
		  "'objects_new' was unexpected" },
		{ "\"l1_miss\": null", "\"l1_miss\": 0", "l1_miss is 0 but" },
		{ "\"small_outside_tlab\": 0\n", "\"small_outside_tlabs\": 0\n",
		  "'small_outside_tlab' is a required property" },
	};
	struct e2e_result res;
	char *text = NULL, *at;
	size_t len = 0, i;
	FILE *f;

	write_synthetic(syn, 1000000);
	report("json", good, syn, NULL, &res);
	e2e_result_free(&res);
	f = fopen(good, "r");
	cr_assert_not_null(f);
	cr_assert(getdelim(&text, &len, '\0', f) > 0);
	fclose(f);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		at = strstr(text, cases[i].from);
		cr_assert_not_null(at, "no '%s' in the report: %.300s", cases[i].from, text);
		f = fopen(bad, "w");
		cr_assert_not_null(f);
		fprintf(f, "%.*s%s%s", (int)(at - text), text, cases[i].to,
			at + strlen(cases[i].from));
		fclose(f);
		cr_assert_eq(e2e_run(tmp, vargv, NULL, &res), 0);
		cr_expect_eq(res.status, 1, "case %zu: validator exited %d: %s", i, res.status,
			     res.err);
		cr_expect_not_null(strstr(res.err, cases[i].want), "case %zu: %s", i, res.err);
		e2e_result_free(&res);
	}
	free(text);
	free(syn);
	free(good);
	free(bad);
}

/* pprof (gzip protobuf) is not written to a terminal: one line,
 * exit 2, nothing binary on it; -o FILE on a terminal works. script(1)
 * gives objscope a pty. */
Test(e2e_formats, pprof_refused_on_a_terminal)
{
	char *profile = e2e_path(tmp, "syn.data"), *log = e2e_path(tmp, "tty.log");
	char *pb = e2e_path(tmp, "tty.pb.gz"), *cmd = NULL, *text = NULL;
	unsigned char magic[2] = { 0 };
	const char *at;
	ssize_t n;
	struct e2e_result res;
	size_t len = 0;
	FILE *f;

	write_synthetic(profile, 1000000);
	cr_assert(asprintf(&cmd, "%s report --format pprof %s", E2E_OBJSCOPE, profile) > 0);
	{
		const char *argv[] = { "script", "-qec", cmd, log, NULL };

		cr_assert_eq(e2e_run(tmp, argv, NULL, &res), 0);
		cr_assert_neq(res.status, 127, "script(1) not found");
		cr_expect_eq(res.status, 2, "pprof on a terminal exited %d", res.status);
		e2e_result_free(&res);
	}
	f = fopen(log, "r");
	cr_assert_not_null(f);
	n = getdelim(&text, &len, '\0', f);
	cr_assert(n > 0, "nothing said on the terminal");
	fclose(f);
	/* script(1) may frame the log with its own "Script started/done" lines */
	at = strstr(text, "objscope: ");
	cr_expect(at && (at == text || at[-1] == '\n') &&
			  strncmp(at, TTY_REFUSAL "\r\n", strlen(TTY_REFUSAL "\r\n")) == 0 &&
			  !strstr(at + 1, "objscope: "),
		  "not one line on the terminal:\n%s", text);
	cr_expect(!memmem(text, (size_t)n, "\x1f\x8b", 2), "gzip bytes on the terminal");
	free(text);
	free(cmd);

	cr_assert(asprintf(&cmd, "%s report --format pprof -o %s %s", E2E_OBJSCOPE, pb,
			   profile) > 0);
	{
		const char *argv[] = { "script", "-qec", cmd, log, NULL };

		cr_assert_eq(e2e_run(tmp, argv, NULL, &res), 0);
		cr_expect_eq(res.status, 0, "pprof -o FILE from a terminal exited %d", res.status);
		e2e_result_free(&res);
	}
	f = fopen(pb, "rb");
	cr_assert_not_null(f, "-o %s wrote nothing", pb);
	cr_expect_eq(fread(magic, 1, 2, f), 2);
	fclose(f);
	cr_expect(magic[0] == 0x1f && magic[1] == 0x8b, "pprof output is not gzip");
	free(cmd);
	free(profile);
	free(log);
	free(pb);
}

/* Objects named by their maker: contexts allocated through xcalloc (a
 * listed wrapper), through pool_refill <- pool_alloc (pool_alloc called
 * from three sites: found automatically) and through my_new (one caller:
 * named only with --alloc-wrapper my_new) are named by the first frame
 * outside those, in json ("maker"), text ("made by:") and pprof labels;
 * alloc_stack stays whole. */
Test(e2e_formats, objects_are_named_by_their_maker)
{
	struct os_profile *p = os_profile_new();
	char *profile = e2e_path(tmp, "makers.data"), err[256], msg[256];
	static const char *const sites[] = { "parse_list", "parse_map", "parse_set" };
	uint32_t xc, refill, pool, mynew, mainf, f[4], i;
	const char *text_argv[] = { E2E_OBJSCOPE, "report", "--top", "0", NULL, NULL };
	const char *wrap_argv[] = { E2E_OBJSCOPE, "report", "--format", "json", "--alloc-wrapper",
				    "my_new", NULL, NULL };
	struct e2e_result res;
	json_object *r, *objs;

	cr_assert_not_null(p);
	xc = frame(p, OS_FRAME_NATIVE, "xcalloc", "/opt/demo", "demo.c", 51);
	refill = frame(p, OS_FRAME_NATIVE, "pool_refill", "/opt/demo", "pool.c", 10);
	pool = frame(p, OS_FRAME_NATIVE, "pool_alloc", "/opt/demo", "pool.c", 40);
	mynew = frame(p, OS_FRAME_NATIVE, "my_new", "/opt/demo", "new.c", 5);
	mainf = frame(p, OS_FRAME_NATIVE, "main", "/opt/demo", "demo.c", 90);
	for (i = 0; i < 3; i++) {
		uint32_t site = frame(p, OS_FRAME_NATIVE, sites[i], "/opt/demo", "demo.c", 60 + i);

		f[0] = xc, f[1] = site, f[2] = mainf;
		os_profile_add_context(p, &(struct os_context){ .type = OS_NONE,
			.stack = os_profile_stack(p, f, 3), .allocations = 1, .bytes = 4096,
			.samples = 10 + i });
		site = frame(p, OS_FRAME_NATIVE, sites[i], "/opt/demo", "demo.c", 70 + i);
		f[0] = refill, f[1] = pool, f[2] = site, f[3] = mainf;
		os_profile_add_context(p, &(struct os_context){ .type = OS_NONE,
			.stack = os_profile_stack(p, f, 4), .allocations = 1, .bytes = 4096,
			.samples = 20 + i });
	}
	f[0] = mynew, f[1] = frame(p, OS_FRAME_NATIVE, "load_config", "/opt/demo", "demo.c", 80),
	f[2] = mainf;
	os_profile_add_context(p, &(struct os_context){ .type = OS_NONE,
		.stack = os_profile_stack(p, f, 3), .allocations = 1, .bytes = 4096, .samples = 5 });
	p->c.samples_total = p->c.samples_addressed = p->c.samples_heap = 101;
	p->c.samples_attributed = 101;
	cr_assert_eq(os_profile_write(p, profile, err, sizeof(err)), 0, "%s", err);
	os_profile_free(p);

	r = e2e_report_json(tmp, profile, msg, sizeof(msg));
	cr_assert_not_null(r, "%s", msg);
	objs = e2e_get(r, "objects");
	cr_assert_eq(json_object_array_length(objs), 7);
	for (i = 0; i < 7; i++) {
		json_object *o = json_object_array_get_idx(objs, i), *st = e2e_get(o, "alloc_stack");
		int64_t m = e2e_get_int(o, "maker");
		const char *leaf = e2e_frame_text(st, 0), *named = e2e_frame_text(st, (size_t)m);

		if (strstr(leaf, "my_new"))
			cr_expect_eq(m, 0, "my_new has one caller: it names its object");
		else
			cr_expect(strstr(named, "parse_") != NULL, "#%u (%s) is named by %s", i + 1,
				  leaf, named);
	}
	json_object_put(r);

	text_argv[4] = profile;
	cr_assert_eq(e2e_run(tmp, text_argv, NULL, &res), 0);
	cr_expect_eq(res.status, 0);
	cr_expect(strstr(res.out, "made by:  parse_set (demo.c:72)  (below it 2 allocator frames)"),
		  "%s", res.out);
	cr_expect(strstr(res.out, "made by:  parse_list (demo.c:60)  (below it 1 allocator frame)"),
		  "%s", res.out);
	e2e_result_free(&res);

	wrap_argv[6] = profile;
	cr_assert_eq(e2e_run(tmp, wrap_argv, NULL, &res), 0);
	cr_assert_eq(res.status, 0, "%s", res.err);
	r = json_tokener_parse(res.out);
	cr_assert_not_null(r);
	objs = e2e_get(r, "objects");
	{
		json_object *o = json_object_array_get_idx(objs, 6);

		cr_expect_eq(e2e_get_int(o, "maker"), 1, "--alloc-wrapper my_new: %s",
			     json_object_to_json_string(o));
	}
	json_object_put(r);
	e2e_result_free(&res);
	free(profile);
}

/* Program first: objects whose type is a runtime adapter's category
 * ("[...]": a runtime's own memory) leave the ranking for a section of
 * their own, one row per category, and the header says the share each
 * side took; -v lists them among the program's objects. */
Test(e2e_formats, runtime_memory_in_its_own_section)
{
	struct os_profile *p = os_profile_new();
	char *profile = e2e_path(tmp, "cat.data"), err[256];
	const char *argv[] = { E2E_OBJSCOPE, "report", NULL, NULL, NULL };
	struct e2e_result res;
	uint32_t f, st;
	const char *objs_at, *cat_at;

	cr_assert_not_null(p);
	f = frame(p, OS_FRAME_JAVA, "App.load", NULL, "App.java", 7);
	st = os_profile_stack(p, &f, 1);
	os_profile_add_context(p, &(struct os_context){ .type = os_profile_string(p, "App$Row[]"),
		.stack = st, .allocations = 4, .bytes = 4096, .samples = 30 });
	f = frame(p, OS_FRAME_NATIVE, "Meta::commit", "/lib/librt.so", NULL, 0);
	os_profile_add_context(p, &(struct os_context){
		.type = os_profile_string(p, "[runtime metadata: classes]"),
		.stack = os_profile_stack(p, &f, 1), .allocations = 1, .bytes = 1 << 20,
		.samples = 60 });
	f = frame(p, OS_FRAME_NATIVE, "Code::grow", "/lib/librt.so", NULL, 0);
	os_profile_add_context(p, &(struct os_context){
		.type = os_profile_string(p, "[runtime code cache]"),
		.stack = os_profile_stack(p, &f, 1), .allocations = 1, .bytes = 1 << 21,
		.samples = 10 });
	p->c.samples_total = p->c.samples_addressed = p->c.samples_heap = 100;
	p->c.samples_attributed = 100;
	cr_assert_eq(os_profile_write(p, profile, err, sizeof(err)), 0, "%s", err);
	os_profile_free(p);

	argv[2] = profile;
	cr_assert_eq(e2e_run(tmp, argv, NULL, &res), 0);
	cr_assert_eq(res.status, 0, "%s", res.err);
	cr_expect(strstr(res.out, "# program:     30.0% of the attributed samples on the program's "
				  "objects, 70.0% on the runtime's own memory"), "%s", res.out);
	objs_at = strstr(res.out, "# Objects");
	cat_at = strstr(res.out, "# The runtime's own memory, by category");
	cr_assert(objs_at && cat_at && objs_at < cat_at, "%s", res.out);
	cr_expect(strstr(objs_at, "App$Row[]") < cat_at, "the program's object is not ranked");
	cr_expect(!strstr(objs_at, "Meta::commit"), "a category's object in the ranking: %s",
		  res.out);
	cr_expect(strstr(cat_at, "60.00%") && strstr(cat_at, "[runtime metadata: classes]") &&
		  strstr(cat_at, "10.00%") && strstr(cat_at, "[runtime code cache]"), "%s", cat_at);
	e2e_result_free(&res);
	argv[2] = "-v";
	argv[3] = profile;
	cr_assert_eq(e2e_run(tmp, argv, NULL, &res), 0);
	cr_expect(strstr(res.out, "Meta::commit") && !strstr(res.out, "# The runtime's own memory"),
		  "-v does not list the runtime's objects among the program's: %s", res.out);
	e2e_result_free(&res);
	free(profile);
}
