/* runtimes/hotspot/jattach.c: which perf maps an attach leaves in place; the
 * trigger, attach socket and perf map of a JVM treated as its user's
 * (hostile) files. */
#include "runtimes/hotspot/jattach.h"

#include "common/safefs.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char dir[] = "/tmp/objscope-test-jattach-XXXXXX";

static void setup(void)
{
	cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "[NOTE] cannot remove %s\n", dir); /* not cr_log_warn: exit 1 */
}

TestSuite(jattach, .init = setup, .fini = teardown);

static void make_file(const char *path, time_t mtime)
{
	struct timeval tv[2] = { { mtime, 0 }, { mtime, 0 } };
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	cr_assert(fd >= 0, "cannot create %s", path);
	cr_assert_eq(write(fd, "x\n", 2), 2);
	close(fd);
	cr_assert_eq(utimes(path, tv), 0);
}

/* A map written after the process started is its own (the user's jcmd);
 * one older than the process is a stale map of an earlier process with the
 * same pid (seen in CI: a leftover map made a test JVM's map look like the
 * user's, and it stayed in /tmp); a missing one is nobody's. */
Test(jattach, perf_map_older_than_the_process_is_stale)
{
	char path[128];
	pid_t child;
	int status, dfd = open(dir, O_PATH | O_DIRECTORY);

	cr_assert_geq(dfd, 0);
	snprintf(path, sizeof(path), "%s/perf-map", dir);
	cr_expect_eq(os_jattach_map_predates(getpid(), geteuid(), dfd, "perf-map"), 0,
		     "a missing map counted");
	/* a child started now: a map from an hour ago cannot be its own */
	child = fork();
	cr_assert(child >= 0);
	if (child == 0) {
		pause();
		_exit(0);
	}
	make_file(path, time(NULL) - 3600);
	cr_expect_eq(os_jattach_map_predates(child, geteuid(), dfd, "perf-map"), 0,
		     "a map older than the process was taken for its own");
	make_file(path, time(NULL));
	cr_expect_eq(os_jattach_map_predates(child, geteuid(), dfd, "perf-map"), 1,
		     "a map written while the process ran was not taken for its own");
	kill(child, SIGKILL);
	cr_assert_eq(waitpid(child, &status, 0), child);
	close(dfd);
}

/* What the JVM's user put there instead of a map is not a stale map of
 * its own: never counted as one (it would be removed), never followed. */
Test(jattach, perf_map_link_or_fifo_is_not_ours)
{
	char path[128], victim[128];
	struct stat st, before;
	char err[256];
	int dfd = open(dir, O_PATH | O_DIRECTORY);

	cr_assert_geq(dfd, 0);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	make_file(victim, time(NULL) - 7200);
	cr_assert_eq(stat(victim, &before), 0);
	snprintf(path, sizeof(path), "%s/perf-1.map", dir);
	cr_assert_eq(symlink(victim, path), 0);
	cr_expect_eq(os_jattach_map_predates(getpid(), geteuid(), dfd, "perf-1.map"), 1,
		     "a link was taken for a stale map of the process (to be removed)");
	cr_expect_eq(os_jattach_map_check(dfd, "perf-1.map", geteuid(), &st, err, sizeof(err)),
		     -ELOOP);
	cr_expect(strstr(err, "symbolic link") != NULL, "%s", err);
	snprintf(path, sizeof(path), "%s/perf-2.map", dir);
	cr_assert_eq(mkfifo(path, 0600), 0);
	cr_expect_eq(os_jattach_map_predates(getpid(), geteuid(), dfd, "perf-2.map"), 1);
	cr_expect_eq(os_jattach_map_check(dfd, "perf-2.map", geteuid(), &st, err, sizeof(err)),
		     -EFTYPE_OS);
	cr_expect(strstr(err, "FIFO") != NULL, "%s", err);
	/* another user's file */
	cr_expect_eq(os_jattach_map_check(dfd, "victim", geteuid() + 4242, &st, err, sizeof(err)),
		     geteuid() == 0 ? 0 : -EPERM, "%s", err);
	if (geteuid() == 0) {
		cr_assert_eq(chown(victim, 4343, 4343), 0);
		cr_expect_eq(os_jattach_map_check(dfd, "victim", 4242, &st, err, sizeof(err)),
			     -EPERM);
		cr_expect(strstr(err, "owned by uid 4343, not the JVM's uid 4242") != NULL, "%s",
			  err);
		cr_expect_eq(os_jattach_map_check(dfd, "victim", 4343, &st, err, sizeof(err)), 0);
	}
	cr_assert_eq(stat(victim, &st), 0);
	cr_expect_eq(st.st_mtime, before.st_mtime, "the link's target was touched");
	close(dfd);
}

