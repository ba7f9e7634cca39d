/* security_target.c - a target that attacks the root objscope profiling
 * it through what objscope reads: files it names or writes (debug links,
 * perf maps), the attach socket, its own size (mappings, threads, a huge
 * perf map), and the environment of a setuid program. objscope must end
 * within its limit with a profile (or one error line), never block on a
 * kernel interface, never die of a signal a peer sends, and keep its
 * memory bounded whatever the target's size.
 *
 * Run from the repository root as root after `make all fixtures` and
 * `make build/java/AttachFixture.class`. Without root the suite skips;
 * where the kernel or a tool refuses a step (unshare, mount, setuid on a
 * nosuid file system) the test skips with the reason.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attacher/core/shm_host.h"
#include "runtimes/hotspot/jattach.h"
#include "symbolizer/perfmap.h"
#include "tests/e2e/helpers.h"

#define NOBODY 65534
#define NATIVE E2E_FIXTURE("attach_target")
#define JAVA_CLASS "build/java/AttachFixture.class"
#define LIMIT_MS 60000 /* a 3 s run, symbolization and slack on a loaded machine */

static char *tmp;
static pid_t kids[8];
static size_t nkids;
static char *planted[4]; /* outside tmp: removed in teardown */
static size_t nplanted;

static void setup(void)
{
	cr_assert(access(E2E_OBJSCOPE, X_OK) == 0 && access(NATIVE, X_OK) == 0,
		  "build/objscope or the fixtures are missing: run `make all fixtures` first");
	tmp = e2e_suite_setup();
	cr_assert_eq(chmod(tmp, 0755), 0);
}

static void teardown(void)
{
	for (size_t i = 0; i < nkids; i++) {
		int st;

		if (waitpid(kids[i], &st, WNOHANG) != 0)
			continue;
		kill(kids[i], SIGKILL);
		waitpid(kids[i], &st, 0);
	}
	nkids = 0;
	for (size_t i = 0; i < nplanted; i++) {
		unlink(planted[i]);
		free(planted[i]);
	}
	nplanted = 0;
	if (tmp)
		e2e_suite_teardown(&tmp);
}

TestSuite(security_target, .init = setup, .fini = teardown, .timeout = 240);

#define ST_SKIP(...)                                                  \
	do {                                                          \
		char skip_msg_[4096];                                 \
                                                                      \
		snprintf(skip_msg_, sizeof(skip_msg_), __VA_ARGS__);  \
		teardown();                                           \
		cr_skip_test("%s", skip_msg_);                        \
	} while (0)

static void need_root(void)
{
	if (geteuid() != 0)
		ST_SKIP("needs root: the attacks are on a root objscope");
}

static void track_kid(pid_t pid)
{
	cr_assert_lt(nkids, sizeof(kids) / sizeof(*kids));
	kids[nkids++] = pid;
}

/* Runs a shell line (the test's own set-up steps); its exit status. */
static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* objscope ended in time with exit 0 and a profile that reads back. */
static void expect_profile(const char *name, int st, const char *profile)
{
	char msg[512];
	json_object *report;

	cr_assert_neq(st, -1, "objscope (%s) did not end within its limit: %s", name,
		      e2e_slurp(tmp, name, "err"));
	cr_assert_eq(st, 0, "objscope (%s) exit %d: %s", name, st, e2e_slurp(tmp, name, "err"));
	report = e2e_report_json(tmp, profile, msg, sizeof(msg));
	cr_assert_not_null(report, "the profile does not read back: %s", msg);
	json_object_put(report);
}

/* A note of the profile mentions text (what was refused). */
static void expect_note(const char *profile, const char *text)
{
	char msg[512];
	json_object *report = e2e_report_json(tmp, profile, msg, sizeof(msg));

	cr_assert_not_null(report, "the profile does not read back: %s", msg);
	cr_expect_not_null(e2e_note(report, text), "no note of the profile mentions '%s'", text);
	json_object_put(report);
}

/* ---- debug links: a '.debug' link to /proc ------------------------------ */

