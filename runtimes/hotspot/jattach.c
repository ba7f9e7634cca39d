/* jattach.c - HotSpot dynamic attach (see jattach.h). */
#include "runtimes/hotspot/jattach.h"

#include "common/safefs.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static uint64_t ja_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

pid_t os_jattach_ns_pid(pid_t pid)
{
	char path[64], line[256];
	pid_t ns = pid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	while (fgets(line, sizeof(line), f)) {
		char *p, *end;

		if (strncmp(line, "NSpid:", 6) != 0)
			continue;
		/* the last id is the one in the innermost namespace */
		for (p = line + 6;; p = end) {
			long v = strtol(p, &end, 10);

			if (end == p)
				break;
			ns = (pid_t)v;
		}
		break;
	}
	fclose(f);
	return ns;
}

/* The JVM as the attach protocol meets it: its ids, and its /tmp resolved
 * inside its root (an O_PATH fd; openat2 RESOLVE_IN_ROOT, so that a link
 * planted in a container's or a jail's /tmp never reaches the host's). */
struct ja_target {
	pid_t pid, ns;
	uid_t uid; /* effective ids: the owner HotSpot accepts for its files */
	gid_t gid;
	int tmp;
};

static void ja_target_close(struct ja_target *t)
{
	if (t->tmp >= 0)
		close(t->tmp);
	t->tmp = -1;
}

static int ja_target_open(struct ja_target *t, pid_t pid, char *err, size_t errlen)
{
	int root, rc;

	memset(t, 0, sizeof(*t));
	t->tmp = -1;
	t->pid = pid;
	t->ns = os_jattach_ns_pid(pid);
	if (t->ns < 0 || os_proc_ids(pid, &t->uid, &t->gid) < 0) {
		snprintf(err, errlen, "process %d is gone", (int)pid);
		return -ESRCH;
	}
	root = os_proc_root(pid);
	if (root < 0) {
		snprintf(err, errlen, "cannot open the root of process %d: %s", (int)pid,
			 strerror(-root));
		return root;
	}
	rc = os_open_in_root(root, "/tmp", O_PATH | O_DIRECTORY, 0);
	close(root);
	if (rc < 0) {
		if (rc == -ENOSYS)
			snprintf(err, errlen, "this kernel has no openat2 (Linux < 5.6), so the "
				 "JVM's /tmp cannot be entered safely");
		else
			snprintf(err, errlen, "cannot open the JVM's /tmp: %s", strerror(-rc));
		return rc;
	}
	t->tmp = rc;
	return 0;
}

/* Whether the attach socket's server is the JVM: the credentials the
 * listening process had (SO_PEERCRED; its pid as seen from here, 0 when it
 * is in a PID namespace we do not see). 0, or -EPERM with err set. */
int os_jattach_check_peer(int fd, pid_t pid, uid_t uid, const char *name, char *err,
			  size_t errlen)
{
	struct ucred cr;
	socklen_t n = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &n) != 0 || n != sizeof(cr)) {
		snprintf(err, errlen, "attach socket /tmp/%s: its server is unknown (%s): not used",
			 name, strerror(errno));
		return -EPERM;
	}
	if (cr.pid == pid || (cr.pid == 0 && (cr.uid == uid || cr.uid == 0)))
		return 0;
	snprintf(err, errlen, "attach socket /tmp/%s is served by process %d (uid %u), not by "
		 "the JVM (process %d, uid %u): not used", name, (int)cr.pid, (unsigned)cr.uid,
		 (int)pid, (unsigned)uid);
	return -EPERM;
}

/* Connects to the socket `name` of directory dirfd: the name itself is
 * never followed (O_PATH | O_NOFOLLOW), it must be a socket owned by uid
 * or root, and the connection goes to that very inode (through
 * /proc/self/fd/N of the O_PATH descriptor, which connect() resolves to the
 * socket the descriptor holds); then its server must be process pid.
 * Returns the connected fd; -ENOENT / -ECONNREFUSED when there is no
 * listening socket (yet); -EPERM with err set when one is refused. */
