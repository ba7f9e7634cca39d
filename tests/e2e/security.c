/* security.c - attacks on a root `objscope attach` (and `record`) by the
 * target's unprivileged user. objscope runs as root; the target
 * runs as nobody (uid 65534) and plants symlinks, FIFOs, fake sockets and
 * hostile shared memory where objscope looks. Each test asserts that no
 * file outside objscope's own changes owner, mode or content (the victims
 * are root-owned files made by the test in its own scratch directory, never
 * system files), and that objscope either works (exit 0, a profile that
 * reads back) or refuses in one line (non-zero exit, one error line, no
 * profile).
 *
 * Run from the repository root as root after `make all fixtures` and
 * `make build/java/AttachFixture.class`. Without root the suite skips.
 * Where fs.protected_symlinks is 1 the kernel itself refuses to follow the
 * symlinks planted in /tmp and /dev/shm: those attacks then fail on the
 * kernel, and the tests still pass for the right outcome.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/e2e/helpers.h"

#define NOBODY 65534    /* the attacker: the target's user */
#define OTHER 12345     /* a third user */
#define ATTACH_LIMIT_MS 40000 /* a 2 s attach, the JVM's perf map (up to 15 s) and slack */
#define NATIVE_LIMIT_MS 20000 /* a 2 s attach to a native target, and slack */
#define JAVA_CLASS "build/java/AttachFixture.class"
#define NATIVE E2E_FIXTURE("attach_target")
#define SCRIBBLE E2E_FIXTURE("sec_scribble")

static char *tmp;

/* What the test started and planted outside tmp: killed and removed in
 * teardown, also after a failed assertion. */
static pid_t kids[16];
static size_t nkids;
static char *planted[16];
static size_t nplanted;

static void setup(void)
{
	cr_assert(access(E2E_OBJSCOPE, X_OK) == 0 && access(NATIVE, X_OK) == 0 &&
		  access(SCRIBBLE, X_OK) == 0, "build/objscope or the fixtures are missing: run "
		  "`make all fixtures` first");
	tmp = e2e_suite_setup();
	/* nobody must reach its working directories below tmp */
	cr_assert_eq(chmod(tmp, 0755), 0);
}

static void teardown(void)
{
	for (size_t i = 0; i < nkids; i++) {
		int st;

		if (waitpid(kids[i], &st, WNOHANG) != 0)
			continue;
		kill(kids[i], SIGTERM); /* a JVM removes its hsperfdata file */
		for (int k = 0; k < 300 && waitpid(kids[i], &st, WNOHANG) == 0; k++)
			usleep(10000);
		if (kill(kids[i], SIGKILL) == 0)
			waitpid(kids[i], &st, 0);
	}
	nkids = 0;
	for (size_t i = 0; i < nplanted; i++) {
		unlink(planted[i]); /* never follows: removes the link itself */
		free(planted[i]);
	}
	nplanted = 0;
	e2e_suite_teardown(&tmp);
}

TestSuite(security, .init = setup, .fini = teardown, .timeout = 120);

/* cr_skip_test ends the test without its .fini: clean up first (teardown
 * may then run twice; the second time finds nothing to do). The message is
 * formatted before, while the logs it may quote still exist. */
#define SEC_SKIP(...)                                                 \
	do {                                                          \
		char skip_msg_[8192];                                 \
                                                                      \
		snprintf(skip_msg_, sizeof(skip_msg_), __VA_ARGS__);  \
		teardown();                                           \
		cr_skip_test("%s", skip_msg_);                        \
	} while (0)

static void need_root(void)
{
	if (geteuid() != 0)
		SEC_SKIP("needs root: the attacks run as uid %d against a root objscope",
			 NOBODY);
}

static void need_java(void)
{
	need_root();
	if (access(JAVA_CLASS, R_OK) != 0 || access("/usr/bin/java", X_OK) != 0)
		SEC_SKIP("needs java and " JAVA_CLASS " (make " JAVA_CLASS ")");
}

static void track_kid(pid_t pid)
{
	cr_assert_lt(nkids, sizeof(kids) / sizeof(*kids));
	kids[nkids++] = pid;
}

/* A path outside tmp that teardown unlinks (it never follows a link). */
static const char *track_path(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *track_path(const char *fmt, ...)
{
	va_list ap;
	char *p = NULL;

	va_start(ap, fmt);
	cr_assert_geq(vasprintf(&p, fmt, ap), 0);
	va_end(ap);
	cr_assert_lt(nplanted, sizeof(planted) / sizeof(*planted));
	planted[nplanted++] = p;
	return p;
}

/* In a child about to act as uid: no supplementary groups, gid = uid. */
static void drop_to(uid_t uid)
{
	if (setgroups(0, NULL) != 0 || setgid((gid_t)uid) != 0 || setuid(uid) != 0)
		_exit(125);
}

enum plant_kind { PLANT_SYMLINK, PLANT_DIR, PLANT_FIFO, PLANT_FILE, PLANT_SPARSE };

/* Makes path as uid (a symlink to arg, a directory, a FIFO, a file
 * holding arg, or a sparse file of arg bytes), with mode. Fails the test
 * when uid cannot. */
static void plant(uid_t uid, enum plant_kind kind, const char *path, const char *arg, mode_t mode)
{
	pid_t pid = fork();
	int st = 0;

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int rc = -1, fd;

		drop_to(uid);
		umask(0);
		switch (kind) {
		case PLANT_SYMLINK:
			rc = symlink(arg, path);
			break;
		case PLANT_DIR:
			rc = mkdir(path, mode);
			break;
		case PLANT_FIFO:
			rc = mkfifo(path, mode);
			break;
		case PLANT_FILE:
			fd = open(path, O_WRONLY | O_CREAT | O_EXCL, mode);
			rc = fd >= 0 && write(fd, arg, strlen(arg)) == (ssize_t)strlen(arg)
				     ? 0 : -1;
			break;
		case PLANT_SPARSE:
			fd = open(path, O_WRONLY | O_CREAT | O_EXCL, mode);
			rc = fd >= 0 ? ftruncate(fd, (off_t)strtoll(arg, NULL, 10)) : -1;
			break;
		}
		_exit(rc == 0 ? 0 : errno ? errno & 0x7f : EIO);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "uid %d could not make %s: %s",
		  (int)uid, path, WIFEXITED(st) ? strerror(WEXITSTATUS(st)) : "killed");
}

/* Starts argv (argv[0] looked up in PATH) with stdin from /dev/null and
 * stdout and stderr in tmp/NAME.out and tmp/NAME.err, in directory cwd
 * (NULL: ours), as uid (0: as we are). With gate >= 0 it waits for one
 * byte (or EOF) on it before exec: its PID is known before it runs. */
