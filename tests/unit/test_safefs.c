/* common/safefs: links, FIFOs and foreign owners refused; paths resolved
 * inside a root; identity switched for file-system calls. */
#include "common/safefs.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64];

static void mk_dir(void)
{
	snprintf(dir, sizeof(dir), "/tmp/os-safefs-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static void rm_dir(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

static void put(const char *name, const char *text, mode_t mode)
{
	char p[256];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, mode);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	chmod(p, mode);
}

TestSuite(safefs, .init = mk_dir, .fini = rm_dir);

Test(safefs, untrusted_open_refuses_links_fifos_and_other_owners)
{
	char p[256], q[256], *buf;
	struct stat st;
	size_t len;
	int dfd, fd;

	put("plain", "hello\n", 0644);
	put("secret", "root only\n", 0600);
	snprintf(p, sizeof(p), "%s/secret", dir);
	snprintf(q, sizeof(q), "%s/link", dir);
	cr_assert_eq(symlink(p, q), 0);
	snprintf(q, sizeof(q), "%s/fifo", dir);
	cr_assert_eq(mkfifo(q, 0666), 0);
	dfd = open(dir, O_PATH | O_DIRECTORY);
	cr_assert_geq(dfd, 0);

	fd = os_open_untrusted(dfd, "plain", OS_ANY_OWNER, &st);
	cr_assert_geq(fd, 0);
	cr_assert_eq(os_read_capped(fd, 100, &buf, &len), 0);
	cr_assert_str_eq(buf, "hello\n");
	free(buf);
	close(fd);

	cr_assert_eq(os_open_untrusted(dfd, "link", OS_ANY_OWNER, NULL), -ELOOP);
	/* a FIFO with no writer would block a plain open(): refused at once */
	cr_assert_eq(os_open_untrusted(dfd, "fifo", OS_ANY_OWNER, NULL), -EFTYPE_OS);
	cr_assert_eq(os_open_untrusted(dfd, ".", OS_ANY_OWNER, NULL), -EFTYPE_OS);
	/* owned by us: refused when another owner (not root) is required,
	 * accepted when the owner is us or root is the owner */
	fd = os_open_untrusted(dfd, "plain", getuid(), NULL);
	cr_assert_geq(fd, 0);
	close(fd);
	if (getuid() != 0)
		cr_assert_eq(os_open_untrusted(dfd, "plain", getuid() + 1, NULL), -EPERM);
	else
		cr_assert_geq(fd = os_open_untrusted(dfd, "plain", 12345, NULL), 0,
			      "a root-owned file is trusted whoever the owner must be");
	close(dfd);
}

Test(safefs, read_capped_refuses_more)
{
	char p[256], *buf = (char *)1, big[10000];
	size_t len = 1;
	int fd;

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	put("big", big, 0644);
	snprintf(p, sizeof(p), "%s/big", dir);
	fd = open(p, O_RDONLY);
	cr_assert_eq(os_read_capped(fd, 5000, &buf, &len), -EFBIG);
	cr_assert_null(buf);
	cr_assert_eq(len, 0);
	lseek(fd, 0, SEEK_SET);
	cr_assert_eq(os_read_capped(fd, sizeof(big) - 1, &buf, &len), 0);
	cr_assert_eq(len, sizeof(big) - 1);
	cr_assert_eq(strlen(buf), sizeof(big) - 1);
	free(buf);
	close(fd);
}

Test(safefs, paths_resolve_inside_the_root)
{
	char p[256], outside[64], *buf;
	size_t len;
	int root, fd;

	/* a "container" root with an absolute symlink that, followed by the
	 * host, would reach a file outside it */
	snprintf(outside, sizeof(outside), "/tmp/os-safefs-out-%d", (int)getpid());
	fd = open(outside, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "host\n", 5), 5);
	close(fd);
	snprintf(p, sizeof(p), "%s/tmp", dir);
	cr_assert_eq(mkdir(p, 0777), 0);
	snprintf(p, sizeof(p), "%s/tmp/evil", dir);
	cr_assert_eq(symlink(outside, p), 0);
	snprintf(p, sizeof(p), "%s/tmp/up", dir);
	cr_assert_eq(symlink("../../../../../../..", p), 0);
	root = open(dir, O_PATH | O_DIRECTORY);
	cr_assert_geq(root, 0);

	fd = os_open_in_root(root, "/tmp/evil", O_RDONLY, 0);
	if (fd == -ENOSYS)
		cr_skip_test("openat2 is not available on this kernel (Linux < 5.6)");
	/* the link's target is looked up as <root>/tmp/os-safefs-out-N: absent */
	cr_assert_eq(fd, -ENOENT, "the absolute symlink left the root (fd %d)", fd);
	/* ".." stops at the root */
	fd = os_open_in_root(root, "/tmp/up/tmp", O_PATH | O_DIRECTORY, 0);
	cr_assert_geq(fd, 0);
	close(fd);
	/* creation inside the root lands inside it */
	fd = os_open_in_root(root, "tmp/new", O_WRONLY | O_CREAT | O_EXCL, 0600);
	cr_assert_geq(fd, 0);
	close(fd);
	snprintf(p, sizeof(p), "%s/tmp/new", dir);
	cr_assert_eq(access(p, F_OK), 0);
	cr_assert_eq(os_mkdir_in_root(root, "/tmp/d", 0700), 0);
	cr_assert_eq(os_mkdir_in_root(root, "/tmp/d", 0700), -EEXIST);
	/* the outside file is untouched */
	fd = open(outside, O_RDONLY);
	cr_assert_eq(os_read_capped(fd, 100, &buf, &len), 0);
	cr_assert_str_eq(buf, "host\n");
	free(buf);
	close(fd);
	close(root);
	unlink(outside);
}

