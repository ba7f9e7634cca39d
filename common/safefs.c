/* safefs.c - file-system actions on paths that another user can influence
 * (see safefs.h for the rules). */
#include "common/safefs.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/random.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

volatile sig_atomic_t os_fs_stop;

#ifndef FUSE_SUPER_MAGIC
#define FUSE_SUPER_MAGIC 0x65735546
#endif

int os_fd_is_data(int fd, struct stat *st)
{
	/* file systems whose "regular files" are kernel interfaces (a read
	 * may block, drain a log, or answer something else each time), or
	 * whose reads another process answers when it pleases */
	static const unsigned long refused[] = {
		PROC_SUPER_MAGIC, SYSFS_MAGIC, DEBUGFS_MAGIC, TRACEFS_MAGIC, SECURITYFS_MAGIC,
		CGROUP_SUPER_MAGIC, CGROUP2_SUPER_MAGIC, BPF_FS_MAGIC, PSTOREFS_MAGIC,
		0x62656570 /* configfs */, EFIVARFS_MAGIC, FUSE_SUPER_MAGIC, DEVPTS_SUPER_MAGIC,
	};
	struct stat tmp;
	struct statfs sfs;

	if (!st)
		st = &tmp;
	if (fstat(fd, st) != 0)
		return -errno;
	if (!S_ISREG(st->st_mode))
		return -EFTYPE_OS;
	if (fstatfs(fd, &sfs) != 0)
		return -errno;
	for (size_t i = 0; i < sizeof(refused) / sizeof(*refused); i++)
		if ((unsigned long)sfs.f_type == refused[i])
			return -EFTYPE_OS;
	return 0;
}

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