static pid_t spawn_as(const char *name, const char *const argv[], const char *cwd, uid_t uid,
		      int gate)
{
	char out[PATH_MAX], err[PATH_MAX];
	pid_t pid;

	snprintf(out, sizeof(out), "%s/%s.out", tmp, name);
	snprintf(err, sizeof(err), "%s/%s.err", tmp, name);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY);
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		char c;

		if (in < 0 || o < 0 || e < 0 || dup2(in, 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(126);
		if (cwd && chdir(cwd) != 0)
			_exit(126);
		if (uid)
			drop_to(uid);
		if (gate >= 0)
			while (read(gate, &c, 1) < 0 && errno == EINTR)
				;
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	track_kid(pid);
	return pid;
}

/* Contents of tmp/NAME.EXT (static buffer, "" when missing). */
static const char *slurp(const char *name, const char *ext)
{
	return e2e_slurp(tmp, name, ext);
}

/* Waits up to ms for tmp/NAME.out to contain what; fails the test when pid
 * ends or the time is up. */
static void wait_output(const char *name, pid_t pid, const char *what, int ms)
{
	for (int waited = 0; waited < ms; waited += 10) {
		if (strstr(slurp(name, "out"), what))
			return;
		if (waitpid(pid, NULL, WNOHANG) == pid)
			cr_assert_fail("%s ended before saying '%s': %s %s", name, what,
				       slurp(name, "out"), slurp(name, "err"));
		usleep(10000);
	}
	cr_assert_fail("%s did not say '%s' within %d ms: %s", name, what, ms, slurp(name, "err"));
}

/* Waits up to 10 s for tmp/NAME.out to say "ready" from a target started
 * through unshare (pid: the wrapper). Skips the test when the wrapper
 * ended on a namespace or mount refusal (the kernel or the machine does
 * not allow it: what says so is unshare's or mount's own message). */
static void wait_wrapped_ready(const char *name, pid_t pid, const char *what)
{
	for (int i = 0; i < 1000 && !strstr(slurp(name, "out"), "ready"); i++) {
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			const char *err = slurp(name, "err");

			if (strstr(err, "unshare") || strstr(err, "mount"))
				SEC_SKIP("cannot %s: %s", what, err);
			cr_assert_fail("the target ended before it was ready: %s", err);
		}
		usleep(10000);
	}
	cr_assert(strstr(slurp(name, "out"), "ready"), "the target did not start: %s",
		  slurp(name, "err"));
}

static int reap_within(pid_t pid, int ms)
{
	return e2e_reap_within_rss(pid, ms, NULL);
}

/* A working directory of the attacker's: tmp/NAME, owned by nobody. */
static char *nobody_dir(const char *name)
{
	char *d = e2e_path(tmp, name);

	cr_assert_eq(mkdir(d, 0755), 0);
	cr_assert_eq(chown(d, NOBODY, NOBODY), 0);
	return d;
}

/* A root-owned file of mode 0600 at path holding content. */
static void root_file(const char *path, const char *content)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);

	cr_assert_geq(fd, 0, "cannot create %s: %s", path, strerror(errno));
	cr_assert_eq(write(fd, content, strlen(content)), (ssize_t)strlen(content));
	close(fd);
}

/* tmp/NAME, a root-owned file of mode 0600 holding content: what an attack
 * aims at. */
static char *victim_file(const char *name, const char *content)
{
	char *p = e2e_path(tmp, name);

	root_file(p, content);
	return p;
}

/* tmp/NAME, a root-owned directory of mode `mode` holding one file, "keep". */
static char *victim_dir(const char *name, mode_t mode)
{
	char *d = e2e_path(tmp, name), *f;

	cr_assert_eq(mkdir(d, mode), 0);
	cr_assert_eq(chmod(d, mode), 0);
	f = e2e_path(d, "keep");
	root_file(f, "kept\n");
	free(f);
	return d;
}

/* What a victim looks like: type, owner, mode, and its content (a file's
 * bytes, a directory's sorted entries, a link's target). */
struct fsnap {
	bool exists;
	struct stat st;
	char data[8192];
	size_t len;
};

static void snap(const char *path, struct fsnap *s)
{
	memset(s, 0, sizeof(*s));
	if (lstat(path, &s->st) != 0)
		return;
	s->exists = true;
	if (S_ISREG(s->st.st_mode)) {
		int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
		ssize_t n = fd >= 0 ? read(fd, s->data, sizeof(s->data)) : -1;

		s->len = n > 0 ? (size_t)n : 0;
		if (fd >= 0)
			close(fd);
	} else if (S_ISDIR(s->st.st_mode)) {
		struct dirent **names = NULL;
		int n = scandir(path, &names, NULL, alphasort);

		for (int i = 0; i < n; i++) {
			int w = snprintf(s->data + s->len, sizeof(s->data) - s->len, "%s\n",
					 names[i]->d_name);

			if (w > 0 && (size_t)w < sizeof(s->data) - s->len)
				s->len += (size_t)w;
			free(names[i]);
		}
		free(names);
	} else if (S_ISLNK(s->st.st_mode)) {
		ssize_t n = readlink(path, s->data, sizeof(s->data));

		s->len = n > 0 ? (size_t)n : 0;
	}
}

/* The victim at path is as it was in *before. */
static void expect_unchanged(const char *path, const struct fsnap *before)
{
	struct fsnap now;

	snap(path, &now);
	cr_expect(now.exists, "%s was removed", path);
	if (!now.exists)
		return;
	cr_expect_eq(now.st.st_uid, before->st.st_uid, "%s changed owner: uid %d -> %d", path,
		     (int)before->st.st_uid, (int)now.st.st_uid);
	cr_expect_eq(now.st.st_gid, before->st.st_gid, "%s changed group: gid %d -> %d", path,
		     (int)before->st.st_gid, (int)now.st.st_gid);
	cr_expect_eq(now.st.st_mode, before->st.st_mode, "%s changed mode: %o -> %o", path,
		     (unsigned)before->st.st_mode, (unsigned)now.st.st_mode);
	cr_expect(now.len == before->len && memcmp(now.data, before->data, now.len) == 0,
		  "%s changed content: '%.*s' -> '%.*s'", path,
		  (int)(before->len < 300 ? before->len : 300), before->data,
		  (int)(now.len < 300 ? now.len : 300), now.data);
}

/* objscope (run as tmp/NAME) either worked or refused in one line. */
static void expect_clean_outcome(const char *name, int status, const char *profile)
{
	const char *err = slurp(name, "err");
	char msg[512];

	cr_expect_neq(status, -1, "objscope did not end within its time limit: %s", err);
	if (status == 0) {
		json_object *report = e2e_report_json(tmp, profile, msg, sizeof(msg));

		cr_expect_not_null(report, "exit 0, but the profile does not read back: %s", msg);
		json_object_put(report);
		return;
	}
	if (status < 0)
		return;
	cr_expect_lt(status, 128, "objscope was killed by signal %d: %s", status - 128, err);
	cr_expect_eq(e2e_count_lines(err, strlen(err)), 1,
		     "refused (exit %d), but not in one line: %s", status, err);
	cr_expect(strncmp(err, "objscope: ", 10) == 0 && strncmp(err, "objscope: warning", 17) != 0,
		  "refused (exit %d) without an error line: %s", status, err);
	cr_expect_neq(access(profile, F_OK), 0, "a refused attach left a profile");
}

