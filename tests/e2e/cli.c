/* cli.c - end-to-end tests of the command line as a user meets it:
 * every bad argument is refused in one line with exit status 2 before the
 * command runs, options that are not implemented are errors, the help lists
 * only what works, `record -d` profiles for that long and lets the command
 * run on, and `make install` gives a relocatable tree that runs without
 * environment variables.
 *
 * "Before the command runs" is checked with a command that leaves a trace:
 * `touch DIR/ran`; the file must not exist afterwards.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
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

TestSuite(e2e_cli, .init = setup, .fini = teardown, .timeout = 90);

static double mono_s(void)
{
	return (double)os_now_ns() * 1e-9;
}

static int exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* Runs `objscope record OPTS... -o DIR/p.data -- touch DIR/ran` (or, with
 * attach, `objscope attach OPTS... -o DIR/p.data PID-of-a-sleep`) and
 * asserts: exit status 2, stdout empty, exactly one line on stderr that
 * starts with "objscope: " and contains `want`, nothing run, no profile. */
static void refused(const char *cmd, const char *const opts[], const char *want)
{
	char *ran = e2e_path(tmp, "ran"), *profile = e2e_path(tmp, "p.data");
	const char *argv[32];
	char what[512] = "";
	struct e2e_result res;
	size_t n = 0;

	unlink(ran);
	unlink(profile);
	argv[n++] = E2E_OBJSCOPE;
	argv[n++] = cmd;
	for (size_t i = 0; opts[i]; i++) {
		argv[n++] = opts[i];
		strncat(what, opts[i], sizeof(what) - strlen(what) - 2);
		strcat(what, " ");
	}
	if (!strcmp(cmd, "record")) {
		argv[n++] = "-o";
		argv[n++] = profile;
		argv[n++] = "--";
		argv[n++] = "touch";
		argv[n++] = ran;
	}
	argv[n] = NULL;
	cr_assert_eq(e2e_run(tmp, argv, NULL, &res), 0);
	cr_expect_eq(res.status, 2, "%s %s: exit status %d, not 2 (stderr: %s)", cmd, what,
		     res.status, res.err);
	cr_expect_eq(e2e_count_lines(res.err, res.err_len), 1, "%s %s: not one line: '%s'", cmd,
		     what, res.err);
	cr_expect(!strncmp(res.err, "objscope: ", 10), "%s %s: '%s'", cmd, what, res.err);
	cr_expect(strstr(res.err, want), "%s %s: '%s' does not say '%s'", cmd, what, res.err,
		  want);
	cr_expect_eq(res.out_len, 0, "%s %s: stdout '%s'", cmd, what, res.out);
	cr_expect(!exists(ran), "%s %s: the command ran", cmd, what);
	cr_expect(!exists(profile), "%s %s: a profile was written", cmd, what);
	e2e_result_free(&res);
	free(ran);
	free(profile);
}

#define OPTS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* argv (complete) exits with 2 and one line that contains want. */
static void one_line_usage_error(const char *const argv[], const char *want)
{
	struct e2e_result res;

	cr_assert_eq(e2e_run(tmp, argv, NULL, &res), 0);
	cr_expect_eq(res.status, 2, "%s %s: status %d", argv[1], argv[2], res.status);
	cr_expect_eq(e2e_count_lines(res.err, res.err_len), 1, "'%s'", res.err);
	cr_expect(strstr(res.err, want), "'%s' does not say '%s'", res.err, want);
	e2e_result_free(&res);
}

/* An explicit PMU event where the kernel has no PMU (this VM: "no PMU
 * driver, software events only"): one line naming what is missing, before
 * anything runs. Where there is a PMU, tests/e2e/pmu.c runs them. */