int os_jattach_connect_at(int dirfd, const char *name, pid_t pid, uid_t uid, char *err,
			  size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int pfd, fd = -1, rc;

	pfd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	if (fstat(pfd, &st) != 0) {
		rc = -errno;
		goto out;
	}
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "attach socket /tmp/%s is not a socket (%s): not used", name,
			 S_ISLNK(st.st_mode) ? "a symbolic link" : "another kind of file");
		rc = -EPERM;
		goto out;
	}
	if (st.st_uid != uid && st.st_uid != 0) {
		snprintf(err, errlen, "attach socket /tmp/%s is owned by uid %u, not the JVM's "
			 "uid %u: not used", name, (unsigned)st.st_uid, (unsigned)uid);
		rc = -EPERM;
		goto out;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d", pfd);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		rc = -errno;
		goto out;
	}
	if (connect(fd, (const struct sockaddr *)&sa, sizeof(sa)) != 0) {
		rc = -errno;
		goto out;
	}
	rc = os_jattach_check_peer(fd, pid, uid, name, err, errlen);
out:
	close(pfd);
	if (rc < 0) {
		if (fd >= 0)
			close(fd);
		return rc;
	}
	return fd;
}

static int ja_connect(const struct ja_target *t, char *err, size_t errlen)
{
	char name[32];

	snprintf(name, sizeof(name), ".java_pid%d", (int)t->ns);
	return os_jattach_connect_at(t->tmp, name, t->pid, t->uid, err, errlen);
}

int os_jattach_trigger(int dirfd, uid_t uid, gid_t gid, const char *name, struct stat *created)
{
	struct os_fsid id;
	int fd, rc = 0;

	/* as the JVM's user: the file is its user's without a chown, and
	 * nothing is created or followed with root's rights in a directory
	 * that user controls (O_EXCL: a planted link is never opened) */
	os_fs_enter(&id, uid, gid);
	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = -errno;
		if (rc == -EEXIST && fstatat(dirfd, name, created, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(created->st_mode) && (created->st_uid == uid || created->st_uid == 0))
			rc = 1; /* a trigger of the JVM's user already there (a jcmd) */
	} else {
		if (fstat(fd, created) != 0)
			rc = -errno;
		close(fd);
	}
	os_fs_leave(&id);
	return rc;
}

int os_jattach_untrigger(int dirfd, uid_t uid, gid_t gid, const char *name,
			 const struct stat *created)
{
	struct os_fsid id;
	int rc;

	os_fs_enter(&id, uid, gid);
	rc = os_unlink_same(dirfd, name, created);
	os_fs_leave(&id);
	return rc;
}

/* Connects to the JVM's attach socket, starting its listener if needed: a
 * trigger in its working directory, else in its /tmp (where the JVM looks,
 * in this order), then SIGQUIT. */
