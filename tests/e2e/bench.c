/* bench.c - smoke tests of the overhead benchmark (bench/overhead.sh --quick:
 * every workload runs under objscope with unchanged output and the table
 * lists an objscope row for each) and of bench/pair.sh. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
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

TestSuite(e2e_bench, .init = setup, .fini = teardown, .timeout = 180);

Test(e2e_bench, overhead_quick)
{
	const char *argv[] = { "sh", "bench/overhead.sh", "--quick", NULL };
	const char *rows[] = { "three_sites  objscope", "sqlite3      objscope" };
	struct e2e_result res;

	cr_assert_eq(e2e_run(tmp, argv, NULL, &res), 0);
	cr_expect_eq(res.status, 0, "overhead.sh --quick exited %d:\n%s\n%s", res.status, res.out,
		     res.err);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const char *row = strstr(res.out, rows[i]);
		double wall, rss, trss, rw, rr, rt, lo = 0, hi = 0;

		cr_expect(row != NULL, "no '%s' row in:\n%s", rows[i], res.out);
		if (!row)
			continue;
		/* the last column: the middle half of the per-round wall ratios,
		 * one round here, so both ends are the median */
		cr_expect_eq(sscanf(row + strlen(rows[i]), "%lf %lf %lf %lfx %lfx %lfx %lf-%lf", &wall,
				    &rss, &trss, &rw, &rr, &rt, &lo, &hi),
			     8, "cannot read the row: %.120s", row);
		cr_expect(lo <= rw + 0.005 && rw <= hi + 0.005, "wall ratio %.2f outside its spread "
			  "%.2f-%.2f", rw, lo, hi);
	}
	e2e_result_free(&res);
}

/* bench/pair.sh (concurrent A/B pairs, docs/BENCHMARKS.md): two pairs of
 * the demo alone and under objscope record, each run in its own scratch
 * directory, give per-round and median CPU ratios. */
Test(e2e_bench, pair_quick)
{
	const char *argv[] = { "sh", "bench/pair.sh", "--rounds", "2", "--", "build/fixtures/demo",
			       NULL };
	struct e2e_result res;
	double prog = 0, whole = 0;
	const char *m;

	cr_assert_eq(access("build/fixtures/demo", X_OK), 0, "build/fixtures/demo is missing");
	cr_assert_eq(e2e_run(tmp, argv, NULL, &res), 0);
	cr_expect_eq(res.status, 0, "pair.sh exited %d:\n%s\n%s", res.status, res.out, res.err);
	cr_expect(strstr(res.out, "round 1: program ") && strstr(res.out, "round 2: program "),
		  "no per-round lines in:\n%s", res.out);
	m = strstr(res.out, "median CPU ratio B/A over 2 pairs: program ");
	cr_assert_not_null(m, "no median line in:\n%s", res.out);
	cr_assert_eq(sscanf(m, "median CPU ratio B/A over 2 pairs: program %lf, whole command %lf",
			    &prog, &whole),
		     2, "%s", m);
	/* objscope's collector comes on top in the whole command */
	cr_expect(prog > 0.3 && prog < 3, "program ratio %.3f", prog);
	cr_expect(whole >= prog * 0.9, "whole-command ratio %.3f below the program's %.3f", whole,
		  prog);
	e2e_result_free(&res);
}
