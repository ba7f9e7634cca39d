/* test_inject_deadline.c - attacher/inject/inject.c keeps its deadlines while the
 * target keeps stopping (a target that signals itself without
 * pause must not hold the injection, run as root, in its wait loop). */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "attacher/inject/inject.h"

static _Atomic unsigned long *handled; /* shared with the child */

static void on_usr1(int sig)
{
	(void)sig;
	atomic_fetch_add(handled, 1);
}

/* What the injected call runs in the child: a signal to itself, again and
 * again; each one is a ptrace stop for the injector. Never returns. */
static void __attribute__((noinline, used)) storm(void)
{
	pid_t pid = getpid(), tid = (pid_t)syscall(SYS_gettid);

	for (;;)
		syscall(SYS_tgkill, pid, tid, SIGUSR1);
}

static uint64_t ms_now(void)
{
	return os_now_ns() / 1000000;
}

Test(inject_deadline, call_gives_up_in_time_under_a_signal_storm, .timeout = 60)
{
	static struct os_inject in; /* large (xstate) */
	char err[256] = "";
	uint64_t ret = 0, t0, took;
	unsigned long during;
	pid_t child;
	int rc;

	handled = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(handled, MAP_FAILED);
	child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		struct sigaction sa = { .sa_handler = on_usr1 };

		sigaction(SIGUSR1, &sa, NULL);
		for (;;) {
			struct timespec ts = { 0, 1000000 };

			nanosleep(&ts, NULL);
		}
	}
	usleep(20000);
	rc = os_inject_begin(&in, child, 3000, err, sizeof(err));
	if (rc == -EPERM) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		cr_skip_test("ptrace not allowed here");
	}
	cr_assert_eq(rc, 0, "begin: %d %s", rc, err);
	t0 = ms_now();
	rc = os_inject_call(&in, (uint64_t)(uintptr_t)storm, NULL, 0, 0, 300, &ret, err,
			    sizeof(err));
	took = ms_now() - t0;
	during = atomic_load(handled);
	os_inject_end(&in);
	cr_expect_eq(rc, -ETIMEDOUT, "call: %d %s", rc, err);
	cr_expect_lt(took, 2000, "the 300 ms deadline held after %lu ms", (unsigned long)took);
	cr_expect_gt(during, 0, "the target's signals reached its handler during the call");
	/* the thread was put back: the child lives on, back in its sleep loop */
	usleep(50000);
	cr_expect_eq(waitpid(child, NULL, WNOHANG), 0, "the child died");
	cr_expect_eq(kill(child, 0), 0);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	munmap((void *)handled, 4096);
}