static int ja_open(pid_t pid, uint64_t deadline, char *err, size_t errlen)
{
	struct ja_target t;
	struct stat created;
	char proc[64], trig[32];
	int fd, rc, dirs[2] = { -1, -1 }, dir = -1;
	bool ours = false;

	rc = ja_target_open(&t, pid, err, errlen);
	if (rc < 0)
		return rc;
	fd = ja_connect(&t, err, errlen);
	if (fd >= 0 || (fd != -ENOENT && fd != -ECONNREFUSED)) {
		if (fd < 0 && fd != -EPERM)
			snprintf(err, errlen, "cannot connect to the JVM's attach socket: %s",
				 strerror(-fd));
		goto out;
	}
	/* the process's cwd itself (a magic link that root may follow: it is
	 * the directory the JVM looks in); nothing inside it is followed */
	snprintf(proc, sizeof(proc), "/proc/%d/cwd", (int)pid);
	dirs[0] = open(proc, O_PATH | O_DIRECTORY | O_CLOEXEC);
	dirs[1] = t.tmp;
	snprintf(trig, sizeof(trig), ".attach_pid%d", (int)t.ns);
	rc = -ENOENT;
	for (int i = 0; i < 2 && dir < 0; i++) {
		if (dirs[i] < 0)
			continue;
		rc = os_jattach_trigger(dirs[i], t.uid, t.gid, trig, &created);
		if (rc >= 0) {
			ours = rc == 0;
			dir = dirs[i];
		}
	}
	if (dir < 0) {
		snprintf(err, errlen, "cannot create the attach trigger %s in the JVM's working "
			 "directory or /tmp as its uid %u: %s", trig, (unsigned)t.uid,
			 strerror(-rc));
		fd = rc;
		goto out;
	}
	if (kill(pid, SIGQUIT) != 0) {
		fd = -errno;
		snprintf(err, errlen, "cannot signal process %d: %s", (int)pid, strerror(-fd));
		goto out;
	}
	for (unsigned i = 0;; i++) {
		fd = ja_connect(&t, err, errlen);
		if (fd >= 0 || (fd != -ENOENT && fd != -ECONNREFUSED))
			break;
		if (ja_now_ms() > deadline) {
			snprintf(err, errlen, "the JVM (pid %d) did not open its attach socket "
				 "(a JVM started with -XX:+DisableAttachMechanism refuses)",
				 (int)pid);
			fd = -ETIMEDOUT;
			break;
		}
		usleep(i < 20 ? 2000 : 20000);
	}
	if (fd < 0 && fd != -EPERM && fd != -ETIMEDOUT)
		snprintf(err, errlen, "cannot connect to the JVM's attach socket: %s",
			 strerror(-fd));
out:
	if (ours)
		os_jattach_untrigger(dir, t.uid, t.gid, trig, &created);
	if (dirs[0] >= 0)
		close(dirs[0]);
	ja_target_close(&t);
	return fd;
}

/* send, not write: a JVM that closed its end makes it fail with EPIPE
 * instead of killing objscope with SIGPIPE */
static int ja_write_all(int fd, const char *buf, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -errno;
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

int os_jattach_parse_reply(const char *buf, size_t n, const char *command, char *err,
			   size_t errlen)
{
	char shown[201];
	size_t k = 0;

	/* the status line: "0" alone or followed by a newline and the output */
	if (n >= 1 && buf[0] == '0' && (n == 1 || buf[1] == '\n' || buf[1] == 0))
		return 0;
	/* the JVM's words (up to a NUL, at most 200 bytes), not escape
	 * sequences for root's terminal */
	while (k < n && k < sizeof(shown) - 1 && buf[k]) {
		shown[k] = buf[k];
		k++;
	}
	shown[k] = 0;
	snprintf(err, errlen, "the JVM refused '%s': %s", command,
		 k ? os_untrusted_text(shown) : "(no answer)");
	return -EPROTO;
}

int os_jattach_jcmd(pid_t pid, const char *command, unsigned timeout_ms, char *out, size_t len,
		    char *err, size_t errlen)
{
	uint64_t deadline = ja_now_ms() + timeout_ms;
	char req[512];
	size_t n = 0, clen = strlen(command);
	int fd, rc = 0, pr = 0, gen = os_fs_stop_gen();

	if (len)
		out[0] = 0;
	if (clen + 16 > sizeof(req))
		return -ENAMETOOLONG;
	/* "1" "jcmd" command "" "" - each NUL-terminated */
	memcpy(req, "1\0jcmd\0", 7);
	memcpy(req + 7, command, clen + 1);
	n = 7 + clen + 1;
	req[n++] = 0;
	req[n++] = 0;
	fd = ja_open(pid, deadline, err, errlen);
	if (fd < 0)
		return fd;
	rc = ja_write_all(fd, req, n);
	if (rc < 0) {
		snprintf(err, errlen, "cannot send the request to the JVM: %s", strerror(-rc));
		goto out;
	}
	n = 0;
	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };
		uint64_t now = ja_now_ms();
		char scratch[4096];
		ssize_t r;

		if (now > deadline || (pr = poll(&p, 1, (int)(deadline - now))) == 0) {
			snprintf(err, errlen, "the JVM did not answer within %u ms", timeout_ms);
			rc = -ETIMEDOUT;
			goto out;
		}
		if (pr < 0 && errno == EINTR && os_fs_stop_gen() != gen) {
			snprintf(err, errlen, "stopped while waiting for the JVM's answer");
			rc = -EINTR;
			goto out;
		}
		if (pr < 0) /* a signal: nothing to read yet, and read() would block */
			continue;
		r = n + 1 < len ? read(fd, out + n, len - 1 - n) : read(fd, scratch, sizeof(scratch));
		if (r < 0 && errno == EINTR)
			continue; /* poll looks at a stop first */
		if (r <= 0)
			break;
		if (n + 1 < len)
			n += (size_t)r;
	}
	if (len)
		out[n] = 0;
	rc = os_jattach_parse_reply(out, n, command, err, errlen);