/* `objscope attach -q -d SECONDS -o tmp/NAME.data PID` as root, started
 * behind gate (see spawn_as). */
static pid_t start_attach(const char *name, const char *seconds, pid_t target, int gate,
			  char **profile)
{
	static char spid[16];
	char data[PATH_MAX];
	const char *argv[] = { E2E_OBJSCOPE, "attach", "-q", "-d", seconds, "-o", data, spid,
			       NULL };

	snprintf(spid, sizeof(spid), "%d", (int)target);
	snprintf(data, sizeof(data), "%s/%s.data", tmp, name);
	*profile = strdup(data);
	return spawn_as(name, argv, NULL, 0, gate);
}

/* Attaches for 2 s and waits for objscope to end (or kills it after
 * limit_ms); its exit status, -1 when it had to be killed. */
static int attach_within(const char *name, pid_t target, char **profile, int limit_ms)
{
	return reap_within(start_attach(name, "2", target, -1, profile), limit_ms);
}

static int attach_bounded(const char *name, pid_t target, char **profile)
{
	return attach_within(name, target, profile, ATTACH_LIMIT_MS);
}

/* ---- targets ------------------------------------------------------------ */

/* Shell steps of a target wrapper (`sh -c SCRIPT EXE ...`): fd 3 keeps the
 * target's executable $0 reachable (/proc/self/fd/3) after /tmp is covered,
 * should the checkout lie below /tmp; then a tmpfs of nobody's on /tmp. */
#define KEEP_EXE "exec 3<\"$0\" && "
#define PRIVATE_TMP "mount -t tmpfs -o uid=65534,gid=65534,mode=0755 sec-tmp /tmp && "

/* `java [flag] -cp build/java AttachFixture 60 0 DIR/stop` as nobody in
 * its own directory dir; waits for "ready". */
static pid_t start_jvm(const char *name, const char *dir, const char *flag)
{
	char cp[PATH_MAX], stop[PATH_MAX];
	const char *argv[10];
	int n = 0;
	pid_t pid;

	cr_assert_not_null(realpath("build/java", cp));
	snprintf(stop, sizeof(stop), "%s/stop", dir);
	argv[n++] = "/usr/bin/java";
	if (flag)
		argv[n++] = flag;
	argv[n++] = "-cp";
	argv[n++] = cp;
	argv[n++] = "AttachFixture";
	argv[n++] = "60";
	argv[n++] = "0";
	argv[n++] = stop;
	argv[n] = NULL;
	pid = spawn_as(name, argv, dir, NOBODY, -1);
	wait_output(name, pid, "ready", 30000);
	return pid;
}

/* attach_target as nobody in dir; waits for "ready". */
static pid_t start_native(const char *name, const char *dir)
{
	char exe[PATH_MAX];
	const char *argv[] = { exe, "30", "steady", NULL };
	pid_t pid;

	cr_assert_not_null(realpath(NATIVE, exe));
	pid = spawn_as(name, argv, dir, NOBODY, -1);
	wait_output(name, pid, "ready", 10000);
	return pid;
}

/* The first child of process pid (a wrapper's target), waited for. */
static pid_t child_of(pid_t pid)
{
	char path[96];
	int child = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	for (int i = 0; i < 500 && child <= 0; i++) {
		FILE *f = fopen(path, "r");

		if (f) {
			if (fscanf(f, "%d", &child) != 1)
				child = 0;
			fclose(f);
		}
		if (child <= 0)
			usleep(10000);
	}
	cr_assert_gt(child, 0, "process %d started no child", (int)pid);
	return (pid_t)child;
}

/* 1 when `objscope report --format json profile` mentions text. */
static bool report_mentions(const char *profile, const char *text)
{
	const char *argv[] = { E2E_OBJSCOPE, "report", "--format", "json", profile, NULL };
	struct e2e_result res;
	bool found;

	cr_assert_eq(e2e_run(tmp, argv, NULL, &res), 0);
	found = (res.out && strstr(res.out, text)) || (res.err && strstr(res.err, text));
	e2e_result_free(&res);
	return found;
}

/* With exit 0: a note of the profile contains text (what was refused). */
static void expect_note(int status, const char *profile, const char *text)
{
	char msg[512];
	json_object *report;

	if (status != 0)
		return;
	report = e2e_report_json(tmp, profile, msg, sizeof(msg));
	cr_expect_not_null(e2e_note(report, text), "no note of the profile mentions '%s'", text);
	json_object_put(report);
}

/* ---- the same targets, not attacking -------------------------------------- */

/* Without an attack, the targets of this suite (a JVM and a native program
 * of nobody's, a root objscope) attach cleanly: exit 0, a profile with
 * samples, JIT names from the perf map the JVM wrote on request. What the
 * attacks below change is theirs. */
Test(security, baseline_without_attack)
{
	char *dir, *profile, msg[512];
	json_object *report;
	long rss_kb = 0;
	pid_t pid;
	int st;

	need_java();
	dir = nobody_dir("w");
	pid = start_jvm("jvm", dir, NULL);
	st = e2e_reap_within_rss(start_attach("att", "2", pid, -1, &profile), ATTACH_LIMIT_MS, &rss_kb);
	cr_log_info("baseline JVM attach: peak %ld MiB", rss_kb >> 10);
	cr_assert_eq(st, 0, "attach to nobody's JVM exited %d: %s", st, slurp("att", "err"));
	report = e2e_report_json(tmp, profile, msg, sizeof(msg));
	cr_assert_not_null(report, "%s", msg);
	cr_expect_gt(e2e_get_int(e2e_get(report, "meta"), "samples_total"), 100, "too few samples");
	cr_expect_not_null(e2e_note(report, "Compiler.perfmap"), "no perf map from the JVM");
	json_object_put(report);
	free(profile);
	pid = start_native("t", dir);
	st = attach_bounded("natt", pid, &profile);
	cr_assert_eq(st, 0, "attach to nobody's program exited %d: %s", st, slurp("natt", "err"));
	free(profile);
	free(dir);
}

/* ---- the JVM's attach trigger -------------------------------------------- */

/* objscope starts a JVM's attach listener by creating .attach_pid<PID> in
 * its working directory. There the JVM's user planted a symlink to a
 * root-owned file: that file stays root's, mode 0600, same content (before
 * the fix it was fchown'ed to the JVM's user: any file of the system could
 * be taken over). */
