/* replicas.c - end-to-end tests of `objscope record --replicas` on fixtures
 * with a planted answer (tests/fixtures/replica_native.c,
 * tests/java/ReplicaFixture.java): one site whose 4 KiB objects are all
 * copies of each other, one whose objects all differ. Checked on both
 * watchpoint routes: theta and the exact figure >= 0.9 for the first,
 * <= 0.1 for the second, and the target's output unchanged.
 * The profile is read directly (common/profile.h) and the figures computed
 * with common/replica_math.h, as every report format does.
 * attach_*: `objscope attach --replicas` on a running JVM started without
 * objscope options (tests/java/ReplicaAttachFixture.java), whose planted
 * arrays and instances were all built before the attach: found from their
 * header, grouped by class (docs/REPLICAS.md).
 * attach_churn_* / attach_detach_closes_armed_*: `objscope attach --replicas`
 * on the churn fixtures, whose comparisons the target arms itself; the
 * detach closes every breakpoint still armed and the target runs on.
 * Run from the repository root after `make all fixtures build/java/ReplicaFixture.class
 * build/java/ReplicaAttachFixture.class`.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"
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

static void check_site(const struct os_profile *p, const char *site, bool replicas,
		       uint64_t min_cmp)
{
	const struct os_context *c = find_ctx(p, site);
	struct os_replica_figures f;

	cr_assert_not_null(c, "no allocation context at %s", site);
	os_replica_figures(&c->replica, c->allocations, &f);
	cr_assert_geq(f.comparisons, min_cmp, "%s: only %llu comparisons", site,
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
 * route`: same stdout, stderr and status; returns the profile. fast: at
 * 5x the default rate, every Java object seen (else the defaults). */
static struct os_profile *record(const char *const argv[], const char *route, const char *name,
				 bool fast)
{
	/* 5x the default rate: enough comparisons in a few seconds even when
	 * the machine is busy (the fixtures are short) */
	const char *fast_opts[] = { "-q", "-F", "5000", "--replicas", "--watch-route", route,
				    "--java-objects", "exact", NULL };
	const char *plain_opts[] = { "-q", "--replicas", "--watch-route", route, NULL };
	const char *const *opts = fast ? fast_opts : plain_opts;
	char *profile = e2e_path(tmp, name), err[512] = "";
	struct e2e_result plain, prof;
	struct os_profile *p = NULL;

	e2e_skip_unless_watchpoints_fire();
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
	struct os_profile *p = record(argv, route, "native.data", true);

	check_site(p, "alloc_same", true, MIN_COMPARISONS);
	check_site(p, "alloc_rand", false, MIN_COMPARISONS);
	os_profile_free(p);
	check_text_report("native.data", "alloc_same", "alloc_rand");
}

static void java(const char *route)
{
	const char *argv[] = { "java", "-cp", JAVA_CP, "ReplicaFixture", "5", NULL };
	struct os_profile *p;

	cr_assert(access(JAVA_CP "/ReplicaFixture.class", R_OK) == 0,
		  "%s/ReplicaFixture.class is missing: run `make e2e`", JAVA_CP);
	p = record(argv, route, "java.data", true);
	check_site(p, "ReplicaFixture.makeSame", true, MIN_COMPARISONS);
	check_site(p, "ReplicaFixture.makeRand", false, MIN_COMPARISONS);
	os_profile_free(p);
}

/* The in-target note: every comparison published is compared or counted
 * by the reason it was not (nothing lost silently). */