out:
	close(fd);
	return rc;
}

/* The start of process pid in seconds since the epoch (/proc/PID/stat's
 * starttime after the boot time of /proc/stat), 0 when unknown. */
static time_t process_start(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ticks = 0, btime = 0;
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')'); /* the command name may hold anything */
	/* fields 3 (state) to 22 (starttime) follow */
	for (int field = 3; p && field <= 22; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &ticks) != 1 || hz <= 0)
		return 0;
	f = fopen("/proc/stat", "re");
	if (!f)
		return 0;
	while (fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "btime %llu", &btime) == 1)
			break;
	fclose(f);
	return btime ? (time_t)(btime + ticks / (unsigned long long)hz) : 0;
}

int os_jattach_map_predates(pid_t pid, uid_t uid, int dirfd, const char *name)
{
	struct stat st;
	time_t start;

	/* the name itself, never followed */
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return 0;
	/* not a map the JVM's user may replace (a link, a FIFO, another user's
	 * file): not ours to remove either */
	if (!S_ISREG(st.st_mode) || st.st_uid != uid)
		return 1;
	start = process_start(pid);
	return !start || st.st_mtime + 1 >= start;
}

int os_jattach_map_check(int dirfd, const char *name, uid_t uid, struct stat *st, char *err,
			 size_t errlen)
{
	if (fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW) != 0) {
		int rc = -errno;

		snprintf(err, errlen, "the JVM wrote no /tmp/%s", name);
		return rc;
	}
	if (!S_ISREG(st->st_mode)) {
		snprintf(err, errlen, "the JVM's perf map /tmp/%s is not a regular file (%s): not "
			 "used", name, S_ISLNK(st->st_mode) ? "a symbolic link"
			 : S_ISFIFO(st->st_mode) ? "a FIFO" : "another kind of file");
		return S_ISLNK(st->st_mode) ? -ELOOP : -EFTYPE_OS;
	}
	if (st->st_uid != uid && st->st_uid != 0) {
		snprintf(err, errlen, "the JVM's perf map /tmp/%s is owned by uid %u, not the "
			 "JVM's uid %u: not used", name, (unsigned)st->st_uid, (unsigned)uid);
		return -EPERM;
	}
	return 0;
}

int os_jattach_map_stat(pid_t pid, struct stat *st, char *err, size_t errlen)
{
	struct ja_target t;
	char name[32];
	int rc = ja_target_open(&t, pid, err, errlen);

	if (rc < 0)
		return rc;
	snprintf(name, sizeof(name), "perf-%d.map", (int)t.ns);
	rc = os_jattach_map_check(t.tmp, name, t.uid, st, err, errlen);
	ja_target_close(&t);
	return rc;
}

int os_jattach_perf_map(pid_t pid, unsigned timeout_ms, char *path, size_t len, int *existed,
			char *err, size_t errlen)
{
	struct ja_target t;
	struct stat st;
	char out[1024], name[32];
	int rc;

	*existed = 0;
	if (len)
		path[0] = 0;
	rc = ja_target_open(&t, pid, err, errlen);
	if (rc < 0)
		return rc;
	snprintf(name, sizeof(name), "perf-%d.map", (int)t.ns);
	snprintf(path, len, "/proc/%d/root/tmp/%s", (int)pid, name);
	*existed = os_jattach_map_predates(pid, t.uid, t.tmp, name);
	rc = os_jattach_jcmd(pid, "Compiler.perfmap", timeout_ms, out, sizeof(out), err, errlen);
	if (rc == 0)
		rc = os_jattach_map_check(t.tmp, name, t.uid, &st, err, errlen);
	ja_target_close(&t);
	return rc;
}
