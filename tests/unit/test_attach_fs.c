/* attacher/inject/attach_fs.c: what attach makes inside the target's root (rings
 * file, library copy) is made as the target's user, never through a link
 * planted there, and only its own files are removed; attacher/
 * ptrace_refusal.c: the refusal names its cause. A temporary directory
 * stands for the target's root. */
#include "attacher/inject/attach_fs.h"
#include "attacher/inject/ptrace_refusal.h"
#include "common/safefs.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char dir[] = "/tmp/objscope-test-afs-XXXXXX";
static struct os_tfs t;

/* The "target": uid/gid 65534 when we are root (so that the identity
 * switch is exercised), else ourselves. */
static void setup(void)
{
	char p[128];

	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(chmod(dir, 0755), 0);
	snprintf(p, sizeof(p), "%s/tmp", dir);
	cr_assert_eq(mkdir(p, 01777), 0);
	cr_assert_eq(chmod(p, 01777), 0);
	snprintf(p, sizeof(p), "%s/dev", dir);
	cr_assert_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/dev/shm", dir);
	cr_assert_eq(mkdir(p, 01777), 0);
	cr_assert_eq(chmod(p, 01777), 0);
	memset(&t, 0, sizeof(t));
	t.pid = 4242;
	t.uid = geteuid() == 0 ? 65534 : geteuid();
	t.gid = geteuid() == 0 ? 65534 : getegid();
	t.root = open(dir, O_PATH | O_DIRECTORY);
	cr_assert_geq(t.root, 0);
	{
		int probe = os_open_in_root(t.root, "/", O_PATH | O_DIRECTORY, 0);

		if (probe == -ENOSYS)
			cr_skip_test("openat2 is not available on this kernel (Linux < 5.6)");
		close(probe);
	}
}

static void teardown(void)
{
	char cmd[128];

	os_tfs_close(&t);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "[NOTE] cannot remove %s\n", dir); /* not cr_log_warn: exit 1 */
}

TestSuite(attach_fs, .init = setup, .fini = teardown);

static void put(const char *rel, const char *text, mode_t mode, time_t mtime)
{
	char p[256];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, mode);
	cr_assert_geq(fd, 0, "%s", p);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	cr_assert_eq(chmod(p, mode), 0);
	if (mtime) {
		struct timeval tv[2] = { { mtime, 0 }, { mtime, 0 } };

		cr_assert_eq(utimes(p, tv), 0);
	}
}

static void own(const char *rel, uid_t uid, gid_t gid)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	cr_assert_eq(lchown(p, uid, gid), 0, "%s", p);
}

static bool stat_rel(const char *rel, struct stat *st)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	return lstat(p, st) == 0;
}

static void read_rel(const char *rel, char *buf, size_t len)
{
	char p[256];
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	fd = open(p, O_RDONLY);
	cr_assert_geq(fd, 0, "%s", p);
	n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
}

/* A victim outside the "container": root's file, 0600. */
static void victim(char *path, size_t len, struct stat *st)
{
	int fd;

	snprintf(path, len, "/tmp/objscope-test-afs-victim-%d", (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "root's\n", 7), 7);
	close(fd);
	cr_assert_eq(stat(path, st), 0);
}