Test(security, trigger_symlink_in_cwd)
{
	char *dir, *victim, *profile, trig[PATH_MAX];
	struct fsnap before;
	pid_t jvm;
	int st;

	need_java();
	dir = nobody_dir("w");
	victim = victim_file("victim", "root's file, trigger in cwd\n");
	jvm = start_jvm("jvm", dir, NULL);
	snprintf(trig, sizeof(trig), "%s/.attach_pid%d", dir, (int)jvm);
	plant(NOBODY, PLANT_SYMLINK, trig, victim, 0);
	snap(victim, &before);
	st = attach_bounded("att", jvm, &profile);
	expect_unchanged(victim, &before);
	expect_clean_outcome("att", st, profile);
	cr_expect_eq(kill(jvm, 0), 0, "the JVM died");
	free(profile);
	free(victim);
	free(dir);
}

/* The same in /tmp, where objscope (and the JVM) look when the working
 * directory has no room for the trigger: the JVM's user made a directory
 * of that name in its working directory. */
Test(security, trigger_symlink_in_tmp)
{
	char *dir, *victim, *profile, trig[PATH_MAX];
	const char *link;
	struct fsnap before;
	pid_t jvm;
	int st;

	need_java();
	dir = nobody_dir("w");
	victim = victim_file("victim", "root's file, trigger in /tmp\n");
	jvm = start_jvm("jvm", dir, NULL);
	snprintf(trig, sizeof(trig), "%s/.attach_pid%d", dir, (int)jvm);
	plant(NOBODY, PLANT_DIR, trig, NULL, 0755);
	link = track_path("/tmp/.attach_pid%d", (int)jvm);
	plant(NOBODY, PLANT_SYMLINK, link, victim, 0);
	snap(victim, &before);
	st = attach_bounded("att", jvm, &profile);
	expect_unchanged(victim, &before);
	expect_clean_outcome("att", st, profile);
	cr_expect_eq(kill(jvm, 0), 0, "the JVM died");
	free(profile);
	free(victim);
	free(dir);
}

/* ---- the JVM's attach socket and perf map ---------------------------------- */

/* A Unix socket at path, bound by uid OTHER, that answers "0\n" to any
 * request and reports "got N: BYTES" for each on the returned pipe. */
static int fake_attach_socket(const char *path)
{
	int p[2], s;
	char buf[64] = "";
	struct pollfd pfd;
	pid_t pid;

	cr_assert_eq(pipe(p), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };

		close(p[0]);
		drop_to(OTHER);
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
		s = socket(AF_UNIX, SOCK_STREAM, 0);
		if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(s, 8) != 0)
			_exit(1);
		if (write(p[1], "listening\n", 10) != 10)
			_exit(1);
		for (;;) {
			char req[512], line[600];
			struct pollfd c = { accept(s, NULL, NULL), POLLIN, 0 };
			ssize_t n = 0;

			if (c.fd < 0)
				continue;
			if (poll(&c, 1, 2000) == 1)
				n = read(c.fd, req, sizeof(req) - 1);
			for (ssize_t i = 0; i < n; i++)
				if (req[i] < ' ' || req[i] > '~')
					req[i] = '|';
			/* a connection closed unused (a peer check) is no request */
			if (n > 0) {
				req[n] = 0;
				snprintf(line, sizeof(line), "got %zd: %s\n", n, req);
				if (write(p[1], line, strlen(line)) < 0 ||
				    write(c.fd, "0\n", 2) < 0)
					_exit(1);
			}
			close(c.fd);
		}
	}
	track_kid(pid);
	close(p[1]);
	pfd = (struct pollfd){ p[0], POLLIN, 0 };
	cr_assert(poll(&pfd, 1, 10000) == 1 && read(p[0], buf, sizeof(buf) - 1) > 0 &&
		  strstr(buf, "listening"), "the fake attach socket did not start");
	return p[0];
}

/* Another user (uid 12345) bound /tmp/.java_pid<PID> before objscope asks
 * the JVM (nobody's) for its perf map: objscope must not talk to it (its
 * owner is not the JVM's user); the JVM is profiled all the same, without
 * JIT names, and a note of the profile names the socket. */
Test(security, fake_attach_socket_of_another_user)
{
	char *dir, *profile, got[4096] = "";
	const char *sock;
	struct pollfd pfd;
	size_t n = 0;
	pid_t jvm;
	int st, rd;

	need_java();
	dir = nobody_dir("w");
	jvm = start_jvm("jvm", dir, NULL);
	sock = track_path("/tmp/.java_pid%d", (int)jvm);
	rd = fake_attach_socket(sock);
	st = attach_bounded("att", jvm, &profile);
	pfd = (struct pollfd){ rd, POLLIN, 0 };
	while (n < sizeof(got) - 1 && poll(&pfd, 1, 100) == 1) {
		ssize_t r = read(rd, got + n, sizeof(got) - 1 - n);

		if (r <= 0)
			break;
		n += (size_t)r;
	}
	got[n] = 0;
	close(rd);
	cr_expect(strstr(got, "got") == NULL, "objscope sent a request to uid %d's socket %s: %s",
		  OTHER, sock, got);
	expect_clean_outcome("att", st, profile);
	expect_note(st, profile, ".java_pid");
	free(profile);
	free(dir);
}

/* The JVM's user made /tmp/perf-<PID>.map a FIFO that the JVM cannot open
 * (mode 0): the JVM writes no map, and objscope, root, would block on the
 * FIFO forever; it must end within its limit, and say in a note of the
 * profile that the map was not used. */
Test(security, perf_map_fifo_does_not_hang)
{
	char *dir, *profile;
	const char *fifo;
	pid_t jvm;
	int st;

	need_java();
	dir = nobody_dir("w");
	jvm = start_jvm("jvm", dir, NULL);
	fifo = track_path("/tmp/perf-%d.map", (int)jvm);
	plant(NOBODY, PLANT_FIFO, fifo, NULL, 0);
	st = attach_bounded("att", jvm, &profile);
	expect_clean_outcome("att", st, profile);
	expect_note(st, profile, strrchr(fifo, '/') + 1);
	free(profile);
	free(dir);
}

/* The JVM's user made /tmp/perf-<PID>.map a symlink to a root-only file
 * written as a perf map: the JVM (nobody) cannot write it, objscope must
 * not read it as root (its symbol name would show in the profile) nor
 * change it; a note of the profile says the map was not used. */
