/* faults.c - end-to-end fault tests: signals to objscope, objscope's death,
 * the target's death or crash, a full output disk, and damaged profiles
 * given to `objscope report`.
 *
 * The long-running target is build/fixtures/fault_sleeper: it writes its pid
 * to a ready file once it runs, so a test can disturb objscope or the target
 * at a known point; its output depends only on its arguments, so it is
 * compared with an undisturbed run.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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
	char *out = NULL, *err = NULL;
	pid_t pid;

	cr_assert(asprintf(&out, "%s/%s.out", tmp, name) > 0);
	cr_assert(asprintf(&err, "%s/%s.err", tmp, name) > 0);
	pid = fork();
	cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY);
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (in < 0 || o < 0 || e < 0 || dup2(in, 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(126);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	free(out);
	free(err);
	return pid;
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

/* The sleeper's undisturbed stdout. */
static char *reference_output(void)
{
	char *ready = e2e_path(tmp, "ref.ready"), *out;
	const char *argv[] = { E2E_FIXTURE("fault_sleeper"), ready, SLEEPER_SECS, "5", NULL };
	struct e2e_result res;

	cr_assert_eq(e2e_run(tmp, argv, NULL, &res), 0);
	cr_assert_eq(res.status, SLEEPER_STATUS, "fault_sleeper alone exited %d: %s", res.status,
		     res.err);
	out = strdup(res.out);
	cr_assert_not_null(out);
	e2e_result_free(&res);
	free(ready);
	return out;
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
	char *mnt = e2e_path(tmp, "mnt"), *fill, *profile, *ptmp, *err;
	const char *argv[] = { E2E_FIXTURE("exitcode"), "0", NULL };
	static char block[4096];
	struct e2e_result res;
	int fd;

	cr_assert_eq(mkdir(mnt, 0755), 0);
	if (mount("tmpfs", mnt, "tmpfs", 0, "size=64k") != 0) {
		int e = errno;

		free(mnt);
		cr_skip_test("cannot mount a tmpfs to fill (%s): needs root/CAP_SYS_ADMIN",
			     strerror(e));
	}
	fill = e2e_path(mnt, "fill");
	profile = e2e_path(mnt, "full.data");
	cr_assert(asprintf(&ptmp, "%s.tmp", profile) > 0);
	fd = open(fill, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	cr_assert_geq(fd, 0);
	while (write(fd, block, sizeof(block)) > 0)
		;
	close(fd);

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
	free(fill);
	free(profile);
	free(ptmp);
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
