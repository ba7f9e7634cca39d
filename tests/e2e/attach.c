/* attach.c - end-to-end tests of `objscope attach PID` on native targets
 * started without objscope (tests/fixtures/attach_target.c). Run from the
 * repository root after `make all fixtures`; ptrace and perf need root (or
 * kernel.yama.ptrace_scope 0 and kernel.perf_event_paranoid <= 1).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/e2e/helpers.h"

#define STACK_DEPTH 3
#define TARGET E2E_FIXTURE("attach_target")

extern char **environ;

static char *tmp;

static void setup(void)
{
	cr_assert(access(E2E_OBJSCOPE, X_OK) == 0 && access(TARGET, X_OK) == 0,
		  "build/objscope or %s is missing: run `make all fixtures` first", TARGET);
	tmp = e2e_suite_setup();
}

static void teardown(void)
{
	e2e_suite_teardown(&tmp);
}

/* Starts argv with stdout and stderr in tmp/NAME.out / NAME.err. */
static pid_t spawn_bg(const char *name, const char *const argv[])
{
	posix_spawn_file_actions_t fa;
	char *out = e2e_path(tmp, name), path[1024];
	pid_t pid = -1;

	posix_spawn_file_actions_init(&fa);
	snprintf(path, sizeof(path), "%s.out", out);
	posix_spawn_file_actions_addopen(&fa, 1, path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	snprintf(path, sizeof(path), "%s.err", out);
	posix_spawn_file_actions_addopen(&fa, 2, path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	cr_assert_eq(posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ), 0,
		     "cannot start %s", argv[0]);
	posix_spawn_file_actions_destroy(&fa);
	free(out);
	return pid;
}

/* Contents of tmp/NAME.EXT (static buffer). */
static const char *slurp(const char *name, const char *ext)
{
	static char buf[8192];
	char *base = e2e_path(tmp, name), path[1024];
	ssize_t n = 0;
	int fd;

	snprintf(path, sizeof(path), "%s.%s", base, ext);
	free(base);
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	buf[n > 0 ? n : 0] = 0;
	return buf;
}

/* Starts the fixture and waits until it says "ready". */
static pid_t start_target(const char *name, const char *seconds, const char *mode)
{
	const char *argv[] = { TARGET, seconds, mode, NULL };
	pid_t pid = spawn_bg(name, argv);

	for (int i = 0; i < 500; i++) {
		if (strstr(slurp(name, "out"), "ready"))
			return pid;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	cr_assert_fail("%s did not start: %s", TARGET, slurp(name, "err"));
	return -1;
}

static int wait_exit(pid_t pid)
{
	int st = 0;

	cr_assert_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int attach(const char *profile, const char *duration, pid_t pid, struct e2e_result *res)
{
	char spid[16];
	const char *argv[] = { E2E_OBJSCOPE, "attach", "-q", "-d", duration, "-o", profile,
			       spid, NULL };

	snprintf(spid, sizeof(spid), "%d", (int)pid);
	return e2e_run(tmp, argv, NULL, res);
}

static void assert_planted_first(const char *profile)
{
	char msg[512], buf[1024];
	json_object *report = e2e_report_json(tmp, profile, msg, sizeof(msg)), *objects, *top;

	cr_assert_not_null(report, "%s", msg);
	cr_assert_gt(e2e_get_int(e2e_get(report, "meta"), "samples_total"), 100,
		     "too few samples");
	objects = e2e_get(report, "objects");
	cr_assert(objects && json_object_array_length(objects) > 0, "no objects in the report");
	top = json_object_array_get_idx(objects, 0);
	cr_assert(e2e_stack_has(top, "planted_block", STACK_DEPTH),
		  "top object is not from planted_block: %s", e2e_stack_str(top, buf, sizeof(buf)));
	json_object_put(report);
}

static int count_dir(pid_t pid, const char *sub)
{
	char path[64];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, sub);
	d = opendir(path);
	cr_assert_not_null(d, "cannot list %s", path);
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

static int count_maps(pid_t pid)
{
	char path[64], line[512];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f))
		n++;
	fclose(f);
	return n;
}

struct counts {
	int threads, fds, maps;
};

static struct counts counts_of(pid_t pid)
{
	return (struct counts){ count_dir(pid, "task"), count_dir(pid, "fd"), count_maps(pid) };
}

TestSuite(e2e_attach, .init = setup, .fini = teardown, .timeout = 120);

/* Planted answer, seen by attaching for 3 s to a program started without
 * objscope; the program finishes with its correct output afterwards. */
Test(e2e_attach, planted_site_ranks_first)
{
	char *profile = e2e_path(tmp, "p.data");
	struct e2e_result res;
	pid_t pid = start_target("t", "6", NULL);

	cr_assert_eq(attach(profile, "3", pid, &res), 0);
	cr_assert_eq(res.status, 0, "attach exited %d: %s", res.status, res.err);
	e2e_result_free(&res);
	cr_assert_eq(wait_exit(pid), 0, "target failed after the attach: %s %s",
		     slurp("t", "out"), slurp("t", "err"));
	cr_assert(strstr(slurp("t", "out"), "\nok "), "target output: %s", slurp("t", "out"));
	assert_planted_first(profile);
	free(profile);
}

/* 20 attach/detach cycles: every one succeeds, the target runs on, and after
 * the first one its threads, fds and mappings no longer change (what the
 * first attach leaves: the libraries, one placeholder mapping, libunwind's
 * validation pipe). */
Test(e2e_attach, twenty_attaches_leave_nothing_growing)
{
	char *profile = e2e_path(tmp, "r.data");
	struct counts before, first = { 0, 0, 0 }, last;
	struct e2e_result res;
	pid_t pid = start_target("s", "60", "steady");

	usleep(300000); /* the heap reaches its steady size */
	before = counts_of(pid);
	for (int i = 0; i < 20; i++) {
		cr_assert_eq(attach(profile, "0.2", pid, &res), 0);
		cr_assert_eq(res.status, 0, "attach %d exited %d: %s", i + 1, res.status, res.err);
		e2e_result_free(&res);
		if (i == 0)
			first = counts_of(pid);
	}
	last = counts_of(pid);
	cr_expect_eq(kill(pid, 0), 0, "the target died");
	kill(pid, SIGKILL);
	wait_exit(pid);
	cr_expect_eq(last.threads, before.threads, "threads %d -> %d", before.threads, last.threads);
	cr_expect_eq(last.fds, first.fds, "fds grew after the first attach: %d -> %d", first.fds,
		     last.fds);
	cr_expect_leq(first.fds - before.fds, 2, "first attach left %d fds",
		      first.fds - before.fds);
	cr_expect_eq(last.maps, first.maps, "maps grew after the first attach: %d -> %d",
		     first.maps, last.maps);
	free(profile);
}

Test(e2e_attach, unknown_pid_is_refused)
{
	char *profile = e2e_path(tmp, "n.data");
	struct e2e_result res;
	pid_t pid = 4194303;

	while (kill(pid, 0) == 0 || errno != ESRCH)
		pid--;
	cr_assert_eq(attach(profile, "1", pid, &res), 0);
	cr_expect_neq(res.status, 0, "attach to a missing PID succeeded");
	cr_expect(strstr(res.err, "no process with PID"), "stderr: %s", res.err);
	cr_expect_eq(e2e_count_lines(res.err, res.err_len), 1, "more than one line: %s", res.err);
	cr_expect_neq(access(profile, F_OK), 0, "a profile was written");
	e2e_result_free(&res);
	free(profile);
}

/* The target is killed during the attach: what was collected is saved. */
Test(e2e_attach, target_killed_during_attach_saves_profile)
{
	char *profile = e2e_path(tmp, "k.data"), spid[16];
	pid_t pid = start_target("k", "30", NULL), att;
	struct timespec t0, t1;
	const char *argv[] = { E2E_OBJSCOPE, "attach", "-d", "20", "-o", profile, spid, NULL };
	int st;

	snprintf(spid, sizeof(spid), "%d", (int)pid);
	att = spawn_bg("att", argv);
	sleep(2);
	kill(pid, SIGKILL);
	wait_exit(pid);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	st = wait_exit(att);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cr_assert_eq(st, 0, "attach exited %d: %s", st, slurp("att", "err"));
	cr_expect_lt(t1.tv_sec - t0.tv_sec, 3, "attach took too long to notice the exit");
	cr_expect(strstr(slurp("att", "err"), "exited"), "stderr: %s", slurp("att", "err"));
	assert_planted_first(profile);
	free(profile);
}

/* A user who may not ptrace the target gets one line saying why. */
Test(e2e_attach, ptrace_refusal_is_explained)
{
	struct e2e_result res;
	char spid[16];
	const char *argv[] = { "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
			       E2E_OBJSCOPE, "attach", "-d", "1", "-o", "/dev/null", spid, NULL };
	pid_t pid;

	if (geteuid() != 0 || access("/usr/bin/setpriv", X_OK) != 0)
		cr_skip_test("needs root and setpriv to act as another user");
	pid = start_target("e", "5", NULL);
	snprintf(spid, sizeof(spid), "%d", (int)pid);
	cr_assert_eq(e2e_run(tmp, argv, NULL, &res), 0);
	cr_expect_neq(res.status, 0, "attach as nobody succeeded");
	cr_expect(strstr(res.err, "not allowed to ptrace"), "stderr: %s", res.err);
	cr_expect_eq(e2e_count_lines(res.err, res.err_len), 1, "more than one line: %s", res.err);
	e2e_result_free(&res);
	cr_expect_eq(wait_exit(pid), 0, "target harmed: %s", slurp("e", "out"));
}

/* A target in new PID and mount namespaces (as a container runtime makes
 * them), attached from the host. */
Test(e2e_attach, target_in_new_pid_and_mount_namespaces)
{
	char *profile = e2e_path(tmp, "c.data");
	const char *argv[] = { "/usr/bin/unshare", "--pid", "--mount", "--fork", "--mount-proc",
			       TARGET, "6", NULL };
	struct e2e_result res;
	pid_t wrapper, pid = 0;
	char line[256];
	FILE *f;

	if (geteuid() != 0 || access(argv[0], X_OK) != 0)
		cr_skip_test("needs root and unshare");
	wrapper = spawn_bg("c", argv);
	for (int i = 0; i < 500 && !strstr(slurp("c", "out"), "ready"); i++)
		usleep(10000);
	/* the fixture is unshare's child: find its host PID */
	snprintf(line, sizeof(line), "/proc/%d/task/%d/children", (int)wrapper, (int)wrapper);
	f = fopen(line, "r");
	cr_assert_not_null(f, "cannot read %s", line);
	cr_assert_eq(fscanf(f, "%d", &pid), 1, "unshare has no child");
	fclose(f);
	cr_assert_eq(attach(profile, "3", pid, &res), 0);
	cr_assert_eq(res.status, 0, "attach exited %d: %s", res.status, res.err);
	e2e_result_free(&res);
	cr_assert_eq(wait_exit(wrapper), 0, "target failed: %s", slurp("c", "err"));
	cr_assert(strstr(slurp("c", "out"), "\nok "), "target output: %s", slurp("c", "out"));
	assert_planted_first(profile);
	free(profile);
}