int os_open_data_beneath(int dirfd, const char *path, struct stat *st)
{
	struct open_how how = {
		.flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	int rc, fl;

	if (fd < 0)
		return -errno;
	rc = os_fd_is_data((int)fd, st);
	if (rc < 0) {
		close((int)fd);
		return rc;
	}
	fl = fcntl((int)fd, F_GETFL);
	if (fl >= 0)
		fcntl((int)fd, F_SETFL, fl & ~O_NONBLOCK);
	return (int)fd;
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
	int fd, fl, rc;

	if (!st)
		st = &tmp;
	fd = openat(dirfd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	rc = os_fd_is_data(fd, st);
	if (rc < 0) {
		close(fd);
		return rc;
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
	int gen = os_fs_stop_gen();

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
		if (r < 0 && errno == EINTR && os_fs_stop_gen() == gen)
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

/* ---- output files ---- */

#define OS_OUT_FIFO_WAIT_MS 2000

static void out_err(char *err, size_t errlen, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void out_err(char *err, size_t errlen, const char *path, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!err || !errlen)
		return;
	n = snprintf(err, errlen, "%s: ", path);
	if (n < 0 || (size_t)n >= errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
}

/* What an existing non-regular output may be: -errno and a reason if not.
 * fd >= 0: opened already (terminal check); -1: by type and owner only. */
static int direct_ok(const char *path, const struct stat *st, int fd, char *err, size_t errlen)
{
	if (S_ISDIR(st->st_mode)) {
		out_err(err, errlen, path, "is a directory — name a file");
		return -EISDIR;
	}
	if (S_ISFIFO(st->st_mode)) {
		if (st->st_uid != geteuid() && st->st_uid != 0) {
			out_err(err, errlen, path,
				"is a FIFO owned by uid %u, not by us: not written — name a file",
				(unsigned)st->st_uid);
			return -EPERM;
		}
		return 0;
	}
	if (S_ISCHR(st->st_mode)) {
		if (major(st->st_rdev) == 1 && minor(st->st_rdev) == 3) /* /dev/null */
			return 0;
		if (fd < 0 || isatty(fd))
			return 0; /* a terminal is known only once opened */
	}
	out_err(err, errlen, path,
		"is a %s: not written — name a regular file, a FIFO, a terminal or /dev/null",
		S_ISCHR(st->st_mode) ? "device" : S_ISBLK(st->st_mode) ? "block device" :
		S_ISSOCK(st->st_mode) ? "socket" : "special file");
	return -EFTYPE_OS;
}

/* 1: write in place (*st the target), 0: a new file replaces the name,
 * -errno: refused. */
static int out_classify(const char *path, struct stat *st, char *err, size_t errlen)
{
	if (!path || !*path) {
		out_err(err, errlen, "objscope", "empty output path");
		return -EINVAL;
	}
	if (lstat(path, st) != 0) {
		if (errno == ENOENT)
			return 0;
		out_err(err, errlen, path, "%s", strerror(errno));
		return -errno;
	}
	if (S_ISREG(st->st_mode))
		return 0;
	if (S_ISLNK(st->st_mode)) {
		/* followed only when the link is ours or root's; else replaced */
		if (st->st_uid != geteuid() && st->st_uid != 0)
			return 0;
		if (stat(path, st) != 0 || S_ISREG(st->st_mode))
			return 0;
	}
	if (S_ISDIR(st->st_mode)) {
		out_err(err, errlen, path, "is a directory — name a file");
		return -EISDIR;
	}
	return direct_ok(path, st, -1, err, errlen) ?: 1;
}

static int out_dir(const char *path, const char **base, char *err, size_t errlen)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	struct stat st;
	int fd;

	if (!slash) {
		snprintf(dir, sizeof(dir), ".");
		*base = path;
	} else if (slash == path) {
		snprintf(dir, sizeof(dir), "/");
		*base = slash + 1;
	} else {
		if ((size_t)(slash - path) >= sizeof(dir)) {
			out_err(err, errlen, path, "%s", strerror(ENAMETOOLONG));
			return -ENAMETOOLONG;
		}
		memcpy(dir, path, (size_t)(slash - path));
		dir[slash - path] = 0;
		*base = slash + 1;
	}
	if (!**base || !strcmp(*base, ".") || !strcmp(*base, "..")) {
		out_err(err, errlen, path, "is a directory — name a file");
		return -EISDIR;
	}
	fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		out_err(err, errlen, path, "cannot create: directory %s: %s", dir, strerror(e));
		return -e;
	}
	if (fstat(fd, &st) == 0 && faccessat(fd, ".", W_OK | X_OK, AT_EACCESS) != 0) {
		int e = errno;

		out_err(err, errlen, path, "cannot create: directory %s: %s", dir, strerror(e));
		close(fd);
		return -e;
	}
	return fd;
}

static unsigned int rand_u32(void)
{
	static unsigned int ctr;
	unsigned int r;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
		r = (unsigned int)getpid() * 2654435761u ^ (unsigned int)time(NULL);
	return r ^ __atomic_add_fetch(&ctr, 0x9e3779b9u, __ATOMIC_RELAXED);
}

static void tmp_name(struct os_outfile *o)
{
	snprintf(o->tmpname, sizeof(o->tmpname), ".%.60s.%08x.tmp", o->base, rand_u32());
}

/* A file only we can have created, named or not yet. */
static int out_create(struct os_outfile *o, mode_t mode, char *err, size_t errlen)
{
	int tries;

	o->fd = openat(o->dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
	if (o->fd >= 0) {
		o->tmpfile = true;
		return 0;
	}
	/* file systems without O_TMPFILE: a fresh random name */
	for (tries = 0; tries < 64; tries++) {
		tmp_name(o);
		o->fd = openat(o->dirfd, o->tmpname,
			       O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (o->fd >= 0 || errno != EEXIST)
			break;
	}
	if (o->fd < 0) {
		int e = errno;

		out_err(err, errlen, o->path, "cannot create: %s", strerror(e));
		return -e;
	}
	if (fstat(o->fd, &o->st) != 0) {
		int e = errno;

		close(o->fd);
		o->fd = -1;
		unlinkat(o->dirfd, o->tmpname, 0);
		out_err(err, errlen, o->path, "cannot create: %s", strerror(e));
		return -e;
	}
	o->linked = true;
	return 0;
}

static void out_reset(struct os_outfile *o)
{
	free(o->path);
	if (o->dirfd >= 0)
		close(o->dirfd);
	memset(o, 0, sizeof(*o));
	o->fd = o->dirfd = -1;
}

int os_out_check(const char *path, char *err, size_t errlen)
{
	struct os_outfile o = { .fd = -1, .dirfd = -1 };
	struct stat st;
	int rc = out_classify(path, &st, err, errlen);

	if (rc < 0)
		return rc;
	if (rc == 1) {
		if (S_ISCHR(st.st_mode)) { /* a terminal? (opening a FIFO would
					      end a reader's wait: not done) */
			int fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

			if (fd < 0) {
				rc = -errno;
				out_err(err, errlen, path, "%s", strerror(errno));
				return rc;
			}
			rc = direct_ok(path, &st, fd, err, errlen);
			close(fd);
			return rc;
		}
		return 0;
	}
	o.path = strdup(path);
	if (!o.path)
		return -ENOMEM;
	o.dirfd = out_dir(path, &o.base, err, errlen);
	if (o.dirfd < 0) {
		rc = o.dirfd;
		o.dirfd = -1;
		out_reset(&o);
		return rc;
	}
	o.base = o.path + (o.base - path);
	{ /* another user's file in a sticky directory (/tmp) cannot be
	     replaced by us: say so now rather than after the run */
		struct stat dst, old;

		if (geteuid() != 0 && fstat(o.dirfd, &dst) == 0 && (dst.st_mode & S_ISVTX) &&
		    fstatat(o.dirfd, o.base, &old, AT_SYMLINK_NOFOLLOW) == 0 &&
		    old.st_uid != geteuid() && dst.st_uid != geteuid()) {
			out_err(err, errlen, path,
				"belongs to uid %u in a sticky directory: it cannot be replaced "
				"— name another file", (unsigned)old.st_uid);
			out_reset(&o);
			return -EPERM;
		}
	}
	rc = out_create(&o, 0600, err, errlen);
	if (!rc)
		os_out_abort(&o);
	else
		out_reset(&o);
	return rc;
}

int os_out_open(struct os_outfile *o, const char *path, mode_t mode, char *err, size_t errlen)
{
	struct stat st;
	int rc;

	memset(o, 0, sizeof(*o));
	o->fd = o->dirfd = -1;
	rc = out_classify(path, &st, err, errlen);
	if (rc < 0)
		return rc;
	o->path = strdup(path);
	if (!o->path)
		return -ENOMEM;
	if (rc == 1) {
		struct stat now;
		int fl;

		o->direct = true;
		/* O_NONBLOCK: a FIFO without a reader fails with ENXIO at once;
		 * a reader being started (`mkfifo p; objscope ... -o p & cat p`)
		 * gets OS_OUT_FIFO_WAIT_MS, polled, never an unbounded block */
		for (int waited = 0;; waited += 10) {
			o->fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
			if (o->fd >= 0 || errno != ENXIO || !S_ISFIFO(st.st_mode) ||
			    waited >= OS_OUT_FIFO_WAIT_MS)
				break;
			usleep(10 * 1000);
		}
		if (o->fd < 0) {
			rc = -errno;
			if (errno == ENXIO && S_ISFIFO(st.st_mode))
				out_err(err, errlen, path,
					"is a FIFO that nobody reads: not written — start its "
					"reader first, or name a file");
			else
				out_err(err, errlen, path, "cannot open: %s", strerror(errno));
			out_reset(o);
			return rc;
		}
		if (fstat(o->fd, &now) != 0 || now.st_dev != st.st_dev || now.st_ino != st.st_ino ||
		    (now.st_mode & S_IFMT) != (st.st_mode & S_IFMT)) {
			out_err(err, errlen, path, "changed while being opened: not written");
			close(o->fd);
			out_reset(o);
			return -ESTALE;
		}
		rc = direct_ok(path, &now, o->fd, err, errlen);
		fl = fcntl(o->fd, F_GETFL);
		if (!rc && fl >= 0 && fcntl(o->fd, F_SETFL, fl & ~O_NONBLOCK) != 0)
			rc = -errno;
		if (rc) {
			close(o->fd);
			out_reset(o);
		}
		return rc;
	}
	o->dirfd = out_dir(path, &o->base, err, errlen);
	if (o->dirfd < 0) {
		rc = o->dirfd;
		o->dirfd = -1;
		out_reset(o);
		return rc;
	}
	o->base = o->path + (o->base - path);
	rc = out_create(o, mode, err, errlen);
	if (rc)
		out_reset(o);
	return rc;
}

/* Gives the O_TMPFILE file a random name in the directory. */
static int out_link(struct os_outfile *o)
{
	char proc[64];
	int tries, e = EEXIST;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", o->fd);
	for (tries = 0; tries < 64 && e == EEXIST; tries++) {
		tmp_name(o);
		if (linkat(AT_FDCWD, proc, o->dirfd, o->tmpname, AT_SYMLINK_FOLLOW) == 0 ||
		    linkat(o->fd, "", o->dirfd, o->tmpname, AT_EMPTY_PATH) == 0) {
			if (fstat(o->fd, &o->st) != 0)
				return -errno;
			o->linked = true;
			return 0;
		}
		e = errno;
	}
	return -e;
}

int os_out_commit(struct os_outfile *o, bool keep_old, char *err, size_t errlen)
{
	int rc = 0;

	if (o->direct) {
		rc = close(o->fd) == 0 || errno == EINTR ? 0 : -errno;
		o->fd = -1;
		if (rc)
			out_err(err, errlen, o->path, "cannot write: %s", strerror(-rc));
		out_reset(o);
		return rc;
	}
	if (fsync(o->fd) != 0) {
		rc = -errno;
		out_err(err, errlen, o->path, "cannot write: %s", strerror(-rc));
		goto fail;
	}
	if (o->tmpfile && !o->linked && (rc = out_link(o)) != 0) {
		out_err(err, errlen, o->path, "cannot name the new file: %s", strerror(-rc));
		goto fail;
	}
	if (keep_old) {
		struct stat st;
		char old[NAME_MAX + 1];

		if (fstatat(o->dirfd, o->base, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode)) {
			if ((size_t)snprintf(old, sizeof(old), "%s.old", o->base) >= sizeof(old))
				o->old_errno = ENAMETOOLONG;
			else if (renameat(o->dirfd, o->base, o->dirfd, old) != 0)
				o->old_errno = errno;
		}
	}
	if (renameat(o->dirfd, o->tmpname, o->dirfd, o->base) != 0) {
		rc = -errno;
		out_err(err, errlen, o->path, "cannot rename the new file into place: %s",
			strerror(-rc));
		goto fail;
	}
	o->linked = false;
	close(o->fd);
	o->fd = -1;
	{ /* best effort: makes the rename durable */
		int d = openat(o->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (d >= 0) {
			fsync(d);
			close(d);
		}
	}
	rc = o->old_errno;
	out_reset(o);
	o->old_errno = rc;
	return 0;
fail:
	os_out_abort(o);
	return rc;
}

void os_out_abort(struct os_outfile *o)
{
	if (o->fd >= 0) {
		close(o->fd);
		o->fd = -1;
	}
	if (o->linked && o->dirfd >= 0)
		os_unlink_same(o->dirfd, o->tmpname, &o->st);
	out_reset(o);
}