/* The attach trigger is created as the JVM's user, never through a link
 * planted in its directory: the link's target keeps owner, mode and
 * content (else a local privilege escalation). */
Test(jattach, trigger_never_follows_a_planted_link)
{
	char link[160], victim[128], sub[128];
	struct stat st, vbefore, created;
	uid_t uid = geteuid() == 0 ? 65534 : geteuid();
	gid_t gid = geteuid() == 0 ? 65534 : getegid();
	int dfd, fd;

	snprintf(victim, sizeof(victim), "%s/victim", dir);
	make_file(victim, time(NULL));
	cr_assert_eq(chmod(victim, 0600), 0);
	cr_assert_eq(stat(victim, &vbefore), 0);
	/* the JVM's directory, its user's */
	snprintf(sub, sizeof(sub), "%s/cwd", dir);
	cr_assert_eq(mkdir(sub, 0755), 0);
	cr_assert_eq(chown(sub, uid, gid), 0);
	dfd = open(sub, O_PATH | O_DIRECTORY);
	cr_assert_geq(dfd, 0);
	snprintf(link, sizeof(link), "%s/.attach_pid77", sub);
	cr_assert_eq(symlink(victim, link), 0);
	cr_expect_lt(os_jattach_trigger(dfd, uid, gid, ".attach_pid77", &created), 0,
		     "a trigger was made through a link");
	cr_assert_eq(stat(victim, &st), 0);
	cr_expect_eq(st.st_uid, vbefore.st_uid, "the link's target changed owner");
	cr_expect_eq(st.st_mode, vbefore.st_mode, "the link's target changed mode");
	cr_expect_eq(st.st_size, vbefore.st_size, "the link's target changed size");
	/* a dangling link: nothing is created where it points */
	cr_assert_eq(unlink(link), 0);
	{
		char target[160];

		snprintf(target, sizeof(target), "%s/created-through-link", dir);
		cr_assert_eq(symlink(target, link), 0);
		cr_expect_lt(os_jattach_trigger(dfd, uid, gid, ".attach_pid77", &created), 0);
		cr_expect_neq(access(target, F_OK), 0, "a file was created through the link");
	}
	/* the normal case: made by the JVM's user, removed by inode */
	cr_assert_eq(unlink(link), 0);
	cr_assert_eq(os_jattach_trigger(dfd, uid, gid, ".attach_pid77", &created), 0);
	cr_assert_eq(lstat(link, &st), 0);
	cr_expect(S_ISREG(st.st_mode));
	cr_expect_eq(st.st_uid, uid, "the trigger is not the JVM's user's");
	cr_expect_eq(st.st_gid, gid);
	cr_expect_eq(st.st_mode & 0777, 0600);
	/* replaced meanwhile: what is there now stays (made while the trigger
	 * still exists, so that its inode number differs) */
	{
		char other[160];

		snprintf(other, sizeof(other), "%s/other", sub);
		fd = open(other, O_WRONLY | O_CREAT | O_EXCL, 0600);
		cr_assert_geq(fd, 0);
		close(fd);
		cr_assert_eq(rename(other, link), 0);
	}
	cr_expect_eq(os_jattach_untrigger(dfd, uid, gid, ".attach_pid77", &created), -ESTALE);
	cr_expect_eq(access(link, F_OK), 0, "a file the trigger was not was removed");
	/* a trigger of the JVM's user already there is used, not removed */
	cr_assert_eq(lchown(link, uid, gid), 0);
	cr_expect_eq(os_jattach_trigger(dfd, uid, gid, ".attach_pid77", &created), 1);
	cr_assert_eq(unlink(link), 0);
	cr_assert_eq(os_jattach_trigger(dfd, uid, gid, ".attach_pid77", &created), 0);
	cr_expect_eq(os_jattach_untrigger(dfd, uid, gid, ".attach_pid77", &created), 0);
	cr_expect_neq(access(link, F_OK), 0);
	close(dfd);
}

/* A process that binds a Unix socket at `path` as uid/gid (when we are
 * root), accepts connections and closes them; ready once it writes a byte
 * on the pipe. */
