/* faults.c - end-to-end fault tests: signals to objscope, objscope's death,
 * the target's death or crash, a full output disk, and damaged profiles
 * given to `objscope report`.
 *
 * The long-running target is build/fixtures/fault_sleeper: it writes its pid
 * to a ready file once it runs, so a test can disturb objscope or the target
 * at a known point; its output depends only on its arguments, so it is
 * compared with an undisturbed run. The same faults are tested for `record`
 * (objscope launches the sleeper) and for `attach` (the test starts the
 * sleeper, objscope attaches to it; ptrace and perf need root).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/shm.h"
#include "tests/e2e/helpers.h"

#define SLEEPER_SECS "1.5"
#define SLEEPER_STATUS 5

static char *tmp;

static void setup(void)
{
	tmp = e2e_suite_setup();
}

static void teardown(void)
{
	e2e_suite_teardown(&tmp);
}

TestSuite(e2e_faults, .init = setup, .fini = teardown, .timeout = 90);

static double mono_s_early(void)
{
	return (double)os_now_ns() * 1e-9;
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Whole file as a NUL-terminated string ("" when it cannot be read). */
static char *read_text(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0, got;

	if (f) {
		do {
			if (cap - n < 4096) {
				cap = cap ? cap * 2 : 8192;
				buf = realloc(buf, cap);
				cr_assert_not_null(buf);
			}
			got = fread(buf + n, 1, cap - n - 1, f);
			n += got;
		} while (got > 0);
		fclose(f);
	}
	if (!buf) {
		buf = malloc(1);
		cr_assert_not_null(buf);
	}
	buf[n] = 0;
	return buf;
}

/* Starts argv in the background, stdout/stderr to tmp/NAME.out, NAME.err. */
static pid_t spawn(const char *name, const char *const argv[])
{
	return e2e_spawn_logged(tmp, name, argv, NULL);
}

static char *output_of(const char *name, const char *ext)
{
	char *path = NULL, *text;

	cr_assert(asprintf(&path, "%s/%s.%s", tmp, name, ext) > 0);
	text = read_text(path);
	free(path);
	return text;
}

/* Waits (10 s at most) for the sleeper's ready file; returns its pid. */
static pid_t wait_ready(const char *ready)
{
	for (int i = 0; i < 1000; i++) {
		char *text = read_text(ready);
		pid_t pid = (pid_t)atoi(text);

		free(text);
		if (pid > 0)
			return pid;
		sleep_s(0.01);
	}
	cr_assert_fail("the target never became ready (%s)", ready);
	return -1;
}

/* Exit status as the shell gives it: 128 + N for a signal. */
static int wait_status(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		cr_assert_eq(errno, EINTR, "waitpid(%d): %s", (int)pid, strerror(errno));
	return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
}

/* The sleeper's undisturbed stdout for a run of `secs` seconds. */
static char *reference_output_of(const char *secs)
{
	char *ready = e2e_path(tmp, "ref.ready"), *out;
	const char *argv[] = { E2E_FIXTURE("fault_sleeper"), ready, secs, "5", NULL };
	struct e2e_result res;

	cr_assert_eq(e2e_run(tmp, argv, NULL, &res), 0);
	cr_assert_eq(res.status, SLEEPER_STATUS, "fault_sleeper alone exited %d: %s", res.status,
		     res.err);
	out = strdup(res.out);
	cr_assert_not_null(out);
	e2e_result_free(&res);
	unlink(ready);
	free(ready);
	return out;
}

static char *reference_output(void)
{
	return reference_output_of(SLEEPER_SECS);
}

/* `objscope report` must read `profile` (JSON); returns meta.samples_total. */
static int64_t report_reads(const char *profile)
{
	char msg[512];
	json_object *report = e2e_report_json(tmp, profile, msg, sizeof(msg));
	int64_t samples;

	cr_assert_not_null(report, "the saved profile is not readable: %s", msg);
	samples = e2e_get_int(e2e_get(report, "meta"), "samples_total");
	cr_expect_geq(samples, 0, "report has no meta.samples_total");
	json_object_put(report);
	return samples;
}

/* Runs the sleeper under objscope, sends `sig` to objscope once the target
 * runs, and checks the target's output and status are its own. */
static void signal_objscope(int sig)
{
	char *ref = reference_output(), *ready = e2e_path(tmp, "rec.ready");
	char *profile = e2e_path(tmp, "rec.data"), *out, *err;
	const char *argv[] = { E2E_OBJSCOPE, "record", "-o", profile, "--",
			       E2E_FIXTURE("fault_sleeper"), ready, SLEEPER_SECS, "5", NULL };
	pid_t objscope, target;
	int status;

	objscope = spawn("rec", argv);
	target = wait_ready(ready);
	sleep_s(0.3);
	cr_assert_eq(kill(objscope, sig), 0);
	status = wait_status(objscope);
	out = output_of("rec", "out");
	err = output_of("rec", "err");
	cr_expect_eq(status, SLEEPER_STATUS, "objscope exited %d after signal %d, not the "
		     "target's %d; stderr:\n%s", status, sig, SLEEPER_STATUS, err);
	cr_expect_str_eq(out, ref, "the target's output changed");
	cr_expect(strstr(err, "fault_sleeper: exiting with 5") != NULL,
		  "the target's stderr is missing:\n%s", err);
	cr_expect(kill(target, 0) < 0 && errno == ESRCH, "the target still runs");
	report_reads(profile);
	free(ref);
	free(ready);
	free(profile);
	free(out);
	free(err);
}

