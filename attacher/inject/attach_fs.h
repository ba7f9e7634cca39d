/* attach_fs.h - the files `objscope attach` makes inside the target's root:
 * the copy of libobjscope.so (a target in another mount namespace) and the
 * file of the shared rings, and the clean-up of both.
 *
 * objscope attach usually runs as root; the target's /tmp and /dev/shm
 * (the container's, when it runs in one) are in its user's hands. So,
 * following common/safefs.h:
 *   - directories are resolved inside the target's root (/proc/PID/root,
 *     openat2 RESOLVE_IN_ROOT: an absolute link planted there stays inside;
 *     Linux < 5.6 has no openat2 and os_tfs_open refuses);
 *   - files are created and removed with the target's effective uid/gid as
 *     this thread's file-system identity (setfsuid/setfsgid): they belong
 *     to the target's user without a chown, and nothing is created,
 *     followed or removed there with root's rights;
 *   - names are opened relative to the directory's fd, O_EXCL | O_NOFOLLOW
 *     when created, and removed only while they still are the inode created
 *     (os_unlink_same).
 *
 * Return convention: 0 (or an fd) on success, -errno on failure; functions
 * taking err put one line there when they fail.
 */
#ifndef OBJSCOPE_ATTACH_FS_H
#define OBJSCOPE_ATTACH_FS_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

struct os_tfs {
	pid_t pid;
	uid_t uid;  /* the target's effective ids (os_proc_ids) */
	gid_t gid;
	int root;   /* O_PATH fd of its root directory */
};

/* The target's ids and root. Refuses (-ENOSYS, err says so) on a kernel
 * without openat2. */
int os_tfs_open(struct os_tfs *t, pid_t pid, char *err, size_t errlen);
void os_tfs_close(struct os_tfs *t);

/* A file objscope created inside the target's root. */
struct os_tfs_file {
	int dir;        /* O_PATH fd of its directory; -1: none */
	char name[64];
	struct stat st; /* the inode created */
};

/* Creates dir/name (dir an absolute path inside the root) as the target's
 * user: O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, mode. A regular file of the
 * target's uid already holding the name (left by an objscope that had our
 * PID) is removed first, as the target's user; anything else there makes it
 * fail (-EEXIST). Returns the open fd; f describes it for os_tfs_remove. */
int os_tfs_create(const struct os_tfs *t, const char *dir, const char *name, mode_t mode,
		  struct os_tfs_file *f);
/* Removes f's name if it is still the inode created (as the target's user),
 * and forgets f. Nothing happens for a file already forgotten. */
void os_tfs_remove(const struct os_tfs *t, struct os_tfs_file *f);

/* The name of the rings file of collector `collector` for target `target`. */
void os_tfs_rings_name(char *out, size_t len, pid_t collector, pid_t target);
/* Removes, from dir inside the root, rings files of this target left by
 * an objscope killed before it removed them: named exactly like ours, of a
 * collector PID that no longer exists, regular files of the target's uid,
 * older than min_age seconds; as the target's user, by inode. Returns how
 * many were removed. */
int os_tfs_drop_stale_rings(const struct os_tfs *t, const char *dir, time_t min_age);

/* Makes library src reachable in the target's root as
 * /tmp/objscope-<uid>-<src mtime>/libobjscope.so (its path there into
 * path): the directory must be a directory of the target's uid (or root)
 * that neither group nor others may write; a copy there is reused when it
 * is a regular file of that uid (or root) with src's exact content, else a
 * new copy is written under a temporary name (O_EXCL) and renamed into
 * place. */
int os_tfs_place_library(const struct os_tfs *t, const char *src, char *path, size_t len,
			 char *err, size_t errlen);

#endif
