/* attach.c - end-to-end tests of `objscope attach PID` on native targets
 * (tests/fixtures/attach_target.c) and on running JVMs
 * (tests/java/AttachFixture.java), all started without objscope. Run from
 * the repository root after `make all fixtures build/java/AttachFixture.class`;
 * ptrace and perf need root (or kernel.yama.ptrace_scope 0 and
 * kernel.perf_event_paranoid <= 1).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/e2e/helpers.h"
#include "tests/e2e/jdk.h"
#include "tests/e2e/stats.h"

#define STACK_DEPTH 3
#define TARGET E2E_FIXTURE("attach_target")

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

/* Starts argv with stdout and stderr in tmp/NAME.out / NAME.err (and, with
 * in_tmp, tmp as its working directory). */
static pid_t spawn_in(const char *name, const char *const argv[], bool in_tmp)
{
	return e2e_spawn_logged(tmp, name, argv, in_tmp ? tmp : NULL);
}

static pid_t spawn_bg(const char *name, const char *const argv[])
{
	return spawn_in(name, argv, false);
}

/* Contents of tmp/NAME.EXT (static buffer, "" when missing). */
static const char *slurp(const char *name, const char *ext)
{
	return e2e_slurp(tmp, name, ext);
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

/* objscope attach -d DURATION [-F HZ] -o PROFILE PID; hz NULL: the budget */
static int attach_at(const char *profile, const char *duration, const char *hz, pid_t pid,
		     struct e2e_result *res)
{
	char spid[16];
	const char *argv[] = { E2E_OBJSCOPE, "attach", "-q", "-d", duration, "-o", profile,
			       hz ? "-F" : spid, hz ? hz : NULL, spid, NULL };

	snprintf(spid, sizeof(spid), "%d", (int)pid);
	return e2e_run(tmp, argv, NULL, res);
}

static int attach(const char *profile, const char *duration, pid_t pid, struct e2e_result *res)
{
	return attach_at(profile, duration, NULL, pid, res);
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
	for (size_t i = 0; i < 3 && i < json_object_array_length(objects); i++)
		cr_log_info("attach: object %zu: %lld of %lld attributed samples: %s", i + 1,
			    (long long)e2e_get_int(json_object_array_get_idx(objects, i), "samples"),
			    (long long)e2e_get_int(e2e_get(report, "meta"), "samples_attributed"),
			    e2e_stack_str(json_object_array_get_idx(objects, i), buf, sizeof(buf)));
	/* Statistical assertion (tests/README.md): planted_block's contexts
	 * hold more than half of theirs and decoy_block's samples, true share
	 * >= 0.75 (each thread reads its planted block 10 times as often as its
	 * decoy; measured 0.84-0.87), n >= 51 for a false-failure chance
	 * <= 1e-4. */
	{
		int64_t planted = 0, decoy = 0;

		for (size_t i = 0; i < json_object_array_length(objects); i++) {
			json_object *o = json_object_array_get_idx(objects, i);

			if (e2e_stack_has(o, "planted_block", STACK_DEPTH))
				planted += e2e_get_int(o, "samples");
			else if (e2e_stack_has(o, "decoy_block", STACK_DEPTH))
				decoy += e2e_get_int(o, "samples");
		}
		cr_log_info("attach: planted_block %lld, decoy_block %lld samples", (long long)planted,
			    (long long)decoy);
		e2e_assert_majority(planted, planted + decoy, 0.75,
				    "planted_block's share of its and decoy_block's samples");
	}
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

/* Mappings of pid: all of them, or only file-backed ones (the JVM's heap
 * commits split anonymous ones). */
static int maps_of(pid_t pid, bool files_only)
{
	char path[64], line[1024];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f))
		n += !files_only || strchr(line, '/') != NULL;
	fclose(f);
	return n;
}