/* A copy of attach_target in tmp/dl without a symbol table, whose
 * .gnu_debuglink names "kmsg", with tmp/dl/.debug -> /proc beside it: the
 * debug file gdb would look for is /proc/kmsg, a procfs "regular file"
 * whose read blocks (and drains the kernel log). objscope used to follow
 * the link and read /proc/kmsg to its end to check the CRC: record hung
 * after the program exited, attach -d was not honoured. */
static char *debuglink_program(void)
{
	char *dir = e2e_path(tmp, "dl"), *prog = e2e_path(dir, "prog");

	cr_assert_eq(mkdir(dir, 0755), 0);
	cr_assert_eq(sh("cp '%s' '%s' && strip --strip-all '%s' && : > '%s/kmsg' && "
			"cd '%s' && objcopy --add-gnu-debuglink=kmsg prog && rm kmsg",
			NATIVE, prog, prog, dir, dir), 0, "cannot make the program (strip, objcopy)");
	{
		char link[PATH_MAX];

		snprintf(link, sizeof(link), "%s/.debug", dir);
		cr_assert_eq(symlink("/proc", link), 0);
	}
	free(dir);
	return prog;
}

Test(security_target, record_debuglink_to_proc_kmsg)
{
	char *prog, *profile = e2e_path(tmp, "rec.data");
	const char *argv[] = { E2E_OBJSCOPE, "record", "-q", "-o", profile, "--", NULL, "2",
			       "steady", NULL };
	pid_t pid;

	need_root();
	prog = debuglink_program();
	argv[6] = prog;
	pid = e2e_spawn_logged(tmp, "rec", argv, NULL);
	track_kid(pid);
	expect_profile("rec", e2e_reap_within_rss(pid, LIMIT_MS, NULL), profile);
	free(prog);
	free(profile);
}

Test(security_target, attach_debuglink_to_proc_kmsg_honours_d)
{
	char *prog, *profile = e2e_path(tmp, "att.data"), spid[16];
	const char *targv[] = { NULL, "60", "steady", NULL };
	const char *argv[] = { E2E_OBJSCOPE, "attach", "-q", "-d", "3", "-o", profile, spid, NULL };
	pid_t target, pid;

	need_root();
	prog = debuglink_program();
	targv[0] = prog;
	target = e2e_spawn_logged(tmp, "t", targv, NULL);
	track_kid(target);
	cr_assert(e2e_wait_output(tmp, "t", target, "ready", 10000), "the target did not start");
	snprintf(spid, sizeof(spid), "%d", (int)target);
	pid = e2e_spawn_logged(tmp, "att", argv, NULL);
	track_kid(pid);
	expect_profile("att", e2e_reap_within_rss(pid, LIMIT_MS, NULL), profile);
	free(prog);
	free(profile);
}

/* ---- a perf map that is /proc/kmsg ------------------------------------------ */

/* A JVM in its own mount namespace bind-mounted /proc/kmsg on its
 * /tmp/perf-PID.map: a root-owned "regular file" (the owner check passes).
 * objscope read it and retried on EINTR: the read blocked, -d was not
 * honoured, SIGINT and SIGTERM were ignored, only SIGKILL ended it. Now the
 * map is refused (procfs), a note says so, and the run ends at -d. Then,
 * without -d, SIGTERM ends it with a profile. */