Test(e2e_cli, pmu_events_without_a_pmu_are_errors)
{
	static const char *const cmds[] = { "record", "attach" };

	if (!access("/sys/bus/event_source/devices/cpu", F_OK) ||
	    !access("/sys/bus/event_source/devices/cpu_core", F_OK) ||
	    !access("/sys/bus/event_source/devices/ibs_op", F_OK))
		cr_skip_test("the kernel has a PMU here: tests/e2e/pmu.c records with it");
	for (size_t i = 0; i < 2; i++) {
		refused(cmds[i], OPTS("-e", "mem-loads", "1"),
			"event 'mem-loads' needs a hardware PMU, and this kernel has no PMU driver");
		refused(cmds[i], OPTS("--event", "MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=30", "1"),
			"no PMU driver (software events only)");
		refused(cmds[i], OPTS("-e", "ibs_op", "1"), "needs a hardware PMU");
	}
}

/* --reuse and --replicas trap through hardware breakpoints: on a machine
 * that accepts them and never delivers their traps (a VM that does not pass
 * the debug registers through; OBJSCOPE_WATCH_FIRES=0 makes any machine
 * one, attacher/watch/watch.h watch_fires) both are refused in one line
 * before anything runs, rather than a run that measures nothing. */
Test(e2e_cli, watchpoint_analyses_refused_where_breakpoints_never_fire)
{
	static const char *const why = "hardware breakpoints do not fire on this machine";

	setenv("OBJSCOPE_WATCH_FIRES", "0", 1);
	refused("record", OPTS("--reuse"), why);
	refused("record", OPTS("--replicas", "--watch-route", "ptrace"), why);
	refused("attach", OPTS("--reuse", "1"), why);
	refused("attach", OPTS("--replicas", "1"), why);
	unsetenv("OBJSCOPE_WATCH_FIRES");
}

Test(e2e_cli, bad_numbers_are_refused_before_the_command_runs)
{
	refused("record", OPTS("-F", "0"), "invalid value '0' for -F");
	refused("record", OPTS("-F", "100001"), "for -F");
	refused("record", OPTS("-F", "-5"), "for -F");
	refused("record", OPTS("-F", "10x"), "for -F");
	refused("record", OPTS("-d", "0"), "for -d");
	refused("record", OPTS("-d", "-1"), "for -d");
	refused("record", OPTS("-d", "inf"), "for -d");
	refused("record", OPTS("-d", "nan"), "for -d");
	refused("record", OPTS("-d", "1e9"), "for -d");
	refused("record", OPTS("-d", "2s"), "for -d");
	refused("record", OPTS("--min-size", "0"), "for --min-size");
	refused("record", OPTS("--ring-kb", "8"), "for --ring-kb");
	refused("record", OPTS("--ring-kb", "100"), "--ring-kb must be a power of two");
	refused("record", OPTS("--threads", "0"), "for --threads");
	refused("record", OPTS("--java-tlab", "100"), "for --java-tlab");
	/* JDK 17 refuses TLABSize below MinTLABSize (2048): refused before the run */
	refused("record", OPTS("--java-tlab", "1024"), "for --java-tlab");
	refused("record", OPTS("--call-graph", "dwarf,12"), "multiple of 8");
	refused("record", OPTS("--call-graph", "lbr"), "--call-graph takes");
	refused("record", OPTS("--java-objects", "all"), "--java-objects takes");
	refused("record", OPTS("--watch-route", "x"), "--watch-route takes");
	refused("attach", OPTS("-d", "0", "1"), "for -d");
	refused("attach", OPTS("-F", "1000000", "1"), "for -F");
}

Test(e2e_cli, unknown_options_and_missing_values_are_refused)
{
	refused("record", OPTS("--bogus"), "unknown or ambiguous option '--bogus'");
	refused("record", OPTS("-x"), "unknown option '-x'");
	refused("record", OPTS("-qx"), "unknown option '-x'");
	refused("record", OPTS("--progress=1"), "option '--progress=1' is unknown or takes no "
						 "value");
	refused("record", OPTS("--j"), "ambiguous option '--j'");
	refused("attach", OPTS("--bogus", "1"), "unknown or ambiguous option '--bogus'");
	/* a value that is the next option is not taken as one */
	refused("record", OPTS("--java-objects", "-q"), "--java-objects takes");
	/* an option without its value at the end of the line */
	refused("attach", OPTS("-F"), "needs a value");
	refused("attach", OPTS("--output"), "needs a value");
	/* no command, no PID, unknown command */
	one_line_usage_error(OPTS(E2E_OBJSCOPE, "record", "-q"), "no command given");
	one_line_usage_error(OPTS(E2E_OBJSCOPE, "record", "-q", "--"), "no command given");
	one_line_usage_error(OPTS(E2E_OBJSCOPE, "attach", "-q"), "expected one process id");
	one_line_usage_error(OPTS(E2E_OBJSCOPE, "attach", "-q", "12x"), "expected one process id");
	one_line_usage_error(OPTS(E2E_OBJSCOPE, "recrod", "--", "true"),
			     "unknown command 'recrod'");
}