static void check_target_note(const struct os_profile *p)
{
	unsigned long long pub = 0, cmp = 0, cal = 0, wd = 0, exp = 0, dead = 0, nosp = 0, fail = 0;
	unsigned long long left = 0, after = 0;
	const char *note = NULL;
	int err = 0;

	for (uint32_t i = 0; i < p->meta.nnotes && !note; i++) {
		const char *n = os_profile_str(p, p->meta.notes[i]);

		if (n && strstr(n, "replicas in target"))
			note = strstr(n, "): ");
	}
	cr_assert_not_null(note, "no in-target note: the allocation hooks armed nothing");
	cr_assert_eq(sscanf(note, "): %llu published (%llu of them as their context allocated), "
			    "%llu compared, %llu references taken; not "
			    "compared: %llu withdrawn (no object of the site in 1 s; the site "
			    "then waits 1-32 s), %llu expired unhit, %llu object freed or "
			    "collected before a hit, %llu no free debug register, %llu arm "
			    "errors (last errno %d), %llu still in flight",
			    &pub, &after, &cmp, &cal, &wd, &exp, &dead, &nosp, &fail, &err, &left),
		     11, "in-target note not understood: %s", note);
	cr_expect_leq(after, pub, "more published after allocations than published: %s", note);
	cr_expect_eq(pub, cmp + cal + wd + exp + dead + nosp + fail + left,
		     "published comparisons not accounted for: %s", note);
	cr_expect_eq(fail, 0, "in-target arm errors: %s", note);
}

/* Short-lived objects: the churn fixtures at the default rate
 * (and default Java object mode), 8 s first, longer only when the busy
 * machine gave fewer than CHURN_MIN comparisons or 10 hashed objects per
 * site (check_site's minimum: the collector must read a hit object before
 * its free, and a busy machine delays it). */
#define CHURN_MIN 30
#define CHURN_MAX_S 32

/* The churn fixture's two sites in p, logged: true when both have
 * CHURN_MIN comparisons and 10 objects hashed (enough to check). */
static bool churn_enough(const struct os_profile *p, const char *what, bool java,
			 const char *route, int secs, const char *same, const char *rnd)
{
	const struct os_context *c1 = find_ctx(p, same), *c2 = find_ctx(p, rnd);
	struct os_replica_figures f1, f2;

	cr_assert(c1 && c2, "no allocation context at %s or %s", same, rnd);
	os_replica_figures(&c1->replica, c1->allocations, &f1);
	os_replica_figures(&c2->replica, c2->allocations, &f2);
	cr_log_info("%s %s %s route, %d s: %s theta %.2f (%llu) exact %.2f (%llu); "
		    "%s theta %.2f (%llu) exact %.2f (%llu)",
		    what, java ? "java" : "native", route, secs, same, f1.theta,
		    (unsigned long long)f1.comparisons, f1.exact,
		    (unsigned long long)c1->replica.exact_objects, rnd, f2.theta,
		    (unsigned long long)f2.comparisons, f2.exact,
		    (unsigned long long)c2->replica.exact_objects);
	return f1.comparisons >= CHURN_MIN && f2.comparisons >= CHURN_MIN &&
	       c1->replica.exact_objects >= 10 && c2->replica.exact_objects >= 10;
}

/* The churn tests' verdict: copies and unique contents told apart, every
 * published in-target comparison accounted for. */
static void churn_check(const struct os_profile *p, const char *same, const char *rnd)
{
	check_site(p, same, true, CHURN_MIN);
	check_site(p, rnd, false, CHURN_MIN);
	check_target_note(p);
}

static void churn(const char *route, bool java)
{
	const char *same = java ? "ReplicaChurnFixture.makeSame" : "churn_same";
	const char *rnd = java ? "ReplicaChurnFixture.makeRand" : "churn_rand";
	struct os_profile *p = NULL;
	char secs[16];

	if (java)
		cr_assert(access(JAVA_CP "/ReplicaChurnFixture.class", R_OK) == 0,
			  "%s/ReplicaChurnFixture.class is missing: run `make e2e`", JAVA_CP);
	for (int s = 8;; s *= 2) {
		const char *nargv[] = { E2E_FIXTURE("replica_churn"), secs, NULL };
		const char *jargv[] = { "java", "-cp", JAVA_CP, "ReplicaChurnFixture", secs, NULL };

		snprintf(secs, sizeof(secs), "%d", s);
		p = record(java ? jargv : nargv, route, "churn.data", false);
		if (churn_enough(p, "churn", java, route, s, same, rnd) || s >= CHURN_MAX_S)
			break;
		os_profile_free(p);
	}
	churn_check(p, same, rnd);
	os_profile_free(p);
}

Test(e2e_replicas, churn_native_perf, .timeout = 200)
{
	churn("perf", false);
}

