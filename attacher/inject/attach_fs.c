/* attach_fs.c - the files attach makes inside the target's root (see
 * attach_fs.h). */
#include "attacher/inject/attach_fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include "common/safefs.h"

int os_tfs_open(struct os_tfs *t, pid_t pid, char *err, size_t errlen)
{
	int rc, probe;

	memset(t, 0, sizeof(*t));
	t->root = -1;
	t->pid = pid;
	rc = os_proc_ids(pid, &t->uid, &t->gid);
	if (rc < 0) {
		snprintf(err, errlen, "cannot read the ids of process %d: %s", (int)pid,
			 strerror(-rc));
		return rc;
	}
	rc = os_proc_root(pid);
	if (rc < 0) {
		snprintf(err, errlen, "cannot open the root directory of process %d: %s",
			 (int)pid, strerror(-rc));
		return rc;
	}
	t->root = rc;
	probe = os_open_in_root(t->root, "/", O_PATH | O_DIRECTORY, 0);
	if (probe < 0) {
		if (probe == -ENOSYS)
			snprintf(err, errlen, "this kernel has no openat2 (Linux < 5.6): paths "
				 "inside the target cannot be resolved safely, attach is refused");
		else
			snprintf(err, errlen, "cannot resolve paths inside the root of process %d: "
				 "%s", (int)pid, strerror(-probe));
		os_tfs_close(t);
		return probe;
	}
	close(probe);
	return 0;
}

void os_tfs_close(struct os_tfs *t)
{
	if (t->root >= 0)
		close(t->root);
	t->root = -1;
}

int os_tfs_create(const struct os_tfs *t, const char *dir, const char *name, mode_t mode,
		  struct os_tfs_file *f)
{
	struct os_fsid id;
	struct stat st;
	int dfd, fd = -1, rc = 0;

	f->dir = -1;
	if (strlen(name) >= sizeof(f->name) || strchr(name, '/'))
		return -EINVAL;
	dfd = os_open_in_root(t->root, dir, O_PATH | O_DIRECTORY, 0);
	if (dfd < 0)
		return dfd;
	os_fs_enter(&id, t->uid, t->gid);
	for (int tries = 0; tries < 2 && fd < 0; tries++) {
		fd = openat(dfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd >= 0)
			break;
		rc = -errno;
		/* our name, so an objscope with our PID left it: the target's
		 * user's own file, removed as that user */
		if (rc != -EEXIST || tries ||
		    fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
		    st.st_uid != t->uid || os_unlink_same(dfd, name, &st) != 0)
			break;
	}
	if (fd >= 0 && fstat(fd, &f->st) != 0) {
		rc = -errno;
		close(fd);
		fd = -1;
	}
	os_fs_leave(&id);
	if (fd < 0) {
		close(dfd);
		return rc;
	}
	f->dir = dfd;
	snprintf(f->name, sizeof(f->name), "%s", name);
	return fd;
}

void os_tfs_remove(const struct os_tfs *t, struct os_tfs_file *f)
{
	struct os_fsid id;

	if (f->dir < 0)
		return;
	os_fs_enter(&id, t->uid, t->gid);
	os_unlink_same(f->dir, f->name, &f->st);
	os_fs_leave(&id);
	close(f->dir);
	f->dir = -1;
}

void os_tfs_rings_name(char *out, size_t len, pid_t collector, pid_t target)
{
	snprintf(out, len, "objscope-%d-%d.rings", (int)collector, (int)target);
}

/* The collector PID of a rings file name of target `target`; 0 when the
 * name is not exactly one of ours. */
static pid_t rings_owner(const char *name, pid_t target)
{
	char again[64];
	int owner = 0, tgt = 0, end = 0;

	if (sscanf(name, "objscope-%d-%d.rings%n", &owner, &tgt, &end) != 2 || owner <= 0 ||
	    tgt != (int)target || name[end])
		return 0;
	/* no sign, leading zeros or blanks that sscanf let through */
	os_tfs_rings_name(again, sizeof(again), owner, tgt);
	return strcmp(again, name) == 0 ? (pid_t)owner : 0;
}

int os_tfs_drop_stale_rings(const struct os_tfs *t, const char *dir, time_t min_age)
{
	struct os_fsid id;
	struct dirent *de;
	int fd, removed = 0;
	DIR *d;

	fd = os_open_in_root(t->root, dir, O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0)
		return 0;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return 0;
	}
	while ((de = readdir(d))) {
		pid_t owner = rings_owner(de->d_name, t->pid);
		struct stat st;

		if (!owner || owner == getpid() || kill(owner, 0) == 0 || errno != ESRCH)
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode) || st.st_uid != t->uid ||
		    time(NULL) - st.st_mtime <= min_age)
			continue;
		os_fs_enter(&id, t->uid, t->gid);
		if (os_unlink_same(fd, de->d_name, &st) == 0)
			removed++;
		os_fs_leave(&id);
	}
	closedir(d);
	return removed;
}