static pid_t start_jvm_kmsg_map(const char *name)
{
	char cp[PATH_MAX], script[PATH_MAX * 3], stop[PATH_MAX];
	const char *argv[] = { "/usr/bin/unshare", "--mount", "--propagation", "private", "--",
			       "/bin/sh", "-c", script, NULL };
	pid_t pid;

	if (access(JAVA_CLASS, R_OK) != 0 || access("/usr/bin/java", X_OK) != 0)
		ST_SKIP("needs java and " JAVA_CLASS " (make " JAVA_CLASS ")");
	if (access("/usr/bin/unshare", X_OK) != 0)
		ST_SKIP("needs unshare");
	cr_assert_not_null(realpath("build/java", cp));
	snprintf(stop, sizeof(stop), "%s/%s.stop", tmp, name);
	snprintf(script, sizeof(script),
		 "touch /tmp/perf-$$.map && mount --bind /proc/kmsg /tmp/perf-$$.map && "
		 "exec /usr/bin/java -cp '%s' AttachFixture 60 0 '%s'", cp, stop);
	pid = e2e_spawn_logged(tmp, name, argv, NULL);
	track_kid(pid);
	{
		char p[64];

		snprintf(p, sizeof(p), "/tmp/perf-%d.map", (int)pid);
		cr_assert_lt(nplanted, sizeof(planted) / sizeof(*planted));
		planted[nplanted++] = strdup(p);
	}
	if (!e2e_wait_output(tmp, name, pid, "ready", 30000)) {
		const char *err = e2e_slurp(tmp, name, "err");

		if (strstr(err, "unshare") || strstr(err, "mount"))
			ST_SKIP("cannot make the mount namespace: %s", err);
		cr_assert_fail("the JVM did not start: %s", err);
	}
	return pid;
}

Test(security_target, perf_map_is_proc_kmsg)
{
	char *profile = e2e_path(tmp, "att.data"), spid[16];
	const char *argv[] = { E2E_OBJSCOPE, "attach", "-q", "-d", "3", "-o", profile, spid, NULL };
	pid_t jvm, pid;
	int st;

	need_root();
	jvm = start_jvm_kmsg_map("jvm");
	snprintf(spid, sizeof(spid), "%d", (int)jvm);
	pid = e2e_spawn_logged(tmp, "att", argv, NULL);
	track_kid(pid);
	st = e2e_reap_within_rss(pid, LIMIT_MS, NULL);
	expect_profile("att", st, profile);
	snprintf(spid, sizeof(spid), "perf-%d.map", (int)jvm);
	expect_note(profile, spid);
	free(profile);
}

Test(security_target, sigterm_ends_attach_to_jvm_with_kmsg_map)
{
	char *profile = e2e_path(tmp, "att.data"), spid[16];
	const char *argv[] = { E2E_OBJSCOPE, "attach", "-q", "-o", profile, spid, NULL };
	pid_t jvm, pid;
	int st;

	need_root();
	jvm = start_jvm_kmsg_map("jvm");
	snprintf(spid, sizeof(spid), "%d", (int)jvm);
	pid = e2e_spawn_logged(tmp, "att", argv, NULL);
	track_kid(pid);
	/* the attach asks the JVM for its map within its first seconds; the
	 * SIGTERM comes once it was read (or refused) */
	sleep(8);
	cr_assert_eq(kill(pid, SIGTERM), 0, "objscope ended before the SIGTERM: %s",
		     e2e_slurp(tmp, "att", "err"));
	st = e2e_reap_within_rss(pid, 20000, NULL);
	expect_profile("att", st, profile);
	snprintf(spid, sizeof(spid), "perf-%d.map", (int)jvm);
	expect_note(profile, spid);
	free(profile);
}

/* ---- the attach socket's peer closes ---------------------------------------- */

/* The JVM's attach listener as a JVM in a user namespace behaves towards
 * root (whose uid it does not know): it accepts and closes at once. Here a
 * child of the test listens on /tmp/.java_pid<its pid> and does that; the
 * test process asks it jcmd after jcmd with SIGPIPE's default action.
 * Where the close comes before the request is sent the send fails with
 * EPIPE: write() raised SIGPIPE and killed the process (objscope attach
 * died with status 141, without a word or a profile); send(MSG_NOSIGNAL)
 * returns the error. Gathered until 3 requests failed so (or 20,000
 * tries: a machine where the client always wins the race skips). */
static void closing_listener(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int ls = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(ls, 64) != 0)
		_exit(2);
	for (;;) {
		int c = accept(ls, NULL, NULL);

		if (c >= 0)
			close(c);
	}
}

