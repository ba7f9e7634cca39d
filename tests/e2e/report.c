/* report.c - end-to-end tests of `objscope report` on damaged input. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