Test(e2e_faults, sigint_writes_profile_target_finishes)
{
	signal_objscope(SIGINT);
}

Test(e2e_faults, sigterm_writes_profile_target_finishes)
{
	signal_objscope(SIGTERM);
}

/* kill -9 of objscope: nothing is written, but the target runs to its end
 * with its own output and exit status. This process becomes the subreaper
 * of the orphaned target to collect that status. */
Test(e2e_faults, sigkill_of_objscope_leaves_target_unharmed)
{
	char *ref = reference_output(), *ready = e2e_path(tmp, "rec.ready");
	char *profile = e2e_path(tmp, "rec.data"), *out, *err;
	const char *argv[] = { E2E_OBJSCOPE, "record", "-o", profile, "--",
			       E2E_FIXTURE("fault_sleeper"), ready, SLEEPER_SECS, "5", NULL };
	pid_t objscope, target;

	cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0, "PR_SET_CHILD_SUBREAPER: %s",
		     strerror(errno));
	objscope = spawn("rec", argv);
	target = wait_ready(ready);
	sleep_s(0.3);
	cr_assert_eq(kill(objscope, SIGKILL), 0);
	cr_expect_eq(wait_status(objscope), 128 + SIGKILL);
	cr_expect_eq(wait_status(target), SLEEPER_STATUS, "the orphaned target's exit status "
		     "changed");
	out = output_of("rec", "out");
	err = output_of("rec", "err");
	cr_expect_str_eq(out, ref, "the target's output changed");
	cr_expect(strstr(err, "fault_sleeper: exiting with 5") != NULL,
		  "the target's stderr is missing:\n%s", err);
	cr_expect(access(profile, F_OK) < 0, "a profile claims to be complete after kill -9");
	free(ref);
	free(ready);
	free(profile);
	free(out);
	free(err);
}

/* The target is killed: objscope saves what it has, exits 128+9 and says so. */
Test(e2e_faults, target_killed_profile_saved)
{
	char *ready = e2e_path(tmp, "rec.ready"), *profile = e2e_path(tmp, "rec.data"), *err;
	const char *argv[] = { E2E_OBJSCOPE, "record", "-o", profile, "--",
			       E2E_FIXTURE("fault_sleeper"), ready, "20", "5", NULL };
	pid_t objscope, target;
	int status;

	objscope = spawn("rec", argv);
	target = wait_ready(ready);
	sleep_s(0.3);
	cr_assert_eq(kill(target, SIGKILL), 0);
	status = wait_status(objscope);
	err = output_of("rec", "err");
	cr_expect_eq(status, 128 + SIGKILL, "objscope exited %d; stderr:\n%s", status, err);
	cr_expect(strstr(err, "killed by signal 9") != NULL,
		  "no line on stderr says the target was killed:\n%s", err);
	report_reads(profile);
	free(ready);
	free(profile);
	free(err);
}

/* The target crashes: profile saved (its samples included), 128+11, a line. */
Test(e2e_faults, target_crash_profile_saved)
{
	char *profile = e2e_path(tmp, "segv.data"), msg[512];
	const char *argv[] = { E2E_FIXTURE("fault_segv"), NULL };
	struct e2e_result res;
	json_object *report;

	cr_assert_eq(e2e_record(tmp, profile, NULL, argv, &res), 0);
	cr_expect_eq(res.status, 128 + SIGSEGV, "objscope exited %d; stderr:\n%s", res.status,
		     res.err);
	cr_expect(strstr(res.out, "fault_segv: about to crash") != NULL, "stdout: %s", res.out);
	cr_expect(strstr(res.err, "killed by signal 11") != NULL,
		  "no line on stderr says the target crashed:\n%s", res.err);
	e2e_result_free(&res);
	report = e2e_report_json(tmp, profile, msg, sizeof(msg));
	cr_assert_not_null(report, "the saved profile is not readable: %s", msg);
	cr_expect_gt(json_object_array_length(e2e_get(report, "objects")), 0,
		     "the crashed target's objects were not saved");
	json_object_put(report);
	free(profile);
}

/* The output disk is full: one clear error line, non-zero exit, and neither
 * FILE nor FILE.tmp left behind. Needs permission to mount a tmpfs. */