Test(security, perf_map_symlink_not_read)
{
	char *dir, *victim, *profile, secret[64], content[128];
	const char *link;
	struct fsnap before;
	pid_t jvm;
	int st;

	need_java();
	dir = nobody_dir("w");
	jvm = start_jvm("jvm", dir, "-XX:+PreserveFramePointer");
	snprintf(secret, sizeof(secret), "ROOT_ONLY_%d_%ld", (int)jvm, (long)time(NULL));
	/* one symbol covering every address: any JIT or interpreter pc gets it */
	snprintf(content, sizeof(content), "0 7fffffffffff %s\n", secret);
	victim = victim_file("victim", content);
	link = track_path("/tmp/perf-%d.map", (int)jvm);
	plant(NOBODY, PLANT_SYMLINK, link, victim, 0);
	snap(victim, &before);
	st = attach_bounded("att", jvm, &profile);
	expect_unchanged(victim, &before);
	expect_clean_outcome("att", st, profile);
	expect_note(st, profile, strrchr(link, '/') + 1);
	if (st == 0)
		cr_expect(!report_mentions(profile, secret), "the root-only file %s was read into "
			  "the profile (%s)", victim, secret);
	free(profile);
	free(victim);
	free(dir);
}

/* The JVM's user left at /tmp/perf-<PID>.map a file of its own that the
 * JVM cannot rewrite (mode 0400): 1 GiB without a line end (sparse).
 * objscope reads perf maps with size and line caps: it ends within its
 * limit and its peak memory stays far below the file's size (a 2 s attach
 * to this JVM peaks near 20 MiB). */
Test(security, perf_map_endless_line)
{
	char *dir, *profile;
	const char *map;
	long rss_kb = 0;
	pid_t jvm;
	int st;

	need_java();
	dir = nobody_dir("w");
	jvm = start_jvm("jvm", dir, NULL);
	map = track_path("/tmp/perf-%d.map", (int)jvm);
	plant(NOBODY, PLANT_SPARSE, map, "1073741824", 0400);
	st = e2e_reap_within_rss(start_attach("att", "2", jvm, -1, &profile), ATTACH_LIMIT_MS, &rss_kb);
	expect_clean_outcome("att", st, profile);
	cr_expect_lt(rss_kb, 256L << 10, "objscope grew to %ld MiB reading a 1 GiB line",
		     rss_kb >> 10);
	free(profile);
	free(dir);
}

/* ---- the target's root: library copy and ring files ------------------------- */

static bool have_tools(void)
{
	return access("/usr/bin/unshare", X_OK) == 0 && access("/usr/bin/setpriv", X_OK) == 0;
}

/* A target in its own mount namespace (as a container's), with a private
 * tmpfs of nobody's on /tmp, runs as nobody. Inside its root the attacker
 * plants absolute symlinks where objscope puts the library copy
 * (/tmp/objscope-<uid>-<mtime>) and the rings (/dev/shm and /tmp,
 * objscope-<collector>-<pid>.rings), pointing at a root-owned directory and
 * file of the host: objscope, root, resolved them against the host's root
 * (the directory was chown'ed to nobody and the library copied into it).
 * Both stay as they were; the attach works or refuses in one line. */
Test(security, mount_namespace_symlinks)
{
	char *dir, *vdir, *vfile, *profile, exe[PATH_MAX], lib[PATH_MAX], path[PATH_MAX];
	char ours[64], theirs[64];
	const char *argv[] = { "/usr/bin/unshare", "--mount", "--propagation", "private", "--",
			       "/bin/sh", "-c", KEEP_EXE PRIVATE_TMP
			       "exec /usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups "
			       "/proc/self/fd/3 30 steady", exe, NULL };
	struct fsnap before_dir, before_file;
	struct stat st_lib;
	int gate[2], st;
	pid_t pid, att;

	need_root();
	if (!have_tools())
		SEC_SKIP("needs unshare and setpriv");
	dir = nobody_dir("w");
	vdir = victim_dir("vdir", 0700);
	vfile = victim_file("vfile", "root's file, ring name\n");
	cr_assert_not_null(realpath(NATIVE, exe));
	cr_assert_not_null(realpath("build/libobjscope.so", lib));
	cr_assert_eq(stat(lib, &st_lib), 0);
	pid = spawn_as("t", argv, dir, 0, -1);
	wait_wrapped_ready("t", pid, "give a target its own mount namespace and /tmp");
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	cr_assert(readlink("/proc/self/ns/mnt", ours, sizeof(ours)) > 0 &&
		  readlink(path, theirs, sizeof(theirs)) > 0 && strcmp(ours, theirs) != 0,
		  "the target is not in its own mount namespace");

	snprintf(path, sizeof(path), "/proc/%d/root/tmp/objscope-%u-%lx", (int)pid, NOBODY,
		 (unsigned long)st_lib.st_mtime);
	plant(NOBODY, PLANT_SYMLINK, path, vdir, 0);
	cr_assert_eq(pipe2(gate, O_CLOEXEC), 0);
	att = start_attach("att", "1", pid, gate[0], &profile);
	close(gate[0]);
	/* /dev/shm is the host's (the mount namespace copied it) */
	plant(NOBODY, PLANT_SYMLINK,
	      track_path("/dev/shm/objscope-%d-%d.rings", (int)att, (int)pid), vfile, 0);
	snprintf(path, sizeof(path), "/proc/%d/root/tmp/objscope-%d-%d.rings", (int)pid, (int)att,
		 (int)pid);
	plant(NOBODY, PLANT_SYMLINK, path, vfile, 0);
	snap(vdir, &before_dir);
	snap(vfile, &before_file);
	cr_assert_eq(write(gate[1], "g", 1), 1);
	close(gate[1]);
	st = reap_within(att, NATIVE_LIMIT_MS);
	expect_unchanged(vdir, &before_dir);
	expect_unchanged(vfile, &before_file);
	expect_clean_outcome("att", st, profile);
	free(profile);
	free(vfile);
	free(vdir);
	free(dir);
}

/* Files with the rings' name exist before the attach: in /dev/shm a file
 * of another user (uid 12345), in /tmp a symlink of the target's user to a
 * root-owned file. Neither is removed, followed or changed; the attach
 * works (with another place or name) or refuses in one line. */
Test(security, precreated_ring_files)
{
	char *dir, *vfile, *profile;
	const char *other, *link;
	struct fsnap before_other, before_file;
	int gate[2], st;
	pid_t pid, att;

	need_root();
	dir = nobody_dir("w");
	vfile = victim_file("vfile", "root's file, ring name in /tmp\n");
	pid = start_native("t", dir);
	cr_assert_eq(pipe2(gate, O_CLOEXEC), 0);
	att = start_attach("att", "1", pid, gate[0], &profile);
	close(gate[0]);
	other = track_path("/dev/shm/objscope-%d-%d.rings", (int)att, (int)pid);
	plant(OTHER, PLANT_FILE, other, "another user's file\n", 0644);
	link = track_path("/tmp/objscope-%d-%d.rings", (int)att, (int)pid);
	plant(NOBODY, PLANT_SYMLINK, link, vfile, 0);
	snap(other, &before_other);
	snap(vfile, &before_file);
	cr_assert_eq(write(gate[1], "g", 1), 1);
	close(gate[1]);
	st = reap_within(att, NATIVE_LIMIT_MS);
	expect_unchanged(other, &before_other);
	expect_unchanged(vfile, &before_file);
	expect_clean_outcome("att", st, profile);
	cr_expect_eq(kill(pid, 0), 0, "the target died");
	free(profile);
	free(vfile);
	free(dir);
}