Test(security_target, jattach_peer_closes_no_sigpipe)
{
	char path[64], out[256], err[512];
	int broken = 0, tries, ready = 0;
	pid_t srv;

	need_root();
	signal(SIGPIPE, SIG_DFL);
	srv = fork();
	cr_assert_geq(srv, 0);
	if (srv == 0) {
		/* ends with the test, also when a SIGPIPE killed it */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		snprintf(path, sizeof(path), "/tmp/.java_pid%d", (int)getpid());
		closing_listener(path);
	}
	track_kid(srv);
	snprintf(path, sizeof(path), "/tmp/.java_pid%d", (int)srv);
	cr_assert_lt(nplanted, sizeof(planted) / sizeof(*planted));
	planted[nplanted++] = strdup(path);
	for (int i = 0; i < 500 && !ready; i++) {
		struct stat st;

		ready = stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
		if (!ready)
			usleep(10000);
	}
	cr_assert(ready, "the listener did not start");
	for (tries = 0; tries < 20000 && broken < 3; tries++) {
		err[0] = 0;
		int rc = os_jattach_jcmd(srv, "VM.version", 2000, out, sizeof(out), err,
					 sizeof(err));

		cr_assert_neq(rc, 0, "a listener that closes at once answered");
		if (strstr(err, strerror(EPIPE)) || strstr(err, strerror(ECONNRESET)))
			broken++;
	}
	e2e_diag("jattach: %d of %d requests met a closed peer, the process lived on", broken,
		 tries);
	if (broken < 3)
		ST_SKIP("the peer never closed before the request was sent in %d tries", tries);
}

/* ---- a huge perf map ------------------------------------------------------ */

/* A perf map of 512 MiB (OS_PERFMAP_MAX_BYTES, the most objscope reads)
 * written by the target: lines "1 1 a" (one start address, as the attack
 * that made root's attach grow to 6.99 GB and 50 s), and lines of 2^20
 * start addresses repeated (each compaction keeps half the entries: the
 * dearest input under the caps). Loaded in a child of the test: its peak
 * RSS over what it had before stays under 256 MiB (entries 48 MiB, qsort's
 * copy 48 MiB, names up to 128 MiB: perfmap.h). */
#if defined(__SANITIZE_ADDRESS__)
/* Under ASan the loader runs in this (sanitized) process: freed blocks sit
 * in ASan's quarantine (256 MiB by default) and every block carries
 * redzones, so the same parse holds up to the quarantine more. */
#define MAP_RSS_BOUND_KB ((256L + 256L) << 10)
#else
#define MAP_RSS_BOUND_KB (256L << 10)
#endif

static void write_map(const char *path, bool distinct)
{
	size_t chunk = 1 << 20, total = 0, len = 0;
	char *buf = malloc(chunk + 64);
	unsigned long k = 0;
	FILE *f = fopen(path, "w");

	cr_assert(buf && f);
	while (total < OS_PERFMAP_MAX_BYTES) {
		len = 0;
		while (len < chunk) {
			if (distinct)
				len += (size_t)sprintf(buf + len, "%lx 1 a\n", 0x1000 + (k++ & 0x7ffff));
			else
				len += (size_t)sprintf(buf + len, "1 1 a\n");
		}
		if (total + len > OS_PERFMAP_MAX_BYTES)
			len = OS_PERFMAP_MAX_BYTES - total;
		cr_assert_eq(fwrite(buf, 1, len, f), len);
		total += len;
	}
	cr_assert_eq(fclose(f), 0);
	free(buf);
}