Test(e2e_faults, disk_full_leaves_no_file)
{
	char *mnt = e2e_full_tmpfs(tmp), *profile, *ptmp, *err;
	const char *argv[] = { E2E_FIXTURE("exitcode"), "0", NULL };
	struct e2e_result res;

	profile = e2e_path(mnt, "full.data");
	cr_assert(asprintf(&ptmp, "%s.tmp", profile) > 0);

	cr_assert_eq(e2e_record(tmp, profile, NULL, argv, &res), 0);
	err = res.err;
	cr_expect_neq(res.status, 0, "objscope exited 0 with a full disk");
	cr_expect(strstr(err, "No space left on device") != NULL, "stderr:\n%s", err);
	/* the target's 3 lines on stderr, then exactly one from objscope */
	cr_expect_eq(e2e_count_lines(err, res.err_len), 4, "expected one error line, stderr:\n%s",
		     err);
	cr_expect(access(profile, F_OK) < 0, "%s left on a full disk", profile);
	cr_expect(access(ptmp, F_OK) < 0, "%s left on a full disk", ptmp);
	e2e_result_free(&res);
	umount2(mnt, MNT_DETACH);
	free(mnt);
	free(profile);
	free(ptmp);
}

/* An output that cannot be written is found before the command
 * runs: one line, non-zero, at once (not after the 5 s run). */
Test(e2e_faults, unwritable_output_refused_before_the_run)
{
	const char *argv[] = { "sleep", "5", NULL };
	struct e2e_result res;
	double t0 = mono_s_early();

	cr_assert_eq(e2e_record(tmp, "/nonexistent/dir/x.data", NULL, argv, &res), 0);
	cr_expect_lt(mono_s_early() - t0, 1.0, "the command ran first");
	cr_expect_neq(res.status, 0);
	cr_expect(strstr(res.err, "/nonexistent/dir/x.data: cannot create: directory "
				  "/nonexistent/dir: No such file or directory") != NULL,
		  "stderr:\n%s", res.err);
	cr_expect_eq(e2e_count_lines(res.err, res.err_len), 1, "stderr:\n%s", res.err);
	e2e_result_free(&res);

	cr_assert_eq(e2e_record(tmp, tmp, NULL, argv, &res), 0); /* a directory */
	cr_expect_neq(res.status, 0);
	cr_expect(strstr(res.err, "is a directory") != NULL, "stderr:\n%s", res.err);
	e2e_result_free(&res);
}

/* A symlink planted at the old temporary name does not make
 * record write through it; the profile is 0600, the previous kept as .old. */
Test(e2e_faults, planted_tmp_link_not_followed)
{
	const char *argv[] = { E2E_FIXTURE("exitcode"), "0", NULL };
	char *profile = e2e_path(tmp, "p.data"), *victim = e2e_path(tmp, "victim"), *link, *old;
	struct e2e_result res;
	struct stat st;
	char *text;
	FILE *f = fopen(victim, "w");

	cr_assert_not_null(f);
	fputs("precious\n", f);
	fclose(f);
	cr_assert(asprintf(&link, "%s.tmp", profile) > 0);
	cr_assert(asprintf(&old, "%s.old", profile) > 0);
	cr_assert_eq(symlink(victim, link), 0);
	cr_assert_eq(e2e_record(tmp, profile, NULL, argv, &res), 0);
	cr_expect_eq(res.status, 0, "stderr:\n%s", res.err);
	e2e_result_free(&res);
	text = read_text(victim);
	cr_expect_str_eq(text, "precious\n");
	free(text);
	cr_assert_eq(stat(profile, &st), 0);
	cr_expect_eq(st.st_mode & 0777, 0600, "mode %o", st.st_mode & 0777);
	cr_expect_geq(report_reads(profile), 0); /* readable */
	cr_assert_eq(e2e_record(tmp, profile, NULL, argv, &res), 0);
	cr_expect_eq(res.status, 0, "stderr:\n%s", res.err);
	e2e_result_free(&res);
	cr_expect_eq(stat(old, &st), 0, "the previous profile was not kept as %s", old);
	free(link);
	free(old);
	free(profile);
	free(victim);
}

/* ---- the same faults during `objscope attach` ---- */

#define ATTACH_SECS "4"
#define ORPHAN_SECS "8"

static double mono_s(void)
{
	return (double)os_now_ns() * 1e-9;
}

/* Start and end address of the target's mapping of objscope's shared rings
 * ("/dev/shm/objscope-PID-N.rings", unlinked once mapped: "(deleted)");
 * 0 when it has none (not attached, or detached: the rings were replaced
 * by an anonymous placeholder). */
static int rings_mapping(pid_t pid, unsigned long *start, unsigned long *end)
{
	char path[64], line[1024];
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		if (strstr(line, "/objscope-") && strstr(line, ".rings"))
			found = sscanf(line, "%lx-%lx", start, end) == 2;
	fclose(f);
	return found;
}

/* How many of the target's mappings are objscope rings (named `name` when
 * not NULL). */
static int count_rings(pid_t pid, const char *name)
{
	char path[64], line[1024];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "/objscope-") && strstr(line, ".rings") &&
		    (!name || strstr(line, name)))
			n++;
	fclose(f);
	return n;
}

/* File name ("objscope-COLLECTOR-TARGET.rings") of the target's rings, ""
 * when it maps none. */
