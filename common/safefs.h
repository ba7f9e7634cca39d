/* safefs.h - file-system actions on paths that another user can influence.
 *
 * objscope attach usually runs as root against a process of another user;
 * everything that user can reach (its working directory, its /tmp, the
 * /dev/shm or /tmp inside its container, its perf map, its JVM's attach
 * files) is hostile input. The rules, used by attach, record and the
 * symbolizer:
 *   - a path inside the target's root is resolved with openat2's
 *     RESOLVE_IN_ROOT relative to an fd of /proc/PID/root, so that an
 *     absolute symlink planted in a container resolves inside the container,
 *     never against the host (os_open_in_root);
 *   - files are created, removed and renamed there with the target's
 *     file-system identity (os_fs_enter/os_fs_leave: setfsuid/setfsgid of
 *     this thread), so that nothing is done with root's rights that the
 *     target's user could not do itself, and nothing needs a chown;
 *   - files someone else may have planted are opened with O_NOFOLLOW and
 *     O_NONBLOCK and checked to be regular files of the expected owner
 *     (a symlink, FIFO or device is refused; os_open_untrusted), and read
 *     with a size cap (os_read_capped);
 *   - a file is removed only if it is still the inode that was created
 *     (os_unlink_same);
 *   - whatever opens a file the target names or may have replaced checks
 *     that it is data (os_fd_is_data): a regular file on a file system
 *     that stores data, never a kernel interface (procfs: /proc/kmsg
 *     blocks and drains the kernel log; sysfs, debugfs, ...) nor a FUSE
 *     file system (its server, possibly the target, decides when a read
 *     returns, and a signal does not end the wait);
 *   - reads of such files are bounded in size, and a read under way gives
 *     up when objscope is asked to stop or its -d time is over (os_fs_stop
 *     changes: the handlers of SIGINT/SIGTERM/SIGHUP and of attach's -d
 *     timer, which also interrupt a blocking read; EINTR is not retried
 *     then, and a long read looks between chunks). Reads begun after that
 *     run normally: the profile written at the end is still symbolized.
 *
 * Return convention: a file descriptor or 0 on success, -errno on failure.
 * Specific refusals: -ELOOP a symbolic link, -EFTYPE_OS not a regular file
 * (FIFO, device, socket, directory), -EPERM owned by another user, -EFBIG
 * larger than the cap.
 */
#ifndef OBJSCOPE_SAFEFS_H
#define OBJSCOPE_SAFEFS_H

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* "not a regular file" (Linux has no EFTYPE) */
#define EFTYPE_OS EBADFD

/* Counts the stops asked for (signal handlers add one): a bounded read of
 * an untrusted file notes it at its start (os_fs_stop_gen) and ends with
 * -EINTR when it changed. */
extern volatile sig_atomic_t os_fs_stop;
#define os_fs_stop_gen() ((int)os_fs_stop)

/* Any owner is accepted (only the file type is checked). */
#define OS_ANY_OWNER ((uid_t)-1)

#define OS_FSID_MAX_GROUPS 64

struct os_fsid {
	bool switched;
	uid_t old_uid;
	gid_t old_gid;
	int ngroups; /* -1: supplementary groups were not changed */
	gid_t groups[OS_FSID_MAX_GROUPS];
};

/* From now on this thread's file-system accesses are checked as uid/gid:
 * setfsuid/setfsgid (the kernel then also drops the file capabilities such
 * as CAP_DAC_OVERRIDE and CAP_CHOWN from this thread) and, when we are
 * root, no supplementary groups (the raw setgroups system call, which
 * changes this thread only). Nothing happens when uid/gid are already
 * ours. Always paired with os_fs_leave. */
void os_fs_enter(struct os_fsid *s, uid_t uid, gid_t gid);
void os_fs_leave(struct os_fsid *s);

/* An O_PATH descriptor of /proc/PID/root (the target's root directory,
 * its container's when it runs in one), or -errno. */
int os_proc_root(pid_t pid);

/* openat2(rootfd, path, flags, mode, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS):
 * `path` (absolute or relative) is resolved with rootfd as "/": neither
 * "..", nor absolute symlinks, nor /proc magic links can leave it. O_CLOEXEC
 * is added. -ENOSYS on kernels before 5.6 (callers refuse rather than fall
 * back to a resolution that can escape). */
int os_open_in_root(int rootfd, const char *path, int flags, mode_t mode);

/* A data file (os_fd_is_data) at `path` below dirfd, read-only, found
 * without following any symbolic link and without leaving dirfd (openat2
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS: -ELOOP for a link, -EXDEV for
 * ".." or an absolute path, -ENOSYS before Linux 5.6); never blocks on
 * open, O_NONBLOCK cleared after. *st (may be NULL) gets its stat. */
int os_open_data_beneath(int dirfd, const char *path, struct stat *st);

/* mkdirat inside the root: the parent is opened with os_open_in_root and
 * the last component created there (0 or -errno; -EEXIST when it exists). */