static pid_t serve_socket(const char *path, uid_t uid, gid_t gid)
{
	int p[2];
	char c;
	pid_t child;

	cr_assert_eq(pipe(p), 0);
	child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int s, c2;

		if (geteuid() == 0 && (setgid(gid) != 0 || setuid(uid) != 0))
			_exit(1);
		if (strlen(path) >= sizeof(sa.sun_path))
			_exit(4);
		memcpy(sa.sun_path, path, strlen(path) + 1);
		s = socket(AF_UNIX, SOCK_STREAM, 0);
		if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(s, 4) != 0)
			_exit(2);
		if (write(p[1], "r", 1) != 1)
			_exit(3);
		for (;;) {
			c2 = accept(s, NULL, NULL);
			if (c2 >= 0)
				close(c2);
		}
	}
	close(p[1]);
	cr_assert_eq(read(p[0], &c, 1), 1, "the socket server did not start");
	close(p[0]);
	return child;
}

static void stop(pid_t child)
{
	int status;

	kill(child, SIGKILL);
	waitpid(child, &status, 0);
}

/* The attach socket is used only when it is a socket of the JVM's uid (or
 * root) served by the JVM itself: a fake "JVM" socket of another user, one
 * of the right user but served by another process, and a link to a socket
 * are refused, each with a line that says why. */
Test(jattach, attach_socket_of_another_user_or_process_is_refused)
{
	char sock[160], link[160], err[256] = "", sub[128];
	pid_t fake, other;
	int dfd, fd;

	if (geteuid() != 0)
		cr_skip_test("needs root: the fake JVM runs as another user");
	cr_assert_eq(chmod(dir, 0755), 0); /* for the fake JVM */
	snprintf(sub, sizeof(sub), "%s/tmp", dir);
	cr_assert_eq(mkdir(sub, 01777), 0);
	cr_assert_eq(chmod(sub, 01777), 0);
	dfd = open(sub, O_PATH | O_DIRECTORY);
	cr_assert_geq(dfd, 0);
	snprintf(sock, sizeof(sock), "%s/.java_pid42", sub);
	fake = serve_socket(sock, 65534, 65534);
	/* a JVM of uid 4242 with pid `fake`: the socket is nobody's */
	fd = os_jattach_connect_at(dfd, ".java_pid42", fake, 4242, err, sizeof(err));
	cr_expect_eq(fd, -EPERM, "a socket of another uid was used");
	cr_expect(strstr(err, ".java_pid42 is owned by uid 65534, not the JVM's uid 4242: "
			 "not used") != NULL, "%s", err);
	/* the right uid, but served by another process than the JVM */
	other = fork();
	cr_assert_geq(other, 0);
	if (other == 0) {
		pause();
		_exit(0);
	}
	err[0] = 0;
	fd = os_jattach_connect_at(dfd, ".java_pid42", other, 65534, err, sizeof(err));
	cr_expect_eq(fd, -EPERM, "a socket served by another process was used");
	cr_expect(strstr(err, "is served by process") != NULL && strstr(err, "not by the JVM"),
		  "%s", err);
	stop(other);
	/* a link to the socket */
	snprintf(link, sizeof(link), "%s/.java_pid43", sub);
	cr_assert_eq(symlink(sock, link), 0);
	err[0] = 0;
	fd = os_jattach_connect_at(dfd, ".java_pid43", fake, 65534, err, sizeof(err));
	cr_expect_eq(fd, -EPERM, "a link to a socket was followed");
	cr_expect(strstr(err, "not a socket (a symbolic link)") != NULL, "%s", err);
	/* the real thing: its uid, served by it */
	fd = os_jattach_connect_at(dfd, ".java_pid42", fake, 65534, err, sizeof(err));
	cr_expect_geq(fd, 0, "the JVM's own socket was refused: %s", err);
	if (fd >= 0)
		close(fd);
	/* none there */
	cr_expect_eq(os_jattach_connect_at(dfd, ".java_pid44", fake, 65534, err, sizeof(err)),
		     -ENOENT);
	stop(fake);
	close(dfd);
}

/* SO_PEERCRED: the server's pid, as seen from here. */
Test(jattach, peer_check_compares_the_server_pid)
{
	char err[256];
	int sv[2];

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	cr_expect_eq(os_jattach_check_peer(sv[0], getpid(), geteuid(), "x", err, sizeof(err)), 0);
	cr_expect_eq(os_jattach_check_peer(sv[0], getpid() + 1, geteuid(), "x", err, sizeof(err)),
		     -EPERM);
	close(sv[0]);
	close(sv[1]);
}

/* A "JVM" (a process of uid 4242) whose /tmp/.java_pid<PID> was bound
 * first by another user's process: the whole request (os_jattach_jcmd,
 * through the process's root) is refused with the line that says why, and
 * nothing is sent to the fake. */