Test(safefs, unlink_only_the_inode_created)
{
	struct stat created;
	int dfd = open(dir, O_PATH | O_DIRECTORY);
	char p[256];

	put("ours", "x", 0600);
	cr_assert_eq(fstatat(dfd, "ours", &created, AT_SYMLINK_NOFOLLOW), 0);
	/* replaced by someone else meanwhile (made while ours still exists,
	 * so that its inode number differs) */
	put("other", "y", 0600);
	snprintf(p, sizeof(p), "%s/other", dir);
	{
		char q[256];

		snprintf(q, sizeof(q), "%s/ours", dir);
		cr_assert_eq(rename(p, q), 0);
	}
	cr_assert_eq(os_unlink_same(dfd, "ours", &created), -ESTALE);
	cr_assert_eq(faccessat(dfd, "ours", F_OK, 0), 0, "another file was removed");
	cr_assert_eq(fstatat(dfd, "ours", &created, AT_SYMLINK_NOFOLLOW), 0);
	cr_assert_eq(os_unlink_same(dfd, "ours", &created), 0);
	cr_assert_neq(faccessat(dfd, "ours", F_OK, 0), 0);
	close(dfd);
}

Test(safefs, identity_switch_applies_to_file_calls)
{
	struct os_fsid s;
	char p[256];
	int fd;

	if (geteuid() != 0)
		cr_skip_test("needs root: switching to another user's identity");
	put("rootonly", "secret\n", 0600);
	snprintf(p, sizeof(p), "%s/rootonly", dir);
	os_fs_enter(&s, 65534, 65534);
	fd = open(p, O_RDONLY);
	cr_assert_lt(fd, 0, "nobody read a root-only file");
	cr_assert_eq(errno, EACCES);
	/* and no chown with root's capability */
	cr_assert_neq(chown(p, 65534, 65534), 0);
	os_fs_leave(&s);
	fd = open(p, O_RDONLY);
	cr_assert_geq(fd, 0, "root's identity came back");
	close(fd);
	/* a file created as nobody belongs to nobody without a chown */
	chmod(dir, 0777);
	snprintf(p, sizeof(p), "%s/made", dir);
	os_fs_enter(&s, 65534, 65534);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0600);
	os_fs_leave(&s);
	cr_assert_geq(fd, 0);
	{
		struct stat st;

		cr_assert_eq(fstat(fd, &st), 0);
		cr_assert_eq(st.st_uid, 65534);
		cr_assert_eq(st.st_gid, 65534);
	}
	close(fd);
}

/* The effective ids of a process, from its status (not the owner of
 * /proc/PID, which is root for a process that is not dumpable). */
