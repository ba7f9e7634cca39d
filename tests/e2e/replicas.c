/* replicas.c - end-to-end tests of `objscope record --replicas` on fixtures
 * with a planted answer (tests/fixtures/replica_native.c,
 * tests/java/ReplicaFixture.java): one site whose 4 KiB objects are all
 * copies of each other, one whose objects all differ. Checked on both
 * watchpoint routes: theta and the exact figure >= 0.9 for the first,
 * <= 0.1 for the second, and the target's output unchanged.
 * The profile is read directly (common/profile.h) and the figures computed
 * with common/replica_math.h, as every report format does.
 * Run from the repository root after `make all fixtures build/java/ReplicaFixture.class`.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/profile.h"
#include "common/replica_math.h"
#include "tests/e2e/helpers.h"

#define JAVA_CP "build/java"
#define MIN_COMPARISONS 5

static char *tmp;

static void setup(void)
{
	tmp = e2e_suite_setup();
}

static void teardown(void)
{
	e2e_suite_teardown(&tmp);
}

TestSuite(e2e_replicas, .init = setup, .fini = teardown, .timeout = 240);

/* The context whose allocation path has a frame containing `site`. */
static const struct os_context *find_ctx(const struct os_profile *p, const char *site)
{
	const struct os_context *best = NULL;
	char buf[512];

	for (uint32_t i = 0; i < p->ncontexts; i++) {
		const struct os_context *c = &p->contexts[i];

		if (c->stack == OS_NONE)
			continue;
		for (uint32_t k = 0; k < p->stacks[c->stack].nframes && k < 4; k++) {
			os_profile_frame_str(p, p->stacks[c->stack].frames[k], buf, sizeof(buf));
			if (strstr(buf, site) && (!best || c->samples > best->samples))
				best = c;
		}
	}
	return best;
}

static void check_site(const struct os_profile *p, const char *site, bool replicas)
{
	const struct os_context *c = find_ctx(p, site);
	struct os_replica_figures f;

	cr_assert_not_null(c, "no allocation context at %s", site);
	os_replica_figures(&c->replica, c->allocations, &f);
	cr_assert_geq(f.comparisons, MIN_COMPARISONS, "%s: only %llu comparisons", site,
		      (unsigned long long)f.comparisons);
	cr_assert(f.has_exact && c->replica.exact_objects >= 10, "%s: %llu objects hashed", site,
		  (unsigned long long)c->replica.exact_objects);
	if (replicas) {
		cr_expect_geq(f.theta, 0.9, "%s: theta %.3f (%llu comparisons)", site, f.theta,
			      (unsigned long long)f.comparisons);
		cr_expect_geq(f.exact, 0.9, "%s: exact %.3f", site, f.exact);
		cr_expect_eq(c->replica.full_differ, 0, "%s: copies found different", site);
	} else {
		cr_expect_leq(f.theta, 0.1, "%s: theta %.3f (%llu comparisons)", site, f.theta,
			      (unsigned long long)f.comparisons);
		cr_expect_leq(f.exact, 0.1, "%s: exact %.3f", site, f.exact);
		cr_expect_eq(c->replica.full_differ, c->replica.full_checks,
			     "%s: random blocks found equal", site);
	}
}

/* Runs argv plainly and under `objscope record --replicas --watch-route
 * route`: same stdout, stderr and status; returns the profile. */
static struct os_profile *record(const char *const argv[], const char *route, const char *name)
{
	/* 5x the default rate: enough comparisons in a few seconds even when
	 * the machine is busy (the fixtures are short) */
	const char *opts[] = { "-q", "-F", "5000", "--replicas", "--watch-route", route, NULL };
	char *profile = e2e_path(tmp, name), err[512] = "";
	struct e2e_result plain, prof;
	struct os_profile *p = NULL;

