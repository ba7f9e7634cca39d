/* security_profile.c - a profile file as an attack, and objscope killed
 * while it records. A person who hands a developer a profile controls every
 * byte of it (the checksum is no defence: anyone can compute it); a target
 * controls the text in it (its command line, function and thread names).
 * `objscope report` must refuse a crafted file in one line (exit 1, no
 * output) in every format, and must put no control byte from the profile on
 * a terminal in any text output. A SIGKILL of `objscope record` must leave
 * the profile of the run up to its last checkpoint, readable and marked
 * unfinished (attacher/core/checkpoint.h).
 *
 * Run from the repository root after `make all fixtures`.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/profile.h"
#include "tests/e2e/helpers.h"
#include "tests/fuzz/fuzz_repair.h"

#define SEED "tests/fuzz/corpus/v2_three_sites.prof" /* a version-2 profile with slices */
#define CRASHES "tests/fuzz/crashes/"

static char *tmp;

static void setup(void)
{
	cr_assert(access(E2E_OBJSCOPE, X_OK) == 0, "build/objscope is missing: run `make all`");
	tmp = e2e_suite_setup();
}

static void teardown(void)
{
	e2e_suite_teardown(&tmp);
}

TestSuite(security_profile, .init = setup, .fini = teardown, .timeout = 180);

/* `objscope report ARGS... -o OUT FILE` in `fmt`: it must refuse in one
 * line naming `why`, with exit 1 and no OUT. */
static void refused(const char *file, const char *fmt, const char *extra, const char *why)
{
	char *out = e2e_path(tmp, "out");
	const char *argv[] = { E2E_OBJSCOPE, "report", "--format", fmt, "-o", out,
			       extra ? extra : file, extra ? file : NULL, extra ? file : NULL,
			       NULL };
	struct e2e_result res;

	unlink(out);
	cr_assert_eq(e2e_run(tmp, argv, NULL, &res), 0);
	cr_expect_eq(res.status, 1, "report --format %s %s %s: exit %d (signal %d), stderr: %s",
		     fmt, extra ? extra : "", file, res.status, res.signaled, res.err);
	cr_expect_eq(e2e_count_lines(res.err, res.err_len), 1, "not one error line: %s", res.err);
	cr_expect(strstr(res.err, why) != NULL, "the error does not say '%s': %s", why, res.err);
	cr_expect(access(out, F_OK) < 0, "report --format %s left an output", fmt);
	e2e_result_free(&res);
	free(out);
}

/* A fuzzer's finding as the fuzzer ran it: its checksum repaired
 * (fuzz_repair.h), written to tmp. */
static char *repaired(const char *finding)
{
	char *path = e2e_path(tmp, "crafted.prof");
	uint8_t *buf;
	struct stat st;
	FILE *f;

	cr_assert_eq(stat(finding, &st), 0, "%s: %s", finding, strerror(errno));
	buf = malloc((size_t)st.st_size);
	f = fopen(finding, "rb");
	cr_assert(buf && f && fread(buf, 1, (size_t)st.st_size, f) == (size_t)st.st_size);
	fclose(f);
	cr_assert(fz_repairable(buf, (size_t)st.st_size));
	fz_repair(buf, (size_t)st.st_size);
	f = fopen(path, "wb");
	cr_assert(f && fwrite(buf, 1, (size_t)st.st_size, f) == (size_t)st.st_size);
	fclose(f);
	free(buf);
	return path;
}

static void refused_everywhere(const char *finding, const char *why)
{
	static const char *const fmts[] = { "text", "json", "html", "pprof", "collapsed" };
	char *file = repaired(finding);

	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++)
		refused(file, fmts[i], NULL, why);
	refused(file, "text", "--diff", why);
	refused(file, "html", "--diff", why);
	free(file);
}

/* The heap write of `report --format html`: a SLICES bucket near 2^32
 * wrapped the timeline's point count to 0 (calloc(0), then sums written
 * past it; exit 0, the page looked fine), or made the merge factor 0
 * (SIGFPE). Both files are the fuzzer's regression inputs. */
Test(security_profile, html_timeline_bucket_near_2_32_refused)
{
	refused_everywhere(CRASHES "report-crash-html-timeline-bucket-wrap", "time bucket");
	refused_everywhere(CRASHES "report-crash-html-timeline-merge-zero", "time bucket");
}

/* Figures a renderer turns into integers: a lifetime peak of 1e243 bytes
 * (a cast to uint64, undefined), a start time whose nanoseconds overflow
 * pprof's int64. */
Test(security_profile, figures_out_of_range_refused)
{
	refused_everywhere(CRASHES "report-crash-lifetime-peak-huge", "lifetime figure");
	refused_everywhere(CRASHES "report-crash-pprof-start-time-overflow", "start");
}