int os_mkdir_in_root(int rootfd, const char *path, mode_t mode);

/* The effective uid and gid of process pid (the Uid:/Gid: lines of
 * /proc/PID/status, second field; as seen from our user namespace): the
 * identity its files are created with and the owner HotSpot accepts for
 * its attach trigger. Unlike the owner of /proc/PID, which is root for a
 * process that is not dumpable. 0 or -errno (-ESRCH: gone). */
int os_proc_ids(pid_t pid, uid_t *euid, gid_t *egid);

/* The value of line "key:" of /proc/PID/status (pid 0: our own), leading
 * blanks skipped, cut to len; the file is read with a cap. 0, -ENOENT (no
 * such line) or -errno (-ESRCH: gone). */
int os_proc_status_field(pid_t pid, const char *key, char *out, size_t len);

/* A file that its owner (or anyone) may have planted, opened read-only:
 * O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, relative to dirfd (AT_FDCWD for a
 * plain path), then checked: it must be data (os_fd_is_data) and, unless owner
 * is OS_ANY_OWNER, owned by `owner` or by root. O_NONBLOCK is cleared
 * before returning. *st (may be NULL) gets its stat. */
int os_open_untrusted(int dirfd, const char *path, uid_t owner, struct stat *st);

/* 0 when fd is a regular file of a file system that holds data; -EFTYPE_OS
 * for anything else (a device, FIFO, socket, directory, or a file of
 * procfs, sysfs, debugfs, tracefs, securityfs, cgroupfs, bpffs, pstore,
 * configfs, efivarfs or FUSE). *st (may be NULL) gets its stat. */
int os_fd_is_data(int fd, struct stat *st);

/* Reads fd from its current offset to the end, at most max bytes, into a
 * malloc'ed NUL-terminated buffer (*out, *len). -EFBIG when there is more,
 * -EINTR when a read was interrupted by a stop (os_fs_stop). */
int os_read_capped(int fd, size_t max, char **out, size_t *len);

/* Makes text another user wrote (a JVM's attach reply, a dlerror message
 * read from the target) safe to print on one line of a terminal: tabs and
 * line breaks become spaces, other control bytes (escape sequences) and
 * bytes >= 0x7f become '?'. In place; returns s. */
char *os_untrusted_text(char *s);

/* unlinkat(dirfd, name) only if `name` is still the inode `created`
 * describes (st_dev, st_ino): something else put there meanwhile stays.
 * Not a symlink-following check: the name itself is compared. */
int os_unlink_same(int dirfd, const char *name, const struct stat *created);

/* ---- output files (profiles, reports) ----
 * The user names the output; the directory may be shared (/tmp), so what
 * already lies there may have been planted by someone else:
 *   - the content is written to a file only objscope can have created
 *     (O_TMPFILE in the output's directory, linked under a random name, or
 *     failing that a random name opened O_CREAT|O_EXCL|O_NOFOLLOW), synced,
 *     and rename()d over the name: a symbolic link there is replaced, never
 *     written through, and a reader never sees a half-written file;
 *   - an existing name that is not a regular file is written in place only
 *     when it is what a user names on purpose: /dev/null, a terminal, or a
 *     FIFO (or pipe, e.g. /dev/stdout) owned by us or root that has a reader
 *     (opened O_NONBLOCK, retried for 2 s: without a reader it fails
 *     then, never hangs);
 *     a directory, socket, block device or other character device, or a
 *     FIFO of another user, is refused with one line. A symbolic link is
 *     followed to such a target only when the link is ours or root's (as
 *     the kernel's protected_symlinks does in sticky directories): /dev/stdout
 *     works, a link planted by another user is replaced like a file.
 * Errors: -errno, and `err` gets "PATH: what is wrong". */
struct os_outfile {
	int fd;           /* write the content here */
	int dirfd;        /* the output's directory (O_PATH); -1 when direct */
	bool direct;      /* an existing FIFO / null device / terminal */
	bool linked;      /* tmpname exists in dirfd (st describes it) */
	bool tmpfile;     /* fd is an unnamed O_TMPFILE until linked */
	int old_errno;    /* keeping FILE.old failed (commit still succeeded) */
	char *path;
	const char *base; /* last component of path */
	char tmpname[96];
	struct stat st;
};

/* Checks, without writing or leaving anything, that `path` can be written
 * by os_out_open (used before a run starts so that no run is wasted). */
int os_out_check(const char *path, char *err, size_t errlen);
/* Opens the output; a new file gets mode & ~umask. */
int os_out_open(struct os_outfile *o, const char *path, mode_t mode, char *err, size_t errlen);
/* fsync, then the file takes the name (keep_old: a regular file already
 * there is renamed to PATH.old first, as perf keeps perf.data.old); closes. */
int os_out_commit(struct os_outfile *o, bool keep_old, char *err, size_t errlen);
/* Closes and removes what os_out_open created (nothing else). */
void os_out_abort(struct os_outfile *o);

#endif