/* A target in its own mount namespace (a private tmpfs of nobody's on
 * /tmp) runs a copy of attach_target from /tmp/...: its maps name a path
 * that objscope, root, opened on the host by name. On the host that path is
 * a root-only ELF file (a copy of three_sites, mode 0600), or a FIFO the
 * attacker made there. objscope reads the target's own file (through
 * /proc/PID/map_files or root) or none: none of the host file's symbols is
 * in the profile, and it ends within its limit. */
static void mapped_path_on_host(bool fifo)
{
	static const char *const host_syms[] = { "alloc_once_block", "alloc_random_block",
						 "alloc_seq_block", "alloc_small_object",
						 "random_phase" };
	char *dir, *bin, *profile, exe[PATH_MAX], other[PATH_MAX];
	const char *argv[] = { "/usr/bin/unshare", "--mount", "--propagation", "private", "--",
			       "/bin/sh", "-c", KEEP_EXE PRIVATE_TMP
			       "exec /usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups "
			       "/bin/sh -c 'mkdir -p \"${1%/*}\" && cp /proc/self/fd/3 \"$1\" && "
			       "exec 3<&- && exec \"$1\" 30 steady' \"$0\" \"$1\"", exe, NULL,
			       NULL };
	struct fsnap before;
	pid_t pid;
	int st;

	need_root();
	if (!have_tools())
		SEC_SKIP("needs unshare and setpriv");
	if (strncmp(tmp, "/tmp/", 5) != 0)
		SEC_SKIP("needs the scratch directory below /tmp (TMPDIR is %s): the target's "
			 "private /tmp must hide the host's file", tmp);
	cr_assert_not_null(realpath(NATIVE, exe));
	cr_assert_not_null(realpath(E2E_FIXTURE("three_sites"), other));
	dir = nobody_dir("w");
	bin = e2e_path(dir, "prog");
	if (fifo) {
		plant(NOBODY, PLANT_FIFO, bin, NULL, 0600);
	} else {
		const char *cp[] = { "cp", other, bin, NULL };
		struct e2e_result res;

		cr_assert_eq(e2e_run(tmp, cp, NULL, &res), 0);
		cr_assert_eq(res.status, 0, "cp: %s", res.err);
		e2e_result_free(&res);
		cr_assert_eq(chmod(bin, 0600), 0);
	}
	argv[9] = bin;
	pid = spawn_as("t", argv, dir, 0, -1);
	wait_wrapped_ready("t", pid, "give a target its own mount namespace and /tmp");
	snap(bin, &before);
	st = attach_within("att", pid, &profile, NATIVE_LIMIT_MS);
	expect_unchanged(bin, &before);
	expect_clean_outcome("att", st, profile);
	for (size_t i = 0; st == 0 && i < sizeof(host_syms) / sizeof(*host_syms); i++)
		cr_expect(!report_mentions(profile, host_syms[i]), "the host's root-only %s was "
			  "read for the target's symbols (%s in the profile)", bin, host_syms[i]);
	free(profile);
	free(bin);
	free(dir);
}

Test(security, mapped_path_is_root_only_host_file)
{
	mapped_path_on_host(false);
}

Test(security, mapped_path_is_host_fifo)
{
	mapped_path_on_host(true);
}

/* ---- shared memory written by the target ------------------------------------ */

/* tests/fixtures/sec_scribble.c, as nobody, overwrites the rings' header
 * and its slots with hostile values while a root objscope drains them:
 * objscope must neither crash nor hang (exit 0 with a profile, or one
 * error line). The target scribbles for the first 1.5 s of a 3 s attach,
 * then puts the rings back in order for the detach. In a PID namespace
 * the collector copies events of the target's own ids: that copy is
 * attacked as well. */
static void scribbled_attach(bool pidns)
{
	char exe[PATH_MAX], *dir, *profile;
	const char *plain[] = { exe, "5", "1.5", NULL };
	/* a /tmp of its own: objscope's library copy goes there */
	const char *wrapped[] = { "/usr/bin/unshare", "--pid", "--fork", "--mount-proc", "--",
				  "/bin/sh", "-c", KEEP_EXE PRIVATE_TMP
				  "exec /usr/bin/setpriv --reuid=65534 --regid=65534 "
				  "--clear-groups /proc/self/fd/3 5 1.5", exe, NULL };
	pid_t wrapper, pid;
	int st, tst;

	need_root();
	if (pidns && !have_tools())
		SEC_SKIP("needs unshare and setpriv");
	cr_assert_not_null(realpath(SCRIBBLE, exe));
	dir = nobody_dir("w");
	wrapper = pidns ? spawn_as("t", wrapped, dir, 0, -1)
			: spawn_as("t", plain, dir, NOBODY, -1);
	if (pidns)
		wait_wrapped_ready("t", wrapper, "start a target in its own PID namespace");
	else
		wait_output("t", wrapper, "ready", 10000);
	pid = pidns ? child_of(wrapper) : wrapper;
	st = reap_within(start_attach("att", "3", pid, -1, &profile), NATIVE_LIMIT_MS);
	expect_clean_outcome("att", st, profile);
	tst = reap_within(wrapper, 10000);
	if (st == 0) {
		char msg[512];
		json_object *report = e2e_report_json(tmp, profile, msg, sizeof(msg));
		json_object *counters = e2e_get(e2e_get(report, "meta"), "counters");

		cr_expect(strstr(slurp("t", "out"), "scribbled"), "the target did not scribble "
			  "(exit %d): %s %s", tst, slurp("t", "out"), slurp("t", "err"));
		/* nothing lost silently: the garbage is counted */
		cr_expect_gt(e2e_get_int(counters, "bad_events"), 0, "no bad event counted");
		json_object_put(report);
	}
	free(profile);
	free(dir);
}

Test(security, target_scribbles_over_rings)
{
	scribbled_attach(false);
}

Test(security, target_in_pid_namespace_scribbles_over_rings)
{
	scribbled_attach(true);
}

/* An unprivileged target in its own user and mount namespaces (unshare
 * -Urm, as nobody may make them) bind-mounted a root-owned directory of
 * the host, that nobody may read but not write, on its /tmp, where
 * objscope puts the library copy: root must not create anything there for
 * nobody (before the fix: a directory of nobody's with the library in it).
 * The directory stays as it was; the attach works or refuses in one line. */
