/* safefs.c - file-system actions on paths that another user can influence
 * (see safefs.h for the rules). */
#include "common/safefs.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <unistd.h>

void os_fs_enter(struct os_fsid *s, uid_t uid, gid_t gid)
{
	memset(s, 0, sizeof(*s));
	s->ngroups = -1;
	s->old_uid = (uid_t)setfsuid((uid_t)-1);
	s->old_gid = (gid_t)setfsgid((gid_t)-1);
	if (s->old_uid == uid && s->old_gid == gid)
		return;
	s->switched = true;
	if (geteuid() == 0) {
		int n = getgroups(OS_FSID_MAX_GROUPS, s->groups);

		/* the raw call: glibc's setgroups would change every thread */
		if (n >= 0 && syscall(SYS_setgroups, 0, NULL) == 0)
			s->ngroups = n;
	}
	/* group first: once the uid is no longer 0 the gid cannot change */
	setfsgid(gid);
	setfsuid(uid);
}

void os_fs_leave(struct os_fsid *s)
{
	if (!s->switched)
		return;
	setfsuid(s->old_uid);
	setfsgid(s->old_gid);
	if (s->ngroups >= 0)
		syscall(SYS_setgroups, (size_t)s->ngroups, s->groups);
	s->switched = false;
}

int os_proc_root(pid_t pid)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int os_proc_status_field(pid_t pid, const char *key, char *out, size_t len)
{
	char path[64], *buf, *l;
	size_t n, klen = strlen(key);
	int fd, rc;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/status");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	rc = os_read_capped(fd, 64 << 10, &buf, &n);
	close(fd);
	if (rc < 0)
		return rc;
	rc = -ENOENT;
	for (l = buf; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		size_t k;

		if (strncmp(l, key, klen) != 0 || l[klen] != ':')
			continue;
		l += klen + 1;
		l += strspn(l, " \t");
		k = strcspn(l, "\n");
		if (len) {
			k = k < len - 1 ? k : len - 1;
			memcpy(out, l, k);
			out[k] = 0;
		}
		rc = 0;
		break;
	}
	free(buf);
	return rc;
}

int os_proc_ids(pid_t pid, uid_t *euid, gid_t *egid)
{
	char u[128], g[128];
	unsigned long r, e;
	int rc = os_proc_status_field(pid, "Uid", u, sizeof(u));

	if (rc == 0)
		rc = os_proc_status_field(pid, "Gid", g, sizeof(g));
	if (rc < 0)
		return rc == -ENOENT ? -EPROTO : rc;
	if (sscanf(u, "%lu %lu", &r, &e) != 2)
		return -EPROTO;
	*euid = (uid_t)e;
	if (sscanf(g, "%lu %lu", &r, &e) != 2)
		return -EPROTO;
	*egid = (gid_t)e;
	return 0;
}

int os_open_in_root(int rootfd, const char *path, int flags, mode_t mode)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	long fd;

	while (*path == '/')
		path++;
	if (!*path)
		path = ".";
	fd = syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
	return fd < 0 ? -errno : (int)fd;
}

/* The parent directory of `path` inside the root, and its last component. */
static int parent_in_root(int rootfd, const char *path, char *dir, size_t dirlen,
			  const char **base)
{
	const char *slash = strrchr(path, '/');
	int fd;

	if (!slash) {
		snprintf(dir, dirlen, ".");
		*base = path;
	} else {
		if ((size_t)(slash - path) + 1 > dirlen)
			return -ENAMETOOLONG;
		memcpy(dir, path, (size_t)(slash - path));
		dir[slash - path] = 0;
		*base = slash + 1;
	}
	if (!**base || !strcmp(*base, ".") || !strcmp(*base, ".."))
		return -EINVAL;
	fd = os_open_in_root(rootfd, dir[0] ? dir : "/", O_PATH | O_DIRECTORY, 0);
	return fd;
}

int os_mkdir_in_root(int rootfd, const char *path, mode_t mode)
{
	char dir[PATH_MAX];
	const char *base;
	int dfd = parent_in_root(rootfd, path, dir, sizeof(dir), &base), rc;

	if (dfd < 0)
		return dfd;
	rc = mkdirat(dfd, base, mode) == 0 ? 0 : -errno;
	close(dfd);
	return rc;
}

int os_open_untrusted(int dirfd, const char *path, uid_t owner, struct stat *st)
{
	struct stat tmp;
	int fd, fl;

	if (!st)
		st = &tmp;
	fd = openat(dirfd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) != 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	if (!S_ISREG(st->st_mode)) {
		close(fd);
		return -EFTYPE_OS;
	}
	if (owner != OS_ANY_OWNER && st->st_uid != owner && st->st_uid != 0) {
		close(fd);
		return -EPERM;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

int os_read_capped(int fd, size_t max, char **out, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);

	*out = NULL;
	*len = 0;
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t r;

		if (n == cap) {
			char *nb;

			if (cap > max) {
				free(buf);
				return -EFBIG;
			}
			cap = cap * 2 > max + 1 ? max + 1 : cap * 2;
			nb = realloc(buf, cap + 1);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = -errno;

			free(buf);
			return e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max) {
			free(buf);
			return -EFBIG;
		}
	}
	buf[n] = 0;
	*out = buf;
	*len = n;
	return 0;
}

char *os_untrusted_text(char *s)
{
	for (unsigned char *p = (unsigned char *)s; *p; p++) {
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
		else if (*p < 0x20 || *p >= 0x7f)
			*p = '?';
	}
	return s;
}

int os_unlink_same(int dirfd, const char *name, const struct stat *created)
{
	struct stat now;

	if (fstatat(dirfd, name, &now, AT_SYMLINK_NOFOLLOW) != 0)
		return -errno;
	if (now.st_dev != created->st_dev || now.st_ino != created->st_ino)
		return -ESTALE;
	return unlinkat(dirfd, name, 0) == 0 ? 0 : -errno;
}
