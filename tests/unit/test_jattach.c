/* attacher/jattach.c: which perf maps an attach leaves in place. */
#include "attacher/jattach.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/time.h>
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
		cr_log_warn("cannot remove %s", dir);
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
	int status;

	snprintf(path, sizeof(path), "%s/perf-map", dir);
	cr_expect_eq(os_jattach_map_predates(getpid(), path), 0, "a missing map counted");
	/* a child started now: a map from an hour ago cannot be its own */
	child = fork();
	cr_assert(child >= 0);
	if (child == 0) {
		pause();
		_exit(0);
	}
	make_file(path, time(NULL) - 3600);
	cr_expect_eq(os_jattach_map_predates(child, path), 0,
		     "a map older than the process was taken for its own");
	make_file(path, time(NULL));
	cr_expect_eq(os_jattach_map_predates(child, path), 1,
		     "a map written while the process ran was not taken for its own");
	kill(child, SIGKILL);
	cr_assert_eq(waitpid(child, &status, 0), child);
}