Test(security, user_namespace_binds_host_directory_on_tmp)
{
	char *dir, *vdir, *profile, exe[PATH_MAX];
	const char *argv[] = { "/usr/bin/unshare", "-Urm", "--", "/bin/sh", "-c",
			       KEEP_EXE "mount --bind \"$1\" /tmp && "
			       "exec /proc/self/fd/3 30 steady", exe, NULL, NULL };
	struct fsnap before;
	pid_t pid;
	int st;

	need_root();
	if (!have_tools())
		SEC_SKIP("needs unshare");
	dir = nobody_dir("w");
	vdir = victim_dir("vdir", 0755);
	argv[7] = vdir;
	cr_assert_not_null(realpath(NATIVE, exe));
	pid = spawn_as("t", argv, dir, NOBODY, -1);
	wait_wrapped_ready("t", pid, "let nobody make user and mount namespaces");
	snap(vdir, &before);
	st = attach_within("att", pid, &profile, NATIVE_LIMIT_MS);
	expect_unchanged(vdir, &before);
	expect_clean_outcome("att", st, profile);
	free(profile);
	free(vdir);
	free(dir);
}

/* ---- record ------------------------------------------------------------------ */

/* `objscope record -- java ...` as root reads /tmp/perf-<PID>.map at the
 * JVM's exit and removes it. Two attacks by nobody, who owns nothing there:
 *
 * read_only: the user asked for the map themselves (-XX:+DumpPerfMapAtExit,
 * so objscope leaves the path alone); while the JVM runs, nobody makes the
 * path a symlink to a root-only file written as a perf map, which lies on a
 * read-only bind mount (in a mount namespace of the record's own) so that
 * only objscope's reading is tested: it must not read it (no symbol of it
 * in the profile) nor remove anything but its own file.
 *
 * !read_only: objscope itself adds -XX:+DumpPerfMapAtExit, and the JVM (root)
 * would write its map at exit through whatever the path is then. The
 * preload makes the path a file of the JVM's user before asking
 * (runtimes/hotspot/target/hotspot.c hs_claim_map): planted once the JVM runs, nobody's link
 * cannot be made (the name is taken, and /tmp is sticky); planted before the
 * JVM starts (links sprayed over the next pids), the map is not asked for
 * and a note says so. Either way the root file stays as it was. */
#define SPRAY 256

static void record_with_planted_map(bool read_only)
{
	char *dir, *vdir, *victim, *profile, *stop, exe[PATH_MAX], cp[PATH_MAX];
	char secret[64], content[128], spray[SPRAY][48];
	const char *argv[32];
	struct fsnap before;
	pid_t rec, jvm;
	int n = 0, st, fd, nspray = 0;
	long last = 0;

	need_java();
	if (read_only && !have_tools())
		SEC_SKIP("needs unshare");
	cr_assert_not_null(realpath(E2E_OBJSCOPE, exe));
	cr_assert_not_null(realpath("build/java", cp));
	dir = e2e_path(tmp, "w");
	cr_assert_eq(mkdir(dir, 0755), 0);
	stop = e2e_path(dir, "stop");
	profile = e2e_path(tmp, "rec.data");
	vdir = victim_dir("vdir", 0755);
	snprintf(secret, sizeof(secret), "ROOT_ONLY_%d_%ld", (int)getpid(), (long)time(NULL));
	snprintf(content, sizeof(content), "0 7fffffffffff %s\n", secret);
	victim = e2e_path(vdir, "map");
	root_file(victim, content);
	if (read_only) {
		argv[n++] = "/usr/bin/unshare";
		argv[n++] = "--mount";
		argv[n++] = "--propagation";
		argv[n++] = "private";
		argv[n++] = "--";
		argv[n++] = "/bin/sh";
		argv[n++] = "-c";
		argv[n++] = "mount --bind \"$0\" \"$0\" && mount -o remount,bind,ro \"$0\" && "
			    "exec \"$@\"";
		argv[n++] = vdir;
	}
	argv[n++] = exe;
	argv[n++] = "record";
	argv[n++] = "-q";
	argv[n++] = "-o";
	argv[n++] = profile;
	argv[n++] = "--";
	argv[n++] = "/usr/bin/java";
	if (read_only) {
		argv[n++] = "-XX:+UnlockDiagnosticVMOptions";
		argv[n++] = "-XX:+DumpPerfMapAtExit";
	}
	argv[n++] = "-cp";
	argv[n++] = cp;
	argv[n++] = "AttachFixture";
	argv[n++] = "60";
	argv[n++] = "0";
	argv[n++] = stop;
	argv[n] = NULL;
	if (!read_only) { /* links over the next pids, before anything starts */
		FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "r");
		pid_t kid;

		cr_assert(f && fscanf(f, "%ld", &last) == 1);
		fclose(f);
		for (long p = last + 1; p <= last + SPRAY; p++)
			snprintf(spray[p - last - 1], sizeof(spray[0]), "/tmp/perf-%ld.map", p);
		nspray = SPRAY;
		kid = fork(); /* one process (one pid) makes them all, as nobody */
		cr_assert_geq(kid, 0);
		if (kid == 0) {
			drop_to(NOBODY);
			for (int i = 0; i < SPRAY; i++)
				if (symlink(victim, spray[i]) != 0)
					spray[i][0] = 0; /* someone's real map: left alone */
			_exit(0);
		}
		cr_assert_eq(waitpid(kid, &st, 0), kid);
	}
	rec = spawn_as("rec", argv, dir, 0, -1);
	for (int i = 0; i < 3000 && !strstr(slurp("rec", "out"), "ready"); i++) {
		if (waitpid(rec, &st, WNOHANG) == rec)
			cr_assert_fail("record ended early (status %d): %s %s", st,
				       slurp("rec", "out"), slurp("rec", "err"));
		usleep(10000);
	}
	cr_assert(strstr(slurp("rec", "out"), "ready"), "the JVM did not start: %s",
		  slurp("rec", "err"));
	jvm = child_of(rec);
	snap(victim, &before);
	if (read_only) {
		plant(NOBODY, PLANT_SYMLINK, track_path("/tmp/perf-%d.map", (int)jvm), victim, 0);
	} else {
		char path[48];
		struct stat lst;
		bool sprayed = jvm > last && jvm <= last + SPRAY;

		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)jvm);
		cr_log_info("JVM pid %d: %s the %d pids sprayed", (int)jvm,
			    sprayed ? "among" : "not among", nspray);
		if (!sprayed) {
			/* the JVM's pid was not sprayed: the name must be the JVM's
			 * own file already, which nobody cannot replace */
			cr_expect(lstat(path, &lst) == 0 && S_ISREG(lst.st_mode) &&
				  lst.st_uid == 0, "%s is not a file of the JVM's user while "
				  "it runs", path);
			cr_expect_neq(symlink(victim, path), 0);
		}
	}
	fd = open(stop, O_WRONLY | O_CREAT, 0644);
	cr_assert_geq(fd, 0);
	close(fd);
	st = reap_within(rec, 60000);
	expect_unchanged(victim, &before);
	expect_clean_outcome("rec", st, profile);
	if (st == 0)
		cr_expect(!report_mentions(profile, secret), "the root-only file %s was read into "
			  "the profile (%s)", victim, secret);
	if (!read_only && jvm > last && jvm <= last + SPRAY)
		expect_note(st, profile, "no perf map asked for");
	for (int i = 0; i < nspray; i++) { /* the links themselves, nobody's only */
		struct stat lst;

		if (lstat(spray[i], &lst) == 0 && S_ISLNK(lst.st_mode) && lst.st_uid == NOBODY)
			unlink(spray[i]);
	}
	free(victim);
	free(vdir);
	free(profile);
	free(stop);
	free(dir);
}

