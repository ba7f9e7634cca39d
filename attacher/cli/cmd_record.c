/* cmd_record.c - `objscope record [options] -- COMMAND [ARGS...]`.
 *
 * Launches COMMAND with the preload library (keeping the user's LD_PRELOAD),
 * its stdin/stdout/stderr untouched, with inherited per-CPU perf events that
 * start at its exec; collects until it exits; writes the profile; exits with
 * COMMAND's status (128 + signal when it was killed).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attacher/core/collector.h"
#include "attacher/cli/commands.h"
#include "attacher/cli/run_loop.h"
#include "attacher/cli/session.h"
#include "attacher/cli/status_line.h"
#include "attacher/watch/watch.h"
#include "common/log.h"
#include "runtimes/runtime.h"
#include "common/profile.h"

static void child_exec(char **cmd, const char *lib, const char *shm, const struct os_opts *o,
		       int go_fd, int err_fd)
{
	const char *old = getenv("LD_PRELOAD");
	char preload[PATH_MAX * 4];
	char c;
	int e;
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	if (old && *old)
		snprintf(preload, sizeof(preload), "%s:%s", lib, old);
	else
		snprintf(preload, sizeof(preload), "%s", lib);
	setenv("LD_PRELOAD", preload, 1);
	setenv(OS_SHM_ENV, shm, 1);
	/* the options of the runtimes wanted, read by their in-target sides */
	for (size_t i = 0; i < os_nruntimes; i++)
		if (os_runtimes[i].launch_env &&
		    (!os_runtimes[i].wanted || os_runtimes[i].wanted(o)))
			os_runtimes[i].launch_env(o);
	/* wait until the collector's events are in place */
	while (read(go_fd, &c, 1) < 0 && errno == EINTR)
		;
	close(go_fd);
	execvp(cmd[0], cmd);
	e = errno;
	if (write(err_fd, &e, sizeof(e)) < 0)
		_exit(OS_EXIT_NOTFOUND);
	_exit(e == ENOENT ? OS_EXIT_NOTFOUND : OS_EXIT_NOEXEC);
}

/* Ends the profiling while COMMAND runs on: the path of -d and of a stop
 * signal. A -d stop says so in the profile (its duration is the -d). */
static int stop_early(struct os_collector *c, const struct os_opts *o, int argc, char **argv,
		       bool by_duration)
{
	char note[160];
	const char *notes[1] = { note };
	int rc;

	os_collector_stop(c);
	os_collector_round(c, true);
	os_status_line(c, true);
	note[0] = 0;
	if (by_duration)
		snprintf(note, sizeof(note),
			 "record -d %g: the first %g s of the command were profiled; it ran on "
			 "unprofiled to its end", o->duration, o->duration);
	rc = os_session_write_profile_notes(c, o, "record", argc, argv, notes, by_duration ? 1 : 0);
	if (rc == 0 && by_duration && !o->quiet)
		fprintf(stderr, "objscope: -d %g s reached: profiling stopped; %s runs on, "
			"objscope exits with its status when it ends\n", o->duration, argv[0]);
	return rc;
}

static int exit_status_of(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return OS_EXIT_FAIL;
}

