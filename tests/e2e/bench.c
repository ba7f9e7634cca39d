/* bench.c - smoke test of the overhead benchmark (bench/overhead.sh --quick):
 * every workload runs under objscope with unchanged output and the table
 * lists an objscope row for each. */
#include <criterion/criterion.h>
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
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		cr_expect(strstr(res.out, rows[i]) != NULL, "no '%s' row in:\n%s", rows[i], res.out);
	e2e_result_free(&res);
}