static int count_maps(pid_t pid)
{
	return maps_of(pid, false);
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

#define BEFORE_ROW "[heap blocks born before attach"

/* The report's row of memory born before the attach, or NULL. */
static json_object *before_row(json_object *report)
{
	json_object *objects = e2e_get(report, "objects");

	for (size_t i = 0; objects && i < json_object_array_length(objects); i++) {
		json_object *o = json_object_array_get_idx(objects, i);
		json_object *st = e2e_get(o, "alloc_stack");
		const char *f = st ? e2e_frame_text(st, 0) : NULL;

		if (f && strstr(f, BEFORE_ROW))
			return o;
	}
	return NULL;
}

/* Heap blocks born before the attach were never seen: their samples land
 * in a row of their own, with the size of the mappings holding them, in
 * every format, never in nothing. The fixture's old_block (8 MiB, its own
 * mapping, allocated before "ready") is read as long as each planted block
 * and ten times as long as each decoy block. */
Test(e2e_attach, heap_blocks_born_before_attach_have_a_row)
{
	char *profile = NULL, msg[512], name[32];
	struct e2e_result res;
	pid_t pid = start_target("o", "16", "old");
	/* Statistical assertion (tests/README.md): the row holds more than
	 * half of its and decoy_block's samples, true share >= 0.75 (old_block
	 * read ten times as long as a decoy block, and the decoy blocks of the
	 * round the attach began in count for the row); gathered over attaches
	 * of 2 s (at most 4: the cap) until there are
	 * e2e_binom_needed_majority(0.75) of them, false-failure chance <= 1e-4. */
	int64_t before = 0, decoy = 0, need = e2e_binom_needed_majority(0.75, E2E_FALSE_FAIL);

	for (int run = 0; run < 4 && before + decoy < need; run++) {
		json_object *report, *row, *objects;

		free(profile);
		snprintf(name, sizeof(name), "b%d.data", run);
		profile = e2e_path(tmp, name);
		cr_assert_eq(attach(profile, "2", pid, &res), 0);
		cr_assert_eq(res.status, 0, "attach exited %d: %s", res.status, res.err);
		e2e_result_free(&res);
		report = e2e_report_json(tmp, profile, msg, sizeof(msg));
		cr_assert_not_null(report, "%s", msg);
		row = before_row(report);
		cr_assert_not_null(row, "no %s...] row", BEFORE_ROW);
		cr_assert_geq(e2e_get_int(row, "bytes"), (int64_t)8 << 20,
			      "the row's bytes are not its mappings' sizes: %lld",
			      (long long)e2e_get_int(row, "bytes"));
		cr_assert(e2e_note(report, "born before the attach"), "no note on the row");
		before += e2e_get_int(row, "samples");
		objects = e2e_get(report, "objects");
		for (size_t i = 0; i < json_object_array_length(objects); i++) {
			json_object *o = json_object_array_get_idx(objects, i);

			if (e2e_stack_has(o, "decoy_block", STACK_DEPTH))
				decoy += e2e_get_int(o, "samples");
		}
		e2e_diag("attach %d: born before attach %lld, decoy_block %lld samples (need %lld)",
			 run + 1, (long long)before, (long long)decoy, (long long)need);
		json_object_put(report);
	}
	e2e_assert_majority(before, before + decoy, 0.75,
			    "the born-before-attach row's share of its and decoy_block's samples");
	/* the same row in the other formats */
	{
		static const char *const formats[] = { "text", "collapsed", "html" };

		for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
			const char *argv[] = { E2E_OBJSCOPE, "report", "--format", formats[i],
					       profile, NULL };

			cr_assert_eq(e2e_run(tmp, argv, NULL, &res), 0);
			cr_assert_eq(res.status, 0, "report --format %s: %s", formats[i], res.err);
			cr_assert(res.out && strstr(res.out, BEFORE_ROW),
				  "report --format %s has no %s...] row", formats[i], BEFORE_ROW);
			e2e_result_free(&res);
		}
	}
	cr_assert_eq(wait_exit(pid), 0, "target failed after the attaches: %s %s",
		     slurp("o", "out"), slurp("o", "err"));
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

/* A target that takes SIGSEGV all the time and handles it (as a JVM does):
 * an attach must neither mistake a fault of the target for a crash of the
 * injected call nor leave the target's SIGSEGV handler reset (which kills it
 * at its next fault). Each attach succeeds and the target finishes with its
 * own output. Before the fix, about 19 attaches in 20 failed here. */
static void attach_to_faulting(const char *mode)
{
	char *profile = e2e_path(tmp, "sg.data");
	const char *argv[] = { E2E_FIXTURE("segv_loop"), "8", mode, NULL };
	struct e2e_result res;
	pid_t pid = spawn_bg("sg", argv);

	for (int i = 0; i < 500 && !strstr(slurp("sg", "out"), "ready"); i++)
		usleep(10000);
	cr_assert(strstr(slurp("sg", "out"), "ready") != NULL, "segv_loop did not start");
	for (int i = 0; i < 5; i++) {
		cr_assert_eq(attach(profile, "0.2", pid, &res), 0);
		cr_expect_eq(res.status, 0, "attach %d exited %d: %s", i + 1, res.status, res.err);
		e2e_result_free(&res);
		cr_assert_eq(kill(pid, 0), 0, "the target died after attach %d", i + 1);
	}
	cr_expect_eq(wait_exit(pid), 0, "segv_loop failed: %s", slurp("sg", "err"));
	cr_expect_str_eq(slurp("sg", "out"), "ready\nhandled some faults ok\n");
	free(profile);
}

Test(e2e_attach, target_taking_sigsegv_all_the_time)
{
	attach_to_faulting("busy");
}

Test(e2e_attach, target_sleeping_in_its_sigsegv_handler)
{
	attach_to_faulting("sleepy");
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

/* The samples the last live status line in `err` counts ("... N samples
 * (R/s) ..."), 0 before the first. */
static long status_samples(const char *err)
{
	const char *last = NULL, *p = err;
	long n = 0;

	while ((p = strstr(p, " samples (")) != NULL)
		last = p++;
	if (!last)
		return 0;
	while (last > err && last[-1] >= '0' && last[-1] <= '9')
		last--;
	sscanf(last, "%ld", &n);
	return n;
}

/* The target is killed during the attach: what was collected is saved.
 * Killed once the attach's status line counts 1,000 samples (at most 15 s
 * into it), not after a fixed 2 s: a loaded machine had sampled 11
 * attributed samples by then, and decoy_block (4) outranked planted_block's
 * two contexts (2 + 2). */
Test(e2e_attach, target_killed_during_attach_saves_profile)
{
	char *profile = e2e_path(tmp, "k.data"), spid[16];
	pid_t pid = start_target("k", "30", NULL), att;
	struct timespec t0, t1;
	const char *argv[] = { E2E_OBJSCOPE, "attach", "--progress", "-d", "20", "-o", profile,
			       spid, NULL };
	long got = 0;
	int st;

	snprintf(spid, sizeof(spid), "%d", (int)pid);
	att = spawn_bg("att", argv);
	for (int i = 0; i < 1500 && (got = status_samples(slurp("att", "err"))) < 1000; i++)
		usleep(10000);
	cr_log_info("killed at %ld samples", got);
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

/* ---- running JVMs (tests/java/AttachFixture.java) ------------------------ */

#define JAVA_CLASS "build/java/AttachFixture.class"
#define JAVA_OK "ready\nok 16 1024\n"
#define PLANTED_BYTES (4u << 20) /* makeRandom's long[1 << 19] */

/* The java AttachFixture runs on: JDK 17's, or another (use_jdk). */
static const char *attach_java = "/usr/bin/java";

static bool have_java(void)
{
	return access(JAVA_CLASS, R_OK) == 0 && access(attach_java, X_OK) == 0;
}

/* Runs the rest of the test on JDK major, or skips it saying why. */
static void use_jdk(int major)
{
	static char bin[600];

	if (!e2e_find_jdk(major, bin, sizeof(bin)))
		cr_skip_test("no JDK %d found (set OBJSCOPE_JDK%d to a JDK's home, or install one "
			     "under /usr/lib/jvm)", major, major);
	attach_java = bin;
	e2e_diag("JDK %d: %s", major, bin);
}

/* Starts argv in tmp as `name` and waits for it to print "ready". */
static pid_t spawn_ready(const char *name, const char *const argv[])
{
	pid_t pid = spawn_in(name, argv, true);

	if (e2e_wait_output(tmp, name, pid, "ready", 30000))
		return pid;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	cr_assert_fail("the JVM %s did not start: %s", name, slurp(name, "err"));
	return -1;
}

/* Starts `java [flag] -cp build/java AttachFixture SECONDS [IDLE [STOP]]` in
 * tmp (hs_err files, trigger files land there) and waits for "ready". */
static pid_t start_jvm(const char *name, const char *flag, const char *seconds,
		       const char *idle, const char *stop)
{
	char cp[PATH_MAX];
	const char *argv[10];
	int n = 0;

	cr_assert_not_null(realpath("build/java", cp));
	argv[n++] = attach_java;
	if (flag)
		argv[n++] = flag;
	argv[n++] = "-cp";
	argv[n++] = cp;
	argv[n++] = "AttachFixture";
	argv[n++] = seconds;
	if (idle)
		argv[n++] = idle;
	if (idle && stop)
		argv[n++] = stop;
	argv[n] = NULL;
	return spawn_ready(name, argv);
}

static bool notes_have(json_object *report, const char *text)
{
	return e2e_note(report, text) != NULL;
}

/* A context of the planted site: long[] of 4 MiB seen allocated while
 * attached (not an object known only from a GC move). The site may show
 * as several contexts: its allocation path changes when the JIT recompiles
 * the loop (interpreter, C1, C2), and without -XX:+PreserveFramePointer
 * the path stops at the JIT frame. */
static bool is_planted(json_object *o)
{
	int64_t allocs = e2e_get_int(o, "allocations"), bytes = e2e_get_int(o, "bytes");

	return strcmp(json_object_get_string(e2e_get(o, "type")), "long[]") == 0 && allocs > 0 &&
	       bytes / allocs >= PLANTED_BYTES && bytes / allocs < 2 * PLANTED_BYTES &&
	       !e2e_stack_has(o, "allocated before attach", 4);
}

/* java_check's statistical assertion (tests/README.md): the planted site's
 * share of the attributed samples >= 0.5, true share >= 0.62 (3 s
 * attaches: 76/103, 31/45, 41/59, pooled 0.715 with a standard error of
 * 0.031), needs 232 attributed samples for a false-failure chance <= 1e-4.
 * A 3 s attach gives 45-103 here: the JVM (started with a stop file) is
 * attached to again, 3, 6, 12 then 12 s, the profiles merged, until they
 * are there. */
#define JAVA_ATTACHES 4
static const char *const java_attach_secs[JAVA_ATTACHES] = { "3", "6", "12", "12" };
#define JAVA_P_LOW 0.62

/* True when the attaches' profiles merged have the attributed samples
 * java_check's share needs. */
static bool java_enough(char *const profiles[], size_t n)
{
	char msg[512];
	json_object *r = e2e_report_json_files(tmp, (const char *const *)profiles, n, msg,
					       sizeof(msg));
	int64_t a;

	cr_assert_not_null(r, "%s", msg);
	a = e2e_get_int(e2e_get(r, "meta"), "samples_attributed");
	json_object_put(r);
	if (a < e2e_binom_needed(JAVA_P_LOW, 0.5, E2E_FALSE_FAIL))
		e2e_diag("%zu attach(es): %lld attributed samples: again, longer", n, (long long)a);
	return a >= e2e_binom_needed(JAVA_P_LOW, 0.5, E2E_FALSE_FAIL);
}

/* After the attaches (n profiles, merged): the JVM (waited for as `child`:
 * the JVM itself or the wrapper that started it) finishes with its correct
 * output and nothing on stderr, and the planted site (4 MiB long[] arrays
 * renewed all the time) takes most attributed samples. Returns the report
 * for further checks. */
static json_object *java_check(const char *name, pid_t child, char *const profiles[], size_t n)
{
	char msg[512], buf[2048];
	json_object *report, *meta, *objects, *top;
	int64_t attributed, planted = 0, allocs = 0;

	cr_assert_eq(wait_exit(child), 0, "JVM failed after the attach: %s %s", slurp(name, "out"),
		     slurp(name, "err"));
	cr_expect_str_eq(slurp(name, "out"), JAVA_OK, "JVM output changed");
	cr_expect_str_eq(slurp(name, "err"), "", "JVM wrote on stderr");
	report = e2e_report_json_files(tmp, (const char *const *)profiles, n, msg, sizeof(msg));
	cr_assert_not_null(report, "%s", msg);
	meta = e2e_get(report, "meta");
	attributed = e2e_get_int(meta, "samples_attributed");
	cr_assert_gt(e2e_get_int(meta, "samples_total"), 300, "too few samples");
	objects = e2e_get(report, "objects");
	cr_assert(objects && json_object_array_length(objects) > 0, "no objects in the report");
	top = json_object_array_get_idx(objects, 0);
	cr_expect(is_planted(top), "top object is not the 4 MiB arrays: %s %lld bytes in %lld "
		  "allocations (%s)", json_object_get_string(e2e_get(top, "type")),
		  (long long)e2e_get_int(top, "bytes"), (long long)e2e_get_int(top, "allocations"),
		  e2e_stack_str(top, buf, sizeof(buf)));
	for (size_t i = 0; i < json_object_array_length(objects); i++) {
		json_object *o = json_object_array_get_idx(objects, i);

		if (is_planted(o)) {
			planted += e2e_get_int(o, "samples");
			allocs += e2e_get_int(o, "allocations");
		}
	}
	cr_log_info("%s: %lld samples, %lld attributed, %lld on the planted arrays (%lld "
		    "allocations)", name, (long long)e2e_get_int(meta, "samples_total"),
		    (long long)attributed, (long long)planted, (long long)allocs);
	cr_expect_gt(allocs, 10, "only %lld planted allocations seen", (long long)allocs);
	e2e_assert_share_ge(planted, attributed, 0.5, JAVA_P_LOW,
			    "the planted site's share of the attributed samples");
	cr_expect(notes_have(report, "was attached while running: allocation and GC hooks "
			     "installed"), "no attach note");
	return report;
}

/* Attaches (3 s, then longer while java_check's counts are short) to
 * `java [flag] ... AttachFixture` started without any objscope flag, then
 * java_check. */
static json_object *java_planted(const char *name, const char *flag)
{
	char *profiles[JAVA_ATTACHES] = { 0 }, *stop = e2e_path(tmp, "j.stop");
	struct e2e_result res;
	json_object *report;
	size_t n = 0;
	pid_t pid;

	if (!have_java())
		cr_skip_test("needs java and " JAVA_CLASS " (make build/java/AttachFixture.class)");
	unlink(stop);
	pid = start_jvm(name, flag, "60", "0", stop);
	usleep(500000); /* into the steady loop */
	while (n < JAVA_ATTACHES) {
		char leaf[32];

		snprintf(leaf, sizeof(leaf), "j.%zu.data", n + 1);
		profiles[n] = e2e_path(tmp, leaf);
		cr_assert_eq(attach(profiles[n], java_attach_secs[n], pid, &res), 0);
		cr_assert_eq(res.status, 0, "attach exited %d: %s", res.status, res.err);
		e2e_result_free(&res);
		if (java_enough(profiles, ++n))
			break;
	}
	close(open(stop, O_CREAT | O_WRONLY, 0600));
	report = java_check(name, pid, profiles, n);
	for (size_t i = 0; i < n; i++)
		free(profiles[i]);
	free(stop);
	return report;
}

/* Without -XX:+PreserveFramePointer the Java part of call paths goes on
 * through JIT frames, walked by their code blobs' frame sizes
 * (runtimes/hotspot/hs_frames.h; before, it was cut at the first JIT frame): the
 * planted site is named with its caller and the report says the stacks are
 * complete. Objects born before the attach (makeSequential's, moved by
 * System.gc()) appear with their class. */
static void planted_site_ranks_first(const char *flag)
{
	json_object *report = java_planted("j", flag), *objects = e2e_get(report, "objects");
	json_object *top = json_object_array_get_idx(objects, 0);
	bool before = false;
	char buf[2048];

	cr_expect(notes_have(report, "complete (JIT frames walked by their code blobs' frame "
			     "sizes)"), "no note on complete Java stacks");
	/* compiled frames are named from debug info in attach mode too; the
	 * JVM runs without -XX:+DebugNonSafepoints, so interrupted pcs are
	 * their compiled method alone */
	cr_expect(notes_have(report, "frames in compiled Java methods named by their nmethods' "
			     "debug info") &&
			  notes_have(report, "without -XX:+DebugNonSafepoints"),
		  "no note on compiled frames named from debug info");
	cr_expect(e2e_stack_has(top, "AttachFixture.renewRandom", 2) ||
		  e2e_stack_has(top, "AttachFixture.makeRandom", 2),
		  "planted site not named: %s", e2e_stack_str(top, buf, sizeof(buf)));
	cr_expect(e2e_stack_has(top, "AttachFixture.main", 4), "no caller: %s",
		  e2e_stack_str(top, buf, sizeof(buf)));
	for (size_t i = 0; i < json_object_array_length(objects); i++) {
		json_object *o = json_object_array_get_idx(objects, i);

		if (e2e_stack_has(o, "allocated before attach", 2) &&
		    strcmp(json_object_get_string(e2e_get(o, "type")), "long[]") == 0)
			before = true;
	}
	cr_expect(before, "no long[] context allocated before the attach");
	json_object_put(report);
}

Test(e2e_attach, java_planted_site_ranks_first)
{
	planted_site_ranks_first(NULL);
}

/* The same on JDK 25, with compact object headers (the class in the mark
 * word: runtimes/hotspot/hs_layout.h). */
Test(e2e_attach, java_planted_site_ranks_first_jdk25)
{
	use_jdk(25);
	planted_site_ranks_first("-XX:+UseCompactObjectHeaders");
}

/* Small objects renewed all the time (tests/java/RenewFixture.java: 8 KiB
 * long[] arrays, far below the TLABs the JVM sizes itself) rank first in a
 * 3 s attach: the attach steers hybrid TLAB sampling in the running JVM
 * (runtimes/hotspot/target/hotspot.c hs_steer_tlabs). Before, the site had
 * 7 samples (est. 768) and ranked under "[allocated before attach (or not
 * sampled at allocation)] long[]" (1,047 samples). At a fixed 1 kHz:
 * with the budget (the default) a slow machine sampled too little to rank
 * (a Firecracker guest, a sample 38 us, under ASan: 52 samples on the site
 * in 3 s, 76 in 6 s after the warm-up). Gathers until the site has 100
 * samples: attaches of 3, 6, then 12 s. */
Test(e2e_attach, java_renewed_small_objects_rank_first)
{
	char cp[PATH_MAX], msg[512], buf[2048];
	const char *argv[] = { "/usr/bin/java", "-cp", cp, "RenewFixture", "60", NULL, NULL };
	char *profile = e2e_path(tmp, "rn.data"), *stop = e2e_path(tmp, "rn.stop");
	int64_t hot = 0;
	struct e2e_result res;
	json_object *report = NULL, *top = NULL;
	pid_t pid;

	if (access("build/java/RenewFixture.class", R_OK) != 0)
		cr_skip_test("needs build/java/RenewFixture.class");
	cr_assert_not_null(realpath("build/java", cp));
	argv[5] = stop;
	pid = spawn_ready("rn", argv);
	for (int run = 0; run < 3 && hot < 100; run++) {
		static const char *const secs[] = { "3", "6", "12" };

		if (run)
			e2e_diag("renewHot: %lld samples in a %s s attach: again, longer",
				 (long long)hot, secs[run - 1]);
		cr_assert_eq(attach_at(profile, secs[run], "1000", pid, &res), 0);
		cr_assert_eq(res.status, 0, "attach exited %d: %s", res.status, res.err);
		e2e_result_free(&res);
		if (report)
			json_object_put(report);
		report = e2e_report_json(tmp, profile, msg, sizeof(msg));
		cr_assert_not_null(report, "%s", msg);
		top = json_object_array_get_idx(e2e_get(report, "objects"), 0);
		hot = top && e2e_stack_has(top, "RenewFixture.renewHot", 2) ?
			      e2e_get_int(top, "samples") : 0;
	}
	close(open(stop, O_CREAT | O_WRONLY, 0600));
	cr_assert_eq(wait_exit(pid), 0, "JVM failed after the attach: %s", slurp("rn", "err"));
	cr_expect_str_eq(slurp("rn", "out"), "ready\nok 2048\n", "JVM output changed");
	cr_expect(top && e2e_stack_has(top, "RenewFixture.renewHot", 2) &&
			  e2e_stack_has(top, "RenewFixture.main", 3),
		  "renewHot is not first: %s", top ? e2e_stack_str(top, buf, sizeof(buf)) : "-");
	cr_expect_geq(hot, 100, "renewHot has %lld samples", (long long)hot);
	cr_expect(notes_have(report, "TLABs steered in the running JVM"), "no note on steering");
	json_object_put(report);
	free(profile);
	free(stop);
}

/* With -XX:+PreserveFramePointer (the user's own flag) the Java allocation
 * path is complete and JIT frames are named from the perf map the JVM
 * wrote on request (Compiler.perfmap); nothing is left in /tmp. */
Test(e2e_attach, java_complete_stacks_with_preserve_frame_pointer)
{
	json_object *report = java_planted("f", "-XX:+PreserveFramePointer");
	json_object *top = json_object_array_get_idx(e2e_get(report, "objects"), 0);
	json_object *pids = e2e_get(e2e_get(report, "meta"), "pids");
	char buf[2048], path[64];

	cr_expect(e2e_stack_has(top, "AttachFixture.renewRandom", 2) ||
		  e2e_stack_has(top, "AttachFixture.makeRandom", 2),
		  "planted site not named: %s", e2e_stack_str(top, buf, sizeof(buf)));
	cr_expect(e2e_stack_has(top, "AttachFixture.main", 4), "no caller: %s",
		  e2e_stack_str(top, buf, sizeof(buf)));
	cr_expect(notes_have(report, "complete (the JVM runs with -XX:+PreserveFramePointer)"),
		  "no note on complete stacks");
	cr_expect(notes_have(report, "Compiler.perfmap"), "no perf map from the JVM");
	snprintf(path, sizeof(path), "/tmp/perf-%d.map",
		 json_object_get_int(json_object_array_get_idx(pids, 0)));
	cr_expect(access(path, F_OK) != 0, "%s was left behind", path);
	json_object_put(report);
}

/* Threads of a JVM other than those it starts and stops by itself (JIT
 * compiler threads) or starts on the first attach request, like after any
 * jcmd (the Attach Listener). */
static int jvm_threads(pid_t pid)
{
	static const char *const dynamic[] = { "C1 CompilerThre", "C2 CompilerThre",
					       "Attach Listener" };
	char path[320], name[32];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	cr_assert_not_null(d);
	while ((de = readdir(d))) {
		bool dyn = false;
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/comm", (int)pid, de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		name[0] = 0;
		if (!fgets(name, sizeof(name), f))
			name[0] = 0;
		fclose(f);
		for (size_t i = 0; i < sizeof(dynamic) / sizeof(*dynamic); i++)
			dyn |= strncmp(name, dynamic[i], strlen(dynamic[i])) == 0;
		n += !dyn;
	}
	closedir(d);
	return n;
}

static int file_maps(pid_t pid)
{
	return maps_of(pid, true);
}

/* 20 attach/detach cycles on one JVM under load: no crash, correct output
 * at the end, and after the first cycle the threads, fds and file mappings
 * stay as they are (the first one leaves the libraries, libunwind's pipe
 * and the JVM's own attach listener socket). */
Test(e2e_attach, java_twenty_attaches_leave_nothing_growing, .timeout = 300)
{
	char *profile = e2e_path(tmp, "r.data"), *stop = e2e_path(tmp, "stop");
	int th0, th1 = 0, th2, fd1 = 0, fd2, fm1 = 0, fm2, fd0;
	struct e2e_result res;
	char spid[16];
	pid_t pid;
	FILE *f;

	if (!have_java())
		cr_skip_test("needs java and " JAVA_CLASS);
	pid = start_jvm("r", NULL, "240", "0", stop);
	usleep(1000000); /* GC and compiler threads started */
	th0 = jvm_threads(pid);
	fd0 = count_dir(pid, "fd");
	snprintf(spid, sizeof(spid), "%d", (int)pid);
	for (int i = 0; i < 20; i++) {
		/* default (DWARF) access paths: this loop once crashed the
		 * collector's unwinder (a wrapping bounds check in
		 * attacher/core/unwind.c cb_memory_read) */
		const char *argv[] = { E2E_OBJSCOPE, "attach", "-q", "-d", "0.2", "-o", profile,
				       spid, NULL };

		cr_assert_eq(e2e_run(tmp, argv, NULL, &res), 0);
		cr_assert_eq(res.status, 0, "attach %d exited %d: %s", i + 1, res.status, res.err);
		e2e_result_free(&res);
		cr_assert_eq(kill(pid, 0), 0, "the JVM died at attach %d: %s", i + 1,
			     slurp("r", "out"));
		if (i == 0) {
			th1 = jvm_threads(pid);
			fd1 = count_dir(pid, "fd");
			fm1 = file_maps(pid);
		}
	}
	th2 = jvm_threads(pid);
	fd2 = count_dir(pid, "fd");
	fm2 = file_maps(pid);
	f = fopen(stop, "w");
	cr_assert_not_null(f);
	fclose(f);
	cr_assert_eq(wait_exit(pid), 0, "JVM failed: %s %s", slurp("r", "out"), slurp("r", "err"));
	cr_expect_str_eq(slurp("r", "out"), JAVA_OK, "JVM output changed");
	cr_expect_eq(th1, th0, "threads %d -> %d after the first attach", th0, th1);
	cr_expect_eq(th2, th0, "threads %d -> %d after 20 attaches", th0, th2);
	cr_expect_eq(fd2, fd1, "fds grew after the first attach: %d -> %d", fd1, fd2);
	cr_expect_leq(fd1 - fd0, 3, "the first attach left %d fds", fd1 - fd0);
	cr_expect_eq(fm2, fm1, "file mappings grew after the first attach: %d -> %d", fm1, fm2);
	free(stop);
	free(profile);
}

/* A JVM in new PID and mount namespaces (as a container runtime makes
 * them), attached from a sidecar: a process that shares its PID namespace
 * (nsenter -p) and has its own mount namespace with a /proc of that PID
 * namespace, and knows the JVM by its namespace PID. The library is copied
 * into the JVM's /tmp, the attach socket and perf map are the JVM's own. */
Test(e2e_attach, java_sidecar_in_shared_pid_namespace)
{
	char cp[PATH_MAX], obj[PATH_MAX], line[256], spid[16], sns[16];
	char *profiles[JAVA_ATTACHES] = { 0 }, *stop = e2e_path(tmp, "s.stop");
	const char *argv[] = { "/usr/bin/unshare", "--pid", "--mount", "--fork", "--mount-proc",
			       "/usr/bin/java", "-cp", cp, "AttachFixture", "60", "0", stop, NULL };
	const char *side[] = { "/usr/bin/nsenter", "-t", spid, "-p", "--", "/usr/bin/unshare",
			       "--mount", "--mount-proc", "--", obj, "attach", "-q", "-d", "3",
			       "-o", NULL, sns, NULL };
	size_t n = 0;
	struct e2e_result res;
	json_object *report;
	pid_t wrapper, pid = 0, ns = 0;
	FILE *f;

	if (!have_java())
		cr_skip_test("needs java and " JAVA_CLASS);
	if (geteuid() != 0 || access(argv[0], X_OK) != 0 || access(side[0], X_OK) != 0)
		cr_skip_test("needs root, unshare and nsenter");
	cr_assert_not_null(realpath("build/java", cp));
	cr_assert_not_null(realpath(E2E_OBJSCOPE, obj));
	unlink(stop);
	wrapper = spawn_in("s", argv, true);
	for (int i = 0; i < 3000 && !strstr(slurp("s", "out"), "ready"); i++)
		usleep(10000);
	cr_assert(strstr(slurp("s", "out"), "ready"), "JVM did not start: %s", slurp("s", "err"));
	snprintf(line, sizeof(line), "/proc/%d/task/%d/children", (int)wrapper, (int)wrapper);
	f = fopen(line, "r");
	cr_assert_not_null(f, "cannot read %s", line);
	cr_assert_eq(fscanf(f, "%d", &pid), 1, "unshare has no child");
	fclose(f);
	snprintf(line, sizeof(line), "/proc/%d/status", (int)pid);
	f = fopen(line, "r");
	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "NSpid:", 6) == 0)
			for (char *p = line + 6, *end;; p = end) {
				long v = strtol(p, &end, 10);

				if (end == p)
					break;
				ns = (pid_t)v;
			}
	fclose(f);
	cr_assert(ns > 0 && ns != pid, "the JVM is not in its own PID namespace (%d)", (int)ns);
	snprintf(spid, sizeof(spid), "%d", (int)pid);
	snprintf(sns, sizeof(sns), "%d", (int)ns);
	usleep(500000);
	/* attached to again, longer, while java_check's counts are short */
	while (n < JAVA_ATTACHES) {
		char leaf[32];

		snprintf(leaf, sizeof(leaf), "s.%zu.data", n + 1);
		profiles[n] = e2e_path(tmp, leaf);
		side[13] = java_attach_secs[n];
		side[15] = profiles[n];
		cr_assert_eq(e2e_run(tmp, side, NULL, &res), 0);
		cr_assert_eq(res.status, 0, "sidecar attach exited %d: %s", res.status, res.err);
		e2e_result_free(&res);
		if (java_enough(profiles, ++n))
			break;
	}
	close(open(stop, O_CREAT | O_WRONLY, 0600));
	report = java_check("s", wrapper, profiles, n);
	json_object_put(report);
	for (size_t i = 0; i < n; i++)
		free(profiles[i]);
	free(stop);
}

/* ---- objects born before the attach (tests/java/PreAttachFixture.java) ---- */

#define PRE_CLASS "build/java/PreAttachFixture.class"
#define PRE_OK "ready\nok 8 64 40000\n"
#define PRE_LARGE (8 * 131072 + 16) /* long[1 << 17] with its header */
#define PRE_MEDIUM (8 * 4096 + 16)  /* long[1 << 12] */
#define PRE_STATE (8 * 1 + 16)	    /* main's long[] state = { seed }, read by every read() */

/* Sizes of before-attach long[] contexts: every object found is one of the
 * fixture's arrays, read from its header (length and element size): up to
 * 8 large, up to 64 medium, and the one-element state array main() made
 * before "ready" (a sample on it is rare, but it is found like the rest). */
static bool pre_sizes_ok(int64_t allocs, int64_t bytes)
{
	for (int64_t ns = 0; ns <= 1 && ns <= allocs; ns++)
		for (int64_t nl = 0; nl <= 8 && nl <= allocs - ns; nl++) {
			int64_t nm = allocs - ns - nl;

			if (nm <= 64 && ns * PRE_STATE + nl * PRE_LARGE + nm * PRE_MEDIUM == bytes)
				return true;
		}
	return false;
}

/* A JVM that built its data before the attach and only reads it while
 * attached, with a heap large enough that no collection runs: no
 * allocation event and no GC move shows those objects, so they are found
 * by reading the header below sampled Java-heap addresses. Most Java-heap
 * samples go to before-attach contexts with the right classes and exact
 * sizes. */
Test(e2e_attach, java_objects_born_before_attach_found)
{
	char cp[PATH_MAX], msg[512];
	char *profile = e2e_path(tmp, "p.data");
	const char *argv[] = { "/usr/bin/java", "-Xms512m", "-Xmx512m", "-cp", cp,
			       "PreAttachFixture", "6", NULL };
	int64_t heap, before = 0, longs = 0, nodes = 0;
	struct e2e_result res;
	json_object *report, *meta, *objects;
	pid_t pid;

	if (access(PRE_CLASS, R_OK) != 0 || access("/usr/bin/java", X_OK) != 0)
		cr_skip_test("needs java and " PRE_CLASS " (make " PRE_CLASS ")");
	cr_assert_not_null(realpath("build/java", cp));
	pid = spawn_in("p", argv, true);
	for (int i = 0; i < 3000 && !strstr(slurp("p", "out"), "ready"); i++)
		usleep(10000);
	cr_assert(strstr(slurp("p", "out"), "ready"), "JVM did not start: %s", slurp("p", "err"));
	usleep(300000);
	cr_assert_eq(attach(profile, "3", pid, &res), 0);
	cr_assert_eq(res.status, 0, "attach exited %d: %s", res.status, res.err);
	e2e_result_free(&res);
	cr_assert_eq(wait_exit(pid), 0, "JVM failed: %s %s", slurp("p", "out"), slurp("p", "err"));
	cr_expect_str_eq(slurp("p", "out"), PRE_OK, "JVM output changed");
	cr_expect_str_eq(slurp("p", "err"), "", "JVM wrote on stderr");
	report = e2e_report_json(tmp, profile, msg, sizeof(msg));
	cr_assert_not_null(report, "%s", msg);
	meta = e2e_get(report, "meta");
	cr_assert_eq(e2e_get_int(meta, "gc_count"), 0, "a collection ran during the attach");
	heap = e2e_get_int(meta, "samples_java_heap");
	cr_assert_gt(heap, 200, "too few Java-heap samples (%lld)", (long long)heap);
	objects = e2e_get(report, "objects");
	cr_assert_not_null(objects);
	for (size_t i = 0; i < json_object_array_length(objects); i++) {
		json_object *o = json_object_array_get_idx(objects, i);
		const char *type = json_object_get_string(e2e_get(o, "type"));
		int64_t s = e2e_get_int(o, "samples"), n = e2e_get_int(o, "allocations");
		int64_t b = e2e_get_int(o, "bytes");

		if (!e2e_stack_has(o, "allocated before attach", 2))
			continue;
		before += s;
		if (strcmp(type, "long[]") == 0) {
			longs += s;
			cr_expect(pre_sizes_ok(n, b), "long[] found with sizes that are none of the "
				  "fixture's: %lld objects, %lld bytes", (long long)n, (long long)b);
		} else if (strcmp(type, "PreAttachFixture$Node") == 0) {
			nodes += s;
			cr_expect(n > 0 && b % n == 0 && b / n >= 32 && b / n <= 48,
				  "Node found with sizes %lld bytes in %lld objects", (long long)b,
				  (long long)n);
		}
	}
	cr_log_info("before the attach: %lld of %lld Java-heap samples (long[] %lld, Node %lld)",
		    (long long)before, (long long)heap, (long long)longs, (long long)nodes);
	/* Statistical assertion (tests/README.md): the before-attach contexts'
	 * share of the Java-heap samples >= 0.5, true share >= 0.95 (the
	 * fixture reads only what it made before the attach; measured 506/507,
	 * 517/518), n >= 12 for a false-failure chance <= 1e-4 */
	e2e_assert_share_ge(before, heap, 0.5, 0.95,
			    "the before-attach contexts' share of the Java-heap samples");
	cr_expect_gt(longs, 0, "no sample on a before-attach long[]");
	cr_expect_gt(nodes, 0, "no sample on a before-attach PreAttachFixture$Node");
	cr_expect(notes_have(report, "found by reading the object header"),
		  "no note on objects found at sampled addresses");
	json_object_put(report);
	free(profile);
}