/* Every byte of out that a terminal would act on: C0 controls but '\n',
 * DEL, and C1 controls (U+0080-U+009F, as UTF-8 or as raw bytes). */
static void inert(const char *what, const char *out, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)out[i];
		bool c1 = ch == 0xc2 && i + 1 < len && (unsigned char)out[i + 1] >= 0x80 &&
			  (unsigned char)out[i + 1] <= 0x9f;

		cr_expect(!((ch < 0x20 && ch != '\n') || ch == 0x7f || c1 ||
			    (ch >= 0x80 && ch <= 0x9f && (i == 0 || (unsigned char)out[i - 1] < 0xc0))),
			  "%s: control byte 0x%02x at offset %zu: ...%.40s", what, ch, i,
			  out + (i > 20 ? i - 20 : 0));
		if (ch < 0x20 && ch != '\n')
			return; /* one is enough */
	}
}

/* A profile whose text came from a hostile target: ESC sequences, BEL, a
 * C1 CSI, DEL and a newline in its command, host, sampler, event, mode,
 * notes, type, frame, module, file and thread names. */
static char *hostile_profile(void)
{
	static const char bad[] = "\x1b]0;owned\x07\x1b[2J\xc2\x9b" "31m\x7f\r\n";
	struct os_profile *p = os_profile_new();
	char s[128], *path = e2e_path(tmp, "hostile.prof"), err[256];
	char *argv[] = { s, s, NULL };
	uint32_t f[2], st, ctx;

	cr_assert_not_null(p);
	snprintf(s, sizeof(s), "evil%s", bad);
	cr_assert_eq(os_profile_set_argv(p, 2, argv), 0);
	p->meta.hostname = os_profile_string(p, s);
	p->meta.sampler = os_profile_string(p, s);
	p->meta.event = os_profile_string(p, s);
	p->meta.mode = os_profile_string(p, s);
	p->meta.period = 1000000;
	p->meta.duration_s = 1;
	cr_assert_eq(os_profile_add_note(p, s), 0);
	for (int i = 0; i < 2; i++) {
		struct os_frame fr = { .kind = OS_FRAME_NATIVE, .name = os_profile_string(p, s),
				       .module = os_profile_string(p, s),
				       .file = os_profile_string(p, s), .line = 3 + i,
				       .addr = 0x10u + i, .near_sym = OS_NONE,
				       .build_id = OS_NONE };

		f[i] = os_profile_frame(p, &fr);
	}
	st = os_profile_stack(p, f, 2);
	ctx = os_profile_add_context(p, &(struct os_context){ .type = os_profile_string(p, s),
							      .stack = st, .allocations = 1,
							      .bytes = 4096, .samples = 10 });
	os_profile_add_access(p, &(struct os_access){ .context = ctx, .stack = st, .samples = 10 });
	os_profile_add_thread(p, &(struct os_thread){ .name = os_profile_string(p, s), .pid = 7,
						      .tid = 7, .samples = 10 });
	p->slice_ms = 100;
	os_profile_add_slice(p, &(struct os_slice){ ctx, 0, 0, 0, 10 });
	p->c.samples_total = p->c.samples_addressed = p->c.samples_heap = 10;
	p->c.samples_attributed = 10;
	cr_assert_eq(os_profile_write(p, path, err, sizeof(err)), 0, "%s", err);
	os_profile_free(p);
	return path;
}

/* Every text output: the report (plain, -v, --per-thread), --diff, and
 * --format collapsed. */
