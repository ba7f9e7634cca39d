/* jattach.c - HotSpot dynamic attach (see jattach.h). */
#include "attacher/jattach.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
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

static int ja_socket_path(pid_t pid, pid_t ns, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (snprintf(sa->sun_path, sizeof(sa->sun_path), "/proc/%d/root/tmp/.java_pid%d", (int)pid,
		     (int)ns) >= (int)sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	return 0;
}

static int ja_connect(const struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), rc;

	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) != 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	return fd;
}

/* Creates the trigger file (cwd first, then /tmp, as the JVM looks) owned
 * by the JVM's user; its path (from here) into trig. */
static int ja_trigger(pid_t pid, pid_t ns, char *trig, size_t len)
{
	static const char *const dirs[] = { "cwd", "root/tmp" };
	char proc[64];
	struct stat st;
	int rc = -ENOENT;

	snprintf(proc, sizeof(proc), "/proc/%d", (int)pid);
	if (stat(proc, &st) != 0)
		return -ESRCH;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(*dirs); i++) {
		int fd;

		snprintf(trig, len, "/proc/%d/%s/.attach_pid%d", (int)pid, dirs[i], (int)ns);
		fd = open(trig, O_WRONLY | O_CREAT | O_CLOEXEC, 0660);
		if (fd < 0) {
			rc = -errno;
			continue;
		}
		/* the JVM accepts a trigger of its own user (or root) */
		if (fchown(fd, st.st_uid, st.st_gid) != 0 && errno != EPERM) {
			rc = -errno;
			close(fd);
			unlink(trig);
			continue;
		}
		close(fd);
		return 0;
	}
	trig[0] = 0;
	return rc;
}

/* Connects to the JVM's attach socket, starting its listener if needed. */
static int ja_open(pid_t pid, uint64_t deadline, char *err, size_t errlen)
{
	struct sockaddr_un sa;
	char trig[128];
	pid_t ns = os_jattach_ns_pid(pid);
	int fd, rc;

	if (ns < 0) {
		snprintf(err, errlen, "process %d is gone", (int)pid);
		return ns;
	}
	rc = ja_socket_path(pid, ns, &sa);
	if (rc < 0) {
		snprintf(err, errlen, "attach socket path too long");
		return rc;
	}
	fd = ja_connect(&sa);
	if (fd >= 0)
		return fd;
	rc = ja_trigger(pid, ns, trig, sizeof(trig));
	if (rc < 0) {
		snprintf(err, errlen, "cannot create the attach trigger .attach_pid%d in the JVM's "
			 "working directory or /tmp: %s", (int)ns, strerror(-rc));
		return rc;
	}
	if (kill(pid, SIGQUIT) != 0) {
		rc = -errno;
		unlink(trig);
		snprintf(err, errlen, "cannot signal process %d: %s", (int)pid, strerror(-rc));
		return rc;
	}
	for (unsigned i = 0;; i++) {
		fd = ja_connect(&sa);
		if (fd >= 0)
			break;
		if (ja_now_ms() > deadline) {
			snprintf(err, errlen, "the JVM (pid %d) did not open its attach socket (a JVM "
				 "started with -XX:+DisableAttachMechanism refuses)", (int)pid);
			fd = -ETIMEDOUT;
			break;
		}
		usleep(i < 20 ? 2000 : 20000);
	}
	unlink(trig);
	return fd;
}

static int ja_write_all(int fd, const char *buf, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, buf, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -errno;
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

int os_jattach_jcmd(pid_t pid, const char *command, unsigned timeout_ms, char *out, size_t len,
		    char *err, size_t errlen)
{
	uint64_t deadline = ja_now_ms() + timeout_ms;
	char req[512];
	size_t n = 0, clen = strlen(command);
	int fd, rc = 0;

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

		if (now > deadline || poll(&p, 1, (int)(deadline - now)) == 0) {
			snprintf(err, errlen, "the JVM did not answer within %u ms", timeout_ms);
			rc = -ETIMEDOUT;
			goto out;
		}
		r = n + 1 < len ? read(fd, out + n, len - 1 - n) : read(fd, scratch, sizeof(scratch));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (n + 1 < len)
			n += (size_t)r;
	}
	if (len)
		out[n] = 0;
	if (strncmp(out, "0\n", 2) != 0 && strcmp(out, "0") != 0) {
		snprintf(err, errlen, "the JVM refused '%s': %.200s", command, out);
		rc = -EPROTO;
	}
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

int os_jattach_map_predates(pid_t pid, const char *path)
{
	struct stat st;
	time_t start;

	if (stat(path, &st) != 0)
		return 0;
	start = process_start(pid);
	return !start || st.st_mtime + 1 >= start;
}

int os_jattach_perf_map(pid_t pid, unsigned timeout_ms, char *path, size_t len, int *existed,
			char *err, size_t errlen)
{
	char out[1024];
	pid_t ns = os_jattach_ns_pid(pid);
	int rc;

	if (ns < 0) {
		snprintf(err, errlen, "process %d is gone", (int)pid);
		return ns;
	}
	snprintf(path, len, "/proc/%d/root/tmp/perf-%d.map", (int)pid, (int)ns);
	*existed = os_jattach_map_predates(pid, path);
	rc = os_jattach_jcmd(pid, "Compiler.perfmap", timeout_ms, out, sizeof(out), err, errlen);
	if (rc < 0)
		return rc;
	if (access(path, R_OK) != 0) {
		snprintf(err, errlen, "the JVM wrote no %s", path);
		return -ENOENT;
	}
	return 0;
}