static void load_bounded(const char *path, const char *what)
{
	struct rusage ru;
	int fd[2], st;
	long before_kb = 0;
	pid_t pid;

	cr_assert_eq(pipe(fd), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct os_perfmap *pm = NULL;
		struct rusage r0;
		int rc;

		getrusage(RUSAGE_SELF, &r0);
		rc = os_perfmap_load(path, &pm);
		close(fd[0]);
		if (write(fd[1], &r0.ru_maxrss, sizeof(r0.ru_maxrss)) < 0)
			_exit(3);
		_exit(rc == 0 || rc == -EFBIG ? 0 : 1);
	}
	close(fd[1]);
	cr_assert_eq(read(fd[0], &before_kb, sizeof(before_kb)), (ssize_t)sizeof(before_kb));
	close(fd[0]);
	cr_assert_eq(wait4(pid, &st, 0, &ru), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "loading %s failed (%d)", what, st);
	e2e_diag("perf map %s: peak RSS %ld MiB (%ld MiB before), %.1f s CPU", what,
		 ru.ru_maxrss >> 10, before_kb >> 10,
		 ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
			 (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
	cr_expect_lt(ru.ru_maxrss - before_kb, MAP_RSS_BOUND_KB,
		     "loading a 512 MiB perf map (%s) grew the process by %ld MiB", what,
		     (ru.ru_maxrss - before_kb) >> 10);
}

Test(security_target, perf_map_512mib_bounded_memory)
{
	char *map = e2e_path(tmp, "perf-flood.map");

	write_map(map, false);
	load_bounded(map, "of '1 1 a' lines");
	write_map(map, true);
	load_bounded(map, "of 2^19 start addresses repeated");
	unlink(map);
	free(map);
}

/* ---- a target of 60k mappings and 10k threads ----------------------------- */

/* many_maps with 10,000 threads (two mappings each) and a region split
 * into 40,000 mappings: ~60,000 mappings in all, under vm.max_map_count
 * (65,530 here). objscope's peak RSS stays under 512 MiB.
 *
 * record: per-CPU inherited events, whatever the thread count: it ends
 * with a profile.
 * attach: two events per thread and CPU (40,000 descriptors for 10,000
 * threads on 2 CPUs): as many threads as two thirds of the hard open-file
 * limit allow (at most 10,000; 3,333 here, where it is 20,000 and cannot
 * be raised), the rest of the 60,000 mappings split from the region. Where
 * the events still do not fit the attach is refused in one line. */
#define BIG E2E_FIXTURE("many_maps")
#define BIG_THREADS "10000"
#define BIG_SPLITS "40000"
#define BIG_RSS_BOUND_KB (512L << 10)

static int count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	int c, n = 0;

	if (!f)
		return -1;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

Test(security_target, record_target_with_60k_mappings_and_10k_threads)
{
	char *profile = e2e_path(tmp, "big.data");
	const char *argv[] = { E2E_OBJSCOPE, "record", "-q", "-o", profile, "--", BIG,
			       BIG_THREADS, BIG_SPLITS, "4", NULL };
	long rss_kb = 0;
	pid_t pid;

	need_root();
	cr_assert_eq(access(BIG, X_OK), 0, "run `make fixtures`");
	pid = e2e_spawn_logged(tmp, "rec", argv, NULL);
	track_kid(pid);
	expect_profile("rec", e2e_reap_within_rss(pid, 180000, &rss_kb), profile);
	cr_expect(strstr(e2e_slurp(tmp, "rec", "out"), "ready " BIG_THREADS),
		  "the target did not start its threads: %s", e2e_slurp(tmp, "rec", "out"));
	e2e_diag("objscope record: peak RSS %ld MiB", rss_kb >> 10);
	cr_expect_lt(rss_kb, BIG_RSS_BOUND_KB, "objscope grew to %ld MiB", rss_kb >> 10);
	free(profile);
}

Test(security_target, attach_target_with_60k_mappings_and_threads)
{
	char *profile = e2e_path(tmp, "big.data"), spid[16], maps[64], nthr[24], nspl[24],
	     ready[32];
	const char *targv[] = { BIG, nthr, nspl, "120", NULL };
	long ncpu = sysconf(_SC_NPROCESSORS_CONF), threads = 10000;
	struct rlimit rl;
	const char *argv[] = { E2E_OBJSCOPE, "attach", "-q", "-d", "2", "-o", profile, spid, NULL };
	const char *err;
	long rss_kb = 0;
	pid_t target, pid;
	int nmaps, st;

	need_root();
	cr_assert_eq(access(BIG, X_OK), 0, "run `make fixtures`");
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY &&
	    (long)(rl.rlim_max * 2 / 3) / (2 * (ncpu > 0 ? ncpu : 1)) < threads)
		threads = (long)(rl.rlim_max * 2 / 3) / (2 * (ncpu > 0 ? ncpu : 1));
	snprintf(nthr, sizeof(nthr), "%ld", threads);
	snprintf(nspl, sizeof(nspl), "%ld", 60000 - 2 * threads);
	snprintf(ready, sizeof(ready), "ready %ld", threads);
	target = e2e_spawn_logged(tmp, "t", targv, NULL);
	track_kid(target);
	cr_assert(e2e_wait_output(tmp, "t", target, ready, 60000),
		  "the target did not start its threads: %s", e2e_slurp(tmp, "t", "out"));
	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)target);
	nmaps = count_lines(maps);
	cr_assert_gt(nmaps, 55000, "the target made %d mappings only", nmaps);
	snprintf(spid, sizeof(spid), "%d", (int)target);
	pid = e2e_spawn_logged(tmp, "att", argv, NULL);
	track_kid(pid);
	st = e2e_reap_within_rss(pid, 180000, &rss_kb);
	err = e2e_slurp(tmp, "att", "err");
	e2e_diag("objscope attach to %ld threads, %d mappings: exit %d, peak RSS %ld MiB%s%s",
		 threads + 1, nmaps, st, rss_kb >> 10, st ? ": " : "", st ? err : "");
	cr_assert_neq(st, -1, "objscope did not end within its limit: %s", err);
	if (st != 0) {
		/* refused: in one line, nothing left behind */
		cr_expect(st < 128 && e2e_count_lines(err, strlen(err)) == 1 &&
				  strstr(err, "Too many open files"),
			  "refused (exit %d) otherwise than for the open-file limit: %s", st, err);
		cr_expect_neq(access(profile, F_OK), 0, "a refused attach left a profile");
	} else {
		expect_profile("att", st, profile);
	}
	cr_expect_lt(rss_kb, BIG_RSS_BOUND_KB, "objscope grew to %ld MiB", rss_kb >> 10);
	free(profile);
}

