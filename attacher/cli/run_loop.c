/* run_loop.c - the collection loop of `record` and `attach` (run_loop.h). */
#include "attacher/cli/run_loop.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "attacher/sampling/perf.h"
#include "common/safefs.h"

#define MAX_RING_FDS 64 /* polled per wait: the others are read in the round anyway */

static volatile sig_atomic_t stop_requested;
static int stop_pipe[2] = { -1, -1 }; /* self-pipe: a stop signal wakes the poll */

static void on_stop_signal(int sig)
{
	int e = errno, fd = stop_pipe[1];
	char b = 1;
	ssize_t r;

	stop_requested = sig;
	os_fs_stop++; /* a read of a target's file under way gives up */
	if (fd >= 0) {
		r = write(fd, &b, 1); /* full pipe: a wakeup is pending anyway */
		(void)r;
	}
	errno = e;
}

/* -d is over: the loop sees it by the clock; this only ends a read of a
 * target's file that holds the loop (and wakes its poll). */
static void on_duration(int sig)
{
	int e = errno, fd = stop_pipe[1];
	char b = 1;
	ssize_t r;

	(void)sig;
	os_fs_stop++;
	if (fd >= 0) {
		r = write(fd, &b, 1);
		(void)r;
	}
	errno = e;
}

void os_run_arm_duration(const struct os_opts *o)
{
	struct sigaction sa;
	struct itimerval it;

	if (!(o->duration > 0))
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_duration;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	memset(&it, 0, sizeof(it));
	it.it_value.tv_sec = (time_t)o->duration;
	it.it_value.tv_usec = (suseconds_t)((o->duration - (double)(time_t)o->duration) * 1e6);
	if (!it.it_value.tv_sec && !it.it_value.tv_usec)
		it.it_value.tv_usec = 1;
	/* and again each second after, should the first find the loop between
	 * two reads and the next read block */
	it.it_interval.tv_sec = 1;
	setitimer(ITIMER_REAL, &it, NULL);
}

void os_run_catch_signals(void)
{
	struct sigaction sa;

	if (stop_pipe[0] < 0 && pipe2(stop_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		stop_pipe[0] = stop_pipe[1] = -1; /* stop still works, within the timeout */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* a peer that closes a socket or pipe (a JVM's attach socket) makes a
	 * write fail with EPIPE, never ends objscope */
	signal(SIGPIPE, SIG_IGN);
}

int os_run_stop_signal(void)
{
	return (int)stop_requested;
}

int os_run_take_signal(void)
{
	int sig = (int)stop_requested;

	stop_requested = 0;
	return sig;
}

void os_run_disarm_duration(void)
{
	struct itimerval off;

	memset(&off, 0, sizeof(off));
	setitimer(ITIMER_REAL, &off, NULL);
}

void os_run_release(void)
{
	os_run_disarm_duration();
	for (int i = 1; i >= 0; i--) { /* the handler stays: let it find no fd */
		int fd = stop_pipe[i];

		stop_pipe[i] = -1;
		if (fd >= 0)
			close(fd);
	}
}

bool os_run_wait(struct os_collector *c, bool rings, int pidfd, int ms)
{
	struct pollfd pfd[MAX_RING_FDS + 2];
	int nfd = rings ? os_perf_nfds(c->perf) : 0, ipid = -1, istop = -1;

	if (nfd > MAX_RING_FDS)
		nfd = MAX_RING_FDS;
	for (int i = 0; i < nfd; i++) {
		pfd[i].fd = os_perf_fd(c->perf, i);
		pfd[i].events = POLLIN;
	}
	if (pidfd >= 0) {
		ipid = nfd++;
		pfd[ipid].fd = pidfd;
		pfd[ipid].events = POLLIN;
		pfd[ipid].revents = 0;
	}
	if (stop_pipe[0] >= 0) {
		istop = nfd++;
		pfd[istop].fd = stop_pipe[0];
		pfd[istop].events = POLLIN;
		pfd[istop].revents = 0;
	}
	if (stop_requested)
		return false;
	poll(pfd, (nfds_t)nfd, ms);
	if (istop >= 0 && pfd[istop].revents) {
		char buf[64];

		while (read(stop_pipe[0], buf, sizeof(buf)) > 0)
			;
	}
	return ipid >= 0 && pfd[ipid].revents != 0;
}

bool os_run_duration_over(const struct os_opts *o, uint64_t since_ns)
{
	return o->duration > 0 && os_now_ns() - since_ns >= (uint64_t)(o->duration * 1e9);
}