/* Whether the files a and b (both from their start) hold the same bytes. */
static bool same_content(int a, int b, off_t size)
{
	enum { CHUNK = 64 << 10 };
	char *x = malloc(2 * CHUNK), *y = x + CHUNK;
	bool same = x != NULL;

	for (off_t off = 0; off < size && same;) {
		size_t want = size - off < CHUNK ? (size_t)(size - off) : CHUNK;
		ssize_t m = pread(a, x, want, off), n = pread(b, y, want, off);

		same = m > 0 && n == m && memcmp(x, y, (size_t)m) == 0;
		off += m;
	}
	free(x);
	return same;
}

static int copy_fd(int in, int out, off_t size)
{
	off_t off = 0;

	while (off < size) {
		ssize_t n = sendfile(out, in, &off, (size_t)(size - off));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
	}
	return 0;
}

/* Writes a new copy of src (fd in, size) as dfd/name: a temporary name
 * created O_EXCL, then renamed over name (a file the target has mapped is
 * never rewritten in place; a link at name is replaced, not followed).
 * Runs with the target's file-system identity. */
static int write_copy(int in, off_t size, int dfd, const char *name)
{
	char tmp[96];
	struct stat st;
	int out = -1, rc;

	for (int i = 0; i < 8 && out < 0; i++) {
		snprintf(tmp, sizeof(tmp), "%s.%d.%d", name, (int)getpid(), i);
		out = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0755);
		if (out < 0 && errno != EEXIST)
			return -errno;
	}
	if (out < 0)
		return -EEXIST;
	rc = fstat(out, &st) == 0 ? 0 : -errno;
	if (rc == 0)
		rc = copy_fd(in, out, size);
	if (close(out) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && renameat(dfd, tmp, dfd, name) != 0)
		rc = -errno;
	if (rc < 0)
		os_unlink_same(dfd, tmp, &st);
	return rc;
}

/* The target's user may replace or rewrite this copy whenever it likes: it
 * is its own file in its own /tmp. That is no risk to anyone else: all it
 * can achieve is that its own process loads a library it chose, which it
 * could do anyway. What would be a risk is root acting there: creating,
 * chowning or truncating a file a link planted there names, or trusting a
 * directory another user can write (then that user's library would be
 * loaded into the target). Hence the checks on the directory, and no chown
 * at all. The content comparison is for correctness (a stale or partial
 * copy is not reused). Root's objscope later reads the loaded library's
 * symbols (attacher/inject/inject.c), as untrusted ELF input. */
int os_tfs_place_library(const struct os_tfs *t, const char *src, char *path, size_t len,
			 char *err, size_t errlen)
{
	static const char lib[] = "libobjscope.so";
	char dname[64];
	struct os_fsid id;
	struct stat ours, dst, have;
	int in, tmp = -1, dfd = -1, old = -1, rc;

	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0 || fstat(in, &ours) != 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot read %s: %s", src, strerror(-rc));
		if (in >= 0)
			close(in);
		return rc;
	}
	snprintf(dname, sizeof(dname), "objscope-%u-%lx", (unsigned)t->uid,
		 (unsigned long)ours.st_mtime);
	if (snprintf(path, len, "/tmp/%s/%s", dname, lib) >= (int)len) {
		close(in);
		return -ENAMETOOLONG;
	}
	tmp = os_open_in_root(t->root, "/tmp", O_PATH | O_DIRECTORY, 0);
	if (tmp < 0) {
		snprintf(err, errlen, "cannot open /tmp inside the target's root: %s",
			 strerror(-tmp));
		close(in);
		return tmp;
	}
	os_fs_enter(&id, t->uid, t->gid);
	if (mkdirat(tmp, dname, 0755) != 0 && errno != EEXIST) {
		rc = -errno;
		snprintf(err, errlen, "cannot create /tmp/%s as uid %u: %s", dname,
			 (unsigned)t->uid, strerror(-rc));
		goto out;
	}
	dfd = openat(tmp, dname, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &dst) != 0) {
		rc = -errno;
		snprintf(err, errlen, "/tmp/%s is not a directory (%s): not used", dname,
			 fstatat(tmp, dname, &dst, AT_SYMLINK_NOFOLLOW) == 0 &&
			 S_ISLNK(dst.st_mode) ? "a symbolic link" : strerror(-rc));
		goto out;
	}
	if (!S_ISDIR(dst.st_mode) || (dst.st_uid != t->uid && dst.st_uid != 0) ||
	    (dst.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(err, errlen, "/tmp/%s is owned by uid %u with mode %04o, not a directory "
			 "of uid %u (or root) that only its owner may write: not used", dname,
			 (unsigned)dst.st_uid, (unsigned)(dst.st_mode & 07777), (unsigned)t->uid);
		rc = -EPERM;
		goto out;
	}
	old = os_open_untrusted(dfd, lib, t->uid, &have);
	if (old >= 0 && have.st_size == ours.st_size && same_content(in, old, ours.st_size)) {
		rc = 0; /* the same library: reused, so that a loaded copy is reused */
		goto out;
	}
	rc = write_copy(in, ours.st_size, dfd, lib);
	if (rc < 0)
		snprintf(err, errlen, "cannot copy the library to /tmp/%s as uid %u: %s", dname,
			 (unsigned)t->uid, strerror(-rc));
out:
	os_fs_leave(&id);
	if (old >= 0)
		close(old);
	if (dfd >= 0)
		close(dfd);
	close(tmp);
	close(in);
	return rc;
}
