/* report.c - end-to-end tests of `objscope report` on damaged input and on
 * an output disk that is full. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/profile.h"
#include "tests/e2e/helpers.h"

static char *tmp;

static void setup(void)
{
	tmp = e2e_suite_setup();
}

static void teardown(void)
{
	e2e_suite_teardown(&tmp);
}

TestSuite(e2e_report, .init = setup, .fini = teardown, .timeout = 60);

/* A profile cut in half must be refused with one line, never half-read. */
Test(e2e_report, corrupt)
{
	const char *argv[] = { E2E_FIXTURE("three_sites"), "0.2", NULL };
	char *profile = e2e_path(tmp, "cut.data");
	const char *report_argv[] = { E2E_OBJSCOPE, "report", "--format", "json", profile, NULL };
	struct e2e_result res;
	struct stat st;

	cr_assert_eq(e2e_record(tmp, profile, NULL, argv, &res), 0);
	cr_assert_eq(res.status, 0, "objscope record exited %d: %s", res.status, res.err);
	e2e_result_free(&res);
	cr_assert_eq(stat(profile, &st), 0, "record wrote no profile");
	cr_assert_gt(st.st_size, 16, "profile is only %lld bytes", (long long)st.st_size);
	cr_assert_eq(truncate(profile, st.st_size / 2), 0);

	cr_assert_eq(e2e_run(tmp, report_argv, NULL, &res), 0);
	cr_expect(!res.signaled, "report crashed on a truncated profile (signal %d)", res.status - 128);
	cr_expect_neq(res.status, 0, "report accepted a truncated profile");
	cr_expect_eq(e2e_count_lines(res.err, res.err_len), 1, "expected one line on stderr, got:\n%s",
		     res.err);
	e2e_result_free(&res);
	free(profile);
}

/* A file that is not a profile at all. */
Test(e2e_report, not_a_profile)
{
	char *path = e2e_path(tmp, "notes.txt");
	const char *report_argv[] = { E2E_OBJSCOPE, "report", path, NULL };
	struct e2e_result res;
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f);
	fputs("this is not an objscope profile\n", f);
	fclose(f);
	cr_assert_eq(e2e_run(tmp, report_argv, NULL, &res), 0);
	cr_expect(!res.signaled, "report crashed (signal %d)", res.status - 128);
	cr_expect_neq(res.status, 0, "report accepted a text file");
	cr_expect_eq(e2e_count_lines(res.err, res.err_len), 1, "expected one line on stderr, got:\n%s",
		     res.err);
	e2e_result_free(&res);
	free(path);
}

/* A profile of `n` contexts with 3-frame stacks, written to `path`. */
static void write_synthetic(const char *path, uint32_t n)
{
	struct os_profile *p = os_profile_new();
	char name[64], err[256];

	cr_assert_not_null(p);
	p->c.samples_total = p->c.samples_attributed = n;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t f[3];

		for (uint32_t j = 0; j < 3; j++) {
			struct os_frame fr = { .kind = OS_FRAME_NATIVE, .addr = i * 3 + j };

			snprintf(name, sizeof(name), "function_%u_%u", i, j);
			fr.name = os_profile_string(p, name);
			f[j] = os_profile_frame(p, &fr);
		}
		os_profile_add_context(p, &(struct os_context){
			.type = OS_NONE, .stack = os_profile_stack(p, f, 3), .allocations = 1,
			.bytes = 4096, .samples = 1 });
	}
	cr_assert_eq(os_profile_write(p, path, err, sizeof(err)), 0, "%s", err);
	os_profile_free(p);
}

/* -o on a full disk: every format fails with one line naming the error, and
 * leaves neither OUT nor OUT.tmp. Needs permission to mount a tmpfs. Each
 * format runs 8 times: a failing output sink once returned -1 to stdio
 * (fopencookie wants 0), and pprof then crashed in about 1 run of 4. */