/* async-profiler's short options with its meanings: -i the time between
 * samples (nanoseconds or with a unit; with -F it is refused), -t threads
 * apart (always recorded), -I/-X the paths kept / left out (a bad pattern
 * refused before the run), -f the output file; record's profile then holds
 * only what -I keeps and says so in a note; attach takes options after the
 * PID. */
Test(e2e_cli, async_profiler_short_options)
{
	char *f = e2e_path(tmp, "f.data"), *g = e2e_path(tmp, "g.data"), msg[256];
	const char *rec[] = { E2E_OBJSCOPE, "record", "-i", "1ms", "-t", "-I", "alloc_random",
			      "-f", f, "--", E2E_FIXTURE("three_sites"), "0.4", NULL };
	const char *sleeper[] = { "sleep", "30", NULL };
	struct e2e_result res;
	json_object *rep, *objs;
	size_t i;
	pid_t pid;

	refused("record", OPTS("-i", "5"), "invalid value '5' for -i");
	refused("record", OPTS("-i", "10x"), "invalid value '10x' for -i");
	refused("record", OPTS("-F", "10", "-i", "1ms"), "-i and -F both set the rate");
	refused("record", OPTS("-I", "("), "-I '('");
	refused("record", OPTS("-X", "a", "-X", "b"), "-X given twice");
	refused("attach", OPTS("1", "-i", "2"), "for -i");

	cr_assert_eq(e2e_run(tmp, rec, NULL, &res), 0);
	cr_assert_eq(res.status, 0, "record -i 1ms -t -I -f: %d: %s", res.status, res.err);
	e2e_result_free(&res);
	cr_assert(exists(f), "-f did not name the profile");
	rep = e2e_report_json(tmp, f, msg, sizeof(msg));
	cr_assert_not_null(rep, "%s", msg);
	cr_expect_eq(e2e_get_int(e2e_get(rep, "meta"), "freq"), 1000, "-i 1ms is not 1000 Hz");
	cr_expect_not_null(e2e_note(rep, "recorded with -I alloc_random"), "no -I note");
	objs = e2e_get(rep, "objects");
	cr_assert_gt(json_object_array_length(objs), 0);
	for (i = 0; i < json_object_array_length(objs); i++) {
		json_object *o = json_object_array_get_idx(objs, i), *acc = e2e_get(o, "accesses");
		bool any = e2e_stack_has(o, "alloc_random", 64);

		for (size_t k = 0; !any && k < json_object_array_length(acc); k++) {
			json_object *st = e2e_get(json_object_array_get_idx(acc, k), "stack");

			for (size_t j = 0; j < json_object_array_length(st); j++)
				any |= strstr(e2e_frame_text(st, j), "alloc_random") != NULL;
		}
		cr_expect(any || e2e_get_int(o, "samples") == 0,
			  "object #%zu has samples and no alloc_random frame after -I", i + 1);
	}
	json_object_put(rep);

	/* attach PID -d 1 -o FILE: options after the PID */
	pid = e2e_spawn_logged(tmp, "sleeper", sleeper, NULL);
	snprintf(msg, sizeof(msg), "%d", (int)pid);
	{
		const char *att[] = { E2E_OBJSCOPE, "attach", msg, "-d", "1", "-o", g, "-q", NULL };

		cr_assert_eq(e2e_run(tmp, att, NULL, &res), 0);
		cr_expect_eq(res.status, 0, "attach PID -d 1 -o: %d: %s", res.status, res.err);
		e2e_result_free(&res);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	cr_expect(exists(g), "attach PID -o FILE wrote no profile");
	free(f);
	free(g);
}

/* The help lists what works: every command and report format at the top;
 * no PMU event names, no analyses that do not exist in record's
 * (--lifetimes is there). */
Test(e2e_cli, help_lists_only_what_works)
{
	const char *top[] = { E2E_OBJSCOPE, "--help", NULL };
	const char *rec[] = { E2E_OBJSCOPE, "record", "--help", NULL };
	static const char *const words[] = { "record", "attach", "report", "text", "json", "html",
					     "pprof", "collapsed" };
	struct e2e_result res;

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		cr_expect(e2e_help_mentions(tmp, top, words[i]), "objscope --help lacks '%s'",
			  words[i]);
	cr_assert_eq(e2e_run(tmp, rec, NULL, &res), 0);
	cr_expect_eq(res.status, 0);
	cr_expect(strstr(res.out, "-d, --duration"), "%s", res.out);
	cr_expect(strstr(res.out, "-e, --event"), "%s", res.out);
	cr_expect(strstr(res.out, "-i, --interval") && strstr(res.out, "-I, --include") &&
		  strstr(res.out, "-X, --exclude") && strstr(res.out, "-t, --threads-apart") &&
		  strstr(res.out, "-f FILE"), "record --help lacks async-profiler's options");
	cr_expect(strstr(res.out, "--lifetimes"), "record --help lacks --lifetimes (issue 19)");
	cr_expect(strstr(res.out, "--reuse"), "record --help lacks --reuse (issue 20)");
	cr_expect(strstr(res.out, "--numa"), "record --help does not offer --numa");
	cr_expect(strstr(res.out, "mem-loads") && strstr(res.out, "libpfm4"),
		  "record --help does not offer PMU events");
	e2e_result_free(&res);
}

/* record -d 1 on a command that runs 3 s: the command's output and status
 * are those of an unprofiled run, objscope ends when it does (not before,
 * not much after: the hooks are disarmed, nothing waits on the rings), and
 * the profile covers the first second, which it says. */
Test(e2e_cli, record_duration_profiles_the_first_seconds)
{
	char *ready = e2e_path(tmp, "ready"), *profile = e2e_path(tmp, "d.data");
	const char *plain[] = { E2E_FIXTURE("fault_sleeper"), ready, "3", "7", NULL };
	const char *opts[] = { "-d", "1", NULL };
	struct e2e_result base, res;
	json_object *rep, *meta;
	char msg[256];
	double t0, t_plain, t_rec, dur;

	t0 = mono_s();
	cr_assert_eq(e2e_run(tmp, plain, NULL, &base), 0);
	t_plain = mono_s() - t0;
	cr_assert_eq(base.status, 7);
	t0 = mono_s();
	cr_assert_eq(e2e_record(tmp, profile, opts, plain, &res), 0);
	t_rec = mono_s() - t0;
	cr_expect_eq(res.status, 7, "status %d, stderr: %s", res.status, res.err);
	cr_expect_str_eq(res.out, base.out, "the command's output changed");
	cr_expect(strstr(res.err, "fault_sleeper: exiting with 7"), "%s", res.err);
	cr_expect(t_rec >= 2.9, "objscope ended after %.2f s, before the 3 s command", t_rec);
	cr_expect(t_rec < t_plain + 2.0, "record -d 1 took %.2f s, the command alone %.2f s",
		  t_rec, t_plain);
	rep = e2e_report_json(tmp, profile, msg, sizeof(msg));
	cr_assert_not_null(rep, "%s", msg);
	meta = e2e_get(rep, "meta");
	dur = e2e_get_double(meta, "duration_s");
	cr_expect(dur >= 0.95 && dur < 1.5, "profile duration %.3f s for -d 1", dur);
	cr_expect_not_null(e2e_note(rep, "record -d 1: the first 1 s"), "no -d note");
	json_object_put(rep);
	e2e_result_free(&base);
	e2e_result_free(&res);
	free(ready);
	free(profile);
}

/* -d longer than the command: the whole run is profiled, as without -d. */
Test(e2e_cli, record_duration_longer_than_the_command)
{
	char *profile = e2e_path(tmp, "e.data");
	const char *argv[] = { E2E_FIXTURE("exitcode"), "4", NULL };
	const char *opts[] = { "-d", "30", NULL };
	struct e2e_result res;
	json_object *rep;
	char msg[256];
	double t0 = mono_s();

	cr_assert_eq(e2e_record(tmp, profile, opts, argv, &res), 0);
	cr_expect_eq(res.status, 4, "stderr: %s", res.err);
	cr_expect(mono_s() - t0 < 20, "objscope waited for -d after the command ended");
	rep = e2e_report_json(tmp, profile, msg, sizeof(msg));
	cr_assert_not_null(rep, "%s", msg);
	cr_expect_null(e2e_note(rep, "record -d"), "a -d note on a complete run");
	json_object_put(rep);
	e2e_result_free(&res);
	free(profile);
}

/* make install into DESTDIR, the prefix then moved elsewhere: the installed
 * objscope records a fixture from another directory without OBJSCOPE_LIB;
 * make uninstall removes both files. Installs the build being tested (-o all:
 * nothing is rebuilt). */
Test(e2e_cli, make_install_is_relocatable, .timeout = 120)
{
	char *dest = e2e_path(tmp, "dest"), *moved = e2e_path(tmp, "moved"),
	     *work = e2e_path(tmp, "work"), cmd[PATH_MAX * 2 + 128], fixture[PATH_MAX],
	     bin[PATH_MAX], from[PATH_MAX];
	const char *argv[] = { bin, "record", "-q", "-o", "p.data", "--", fixture, "6", NULL };
	int st;
	pid_t pid;
	json_object *rep;
	char msg[256], *profile;

	if (access("Makefile", R_OK) != 0 || system("command -v make >/dev/null 2>&1") != 0)
		cr_skip_test("no Makefile in the working directory or no make: run from the "
			     "repository root");
	/* a make that runs the tests must not hand its jobserver to this one */
	unsetenv("MAKEFLAGS");
	unsetenv("MFLAGS");
	unsetenv("MAKELEVEL");
	unsetenv("OBJSCOPE_LIB");
	snprintf(cmd, sizeof(cmd), "make -s -o all install DESTDIR=%s PREFIX=/opt/x >%s/make.log "
		 "2>&1", dest, tmp);
	cr_assert_eq(system(cmd), 0, "%s failed (see %s/make.log)", cmd, tmp);
	snprintf(from, sizeof(from), "%s/opt/x", dest);
	cr_assert(exists(strcat(strcpy(bin, from), "/bin/objscope")));
	cr_assert(exists(strcat(strcpy(bin, from), "/lib/objscope/libobjscope.so")));
	/* relocatable: the whole prefix elsewhere */
	cr_assert_eq(rename(from, moved), 0, "rename: %s", strerror(errno));
	snprintf(bin, sizeof(bin), "%s/bin/objscope", moved);
	cr_assert_not_null(realpath(E2E_FIXTURE("exitcode"), fixture));
	cr_assert_eq(mkdir(work, 0755), 0);
	pid = e2e_spawn_logged(tmp, "installed", argv, work);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 6, "installed objscope: status %d (%s/"
		  "installed.err)", st, tmp);
	profile = e2e_path(work, "p.data");
	rep = e2e_report_json(tmp, profile, msg, sizeof(msg));
	cr_expect_not_null(rep, "no profile from the installed objscope: %s", msg);
	if (rep)
		json_object_put(rep);
	free(profile);
	/* uninstall from where it now is */
	snprintf(cmd, sizeof(cmd), "make -s uninstall DESTDIR=%s PREFIX=/moved >>%s/make.log 2>&1",
		 tmp, tmp);
	cr_expect_eq(system(cmd), 0, "%s failed", cmd);
	snprintf(bin, sizeof(bin), "%s/bin/objscope", moved);
	cr_expect(!exists(bin), "make uninstall left %s", bin);
	snprintf(bin, sizeof(bin), "%s/lib/objscope", moved);
	cr_expect(!exists(bin), "make uninstall left %s", bin);
	free(dest);
	free(moved);
	free(work);
}
