/* stress.c - end-to-end stress on the target: allocation storms that
 * overflow the rings, hundreds of threads, every form of process creation,
 * heavy signal use. Each fixture runs alone and under `objscope record`; its
 * stdout and exit status must be identical, and the profile readable.
 */
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

TestSuite(e2e_stress, .init = setup, .fini = teardown, .timeout = 120);

/* Runs argv alone, then under `objscope record opts...`; the stdout and exit
 * status must match (expected_status, too). `before` (may be NULL) runs
 * before each run (to reset files the fixture uses). Returns the JSON report
 * of the profile. */
static json_object *same_with_and_without(const char *name, const char *const opts[],
					  const char *const argv[], int expected_status,
					  void (*before)(void))
{
	char *profile = e2e_path(tmp, name), msg[512];
	struct e2e_result alone, rec;
	json_object *report;

	cr_assert_not_null(profile);
	if (before)
		before();
	cr_assert_eq(e2e_run(tmp, argv, NULL, &alone), 0);
	cr_assert_eq(alone.status, expected_status, "%s alone exited %d: %s", argv[0],
		     alone.status, alone.err);
	if (before)
		before();
	cr_assert_eq(e2e_record(tmp, profile, opts, argv, &rec), 0);
	cr_expect_eq(rec.status, alone.status, "exit status %d under objscope, %d alone; "
		     "stderr:\n%s", rec.status, alone.status, rec.err);
	cr_expect_str_eq(rec.out, alone.out, "stdout differs under objscope");
	cr_expect(strstr(rec.err, "objscope: wrote") != NULL, "no profile written:\n%s", rec.err);
	e2e_result_free(&alone);
	e2e_result_free(&rec);
	report = e2e_report_json(tmp, profile, msg, sizeof(msg));
	cr_assert_not_null(report, "%s", msg);
	free(profile);
	return report;
}

static int64_t meta_int(json_object *report, const char *key)
{
	return e2e_get_int(e2e_get(report, "meta"), key);
}

/* Small rings overflow: the drops are counted, the target is unharmed. */
Test(e2e_stress, allocation_storm_overflows_rings)
{
	const char *opts[] = { "--ring-kb", "16", NULL };
	const char *argv[] = { E2E_FIXTURE("stress_storm"), "4", "100000", NULL };
	json_object *report = same_with_and_without("storm.data", opts, argv, 0, NULL);

	cr_expect_gt(meta_int(report, "dropped_events"), 0,
		     "400,000 allocations into 16 KiB rings, yet no event counted as dropped");
	json_object_put(report);
}

/* 200 threads start and end in waves of 50 (default rings and slots). */
Test(e2e_stress, two_hundred_threads)
{
	const char *argv[] = { E2E_FIXTURE("stress_threads"), "200", "50", NULL };
	json_object *report = same_with_and_without("threads.data", NULL, argv, 0, NULL);

	cr_expect_eq(meta_int(report, "dropped_events"), 0,
		     "events dropped although 512 slots can hold 50 live threads");
	json_object_put(report);
}

/* 200 threads, 100 alive at once, only 16 ring slots: threads without a slot
 * have their events dropped and counted, the target is unharmed. */
Test(e2e_stress, more_threads_than_slots)
{
	/* every block an event, so that threads without a slot have events
	 * to drop (byte sampling would record few of them) */
	const char *opts[] = { "--threads", "16", "--native-objects", "exact", NULL };
	const char *argv[] = { E2E_FIXTURE("stress_threads"), "200", "100", NULL };
	json_object *report = same_with_and_without("slots.data", opts, argv, 0, NULL);

	cr_expect_gt(meta_int(report, "dropped_events"), 0,
		     "100 live threads in 16 slots, yet no event counted as dropped");
	json_object_put(report);
}

static char *daemon_file;

static void remove_daemon_file(void)
{
	unlink(daemon_file);
}

/* fork, vfork+exec, and a daemon that outlives its parent's wait. */
Test(e2e_stress, fork_vfork_exec_daemon)
{
	const char *argv[] = { E2E_FIXTURE("stress_fork"), NULL, NULL };
	json_object *report, *pids;

	daemon_file = e2e_path(tmp, "daemon.txt");
	argv[1] = daemon_file;
	report = same_with_and_without("fork.data", NULL, argv, 3, remove_daemon_file);
	pids = e2e_get(e2e_get(report, "meta"), "pids");
	cr_expect(pids && json_object_array_length(pids) >= 10,
		  "expected the 8 children, the exec'd child and the daemon among the pids, got %zu",
		  pids ? json_object_array_length(pids) : 0);
	json_object_put(report);
	free(daemon_file);
}

/* SIGALRM every 500 us and 1000 SIGSEGVs recovered by the target itself. */
Test(e2e_stress, signals_heavy_target)
{
	const char *argv[] = { E2E_FIXTURE("stress_signals"), "0.5", NULL };
	json_object *report = same_with_and_without("signals.data", NULL, argv, 4, NULL);

	cr_expect_gt(meta_int(report, "samples_total"), 0, "no samples from a busy target");
	json_object_put(report);
}