Test(e2e_report, full_disk_leaves_no_output)
{
	static const char *const formats[] = { "json", "text", "html", "collapsed", "pprof" };
	char *profile = e2e_path(tmp, "in.data"), *mnt, *out, *otmp;

	write_synthetic(profile, 2000);
	mnt = e2e_full_tmpfs(tmp);
	out = e2e_path(mnt, "report.out");
	cr_assert(asprintf(&otmp, "%s.tmp", out) > 0);
	for (size_t k = 0; k < 8 * sizeof(formats) / sizeof(formats[0]); k++) {
		size_t i = k % (sizeof(formats) / sizeof(formats[0]));
		const char *argv[] = { E2E_OBJSCOPE, "report", "--format", formats[i], "-o", out,
				       profile, NULL };
		struct e2e_result res;

		cr_assert_eq(e2e_run(tmp, argv, NULL, &res), 0);
		cr_expect(!res.signaled, "report --format %s crashed (signal %d)", formats[i],
			  res.status - 128);
		cr_expect_eq(res.status, 1, "report --format %s exited %d on a full disk",
			     formats[i], res.status);
		cr_expect(strstr(res.err, "No space left on device") != NULL, "%s: stderr:\n%s",
			  formats[i], res.err);
		cr_expect_eq(e2e_count_lines(res.err, res.err_len), 1, "%s: stderr:\n%s",
			     formats[i], res.err);
		cr_expect(access(out, F_OK) < 0, "%s: %s left on a full disk", formats[i], out);
		cr_expect(access(otmp, F_OK) < 0, "%s: %s left on a full disk", formats[i], otmp);
		e2e_result_free(&res);
	}
	umount2(mnt, MNT_DETACH);
	free(mnt);
	free(profile);
	free(out);
	free(otmp);
}

/* The format follows -o's extension: without --format, r.html is a page,
 * r.json JSON, r.pb.gz gzip; a --format the extension contradicts is
 * refused in one line, exit 2, nothing written. */
Test(e2e_report, output_extension_chooses_the_format)
{
	static const struct {
		const char *name, *head;
		size_t len;
	} outs[] = { { "r.html", "<!DOCTYPE html>", 15 }, { "r.json", "{", 1 },
		     { "r.pb.gz", "\x1f\x8b", 2 }, { "r.txt", "# objscope report", 17 } };
	char *profile = e2e_path(tmp, "ext.data"), *bad = e2e_path(tmp, "bad.html"), head[32];
	const char *refuse[] = { E2E_OBJSCOPE, "report", "--format", "text", "-o", bad, profile, NULL };
	struct e2e_result res;

	write_synthetic(profile, 200);
	for (size_t i = 0; i < sizeof(outs) / sizeof(outs[0]); i++) {
		char *out = e2e_path(tmp, outs[i].name);
		const char *argv[] = { E2E_OBJSCOPE, "report", "-o", out, profile, NULL };
		FILE *f;
		size_t n;

		cr_assert_eq(e2e_run(tmp, argv, NULL, &res), 0);
		cr_expect_eq(res.status, 0, "report -o %s: %s", outs[i].name, res.err);
		e2e_result_free(&res);
		f = fopen(out, "rb");
		cr_assert_not_null(f, "report -o %s wrote nothing", outs[i].name);
		n = fread(head, 1, outs[i].len, f);
		fclose(f);
		cr_expect(n == outs[i].len && !memcmp(head, outs[i].head, outs[i].len),
			  "report -o %s: not the format its extension names", outs[i].name);
		free(out);
	}
	cr_assert_eq(e2e_run(tmp, refuse, NULL, &res), 0);
	cr_expect_eq(res.status, 2, "--format text -o bad.html: exit %d", res.status);
	cr_expect_eq(e2e_count_lines(res.err, res.err_len), 1, "%s", res.err);
	cr_expect(strstr(res.err, "names a html file, but --format is text"), "%s", res.err);
	cr_expect(access(bad, F_OK) != 0, "a refused report wrote %s", bad);
	e2e_result_free(&res);
	free(bad);
	free(profile);
}

/* `record -- true`: a run of a few ms of CPU has no overhead to measure;
 * the header says so instead of percentages of nothing. */
Test(e2e_report, idle_run_overhead_not_shown_as_measured)
{
	char *profile = e2e_path(tmp, "true.data");
	const char *argv[] = { "true", NULL };
	const char *rep[] = { E2E_OBJSCOPE, "report", NULL, NULL };
	struct e2e_result res;

	cr_assert_eq(e2e_record(tmp, profile, NULL, argv, &res), 0);
	cr_assert_eq(res.status, 0, "%s", res.err);
	e2e_result_free(&res);
	rep[2] = profile;
	cr_assert_eq(e2e_run(tmp, rep, NULL, &res), 0);
	cr_expect_eq(res.status, 0, "%s", res.err);
	cr_expect(strstr(res.out, "# overhead:    not measured: the target ran "), "%s", res.out);
	cr_expect(!strstr(res.out, "spent ~"), "an overhead figure for `true`: %s", res.out);
	e2e_result_free(&res);
	free(profile);
}