Test(e2e_replicas, churn_native_ptrace, .timeout = 200)
{
	churn("ptrace", false);
}

Test(e2e_replicas, churn_java_perf, .timeout = 200)
{
	churn("perf", true);
}

Test(e2e_replicas, churn_java_ptrace, .timeout = 200)
{
	churn("ptrace", true);
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

/* Contents of tmp/NAME (static buffer). */
static const char *slurp(const char *name)
{
	static char buf[4096];
	char *path = e2e_path(tmp, name);
	ssize_t n = 0;
	int fd = open(path, O_RDONLY);

	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	free(path);
	buf[n > 0 ? n : 0] = 0;
	return buf;
}

/* Starts argv in the background, stdout/stderr to tmp/NAME.out/.err. */
static pid_t spawn_to(const char *name, const char *const argv[])
{
	return e2e_spawn_logged(tmp, name, argv, NULL);
}

static int wait_status(pid_t pid)
{
	int st = 0;

	cr_assert_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The before-attach context of class `type` in a JSON report: its
 * replica figures checked as check_site does. Instances get fewer samples
 * (64-byte objects) than the 4 KiB arrays: min_cmp is per site. */
static void check_before(json_object *objects, const char *type, bool replicas, int64_t min_cmp)
{
	json_object *o = NULL, *r;
	int64_t cmp, hashed;
	double theta, exact;

	for (size_t i = 0; i < json_object_array_length(objects) && !o; i++) {
		json_object *x = json_object_array_get_idx(objects, i);
		const char *t = json_object_get_string(e2e_get(x, "type"));

		if (t && strcmp(t, type) == 0 && e2e_stack_has(x, "allocated before attach", 2))
			o = x;
	}
	cr_assert_not_null(o, "no before-attach context of %s", type);
	r = e2e_get(o, "replica");
	cr_assert_not_null(r, "%s: no replica figures", type);
	cmp = e2e_get_int(r, "comparisons");
	hashed = e2e_get_int(r, "exact_objects");
	theta = e2e_get_double(r, "theta");
	exact = e2e_get_double(r, "exact");
	cr_assert_geq(cmp, min_cmp, "%s: only %lld comparisons", type, (long long)cmp);
	cr_assert_geq(hashed, 10, "%s: %lld objects hashed", type, (long long)hashed);
	if (replicas) {
		cr_expect_geq(theta, 0.9, "%s: theta %.3f (%lld comparisons)", type, theta,
			      (long long)cmp);
		cr_expect_geq(exact, 0.9, "%s: exact %.3f", type, exact);
		cr_expect_eq(e2e_get_int(r, "alpha_checks"), 0, "%s: copies found different", type);
	} else {
		cr_expect(theta >= 0 && theta <= 0.1, "%s: theta %.3f (%lld comparisons)", type,
			  theta, (long long)cmp);
		cr_expect(exact >= 0 && exact <= 0.1, "%s: exact %.3f", type, exact);
	}
}

/* `objscope attach --replicas --watch-route route` on ReplicaAttachFixture
 * started plainly: its output and status are those of a run without
 * objscope, and the four planted sets get the planted answer. */
static void attach_java(const char *route)
{
	char cp[PATH_MAX], spid[16], msg[512], want[256];
	char *profile = e2e_path(tmp, "attach.data");
	const char *plain_argv[] = { "/usr/bin/java", "-Xms256m", "-Xmx256m", "-cp", cp,
				     "ReplicaAttachFixture", "0", NULL };
	const char *argv[] = { "/usr/bin/java", "-Xms256m", "-Xmx256m", "-cp", cp,
			       "ReplicaAttachFixture", "7", NULL };
	const char *att[] = { E2E_OBJSCOPE, "attach", "-q", "-F", "5000", "-d", "4", "--replicas",
			      "--watch-route", route, "-o", profile, spid, NULL };
	json_object *report, *objects;
	struct e2e_result res;
	pid_t pid;
	int st;

	e2e_skip_unless_watchpoints_fire();
	if (access("build/java/ReplicaAttachFixture.class", R_OK) != 0 ||
	    access("/usr/bin/java", X_OK) != 0)
		cr_skip_test("needs java and build/java/ReplicaAttachFixture.class");
	cr_assert_not_null(realpath("build/java", cp));
	/* the answer without objscope (the checksum does not depend on time) */
	cr_assert_eq(wait_status(spawn_to("plain", plain_argv)), 0, "%s", slurp("plain.err"));
	snprintf(want, sizeof(want), "%s", slurp("plain.out"));
	cr_assert(strstr(want, "checksum"), "plain run printed: %s", want);

	pid = spawn_to("jvm", argv);
	for (int i = 0; i < 3000 && !strstr(slurp("jvm.out"), "ready"); i++)
		usleep(10000);
	if (!strstr(slurp("jvm.out"), "ready")) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		cr_assert_fail("JVM did not start: %s", slurp("jvm.err"));
	}
	snprintf(spid, sizeof(spid), "%d", (int)pid);
	cr_assert_eq(e2e_run(tmp, att, NULL, &res), 0, "cannot run objscope");
	st = wait_status(pid);
	cr_assert_eq(res.status, 0, "attach exited %d: %s", res.status, res.err);
	/* the ptrace route must have let every thread go before the detach
	 * (the replica observer's stop, from os_collector_stop) */
	cr_expect(strstr(res.err, "could not detach") == NULL, "%s route: %s", route, res.err);
	e2e_result_free(&res);
	cr_assert_eq(st, 0, "JVM exited %d: %s", st, slurp("jvm.err"));
	cr_expect_str_eq(slurp("jvm.out"), want, "JVM output changed (%s route)", route);
	cr_expect_str_eq(slurp("jvm.err"), "", "JVM wrote on stderr (%s route)", route);

	report = e2e_report_json(tmp, profile, msg, sizeof(msg));
	cr_assert_not_null(report, "%s", msg);
	cr_assert_eq(e2e_get_int(e2e_get(report, "meta"), "gc_count"), 0,
		     "a collection ran during the attach");
	objects = e2e_get(report, "objects");
	cr_assert_not_null(objects);
	{
		json_object *notes = e2e_get(e2e_get(report, "meta"), "notes");

		for (size_t i = 0; notes && i < json_object_array_length(notes); i++) {
			const char *n = json_object_get_string(json_object_array_get_idx(notes, i));

			if (n && strstr(n, "watch_open failed"))
				cr_skip_test("no watchpoints on this kernel (%s route): %s", route,
					     n);
		}
	}
	check_before(objects, "byte[]", true, MIN_COMPARISONS);
	check_before(objects, "long[]", false, MIN_COMPARISONS);
	check_before(objects, "ReplicaAttachFixture$Same", true, 3);
	check_before(objects, "ReplicaAttachFixture$Rand", false, 3);
	json_object_put(report);
	free(profile);
}

Test(e2e_replicas, attach_java_perf, .timeout = 60)
{
	attach_java("perf");
}

Test(e2e_replicas, attach_java_ptrace, .timeout = 60)
{
	attach_java("ptrace");
}

/* Perf event fds open in process pid (/proc/PID/fd): the in-target
 * breakpoints still open (the churn fixtures and the JVM open none). */
static int perf_fds(pid_t pid)
{
	char dir[64], path[128], link[128];
	int n = 0;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	for (int fd = 0; fd < 4096; fd++) {
		ssize_t len;

		snprintf(path, sizeof(path), "%s/%d", dir, fd);
		len = readlink(path, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = 0;
		if (strstr(link, "perf_event"))
			n++;
	}
	return n;
}

/* Short-lived objects under attach: `objscope attach --replicas -d D` on a churn
 * fixture (objects living a few ms) that runs on after the detach. The
 * allocation hooks arm the comparisons in the target as under record; the
 * detach closes every breakpoint still armed: none is left open in the
 * target, which runs on for ATTACH_AFTER_S or more and ends with the output
 * and status of a run without objscope (a stray hit signal or a breakpoint
 * left armed would show there). D doubles from 8 s until both sites have
 * CHURN_MIN comparisons and 10 hashed objects (count-driven); the target
 * runs D + slack + ATTACH_AFTER_S seconds, the slack doubling when the
 * attach itself took longer. */
#define ATTACH_AFTER_S 3

static void attach_churn(const char *route, bool java)
{
	const char *same = java ? "ReplicaChurnFixture.makeSame" : "churn_same";
	const char *rnd = java ? "ReplicaChurnFixture.makeRand" : "churn_rand";
	char cp[PATH_MAX], secs[16], spid[16], dur[16], want[256], err[512] = "";
	char *profile = e2e_path(tmp, "attach_churn.data");
	const char *nargv[] = { E2E_FIXTURE("replica_churn"), secs, NULL };
	const char *jargv[] = { "/usr/bin/java", "-cp", cp, "ReplicaChurnFixture", secs, NULL };
	const char *const *argv = java ? jargv : nargv;
	const char *att[] = { E2E_OBJSCOPE, "attach", "-q", "--replicas", "--watch-route", route,
			      "-d", dur, "-o", profile, spid, NULL };
	struct os_profile *p = NULL;
	int d = 8, slack = java ? 6 : 3, runs = 0;

	e2e_skip_unless_watchpoints_fire();
	if (java && (access(JAVA_CP "/ReplicaChurnFixture.class", R_OK) != 0 ||
		     access("/usr/bin/java", X_OK) != 0))
		cr_skip_test("needs java and " JAVA_CP "/ReplicaChurnFixture.class");
	cr_assert_not_null(realpath(JAVA_CP, cp));
	setenv("REPLICA_CHURN_READY", "1", 1);
	/* the answer without objscope (the checksum does not depend on time) */
	snprintf(secs, sizeof(secs), "1");
	cr_assert_eq(wait_status(spawn_to("plain", argv)), 0, "%s", slurp("plain.err"));
	snprintf(want, sizeof(want), "%s", slurp("plain.out"));
	cr_assert(strstr(want, "ready\n") && strstr(want, "checksum"), "plain run printed: %s",
		  want);
	for (;;) {
		struct e2e_result res;
		uint64_t t_detach;
		pid_t pid;
		int st, open_fds;
		bool alive;

		snprintf(secs, sizeof(secs), "%d", d + slack + ATTACH_AFTER_S);
		snprintf(dur, sizeof(dur), "%d", d);
		pid = spawn_to("target", argv);
		if (!e2e_wait_output(tmp, "target", pid, "ready", 30000)) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			cr_assert_fail("the target did not start: %s", slurp("target.err"));
		}
		snprintf(spid, sizeof(spid), "%d", (int)pid);
		cr_assert_eq(e2e_run(tmp, att, NULL, &res), 0, "cannot run objscope");
		t_detach = os_now_ns();
		alive = waitpid(pid, &st, WNOHANG) == 0;
		open_fds = alive ? perf_fds(pid) : 0;
		if (alive)
			st = wait_status(pid);
		else
			st = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		runs++;
		cr_assert_eq(res.status, 0, "attach exited %d: %s", res.status, res.err);
		cr_expect(strstr(res.err, "could not detach") == NULL, "%s route: %s", route,
			  res.err);
		e2e_result_free(&res);
		cr_assert_eq(st, 0, "the target exited %d after the detach: %s", st,
			     slurp("target.err"));
		cr_expect_str_eq(slurp("target.out"), want, "output changed (%s route)", route);
		cr_expect_str_eq(slurp("target.err"), "", "the target wrote on stderr (%s route)",
				 route);
		if (!alive) { /* the attach took more than the slack: nothing ran after it */
			cr_assert_lt(slack, 48, "the target ended before the detach %d times",
				     runs);
			slack *= 2;
			continue;
		}
		cr_log_info("attach churn %s %s route: target ran %.1f s after the detach",
			    java ? "java" : "native", route, (os_now_ns() - t_detach) / 1e9);
		cr_expect_eq(open_fds, 0, "%d perf event fds left open in the target after the "
			     "detach (%s route)", open_fds, route);
		cr_assert_eq(os_profile_read(profile, &p, err, sizeof(err)), 0, "%s", err);
		for (uint32_t i = 0; i < p->meta.nnotes; i++) {
			const char *note = os_profile_str(p, p->meta.notes[i]);

			if (note && strstr(note, "watch_open failed"))
				cr_skip_test("no watchpoints on this kernel (%s route): %s", route,
					     note);
		}
		if (churn_enough(p, "attach churn", java, route, d, same, rnd) || d >= CHURN_MAX_S)
			break;
		os_profile_free(p);
		p = NULL;
		d *= 2;
	}
	churn_check(p, same, rnd);
	os_profile_free(p);
	free(profile);
}

Test(e2e_replicas, attach_churn_native_perf, .timeout = 200)
{
	attach_churn("perf", false);
}

Test(e2e_replicas, attach_churn_native_ptrace, .timeout = 200)
{
	attach_churn("ptrace", false);
}

Test(e2e_replicas, attach_churn_java_perf, .timeout = 200)
{
	attach_churn("perf", true);
}

Test(e2e_replicas, attach_churn_java_ptrace, .timeout = 200)
{
	attach_churn("ptrace", true);
}

/* The number N of "detach: N in-target replica breakpoint(s) still armed"
 * in the profile's notes, -1 when there is no such note. */
static int closed_at_detach(const char *profile)
{
	struct os_profile *p = NULL;
	char err[512] = "";
	int n = -1;

	cr_assert_eq(os_profile_read(profile, &p, err, sizeof(err)), 0, "%s", err);
	for (uint32_t i = 0; i < p->meta.nnotes && n < 0; i++) {
		const char *note = os_profile_str(p, p->meta.notes[i]);

		if (note && strncmp(note, "detach: ", 8) == 0 &&
		    sscanf(note, "detach: %d in-target replica", &n) != 1)
			n = -1;
	}
	os_profile_free(p);
	return n;
}

/* A detach while the target holds breakpoints it armed and did not hit yet
 * (replica_churn with REPLICA_CHURN_HOLD_MS: it sleeps holding untouched
 * blocks of both sites): the detach closes them — no perf event fd is left
 * in the target — and the target runs on to its normal end. Attached again
 * and again (-d 2: the handler of the first attach stays, the threads'
 * stale breakpoints are forgotten) until a detach closed at least one, at
 * most until the target's end. */
static void attach_detach_closes(const char *route)
{
	char secs[16] = "1", spid[16], want[256];
	char *profile = e2e_path(tmp, "attach_hold.data");
	const char *argv[] = { E2E_FIXTURE("replica_churn"), secs, NULL };
	const char *att[] = { E2E_OBJSCOPE, "attach", "-q", "-F", "5000", "--replicas",
			      "--watch-route", route, "-d", "2", "-o", profile, spid, NULL };
	int attaches = 0, closed = 0, st;
	pid_t pid;

	e2e_skip_unless_watchpoints_fire();
	setenv("REPLICA_CHURN_READY", "1", 1);
	setenv("REPLICA_CHURN_HOLD_MS", "100", 1);
	cr_assert_eq(wait_status(spawn_to("plain", argv)), 0, "%s", slurp("plain.err"));
	snprintf(want, sizeof(want), "%s", slurp("plain.out"));
	cr_assert(strstr(want, "checksum"), "plain run printed: %s", want);
	snprintf(secs, sizeof(secs), "20");
	pid = spawn_to("target", argv);
	cr_assert(e2e_wait_output(tmp, "target", pid, "ready", 30000), "the target did not start");
	snprintf(spid, sizeof(spid), "%d", (int)pid);
	while (closed == 0 || attaches < 2) {
		struct e2e_result res;
		int n, fds;

		cr_assert_eq(e2e_run(tmp, att, NULL, &res), 0, "cannot run objscope");
		if (waitpid(pid, &st, WNOHANG) != 0) { /* ended during this attach */
			e2e_result_free(&res);
			cr_assert_gt(closed, 0, "no detach (of %d) closed a breakpoint before the "
				     "target ended", attaches);
			cr_assert_fail("the target ended during attach %d", attaches + 1);
		}
		fds = perf_fds(pid);
		attaches++;
		cr_assert_eq(res.status, 0, "attach exited %d: %s", res.status, res.err);
		cr_expect(strstr(res.err, "could not detach") == NULL, "%s", res.err);
		e2e_result_free(&res);
		n = closed_at_detach(profile);
		cr_log_info("detach %d (%s route): %d breakpoint(s) closed, %d perf fds left", attaches,
			    route, n, fds);
		cr_assert_geq(n, 0, "no detach note in the profile");
		cr_assert_eq(fds, 0, "%d perf event fds left in the target after detach %d", fds,
			     attaches);
		closed += n;
	}
	st = wait_status(pid);
	cr_assert_eq(st, 0, "the target exited %d: %s", st, slurp("target.err"));
	cr_expect_str_eq(slurp("target.out"), want, "output changed (%s route)", route);
	cr_expect_str_eq(slurp("target.err"), "", "the target wrote on stderr");
	free(profile);
}

Test(e2e_replicas, attach_detach_closes_armed_perf, .timeout = 120)
{
	attach_detach_closes("perf");
}

Test(e2e_replicas, attach_detach_closes_armed_ptrace, .timeout = 120)
{
	attach_detach_closes("ptrace");
}

/* A program with a handler of its own for signal 40 (the in-target hits'
 * signal), attached with --replicas: its handler stays (the library
 * installs none and arms nothing in the target: every published entry is
 * withdrawn), it receives no signal, and its output and status are those of
 * a plain run. */
Test(e2e_replicas, attach_keeps_program_signal_handler, .timeout = 60)
{
	char secs[16] = "1", spid[16], want[256];
	char *profile = e2e_path(tmp, "attach_sig.data");
	const char *argv[] = { E2E_FIXTURE("replica_churn"), secs, NULL };
	const char *att[] = { E2E_OBJSCOPE, "attach", "-q", "--replicas", "-d", "3", "-o", profile,
			      spid, NULL };
	struct os_profile *p = NULL;
	struct e2e_result res;
	char err[512] = "";
	const char *note = NULL;
	unsigned long long pub = 0, cmp = 0;
	pid_t pid;
	int st;

	e2e_skip_unless_watchpoints_fire();
	setenv("REPLICA_CHURN_READY", "1", 1);
	setenv("REPLICA_CHURN_SIG40", "1", 1);
	cr_assert_eq(wait_status(spawn_to("plain", argv)), 0, "%s", slurp("plain.err"));
	snprintf(want, sizeof(want), "%s", slurp("plain.out"));
	cr_assert_str_eq(slurp("plain.err"), "", "plain run: %s", slurp("plain.err"));
	snprintf(secs, sizeof(secs), "8");
	pid = spawn_to("target", argv);
	cr_assert(e2e_wait_output(tmp, "target", pid, "ready", 30000), "the target did not start");
	snprintf(spid, sizeof(spid), "%d", (int)pid);
	cr_assert_eq(e2e_run(tmp, att, NULL, &res), 0, "cannot run objscope");
	st = wait_status(pid);
	cr_assert_eq(res.status, 0, "attach exited %d: %s", res.status, res.err);
	e2e_result_free(&res);
	cr_assert_eq(st, 0, "the target exited %d: %s", st, slurp("target.err"));
	cr_expect_str_eq(slurp("target.out"), want, "output changed");
	cr_expect_str_eq(slurp("target.err"), "", "the program's handler was touched");
	cr_assert_eq(os_profile_read(profile, &p, err, sizeof(err)), 0, "%s", err);
	for (uint32_t i = 0; i < p->meta.nnotes && !note; i++) {
		const char *n = os_profile_str(p, p->meta.notes[i]);

		if (n && strstr(n, "replicas in target"))
			note = strstr(n, "): ");
	}
	cr_assert_not_null(note, "no in-target note");
	cr_assert_eq(sscanf(note, "): %llu published (%*u of them as their context allocated), "
			    "%llu compared", &pub, &cmp), 2, "%s", note);
	cr_log_info("program's own signal 40 handler: %llu published, %llu compared", pub, cmp);
	cr_expect_eq(cmp, 0, "compared in the target without its handler: %s", note);
	os_profile_free(p);
	free(profile);
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