Test(security, record_perf_map_symlink_not_read)
{
	record_with_planted_map(true);
}

Test(security, record_perf_map_symlink_not_written)
{
	record_with_planted_map(false);
}

/* ---- vmStructs of the target's JVM ----------------------------------------- */

/* libjvm.so of process pid: its path and load address (0 when not found). */
static uint64_t libjvm_of(pid_t pid, char *path, size_t len)
{
	char maps[64], line[1024];
	uint64_t base = 0;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	f = fopen(maps, "r");
	cr_assert_not_null(f);
	while (!base && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');
		unsigned long long lo, off;

		if (!p || !strstr(p, "/libjvm.so") ||
		    sscanf(line, "%llx-%*x %*s %llx", &lo, &off) != 2 || off != 0)
			continue;
		p[strcspn(p, "\n")] = 0;
		snprintf(path, len, "%s", p);
		base = lo;
	}
	fclose(f);
	return base;
}

enum { VS_TABLE, VS_STRIDE, VS_TYPE, VS_FIELD, VS_OFFSET, VS_N };

/* Values (link-time addresses) of the gHotSpotVMStruct* symbols of libjvm
 * at path, from `nm -D`; false when nm is missing or they are not all there. */
static bool vmstructs_symbols(const char *path, uint64_t sym[VS_N])
{
	static const char *const names[VS_N] = {
		" gHotSpotVMStructs@", " gHotSpotVMStructEntryArrayStride@",
		" gHotSpotVMStructEntryTypeNameOffset@", " gHotSpotVMStructEntryFieldNameOffset@",
		" gHotSpotVMStructEntryOffsetOffset@",
	};
	const char *argv[] = { "nm", "-D", "--defined-only", path, NULL };
	struct e2e_result res;
	int found = 0;

	if (e2e_run(tmp, argv, NULL, &res) != 0)
		return false;
	for (int k = 0; k < VS_N && res.status == 0; k++) {
		const char *p = strstr(res.out, names[k]);

		while (p && p > res.out && p[-1] != '\n')
			p--;
		if (p && sscanf(p, "%" SCNx64, &sym[k]) == 1)
			found++;
	}
	e2e_result_free(&res);
	return found == VS_N;
}

/* As nobody (the JVM's user, who may write its memory): sets the offset of
 * vmStructs entry TYPE::FIELD in process pid to value. Returns the number
 * of entries changed, -1 when the table could not be read. */
static int vmstructs_poison(pid_t pid, uint64_t base, const uint64_t sym[VS_N], const char *type,
			    const char *field, uint64_t value)
{
	int p[2], count = -1;
	pid_t child;

	cr_assert_eq(pipe(p), 0);
	child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		uint64_t table = 0, stride = 0, o_type = 0, o_field = 0, o_off = 0;
		char mem[64];
		int fd, n = 0;

		close(p[0]);
		drop_to(NOBODY);
		snprintf(mem, sizeof(mem), "/proc/%d/mem", (int)pid);
		fd = open(mem, O_RDWR);
		if (fd < 0 || pread(fd, &table, 8, (off_t)(base + sym[VS_TABLE])) != 8 ||
		    pread(fd, &stride, 8, (off_t)(base + sym[VS_STRIDE])) != 8 ||
		    pread(fd, &o_type, 8, (off_t)(base + sym[VS_TYPE])) != 8 ||
		    pread(fd, &o_field, 8, (off_t)(base + sym[VS_FIELD])) != 8 ||
		    pread(fd, &o_off, 8, (off_t)(base + sym[VS_OFFSET])) != 8 || !table ||
		    stride > 256 || o_type + 8 > stride || o_field + 8 > stride ||
		    o_off + 8 > stride)
			n = -1;
		for (uint64_t i = 0; n >= 0 && i < 100000; i++) {
			uint8_t ent[256];
			uint64_t tp, fp;
			char t[64] = "", f[64] = "";

			if (pread(fd, ent, stride, (off_t)(table + i * stride)) != (ssize_t)stride)
				break;
			memcpy(&tp, ent + o_type, 8);
			memcpy(&fp, ent + o_field, 8);
			if (!tp)
				break;
			if (!fp || pread(fd, t, sizeof(t) - 1, (off_t)tp) <= 0 ||
			    pread(fd, f, sizeof(f) - 1, (off_t)fp) <= 0)
				continue;
			if (strcmp(t, type) == 0 && strcmp(f, field) == 0 &&
			    pwrite(fd, &value, 8, (off_t)(table + i * stride + o_off)) == 8)
				n++;
		}
		if (write(p[1], &n, sizeof(n)) != sizeof(n))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &count, sizeof(count)) != sizeof(count))
		count = -1;
	close(p[0]);
	waitpid(child, NULL, 0);
	return count;
}

/* The JVM's user wrote absurd offsets into its JVM's vmStructs table (the
 * JVM itself never reads it; objscope does, from the target's memory):
 * ConstMethod::_constants near INT64_MAX, where a signed sum wraps a
 * bounds check of the collector's method-name reads (before the fix: a
 * read far outside a 64-byte stack buffer of root's process). objscope
 * must not crash: exit 0 with a profile (names missing, a note), or one
 * error line. */
Test(security, vmstructs_absurd_offsets)
{
	char *dir, *profile, libjvm[PATH_MAX];
	uint64_t sym[VS_N], base;
	pid_t jvm;
	int st, n;

	need_java();
	dir = nobody_dir("w");
	jvm = start_jvm("jvm", dir, NULL);
	base = libjvm_of(jvm, libjvm, sizeof(libjvm));
	cr_assert_neq(base, 0, "no libjvm.so in the JVM's maps");
	if (!vmstructs_symbols(libjvm, sym))
		SEC_SKIP("needs nm (binutils) to find gHotSpotVMStructs in %s", libjvm);
	n = vmstructs_poison(jvm, base, sym, "ConstMethod", "_constants", 0x7ffffffffffffff8ULL);
	cr_assert_gt(n, 0, "nobody could not change the JVM's vmStructs (%d entries)", n);
	st = attach_bounded("att", jvm, &profile);
	expect_clean_outcome("att", st, profile);
	cr_expect_eq(kill(jvm, 0), 0, "the JVM died");
	free(profile);
	free(dir);
}