/* ---- OBJSCOPE_SHM in a setuid program ---------------------------------------- */

/* libobjscope.so loaded into a setuid-root program (a copy of python3, made
 * setuid in tmp, run as nobody, loads it with ctypes) whose invoker set
 * OBJSCOPE_SHM to a root-only rings file: the library must not map it
 * (secure_getenv: the variable is not honoured in a secure-execution
 * program); before, it opened the file read-write with root's rights and
 * counted itself in (the header's `processes` went to 1). */
Test(security_target, setuid_program_ignores_objscope_shm)
{
	struct os_shm_host h;
	char *py = e2e_path(tmp, "py"), lib[PATH_MAX], code[PATH_MAX + 128], env[128];
	const char *argv[] = { NULL, "-c", code, NULL };
	const char *envp[] = { env, NULL };
	struct stat st;
	pid_t pid;
	int status;

	need_root();
	if (access("/usr/bin/python3", X_OK) != 0)
		ST_SKIP("needs /usr/bin/python3");
	cr_assert_not_null(realpath("build/libobjscope.so", lib), "build/libobjscope.so missing");
	cr_assert_eq(sh("cp /usr/bin/python3 '%s' && chmod 4755 '%s'", py, py), 0);
	cr_assert_eq(stat(py, &st), 0);
	if (!(st.st_mode & S_ISUID))
		ST_SKIP("setuid bit not kept on %s", py);
	cr_assert_eq(os_shm_host_create(&h, 4, 1 << 16, 0, 0), 0);
	cr_assert_eq(chmod(h.path, 0600), 0);
	snprintf(env, sizeof(env), "OBJSCOPE_SHM=%s", h.path);
	snprintf(code, sizeof(code),
		 "import ctypes, os, sys; ctypes.CDLL('%s'); sys.exit(0 if os.geteuid() == 0 else 7)",
		 lib);
	argv[0] = py;
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		if (setgroups(0, NULL) != 0 || setgid(NOBODY) != 0 || setuid(NOBODY) != 0)
			_exit(120);
		execve(py, (char *const *)argv, (char *const *)envp);
		_exit(121);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 7)
		ST_SKIP("%s did not run setuid (a nosuid file system?)", py);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "the setuid program failed (status %#x)", status);
	cr_expect_eq(h.hdr->processes, 0,
		     "a setuid program mapped the root-only rings file OBJSCOPE_SHM named");
	os_shm_host_destroy(&h);
	free(py);
}