Test(safefs, proc_ids_are_the_effective_ones)
{
	char name[64];
	uid_t u = 1;
	gid_t g = 1;
	pid_t child;
	int p[2], status;

	cr_assert_eq(os_proc_ids(getpid(), &u, &g), 0);
	cr_expect_eq(u, geteuid());
	cr_expect_eq(g, getegid());
	cr_assert_eq(os_proc_status_field(0, "Name", name, sizeof(name)), 0);
	cr_expect_str_eq(name, "test_unit");
	cr_expect_eq(os_proc_status_field(0, "NoSuchLine", name, sizeof(name)), -ENOENT);
	if (geteuid() != 0)
		return;
	/* effective 65534, real root; not dumpable: /proc/PID stays root's */
	cr_assert_eq(pipe(p), 0);
	child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		char c;

		if (setresgid(0, 65534, 0) != 0 || setresuid(0, 65534, 0) != 0)
			_exit(1);
		prctl(PR_SET_DUMPABLE, 0);
		close(p[1]);
		if (read(p[0], &c, 1) < 0)
			_exit(2);
		_exit(0);
	}
	close(p[0]);
	for (int i = 0; i < 200; i++) {
		if (os_proc_ids(child, &u, &g) == 0 && u == 65534)
			break;
		usleep(5000);
	}
	cr_expect_eq(u, 65534);
	cr_expect_eq(g, 65534);
	close(p[1]);
	cr_assert_eq(waitpid(child, &status, 0), child);
	cr_expect_eq(os_proc_ids(child, &u, &g), -ESRCH, "a reaped process has ids");
}

/* Another user's text on root's terminal: no escape sequence, one line. */
Test(safefs, untrusted_text_is_one_printable_line)
{
	char s[] = "0\nok\x1b]0;owned\x07\x1b[2J\tdone\r\xc2\x9b";

	cr_expect_str_eq(os_untrusted_text(s), "0 ok?]0;owned??[2J done ??");
}

/* Output files: an aborted one leaves nothing; a committed one replaces the
 * name (the old one kept on request), never the file a link points to. */
Test(safefs, output_files_made_by_us_only)
{
	struct os_outfile o;
	char out[256], err[256] = "", cmd[320], line[64];
	struct stat st;
	FILE *ls;
	int n = 0;

	snprintf(out, sizeof(out), "%s/o.txt", dir);
	cr_assert_eq(os_out_open(&o, out, 0640, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(write(o.fd, "x", 1), 1);
	os_out_abort(&o);
	cr_assert_neq(lstat(out, &st), 0, "an aborted output took the name");

	put("target", "keep", 0644);
	snprintf(cmd, sizeof(cmd), "%s/target", dir);
	cr_assert_eq(symlink(cmd, out), 0);
	cr_assert_eq(lchown(out, 65534, 65534), 0); /* not ours: not followed */
	cr_assert_eq(os_out_open(&o, out, 0600, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(write(o.fd, "new", 3), 3);
	cr_assert_eq(os_out_commit(&o, true, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(lstat(out, &st), 0);
	cr_assert(S_ISREG(st.st_mode) && st.st_size == 3);
	cr_assert_eq(stat(cmd, &st), 0);
	cr_assert_eq(st.st_size, 4, "the link's target was written");

	cr_assert_eq(os_out_open(&o, out, 0600, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(write(o.fd, "newer", 5), 5);
	cr_assert_eq(os_out_commit(&o, true, err, sizeof(err)), 0, "%s", err);
	snprintf(cmd, sizeof(cmd), "%s/o.txt.old", dir);
	cr_assert_eq(stat(cmd, &st), 0);
	cr_assert_eq(st.st_size, 3, "the previous file was not kept as .old");

	snprintf(cmd, sizeof(cmd), "ls -A %s", dir);
	ls = popen(cmd, "r");
	while (fgets(line, sizeof(line), ls))
		n++;
	pclose(ls);
	cr_assert_eq(n, 3, "temporary files left: %d entries", n); /* target, o.txt(.old) */
}

/* Another user's file in a sticky directory cannot be replaced by a user:
 * the output check says so before a run. */
Test(safefs, output_check_sticky_directory_of_another_user)
{
	char out[256];
	pid_t child;
	int status;

	if (geteuid() != 0)
		cr_skip_test("needs root to act as two users");
	cr_assert_eq(chmod(dir, 01777), 0);
	put("theirs.data", "x", 0644); /* root's */
	snprintf(out, sizeof(out), "%s/theirs.data", dir);
	child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		char err[256] = "";
		char mine[300];

		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(3);
		if (os_out_check(out, err, sizeof(err)) != -EPERM || !strstr(err, "sticky"))
			_exit(1);
		snprintf(mine, sizeof(mine), "%s/mine.data", dir);
		_exit(os_out_check(mine, err, sizeof(err)) == 0 ? 0 : 2);
	}
	cr_assert_eq(waitpid(child, &status, 0), child);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
}