int cmd_record(int argc, char **argv)
{
	struct os_opts o;
	struct os_collector c;
	char lib[PATH_MAX], err[512] = "";
	int idx, go[2] = { -1, -1 }, ep[2] = { -1, -1 }, status = 0, rc, e = 0, pidfd = -1;
	int ret = OS_EXIT_FAIL;
	bool exited = false, written = false, write_failed = false;
	pid_t child = -1;
	bool pressed = false; /* samples were lost: poll as often as before */
	ssize_t n;

	idx = os_opts_parse(&o, "record", argc, argv);
	if (idx == -2)
		return 0;
	if (idx < 0)
		return OS_EXIT_USAGE;
	if (idx >= argc) {
		os_err("record: no command given — usage: objscope record [options] -- COMMAND "
		       "[ARGS...]");
		return OS_EXIT_USAGE;
	}
	/* before the command runs: a run whose profile cannot be written is
	 * a run wasted */
	if (os_profile_check_output(o.output, err, sizeof(err)) < 0) {
		os_err("record: %s", err);
		return OS_EXIT_FAIL;
	}
	if (os_session_find_preload(lib, sizeof(lib)) < 0) {
		os_err("record: cannot find libobjscope.so next to the objscope binary — set "
		       "OBJSCOPE_LIB to its path");
		return OS_EXIT_FAIL;
	}
	rc = os_collector_init(&c, &o, err, sizeof(err));
	if (rc < 0) {
		os_err("record: %s", err);
		goto out;
	}
	os_session_replicas_in_target(&c, &o);
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(ep, O_CLOEXEC) < 0) {
		os_err("record: pipe: %s", strerror(errno));
		goto out;
	}
	child = fork();
	if (child < 0) {
		os_err("record: fork: %s", strerror(errno));
		goto out;
	}
	if (child == 0) {
		close(go[1]);
		close(ep[0]);
		child_exec(argv + idx, lib, c.shm.path, &o, go[0], ep[1]);
	}
	close(go[0]);
	close(ep[1]);
	go[0] = ep[1] = -1;

	pidfd = (int)syscall(SYS_pidfd_open, child, 0);
	os_run_catch_signals();

	rc = os_collector_open(&c, child, true, err, sizeof(err));
	if (rc < 0) {
		os_err("record: %s", err);
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		goto out;
	}
	close(go[1]); /* go */
	go[1] = -1;
	os_collector_calibrate(&c); /* while the command starts */
	while ((n = read(ep[0], &e, sizeof(e))) < 0 && errno == EINTR)
		;
	if (n == (ssize_t)sizeof(e)) {
		waitpid(child, &status, 0);
		os_err("record: cannot run '%s': %s", argv[idx], strerror(e));
		ret = e == ENOENT ? OS_EXIT_NOTFOUND : OS_EXIT_NOEXEC;
		goto out;
	}

	os_run_arm_duration(&o);
	while (!exited) {
		int ms = pidfd >= 0 ? OS_RUN_POLL_MS : OS_RUN_POLL_SHORT_MS;
		bool child_ready;
		pid_t w = 0;

		pressed = pressed || c.lost != 0;
		/* --replicas: 5 ms rounds only while the collector's own
		 * watchpoints are armed (their hits matched young; the ptrace
		 * route's seized threads wait for the poll); 5 ms rounds all
		 * along cost the collector ~2% of churn's CPU
		 * (docs/BENCHMARKS.md) */
		if (pressed || os_collector_eager(&c))
			ms = OS_RUN_POLL_SHORT_MS;
		/* profiling over (-d, stop signal): only COMMAND's exit or a
		 * signal to pass on is awaited; --replicas' ptrace route still
		 * needs watch_reap_child's rounds */
		if (written && pidfd >= 0 && !o.replicas)
			ms = -1;
		/* once the profile is written the perf events are off and unread */
		child_ready = os_run_wait(&c, !written, pidfd, ms) || pidfd < 0;
		if (!written)
			os_collector_round(&c, false);
		if (!written)
			os_status_line(&c, false);
		if (!written) /* a killed objscope keeps its data (checkpoint.h) */
			os_ckpt_poll(&c, &o, "record", argc - idx, argv + idx);
		/* --replicas: the ptrace route seizes the child's threads; a plain
		 * waitpid here would take their ptrace stops (watch.h) */
		if (o.replicas)
			w = watch_reap_child(child, &status) == 1 ? child : 0;
		else if (child_ready) /* pidfd readable (or none): it may have exited */
			w = waitpid(child, &status, WNOHANG);
		if (w == child)
			exited = true;
		if (!exited && !written && !os_run_stop_signal() &&
		    os_run_duration_over(&o, c.start_ns)) {
			/* -d: the first SECONDS are the profile; COMMAND runs on */
			os_run_disarm_duration();
			write_failed = stop_early(&c, &o, argc - idx, argv + idx, true) < 0;
			written = true;
		} else if (os_run_stop_signal() && !written) {
			/* stop profiling; COMMAND runs on and we still pass its status */
			os_run_disarm_duration();
			write_failed = stop_early(&c, &o, argc - idx, argv + idx, false) < 0;
			written = true;
			os_run_take_signal();
		} else if (os_run_stop_signal() && written) {
			kill(child, os_run_take_signal()); /* again: pass it on */
		}
	}
	ret = exit_status_of(status);
	if (write_failed && ret == 0) /* as when the profile is written at the end */
		ret = OS_EXIT_FAIL;
	if (WIFSIGNALED(status))
		os_err("record: %s was killed by signal %d (%s)%s; exiting with %d", argv[idx],
		       WTERMSIG(status), strsignal(WTERMSIG(status)),
		       WCOREDUMP(status) ? ", core dumped" : "", ret);
	if (!written) {
		os_run_disarm_duration();
		os_collector_stop(&c);
		os_collector_round(&c, true);
		os_collector_round(&c, true);
		os_status_line(&c, true);
		if (os_session_write_profile(&c, &o, "record", argc - idx, argv + idx) < 0 && ret == 0)
			ret = OS_EXIT_FAIL;
	}
out:
	if (pidfd >= 0)
		close(pidfd);
	os_run_release();
	for (int i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]);
		if (ep[i] >= 0)
			close(ep[i]);
	}
	os_collector_destroy(&c);
	return ret;
}