Test(jattach, jcmd_refuses_a_fake_socket_in_the_jvms_tmp)
{
	char sock[64], out[256], err[256] = "";
	pid_t jvm, fake;
	int p[2], rc;

	if (geteuid() != 0)
		cr_skip_test("needs root: the JVM and the fake run as other users");
	cr_assert_eq(pipe(p), 0);
	jvm = fork();
	cr_assert_geq(jvm, 0);
	if (jvm == 0) {
		char c;

		close(p[1]);
		if (setgid(4242) != 0 || setuid(4242) != 0)
			_exit(1);
		if (read(p[0], &c, 1) < 0)
			_exit(2);
		_exit(0);
	}
	close(p[0]);
	snprintf(sock, sizeof(sock), "/tmp/.java_pid%d", (int)jvm);
	unlink(sock);
	fake = serve_socket(sock, 65534, 65534);
	for (int i = 0; i < 200; i++) {
		uid_t u = 0;
		gid_t g = 0;

		if (os_proc_ids(jvm, &u, &g) == 0 && u == 4242)
			break;
		usleep(5000);
	}
	rc = os_jattach_jcmd(jvm, "Compiler.perfmap", 1000, out, sizeof(out), err, sizeof(err));
	cr_expect_eq(rc, -EPERM, "a fake socket was used (%d: %s)", rc, err);
	cr_expect(strstr(err, "attach socket /tmp/.java_pid") &&
		  strstr(err, "is owned by uid 65534, not the JVM's uid 4242: not used"), "%s", err);
	stop(fake);
	unlink(sock);
	close(p[1]);
	stop(jvm);
}

/* The perf map is looked at inside the process's root and never followed:
 * a link at /tmp/perf-<PID>.map is refused. */
Test(jattach, perf_map_stat_does_not_follow)
{
	char map[64], err[256] = "";
	struct stat st;
	pid_t child;

	child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		pause();
		_exit(0);
	}
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)child);
	unlink(map);
	cr_expect_eq(os_jattach_map_stat(child, &st, err, sizeof(err)), -ENOENT);
	cr_assert_eq(symlink("/etc/passwd", map), 0);
	cr_expect_eq(os_jattach_map_stat(child, &st, err, sizeof(err)), -ELOOP);
	cr_expect(strstr(err, "symbolic link") != NULL, "%s", err);
	unlink(map);
	stop(child);
}

/* A "JVM" (a process that serves its own /tmp/.java_pid<PID>, so every
 * check passes) answering with an error full of escape sequences: the
 * request arrives, and the answer reaches the error line as one printable
 * line. */
Test(jattach, jvm_reply_printed_without_escape_sequences)
{
	char out[256], err[256] = "";
	int p[2], rc;
	pid_t jvm;
	char c;

	cr_assert_eq(pipe(p), 0);
	jvm = fork();
	cr_assert_geq(jvm, 0);
	if (jvm == 0) {
		static const char reply[] = "1\n\x1b]0;owned\x07\x1b[2Jbad command\n";
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		char req[512];
		int s, k;

		snprintf(sa.sun_path, sizeof(sa.sun_path), "/tmp/.java_pid%d", (int)getpid());
		unlink(sa.sun_path);
		s = socket(AF_UNIX, SOCK_STREAM, 0);
		if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(s, 1) != 0)
			_exit(2);
		if (write(p[1], "r", 1) != 1)
			_exit(3);
		k = accept(s, NULL, NULL);
		if (k < 0 || read(k, req, sizeof(req)) <= 0 ||
		    write(k, reply, sizeof(reply) - 1) != (ssize_t)sizeof(reply) - 1)
			_exit(4);
		close(k);
		unlink(sa.sun_path);
		_exit(0);
	}
	close(p[1]);
	cr_assert_eq(read(p[0], &c, 1), 1, "the fake JVM did not start");
	close(p[0]);
	rc = os_jattach_jcmd(jvm, "Compiler.perfmap", 2000, out, sizeof(out), err, sizeof(err));
	cr_expect_eq(rc, -EPROTO, "%d: %s", rc, err);
	cr_expect(strstr(err, "the JVM refused 'Compiler.perfmap': 1 ?]0;owned??[2Jbad command")
		  != NULL, "%s", err);
	cr_expect_null(strchr(err, '\x1b'), "an escape sequence reached the error line");
	cr_expect_null(strchr(err, '\n'));
	stop(jvm);
}