static void rings_name(pid_t pid, char *out, size_t len)
{
	char path[64], line[1024], *s, *e;
	FILE *f;

	out[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return;
	while (!out[0] && fgets(line, sizeof(line), f)) {
		s = strstr(line, "/objscope-");
		e = s ? strstr(s, ".rings") : NULL;
		if (e)
			snprintf(out, len, "%.*s", (int)(e + 6 - s - 1), s + 1);
	}
	fclose(f);
}

/* `objscope report` reads `profile`; returns the allocations of its objects
 * (the sleeper sleeps most of the time: few samples, but 100 tracked
 * 16 KiB allocations per second). */
static int64_t report_allocations(const char *profile)
{
	char msg[512];
	json_object *report = e2e_report_json(tmp, profile, msg, sizeof(msg)), *objs;
	int64_t n = 0;

	cr_assert_not_null(report, "the saved profile is not readable: %s", msg);
	objs = e2e_get(report, "objects");
	for (size_t i = 0; objs && i < json_object_array_length(objs); i++)
		n += e2e_get_int(json_object_array_get_idx(objs, i), "allocations");
	json_object_put(report);
	return n;
}

/* meta.notes of the report of `profile`, joined with '\n' (caller frees). */
static char *report_notes(const char *profile)
{
	char msg[512], *all = NULL;
	json_object *report = e2e_report_json(tmp, profile, msg, sizeof(msg)), *notes;
	size_t len = 0;
	FILE *f = open_memstream(&all, &len);

	cr_assert_not_null(report, "the saved profile is not readable: %s", msg);
	cr_assert_not_null(f);
	notes = e2e_get(e2e_get(report, "meta"), "notes");
	for (size_t i = 0; notes && i < json_object_array_length(notes); i++)
		fprintf(f, "%s\n", json_object_get_string(json_object_array_get_idx(notes, i)));
	fclose(f);
	json_object_put(report);
	return all;
}

/* Waits (10 s at most) until objscope has mapped its rings into the target. */
static void wait_attached(pid_t target, pid_t objscope, const char *name)
{
	unsigned long a, b;

	for (int i = 0; i < 1000; i++) {
		if (rings_mapping(target, &a, &b))
			return;
		if (waitpid(objscope, NULL, WNOHANG) == objscope) {
			char *err = output_of(name, "err");

			cr_assert_fail("objscope attach ended before arming: %s", err);
		}
		sleep_s(0.01);
	}
	cr_assert_fail("objscope attach never mapped its rings into %d", (int)target);
}

/* Starts the sleeper (`secs`, exit status `status`) in the background with
 * its output in tmp/NAME.out/.err; returns its pid once it runs. */
static pid_t start_sleeper_status(const char *name, const char *secs, const char *status)
{
	char *ready = NULL;
	pid_t pid, ready_pid;

	cr_assert(asprintf(&ready, "%s/%s.ready", tmp, name) > 0);
	{
		const char *argv[] = { E2E_FIXTURE("fault_sleeper"), ready, secs, status, NULL };

		pid = spawn(name, argv);
	}
	ready_pid = wait_ready(ready);
	cr_assert_eq(ready_pid, pid, "ready file names %d, not %d", (int)ready_pid, (int)pid);
	free(ready);
	return pid;
}

static pid_t start_sleeper(const char *name, const char *secs)
{
	return start_sleeper_status(name, secs, "5");
}

/* `objscope attach -q -d SECS [--ring-kb extra] -o PROFILE PID` in the
 * background. */
static pid_t spawn_attach_d(const char *name, const char *profile, pid_t target,
			    const char *extra, const char *secs)
{
	char spid[16];
	const char *argv[14];
	size_t n = 0;

	snprintf(spid, sizeof(spid), "%d", (int)target);
	argv[n++] = E2E_OBJSCOPE;
	argv[n++] = "attach";
	argv[n++] = "-d";
	argv[n++] = secs;
	/* every block an event: the tests count the sleeper's allocations
	 * in the profile and fill small rings with them (byte sampling
	 * would record a few of its 100 blocks a second, by chance) */
	argv[n++] = "--native-objects";
	argv[n++] = "exact";
	if (extra) {
		argv[n++] = "--ring-kb";
		argv[n++] = extra;
	}
	argv[n++] = "-o";
	argv[n++] = profile;
	argv[n++] = spid;
	argv[n] = NULL;
	return spawn(name, argv);
}

/* The same for 30 s. */
static pid_t spawn_attach(const char *name, const char *profile, pid_t target,
			  const char *extra)
{
	return spawn_attach_d(name, profile, target, extra, "30");
}

/* The sleeper's own output and status, unchanged by what happened to
 * objscope; `ref` is its undisturbed stdout. */
static void assert_sleeper_unharmed(pid_t target, const char *name, const char *ref)
{
	char *out, *err;
	int status = wait_status(target);

	out = output_of(name, "out");
	err = output_of(name, "err");
	cr_expect_eq(status, SLEEPER_STATUS, "the target exited %d, not %d", status,
		     SLEEPER_STATUS);
	cr_expect_str_eq(out, ref, "the target's output changed");
	cr_expect_str_eq(err, "fault_sleeper: exiting with 5\n", "the target's stderr changed");
	free(out);
	free(err);
}

/* SIGINT/SIGTERM to `objscope attach`: it detaches, writes the profile and
 * exits 0; the target runs on (rings unmapped, hooks disarmed) and ends
 * with its own output and status. */
static void signal_attach(int sig)
{
	char *ref = reference_output_of(ATTACH_SECS), *profile = e2e_path(tmp, "att.data"), *err;
	pid_t target = start_sleeper("tgt", ATTACH_SECS), objscope;
	unsigned long a, b;
	double t0;
	int status;

	objscope = spawn_attach("att", profile, target, NULL);
	wait_attached(target, objscope, "att");
	sleep_s(0.5);
	t0 = mono_s();
	cr_assert_eq(kill(objscope, sig), 0);
	status = wait_status(objscope);
	err = output_of("att", "err");
	cr_expect_eq(status, 0, "objscope attach exited %d after signal %d; stderr:\n%s", status,
		     sig, err);
	cr_expect_lt(mono_s() - t0, 3.0, "objscope attach took %.1f s to stop", mono_s() - t0);
	cr_expect_eq(kill(target, 0), 0, "the target died with objscope");
	cr_expect(!rings_mapping(target, &a, &b), "the target still maps the rings after detach");
	cr_expect_gt(report_allocations(profile), 10, "the profile misses the allocations");
	assert_sleeper_unharmed(target, "tgt", ref);
	free(ref);
	free(profile);
	free(err);
}

Test(e2e_faults, attach_sigint_writes_profile_target_runs_on)
{
	signal_attach(SIGINT);
}

Test(e2e_faults, attach_sigterm_writes_profile_target_runs_on)
{
	signal_attach(SIGTERM);
}

/* Attach checks its output before it touches the target: one
 * line, non-zero, and the target never mapped the rings. */
Test(e2e_faults, attach_unwritable_output_refused_before_the_attach)
{
	pid_t target = start_sleeper("outchk", ATTACH_SECS);
	char pid[16];
	const char *argv[] = { E2E_OBJSCOPE, "attach", "-d", "5", "-o", "/nonexistent/dir/a.data",
			       pid, NULL };
	struct e2e_result res;
	unsigned long a, b;
	double t0 = mono_s();

	snprintf(pid, sizeof(pid), "%d", (int)target);
	cr_assert_eq(e2e_run(tmp, argv, NULL, &res), 0);
	cr_expect_lt(mono_s() - t0, 2.0, "the attach ran first");
	cr_expect_neq(res.status, 0);
	cr_expect(strstr(res.err, "/nonexistent/dir/a.data: cannot create: directory "
				  "/nonexistent/dir: No such file or directory") != NULL,
		  "stderr:\n%s", res.err);
	cr_expect_eq(e2e_count_lines(res.err, res.err_len), 1, "stderr:\n%s", res.err);
	cr_expect(!rings_mapping(target, &a, &b), "the target was attached");
	e2e_result_free(&res);
	kill(target, SIGKILL);
	waitpid(target, NULL, 0);
}

/* Counters of the orphaned rings, read through /proc/PID/map_files. */
struct ring_view {
	uint32_t disarmed;
	uint64_t ring_bytes, events, dropped, max_fill, tail_sum;
};

static void read_rings(pid_t pid, struct ring_view *rv)
{
	unsigned long start, end;
	char path[128];
	struct os_shm_header *h;
	void *m;
	int fd;

	memset(rv, 0, sizeof(*rv));
	cr_assert(rings_mapping(pid, &start, &end), "the target no longer maps the rings");
	snprintf(path, sizeof(path), "/proc/%d/map_files/%lx-%lx", (int)pid, start, end);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		cr_skip_test("cannot open %s (%s): needs CAP_SYS_ADMIN", path, strerror(errno));
	m = mmap(NULL, end - start, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	cr_assert_neq(m, MAP_FAILED, "mmap %s: %s", path, strerror(errno));
	h = m;
	cr_assert_eq(h->magic, OS_SHM_MAGIC, "not objscope's rings");
	cr_assert_eq(os_shm_size(h->nslots, h->ring_bytes), end - start);
	rv->disarmed = atomic_load(&h->disarmed);
	rv->ring_bytes = h->ring_bytes;
	for (uint32_t i = 0; i < h->nslots; i++) {
		struct os_slot *s = os_shm_slot(h, i);
		uint64_t head = atomic_load(&s->head), tail = atomic_load(&s->tail);

		rv->events += atomic_load(&s->stats.events);
		rv->dropped += atomic_load(&s->stats.dropped);
		rv->tail_sum += tail;
		if (head - tail > rv->max_fill)
			rv->max_fill = head - tail;
	}
	munmap(m, end - start);
}

/* kill -9 of `objscope attach`: nobody detaches, so the target's hooks keep
 * writing into rings nobody drains. That must stay harmless: the rings fill
 * up to their size and no further, the overflow is counted as drops, no
 * hook blocks (the target keeps its pace), a second attach works and cleans
 * up, and the target ends with its own output and status. Small rings
 * (16 KiB) so that they fill within the run. */
Test(e2e_faults, attach_sigkill_of_objscope_leaves_target_unharmed)
{
	char *ref, *profile = e2e_path(tmp, "att.data"), *ptmp;
	struct ring_view r1, r2;
	pid_t target, objscope;
	double t0, alone, disturbed;

	t0 = mono_s();
	ref = reference_output_of(ORPHAN_SECS);
	alone = mono_s() - t0;
	cr_assert(asprintf(&ptmp, "%s.tmp", profile) > 0);

	t0 = mono_s();
	target = start_sleeper("tgt", ORPHAN_SECS);
	objscope = spawn_attach("att", profile, target, "16");
	wait_attached(target, objscope, "att");
	sleep_s(0.5);
	cr_assert_eq(kill(objscope, SIGKILL), 0);
	cr_expect_eq(wait_status(objscope), 128 + SIGKILL);

	sleep_s(2.5); /* ~250 more allocation + free events: about 40 KiB */
	read_rings(target, &r1);
	sleep_s(0.5);
	read_rings(target, &r2);
	cr_log_info("orphaned rings: %llu events written, %llu dropped, then %llu dropped; "
		    "fullest ring %llu of %llu bytes", (unsigned long long)r1.events,
		    (unsigned long long)r1.dropped, (unsigned long long)r2.dropped,
		    (unsigned long long)r2.max_fill, (unsigned long long)r2.ring_bytes);
	cr_expect_eq(r1.disarmed, 0, "expected the hooks to stay armed (docs/ATTACH.md)");
	cr_expect_leq(r2.max_fill, r2.ring_bytes, "a ring holds %llu bytes, more than its %llu",
		      (unsigned long long)r2.max_fill, (unsigned long long)r2.ring_bytes);
	cr_expect_eq(r2.tail_sum, r1.tail_sum, "someone still drains the rings");
	cr_expect_gt(r1.dropped, 0, "the full rings dropped nothing (events %llu)",
		     (unsigned long long)r1.events);
	cr_expect_gt(r2.dropped, r1.dropped, "the hooks stopped counting drops: %llu -> %llu",
		     (unsigned long long)r1.dropped, (unsigned long long)r2.dropped);
	cr_expect_eq(kill(target, 0), 0, "the target died");

	/* docs/ATTACH.md: attaching (and detaching) again cleans up: the new
	 * attach finds the orphaned rings, reports what they lost and
	 * releases them (its own rings take their place) */
	{
		char old_name[64], new_name[64], *err, *notes, *hit;
		unsigned long a, b;
		unsigned long long orphaned = 0;
		int status;

		rings_name(target, old_name, sizeof(old_name));
		objscope = spawn_attach_d("att2", profile, target, "16", "2");
		for (int i = 0; i < 1000; i++) {
			rings_name(target, new_name, sizeof(new_name));
			if (new_name[0] && strcmp(new_name, old_name) != 0)
				break;
			sleep_s(0.01);
		}
		cr_expect(new_name[0] && strcmp(new_name, old_name) != 0,
			  "the second attach never mapped its own rings (still %s)", old_name);
		cr_expect_eq(count_rings(target, old_name), 0, "the target still maps the old "
			     "rings %s while the second attach runs", old_name);
		cr_expect_eq(count_rings(target, NULL), 1, "the target maps several rings");
		status = wait_status(objscope);
		err = output_of("att2", "err");
		cr_expect_eq(status, 0, "attach after kill -9 exited %d: %s", status, err);
		cr_expect(!rings_mapping(target, &a, &b), "the rings are still mapped after the "
			  "second attach detached");
		cr_expect_gt(report_allocations(profile), 10, "the second attach saw nothing");
		notes = report_notes(profile);
		hit = strstr(notes, " events dropped while no collector was attached (previous "
			     "objscope");
		cr_expect_not_null(hit, "the profile does not report the orphaned drops; notes:\n%s",
				   notes);
		while (hit && hit > notes && hit[-1] != '\n')
			hit--;
		if (hit)
			orphaned = strtoull(hit, NULL, 10);
		cr_log_info("second attach: %llu events lost while orphaned", orphaned);
		cr_expect_geq(orphaned, r2.dropped, "the profile reports %llu orphaned drops, the "
			      "rings counted %llu", orphaned, (unsigned long long)r2.dropped);
		cr_expect_gt(orphaned, 0);
		cr_expect(strstr(err, "events dropped while no collector was attached") != NULL,
			  "stderr does not say so:\n%s", err);
		free(err);
		free(notes);
		unlink(profile);
	}

	assert_sleeper_unharmed(target, "tgt", ref);
	disturbed = mono_s() - t0;
	cr_expect_lt(disturbed, alone + 2.0, "the orphaned target took %.1f s, alone %.1f s",
		     disturbed, alone);
	cr_expect(access(profile, F_OK) < 0, "a profile claims to be complete after kill -9");
	cr_expect(access(ptmp, F_OK) < 0, "%s left behind", ptmp);
	free(ref);
	free(profile);
	free(ptmp);
}

/* Whether this kernel gives the exit status of a reaped process through a
 * pidfd opened before (PIDFD_GET_INFO with PIDFD_INFO_EXIT, Linux >= 6.15). */
static bool kernel_keeps_reaped_status(void)
{
	struct { uint64_t mask, cgroupid; uint32_t ids[11]; int32_t exit_code; } info;
	pid_t pid = fork();
	int fd, ok;

	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(7);
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	wait_status(pid);
	if (fd < 0)
		return false;
	memset(&info, 0, sizeof(info));
	info.mask = 1ULL << 3;
	ok = ioctl(fd, _IOWR(0xFF, 11, typeof(info)), &info) == 0 && (info.mask & (1ULL << 3)) &&
	     info.exit_code == 7 << 8;
	close(fd);
	return ok;
}

/* The target ends while attached (killed, SIGSEGV, or its own exit with a
 * status): the profile of what was collected is written, objscope exits 0
 * and one line says how the target ended — `want` — as does a note of the
 * profile. A non-parent cannot wait for the target: objscope reads the
 * status from /proc/PID/stat while it is a zombie (reap_late: the test
 * reaps it only after objscope ended), or from its pidfd once its parent
 * reaped it (Linux >= 6.15; older kernels may say "status unknown"). */
static void attach_target_ends(int sig, const char *secs, const char *status_arg, bool reap_late,
			       const char *want)
{
	char *profile = e2e_path(tmp, "att.data"), *err, *notes;
	struct rlimit no_core = { 0, 0 };
	pid_t target, objscope;
	double t0;
	int status, tstatus = -1;

	cr_assert_eq(setrlimit(RLIMIT_CORE, &no_core), 0); /* no core file in the tree */
	target = start_sleeper_status("tgt", secs, status_arg);
	objscope = spawn_attach("att", profile, target, NULL);
	wait_attached(target, objscope, "att");
	sleep_s(0.5);
	if (sig)
		cr_assert_eq(kill(target, sig), 0);
	if (!reap_late)
		tstatus = wait_status(target);
	t0 = mono_s();
	status = wait_status(objscope);
	if (reap_late)
		tstatus = wait_status(target);
	cr_expect_eq(tstatus, sig ? 128 + sig : atoi(status_arg));
	err = output_of("att", "err");
	cr_expect_eq(status, 0, "objscope attach exited %d; stderr:\n%s", status, err);
	cr_expect_lt(mono_s() - t0, sig ? 3.0 : 6.0, "objscope attach took %.1f s to notice",
		     mono_s() - t0);
	cr_expect(strstr(err, "; saving what was collected") != NULL,
		  "no line on stderr says the target is gone:\n%s", err);
	notes = report_notes(profile);
	if (!reap_late && !strstr(err, want) && strstr(err, "exited (status unknown)") &&
	    !kernel_keeps_reaped_status()) {
		free(notes);
		cr_skip_test("the target was reaped before objscope could read its status, and this "
			     "kernel keeps no exit status for a pidfd (Linux < 6.15)");
	}
	cr_expect(strstr(err, want) != NULL, "stderr does not say \"%s\":\n%s", want, err);
	cr_expect(strstr(notes, want) != NULL, "no note of the profile says \"%s\":\n%s", want,
		  notes);
	cr_expect_gt(report_allocations(profile), 10, "the profile misses the allocations");
	free(notes);
	free(profile);
	free(err);
}

Test(e2e_faults, attach_target_killed_profile_saved)
{
	/* reaped at once by its parent: the status comes from the pidfd */
	attach_target_ends(SIGKILL, "20", "5", false, "exited: killed by signal 9 (SIGKILL");
}

Test(e2e_faults, attach_target_crash_profile_saved)
{
	/* a zombie until objscope ended: the status comes from /proc/PID/stat */
	attach_target_ends(SIGSEGV, "20", "5", true, "exited: killed by signal 11 (SIGSEGV");
}

Test(e2e_faults, attach_target_exit_status_reported)
{
	attach_target_ends(0, "2", "3", true, "exited with status 3");
}

Test(e2e_faults, attach_target_exit_status_reported_after_reap)
{
	attach_target_ends(0, "2", "3", false, "exited with status 3");
}

/* The output disk is full during attach: one clear error line, non-zero
 * exit, no FILE nor FILE.tmp, and the target runs on unharmed. */
Test(e2e_faults, attach_disk_full_leaves_no_file)
{
	char *mnt = e2e_full_tmpfs(tmp), *profile, *ptmp, *err, *ref;
	pid_t target, objscope;
	int status;

	profile = e2e_path(mnt, "full.data");
	cr_assert(asprintf(&ptmp, "%s.tmp", profile) > 0);

	ref = reference_output_of(ATTACH_SECS);
	target = start_sleeper("tgt", ATTACH_SECS);
	{
		char spid[16];
		const char *argv[] = { E2E_OBJSCOPE, "attach", "-q", "-d", "1", "-o", profile,
				       spid, NULL };

		snprintf(spid, sizeof(spid), "%d", (int)target);
		objscope = spawn("att", argv);
	}
	status = wait_status(objscope);
	err = output_of("att", "err");
	cr_expect_neq(status, 0, "objscope attach exited 0 with a full disk");
	cr_expect(strstr(err, "No space left on device") != NULL, "stderr:\n%s", err);
	cr_expect_eq(e2e_count_lines(err, strlen(err)), 1, "expected one error line, stderr:\n%s",
		     err);
	cr_expect(access(profile, F_OK) < 0, "%s left on a full disk", profile);
	cr_expect(access(ptmp, F_OK) < 0, "%s left on a full disk", ptmp);
	cr_expect_eq(kill(target, 0), 0, "the target died with objscope");
	assert_sleeper_unharmed(target, "tgt", ref);
	umount2(mnt, MNT_DETACH);
	free(mnt);
	free(profile);
	free(ptmp);
	free(err);
	free(ref);
}

/* ---- damaged profiles given to `objscope report` ---- */

/* Records a small valid profile; returns its bytes (size in *len). */
static unsigned char *valid_profile(const char *path, size_t *len)
{
	const char *argv[] = { E2E_FIXTURE("three_sites"), "0.1", NULL };
	struct e2e_result res;
	unsigned char *buf;
	struct stat st;
	FILE *f;

	cr_assert_eq(e2e_record(tmp, path, NULL, argv, &res), 0);
	cr_assert_eq(res.status, 0, "objscope record exited %d: %s", res.status, res.err);
	e2e_result_free(&res);
	cr_assert_eq(stat(path, &st), 0);
	buf = malloc((size_t)st.st_size);
	f = fopen(path, "rb");
	cr_assert(buf && f);
	cr_assert_eq(fread(buf, 1, (size_t)st.st_size, f), (size_t)st.st_size);
	fclose(f);
	*len = (size_t)st.st_size;
	return buf;
}

static void write_bytes(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	cr_assert_not_null(f);
	cr_assert_eq(fwrite(buf, 1, len, f), len);
	cr_assert_eq(fclose(f), 0);
}

/* `objscope report` (text and JSON) must refuse `path` with exactly one
 * stderr line containing `why`, a non-zero status, no crash, no stdout. */
static void report_refuses(const char *path, const char *why)
{
	const char *formats[] = { "text", "json" };

	for (size_t i = 0; i < 2; i++) {
		const char *argv[] = { E2E_OBJSCOPE, "report", "--format", formats[i], path, NULL };
		struct e2e_result res;

		cr_assert_eq(e2e_run(tmp, argv, NULL, &res), 0);
		cr_expect(!res.signaled, "report --format %s crashed (signal %d) on %s", formats[i],
			  res.status - 128, why);
		cr_expect_neq(res.status, 0, "report --format %s accepted a profile with %s",
			      formats[i], why);
		cr_expect_eq(e2e_count_lines(res.err, res.err_len), 1,
			     "%s: expected one line on stderr, got:\n%s", why, res.err);
		cr_expect(strstr(res.err, why) != NULL, "the error does not say '%s': %s", why,
			  res.err);
		cr_expect_eq(res.out_len, 0, "report printed something for a bad profile:\n%s",
			     res.out);
		e2e_result_free(&res);
	}
}

Test(e2e_faults, report_refuses_damaged_profiles)
{
	char *good = e2e_path(tmp, "good.data"), *bad = e2e_path(tmp, "bad.data");
	size_t len;
	unsigned char *buf = valid_profile(good, &len), *copy = malloc(len);

	cr_assert_not_null(copy);
	write_bytes(bad, buf, 0);
	report_refuses(bad, "empty file");
	write_bytes(bad, "#!/bin/sh\necho not a profile\n", 29);
	report_refuses(bad, "not an objscope profile");
	write_bytes(bad, buf, 5);
	report_refuses(bad, "truncated profile");
	write_bytes(bad, buf, 20);
	report_refuses(bad, "truncated profile");
	write_bytes(bad, buf, len - 1);
	report_refuses(bad, "truncated profile");
	write_bytes(bad, buf, len / 2);
	report_refuses(bad, "truncated profile");

	memcpy(copy, buf, len);
	copy[8] = 7; /* version 7 */
	write_bytes(bad, copy, len);
	report_refuses(bad, "unsupported profile version 7");

	memcpy(copy, buf, len);
	copy[len / 2] ^= 0x5a;
	write_bytes(bad, copy, len);
	report_refuses(bad, "checksum mismatch");

	memcpy(copy, buf, len);
	copy[len - 20] ^= 0xff; /* END section header */
	write_bytes(bad, copy, len);
	report_refuses(bad, "corrupt profile");

	report_refuses("/nonexistent/objscope.data", "No such file");
	free(buf);
	free(copy);
	free(good);
	free(bad);
}

/* Merging a good profile with a bad one fails as a whole, naming the bad file. */
Test(e2e_faults, report_merge_with_damaged_profile_fails)
{
	char *good = e2e_path(tmp, "good.data"), *bad = e2e_path(tmp, "bad.data");
	const char *argv[] = { E2E_OBJSCOPE, "report", good, bad, NULL };
	struct e2e_result res;
	size_t len;
	unsigned char *buf = valid_profile(good, &len);

	write_bytes(bad, buf, len / 3);
	cr_assert_eq(e2e_run(tmp, argv, NULL, &res), 0);
	cr_expect(!res.signaled);
	cr_expect_neq(res.status, 0, "report merged a truncated profile");
	cr_expect_eq(e2e_count_lines(res.err, res.err_len), 1, "stderr:\n%s", res.err);
	cr_expect(strstr(res.err, "bad.data") != NULL, "the error does not name the file: %s",
		  res.err);
	e2e_result_free(&res);
	free(buf);
	free(good);
	free(bad);
}