Test(security_profile, control_bytes_from_the_target_are_escaped)
{
	char *path = hostile_profile();
	const char *const forms[][4] = {
		{ NULL }, { "-v", NULL }, { "--per-thread", "-v", NULL },
		{ "--format", "collapsed", NULL }, { "--diff", NULL },
	};

	for (size_t k = 0; k < sizeof(forms) / sizeof(forms[0]); k++) {
		const char *argv[10] = { E2E_OBJSCOPE, "report" };
		size_t n = 2;
		struct e2e_result res;
		char what[64];

		for (size_t i = 0; forms[k][i]; i++)
			argv[n++] = forms[k][i];
		argv[n++] = path;
		if (!strcmp(argv[2], "--diff"))
			argv[n++] = path;
		argv[n] = NULL;
		cr_assert_eq(e2e_run(tmp, argv, NULL, &res), 0);
		snprintf(what, sizeof(what), "report %s%s", forms[k][0] ? forms[k][0] : "",
			 forms[k][0] && forms[k][1] ? " ..." : "");
		cr_expect_eq(res.status, 0, "%s: exit %d: %s", what, res.status, res.err);
		cr_expect(res.out_len > 0, "%s wrote nothing", what);
		cr_expect(strstr(res.out, "\\x1b") != NULL, "%s does not show the ESC as \\x1b",
			  what);
		inert(what, res.out, res.out_len);
		e2e_result_free(&res);
	}
	free(path);
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* SIGKILL of `objscope record` at a random point of a run (uniform in
 * [CKPT_MIN + 3, 20] s: past the first checkpoint) leaves the profile of
 * the run up to a checkpoint at most CKPT_MIN + LOST_SLACK s before the
 * kill: it reads, says it is unfinished, and holds the planted answer's
 * samples. LOST_SLACK: the checkpoint's build and write (tens of ms) and
 * this loaded machine's scheduling. */
#define CKPT_MIN 5.0 /* OS_CKPT_MIN_S */
#define LOST_SLACK 3.0
Test(security_profile, sigkill_of_record_keeps_a_checkpoint)
{
	char *profile = e2e_path(tmp, "killed.prof"), msg[512];
	const char *argv[] = { E2E_OBJSCOPE, "record", "-o", profile, "--",
			       E2E_FIXTURE("attach_target"), "40", NULL };
	json_object *report, *meta;
	double t0, kill_at, lived, dur;
	unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
	pid_t objscope, target;
	const char *rdy;
	int st;

	srand(seed);
	kill_at = CKPT_MIN + 3 + (20 - CKPT_MIN - 3) * ((double)rand() / RAND_MAX);
	e2e_diag("sigkill_of_record_keeps_a_checkpoint: kill at %.1f s (seed %u)", kill_at, seed);
	t0 = mono_s();
	objscope = e2e_spawn_logged(tmp, "rec", argv, NULL);
	while (mono_s() - t0 < kill_at)
		usleep(50000);
	cr_assert_eq(kill(objscope, SIGKILL), 0);
	lived = mono_s() - t0;
	cr_assert_eq(waitpid(objscope, &st, 0), objscope);
	/* the orphaned target runs on unharmed (e2e_faults tests that); end it
	 * by the pid it printed ("ready PID") */
	rdy = strstr(e2e_slurp(tmp, "rec", "out"), "ready ");
	if (rdy && (target = (pid_t)atoi(rdy + 6)) > 1)
		kill(target, SIGKILL);
	report = e2e_report_json(tmp, profile, msg, sizeof(msg));
	cr_assert_not_null(report, "no readable profile after kill -9 at %.1f s: %s", lived, msg);
	meta = e2e_get(report, "meta");
	cr_expect(json_object_get_boolean(e2e_get(meta, "unfinished")),
		  "the profile left by kill -9 is not marked unfinished");
	dur = e2e_get_double(meta, "duration_s");
	e2e_diag("killed at %.1f s: the checkpoint holds %.1f s", lived, dur);
	cr_expect_geq(dur, lived - CKPT_MIN - LOST_SLACK,
		      "the checkpoint holds %.1f s of a run killed at %.1f s", dur, lived);
	cr_expect_gt(e2e_get_int(meta, "samples_attributed"), 0, "the checkpoint has no samples");
	json_object_put(report);
	free(profile);
}

/* A run that ends normally: its final profile replaces the checkpoints (not
 * unfinished, a note counts them), and the profile that was at the path
 * before the run is kept as FILE.old, not a checkpoint. */
Test(security_profile, final_profile_replaces_the_checkpoints)
{
	char *profile = e2e_path(tmp, "done.prof"), *old, msg[512];
	const char *argv[] = { "env", "OBJSCOPE_CHECKPOINT_S=0.5", E2E_OBJSCOPE, "record", "-o",
			       profile, "--", E2E_FIXTURE("three_sites"), NULL };
	struct e2e_result res;
	json_object *report;
	const char *note;
	FILE *f;
	char buf[64] = "";

	cr_assert(asprintf(&old, "%s.old", profile) > 0);
	f = fopen(profile, "w");
	cr_assert_not_null(f);
	fputs("the user's previous file\n", f);
	fclose(f);
	cr_assert_eq(e2e_run(tmp, argv, NULL, &res), 0);
	cr_assert_eq(res.status, 0, "record: %s", res.err);
	e2e_result_free(&res);
	report = e2e_report_json(tmp, profile, msg, sizeof(msg));
	cr_assert_not_null(report, "%s", msg);
	cr_expect(!json_object_get_boolean(e2e_get(e2e_get(report, "meta"), "unfinished")),
		  "the final profile is marked unfinished");
	note = e2e_note(report, "checkpoints: ");
	cr_expect_not_null(note, "no note on the checkpoints (a 0.5 s interval, a run of seconds)");
	f = fopen(old, "r");
	cr_assert_not_null(f, "the previous file was not kept as %s", old);
	cr_expect_not_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	cr_expect_str_eq(buf, "the user's previous file\n", "%s holds a checkpoint", old);
	json_object_put(report);
	free(old);
	free(profile);
}