static void victim_untouched(const char *path, const struct stat *before)
{
	struct stat st;
	char buf[32];
	ssize_t n;
	int fd;

	cr_assert_eq(stat(path, &st), 0);
	cr_expect_eq(st.st_uid, before->st_uid, "the victim changed owner");
	cr_expect_eq(st.st_gid, before->st_gid, "the victim changed group");
	cr_expect_eq(st.st_mode, before->st_mode, "the victim changed mode");
	fd = open(path, O_RDONLY);
	cr_assert_geq(fd, 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	cr_expect_str_eq(buf, "root's\n", "the victim's content changed");
	unlink(path);
}

/* The rings file: made as the target's user, 0600, exclusively; a planted
 * link (absolute, as in a container) is neither followed nor removed. */
Test(attach_fs, rings_file_made_as_the_target_never_through_a_link)
{
	struct os_tfs_file f;
	struct stat vst, st;
	char v[128], p[256];
	int fd;

	victim(v, sizeof(v), &vst);
	snprintf(p, sizeof(p), "%s/dev/shm/objscope-1-4242.rings", dir);
	cr_assert_eq(symlink(v, p), 0);
	fd = os_tfs_create(&t, "/dev/shm", "objscope-1-4242.rings", 0600, &f);
	cr_expect_eq(fd, -EEXIST, "made through a link (fd %d)", fd);
	cr_expect(stat_rel("dev/shm/objscope-1-4242.rings", &st) && S_ISLNK(st.st_mode),
		  "the planted link was removed");
	victim_untouched(v, &vst);

	fd = os_tfs_create(&t, "/tmp", "objscope-1-4242.rings", 0600, &f);
	cr_assert_geq(fd, 0);
	cr_assert(stat_rel("tmp/objscope-1-4242.rings", &st));
	cr_expect_eq(st.st_uid, t.uid, "not the target's user's");
	cr_expect_eq(st.st_gid, t.gid);
	cr_expect_eq(st.st_mode & 0777, 0600);
	close(fd);
	os_tfs_remove(&t, &f);
	cr_expect_not(stat_rel("tmp/objscope-1-4242.rings", &st), "not removed");
	cr_expect_eq(f.dir, -1);
	os_tfs_remove(&t, &f); /* twice: nothing */
}

/* A leftover with our name: removed if it is the target's user's regular
 * file, kept (and creation refused) if it is anyone else's. Our file
 * replaced by another meanwhile: the other stays. */
Test(attach_fs, rings_name_taken_and_replaced)
{
	struct os_tfs_file f;
	struct stat st, old;
	int fd;

	put("tmp/objscope-1-4242.rings", "old", 0600, 0);
	own("tmp/objscope-1-4242.rings", t.uid, t.gid);
	cr_assert(stat_rel("tmp/objscope-1-4242.rings", &old));
	put("tmp/keep", "x", 0600, 0); /* holds the old inode number */
	fd = os_tfs_create(&t, "/tmp", "objscope-1-4242.rings", 0600, &f);
	cr_assert_geq(fd, 0, "a leftover of the target's user blocked the name");
	cr_expect_eq(f.st.st_size, 0, "the leftover was reused, not replaced");
	close(fd);
	if (geteuid() == 0) {
		/* another user's file holding the name: kept */
		os_tfs_remove(&t, &f);
		put("tmp/objscope-1-4242.rings", "theirs", 0600, 0);
		own("tmp/objscope-1-4242.rings", 4343, 4343);
		cr_expect_eq(os_tfs_create(&t, "/tmp", "objscope-1-4242.rings", 0600, &f), -EEXIST);
		cr_expect(stat_rel("tmp/objscope-1-4242.rings", &st) && st.st_uid == 4343,
			  "another user's file was removed");
		{
			char p[256];

			snprintf(p, sizeof(p), "%s/tmp/objscope-1-4242.rings", dir);
			cr_assert_eq(unlink(p), 0);
		}
		fd = os_tfs_create(&t, "/tmp", "objscope-1-4242.rings", 0600, &f);
		cr_assert_geq(fd, 0);
		close(fd);
	}
	/* replaced by another file (made while ours exists: another inode) */
	put("tmp/other", "other", 0600, 0);
	{
		char a[256], b[256];

		snprintf(a, sizeof(a), "%s/tmp/other", dir);
		snprintf(b, sizeof(b), "%s/tmp/objscope-1-4242.rings", dir);
		cr_assert_eq(rename(a, b), 0);
	}
	os_tfs_remove(&t, &f);
	cr_expect(stat_rel("tmp/objscope-1-4242.rings", &st) && st.st_size == 5,
		  "a file objscope did not create was removed");
}

/* Stale rings files: only exact names of this target, of a dead collector,
 * regular files of the target's uid, old enough. */
Test(attach_fs, stale_rings_removed_only_when_ours_and_dead)
{
	char name[64], rel[96];
	struct stat st;
	time_t old = time(NULL) - 3600;
	pid_t dead;
	int status;

	dead = fork();
	cr_assert_geq(dead, 0);
	if (dead == 0)
		_exit(0);
	cr_assert_eq(waitpid(dead, &status, 0), dead);
	/* removed: dead collector, this target, the target's, old */
	os_tfs_rings_name(name, sizeof(name), dead, 4242);
	snprintf(rel, sizeof(rel), "dev/shm/%s", name);
	put(rel, "x", 0600, old);
	own(rel, t.uid, t.gid);
	/* kept: a live collector (our parent) */
	snprintf(rel, sizeof(rel), "dev/shm/objscope-%d-4242.rings", (int)getppid());
	put(rel, "x", 0600, old);
	own(rel, t.uid, t.gid);
	/* kept: young */
	snprintf(rel, sizeof(rel), "dev/shm/objscope-%d-4242.rings", (int)dead + 1000000);
	put(rel, "x", 0600, 0);
	own(rel, t.uid, t.gid);
	/* kept: another target's, a name that only looks like ours */
	snprintf(rel, sizeof(rel), "dev/shm/objscope-%d-4243.rings", (int)dead);
	put(rel, "x", 0600, old);
	own(rel, t.uid, t.gid);
	snprintf(rel, sizeof(rel), "dev/shm/objscope-+%d-4242.rings", (int)dead);
	put(rel, "x", 0600, old);
	own(rel, t.uid, t.gid);
	snprintf(rel, sizeof(rel), "dev/shm/objscope-%d-4242.rings.x", (int)dead);
	put(rel, "x", 0600, old);
	own(rel, t.uid, t.gid);
	/* kept: a link with our name */
	snprintf(rel, sizeof(rel), "%s/dev/shm/objscope-%d-4242.rings", dir, (int)dead + 2000000);
	cr_assert_eq(symlink("/etc/hostname", rel), 0);
	if (geteuid() == 0) {
		/* kept: another user's */
		snprintf(rel, sizeof(rel), "dev/shm/objscope-%d-4242.rings", (int)dead + 3000000);
		put(rel, "x", 0600, old);
		own(rel, 4343, 4343);
	}
	cr_expect_eq(os_tfs_drop_stale_rings(&t, "/dev/shm", 60), 1);
	snprintf(rel, sizeof(rel), "dev/shm/%s", name);
	cr_expect_not(stat_rel(rel, &st), "the stale file stayed");
	snprintf(rel, sizeof(rel), "dev/shm/objscope-%d-4242.rings", (int)getppid());
	cr_expect(stat_rel(rel, &st), "a live collector's file was removed");
	snprintf(rel, sizeof(rel), "dev/shm/objscope-%d-4242.rings", (int)dead + 2000000);
	cr_expect(stat_rel(rel, &st), "a link was removed");
	if (geteuid() == 0) {
		snprintf(rel, sizeof(rel), "dev/shm/objscope-%d-4242.rings", (int)dead + 3000000);
		cr_expect(stat_rel(rel, &st), "another user's file was removed");
	}
}

static void make_src(char *src, size_t len, const char *text)
{
	struct timeval tv[2] = { { 1000000, 0 }, { 1000000, 0 } };

	snprintf(src, len, "%s/src.so", dir);
	put("src.so", text, 0644, 0);
	cr_assert_eq(utimes(src, tv), 0);
}

/* The library copy: made as the target's user; reused only with the same
 * content; a copy of the same size but another content is replaced; a link
 * at its name is replaced, not followed. */
Test(attach_fs, library_copy_content_checked_links_replaced)
{
	char src[160], path[256], err[256] = "", rel[128], buf[64], v[128];
	struct stat st, first, vst;

	make_src(src, sizeof(src), "ELF library v1");
	cr_assert_eq(os_tfs_place_library(&t, src, path, sizeof(path), err, sizeof(err)), 0,
		     "%s", err);
	snprintf(rel, sizeof(rel), "tmp/objscope-%u-%lx", (unsigned)t.uid, 1000000ul);
	{
		char want[160];

		snprintf(want, sizeof(want), "/%s/libobjscope.so", rel);
		cr_expect_str_eq(path, want);
	}
	cr_assert(stat_rel(rel, &st));
	cr_expect(S_ISDIR(st.st_mode) && st.st_uid == t.uid, "the directory is not the target's");
	strcat(rel, "/libobjscope.so");
	cr_assert(stat_rel(rel, &first));
	cr_expect(S_ISREG(first.st_mode) && first.st_uid == t.uid, "the copy is not the target's");
	read_rel(rel, buf, sizeof(buf));
	cr_expect_str_eq(buf, "ELF library v1");
	/* again: the same file reused */
	cr_assert_eq(os_tfs_place_library(&t, src, path, sizeof(path), err, sizeof(err)), 0);
	cr_assert(stat_rel(rel, &st));
	cr_expect_eq(st.st_ino, first.st_ino, "an identical copy was not reused");
	/* the same size, other bytes: replaced */
	put(rel, "ELF library XX", 0755, 0);
	cr_assert_eq(os_tfs_place_library(&t, src, path, sizeof(path), err, sizeof(err)), 0);
	read_rel(rel, buf, sizeof(buf));
	cr_expect_str_eq(buf, "ELF library v1", "a copy of the same size was trusted");
	/* a link at the name: replaced by a copy, its target untouched */
	victim(v, sizeof(v), &vst);
	{
		char p[256];

		snprintf(p, sizeof(p), "%s/%s", dir, rel);
		cr_assert_eq(unlink(p), 0);
		cr_assert_eq(symlink(v, p), 0);
	}
	cr_assert_eq(os_tfs_place_library(&t, src, path, sizeof(path), err, sizeof(err)), 0,
		     "%s", err);
	cr_assert(stat_rel(rel, &st));
	cr_expect(S_ISREG(st.st_mode), "the link stayed");
	victim_untouched(v, &vst);
}

/* The copy's directory, planted: a link (to a directory outside) is not
 * entered; a directory others may write or of another user is not used. */
Test(attach_fs, library_directory_planted)
{
	char src[160], path[256], err[256] = "", p[256], out[128];
	struct stat st, before;

	make_src(src, sizeof(src), "ELF library v1");
	snprintf(out, sizeof(out), "/tmp/objscope-test-afs-out-%d", (int)getpid());
	cr_assert_eq(mkdir(out, 0700), 0);
	cr_assert_eq(stat(out, &before), 0);
	snprintf(p, sizeof(p), "%s/tmp/objscope-%u-%lx", dir, (unsigned)t.uid, 1000000ul);
	cr_assert_eq(symlink(out, p), 0);
	cr_expect_lt(os_tfs_place_library(&t, src, path, sizeof(path), err, sizeof(err)), 0,
		     "a linked directory was used");
	cr_expect(strstr(err, "not a directory") != NULL, "%s", err);
	cr_assert_eq(stat(out, &st), 0);
	cr_expect_eq(st.st_uid, before.st_uid, "the link's target changed owner");
	cr_expect_eq(st.st_mode, before.st_mode, "the link's target changed mode");
	snprintf(p, sizeof(p), "%s/libobjscope.so", out);
	cr_expect_neq(access(p, F_OK), 0, "a copy was written through the link");
	rmdir(out);
	snprintf(p, sizeof(p), "%s/tmp/objscope-%u-%lx", dir, (unsigned)t.uid, 1000000ul);
	cr_assert_eq(unlink(p), 0);
	/* writable by others */
	cr_assert_eq(mkdir(p, 0777), 0);
	cr_assert_eq(chmod(p, 0777), 0);
	cr_assert_eq(chown(p, t.uid, t.gid), 0);
	err[0] = 0;
	cr_expect_eq(os_tfs_place_library(&t, src, path, sizeof(path), err, sizeof(err)), -EPERM);
	cr_expect(strstr(err, "mode 0777") != NULL, "%s", err);
	if (geteuid() == 0) {
		/* another user's */
		cr_assert_eq(chmod(p, 0755), 0);
		cr_assert_eq(chown(p, 4343, 4343), 0);
		err[0] = 0;
		cr_expect_eq(os_tfs_place_library(&t, src, path, sizeof(path), err, sizeof(err)),
			     -EPERM);
		cr_expect(strstr(err, "owned by uid 4343") != NULL, "%s", err);
	}
}

/* The refusal says the actual cause; Yama only where it exists. */
Test(attach_fs, ptrace_refusal_names_the_cause)
{
	struct os_ptrace_facts f = {
		.fsuid = 1000, .fsgid = 1000, .uid = { 0, 0, 0 }, .gid = { 0, 0, 0 },
		.ids_known = true, .dumpable = true, .yama = -1,
	};
	char out[512];

	os_ptrace_refusal(7, &f, out, sizeof(out));
	cr_expect(strstr(out, "it runs as uid 0, objscope as uid 1000 without CAP_SYS_PTRACE"),
		  "%s", out);
	cr_expect_null(strstr(out, "yama"), "Yama named on a kernel without it: %s", out);
	f.uid[0] = f.uid[1] = f.uid[2] = 1000;
	f.gid[0] = f.gid[1] = f.gid[2] = 1000;
	f.uid[2] = 0;
	os_ptrace_refusal(7, &f, out, sizeof(out));
	cr_expect(strstr(out, "setuid") != NULL, "%s", out);
	f.uid[2] = 1000;
	f.dumpable = false;
	os_ptrace_refusal(7, &f, out, sizeof(out));
	cr_expect(strstr(out, "not dumpable") != NULL, "%s", out);
	f.dumpable = true;
	f.yama = 1;
	os_ptrace_refusal(7, &f, out, sizeof(out));
	cr_expect(strstr(out, "kernel.yama.ptrace_scope = 1") != NULL, "%s", out);
	f.cap_sys_ptrace = true; /* Yama 1 lets CAP_SYS_PTRACE through */
	f.tracer = 99;
	os_ptrace_refusal(7, &f, out, sizeof(out));
	cr_expect(strstr(out, "already traced by process 99") != NULL, "%s", out);
	f.tracer = 0;
	f.yama = -1;
	os_ptrace_refusal(7, &f, out, sizeof(out));
	cr_expect(strstr(out, "security module") != NULL, "%s", out);
	cr_expect_null(strstr(out, "yama"), "%s", out);
	f.yama = 3;
	os_ptrace_refusal(7, &f, out, sizeof(out));
	cr_expect(strstr(out, "ptrace_scope = 3") != NULL, "%s", out);
}

/* The facts of ourselves: our ids, no tracer. */
Test(attach_fs, ptrace_facts_of_ourselves)
{
	struct os_ptrace_facts f;

	os_ptrace_facts(getpid(), &f);
	cr_expect(f.ids_known);
	cr_expect_eq(f.uid[1], geteuid());
	cr_expect_eq(f.gid[1], getegid());
	cr_expect_eq(f.fsuid, geteuid());
	cr_expect(f.dumpable);
	if (access("/proc/sys/kernel/yama/ptrace_scope", F_OK) == 0)
		cr_expect_geq(f.yama, 0);
	else
		cr_expect_eq(f.yama, -1, "Yama reported on a kernel without it");
}