	cr_assert_not_null(profile);
	cr_assert_eq(e2e_run(tmp, argv, NULL, &plain), 0, "cannot run %s", argv[0]);
	cr_assert_eq(plain.status, 0, "%s exited %d: %s", argv[0], plain.status, plain.err);
	cr_assert_eq(e2e_record(tmp, profile, opts, argv, &prof), 0, "cannot run objscope");
	cr_assert_eq(prof.status, plain.status, "exit status %d under objscope, %d without; "
		     "stderr: %s", prof.status, plain.status, prof.err);
	cr_assert_eq(os_profile_read(profile, &p, err, sizeof(err)), 0, "%s", err);
	for (uint32_t i = 0; i < p->meta.nnotes; i++) {
		const char *note = os_profile_str(p, p->meta.notes[i]);

		if (note && strstr(note, "watch_open failed"))
			cr_skip_test("no watchpoints on this kernel (%s route): %s", route, note);
	}
	cr_expect_str_eq(prof.out, plain.out, "stdout differs under objscope (%s route)", route);
	cr_expect_str_eq(prof.err, plain.err, "stderr differs under objscope (%s route)", route);
	cr_assert(p->analyses & OS_AN_REPLICAS, "the profile does not say replicas ran");
	e2e_result_free(&plain);
	e2e_result_free(&prof);
	free(profile);
	return p;
}

/* The text report ranks the copies first in its replica table, with their
 * figures, and prints a replica line per object. */
static void check_text_report(const char *name, const char *first, const char *second)
{
	char *profile = e2e_path(tmp, name), *table, *row1, *row2;
	const char *argv[] = { E2E_OBJSCOPE, "report", profile, NULL };
	struct e2e_result res;

	cr_assert_eq(e2e_run(tmp, argv, NULL, &res), 0);
	cr_assert_eq(res.status, 0, "report failed: %s", res.err);
	cr_assert(strstr(res.out, "        replicas: theta ") != NULL, "no per-object line");
	table = strstr(res.out, "# Replicas (--replicas)");
	cr_assert_not_null(table, "no replica table in:\n%s", res.out);
	row1 = strstr(table, first);
	row2 = strstr(table, second);
	cr_assert(row1 && row2 && row1 < row2, "%s not ranked before %s:\n%s", first, second, table);
	/* rank 1 row: "     1  <cost>  <bytes>  1.00 ..." (theta of the copies) */
	cr_assert(strstr(table, "\n     1 ") != NULL && strstr(strstr(table, "\n     1 "), " 1.00 "),
		  "rank 1 has no theta 1.00:\n%s", table);
	e2e_result_free(&res);
	free(profile);
}

static void native(const char *route)
{
	const char *argv[] = { E2E_FIXTURE("replica_native"), "3", NULL };
	struct os_profile *p = record(argv, route, "native.data");

	check_site(p, "alloc_same", true);
	check_site(p, "alloc_rand", false);
	os_profile_free(p);
	check_text_report("native.data", "alloc_same", "alloc_rand");
}

static void java(const char *route)
{
	const char *argv[] = { "java", "-cp", JAVA_CP, "ReplicaFixture", "5", NULL };
	struct os_profile *p;

	cr_assert(access(JAVA_CP "/ReplicaFixture.class", R_OK) == 0,
		  "%s/ReplicaFixture.class is missing: run `make e2e`", JAVA_CP);
	p = record(argv, route, "java.data");
	check_site(p, "ReplicaFixture.makeSame", true);
	check_site(p, "ReplicaFixture.makeRand", false);
	os_profile_free(p);
}

Test(e2e_replicas, native_perf)
{
	native("perf");
}

Test(e2e_replicas, native_ptrace)
{
	native("ptrace");
}

Test(e2e_replicas, java_perf)
{
	java("perf");
}

Test(e2e_replicas, java_ptrace)
{
	java("ptrace");
}

/* A bad route is refused with one line naming the choices. */
Test(e2e_replicas, bad_route_refused)
{
	const char *argv[] = { E2E_OBJSCOPE, "record", "--replicas", "--watch-route", "dr7",
			       "--", "true", NULL };
	struct e2e_result res;

	cr_assert_eq(e2e_run(tmp, argv, NULL, &res), 0);
	cr_assert_neq(res.status, 0);
	cr_assert(strstr(res.err, "'perf' or 'ptrace'") != NULL, "%s", res.err);
	e2e_result_free(&res);
}
