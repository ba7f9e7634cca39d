/* Watchpoint pairs (watch_arm_pair) and in-place moves (watch_move), the
 * measure of the reuse analysis (docs/REUSE.md), on a child process driven
 * through pipes: the CPU time between the two accesses is the thread's
 * (time blocked does not count), and a pair moved after its first access
 * completes at the new address. */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attacher/watch/watch.h"

static volatile uint64_t cell[2] __attribute__((aligned(64)));

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#define SPIN_NS 20000000ULL

/* Child: per command byte c ('0' or '1'): touch cell[c], spin SPIN_NS of CPU,
 * answer 'a', wait for the next command. */
static void child(int cmd_r, int ack_w)
{
	char c;

	while (read(cmd_r, &c, 1) == 1) {
		uint64_t t0;

		cell[c - '0'] = (uint64_t)c; /* one access: a store */
		t0 = cpu_ns();
		while (cpu_ns() - t0 < SPIN_NS)
			;
		if (write(ack_w, "a", 1) != 1)
			break;
	}
	_exit(0);
}

struct kid {
	pid_t pid;
	int cmd_w, ack_r;
};

static void kid_start(struct kid *k)
{
	int cmd[2], ack[2];

	cr_assert_eq(pipe(cmd), 0);
	cr_assert_eq(pipe(ack), 0);
	k->pid = fork();
	cr_assert_geq(k->pid, 0);
	if (!k->pid) {
		close(cmd[1]);
		close(ack[0]);
		child(cmd[0], ack[1]);
	}
	close(cmd[0]);
	close(ack[1]);
	k->cmd_w = cmd[1];
	k->ack_r = ack[0];
}

static void kid_do(struct kid *k, char c)
{
	char a;

	cr_assert_eq(write(k->cmd_w, &c, 1), 1);
	cr_assert_eq(read(k->ack_r, &a, 1), 1);
}

static void kid_end(struct kid *k)
{
	int st;

	close(k->cmd_w);
	close(k->ack_r);
	waitpid(k->pid, &st, 0);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child ran unharmed");
}

static struct watch_set *open_perf(struct kid *k)
{
	char err[256] = "";
	struct watch_set *w;

	if (access("/sys/bus/event_source/devices/breakpoint", F_OK))
		cr_skip_test("no breakpoint PMU in this kernel");
	if (watch_fires() == -EIO)
		cr_skip_test("%s", WATCH_NO_FIRE_REASON);
	w = watch_open(k->pid, WATCH_ROUTE_PERF, err, sizeof(err));
	cr_assert(w, "watch_open: %s", err);
	return w;
}

static int collect(struct watch_set *w, struct watch_hit *h)
{
	for (int i = 0; i < 250; i++) {
		int n = watch_poll_wait(w, h, 1, 20);

		cr_assert_geq(n, 0);
		if (n)
			return n;
	}
	return 0;
}

/* touch, spin 20 ms CPU, (blocked 200 ms), touch: one pair of ~20 ms CPU */
static void pair_case(bool move)
{
	struct kid k;
	struct watch_set *w;
	struct watch_hit h;
	struct watch_stats st;
	int r;

	kid_start(&k);
	w = open_perf(&k);
	r = watch_arm_pair(w, k.pid, (uint64_t)&cell[0], 8, 42, 0);
	if (r == -ENOSPC || r == -EACCES || r == -EPERM)
		cr_skip_test("breakpoints refused here: %s", strerror(-r));
	cr_assert_eq(r, 0, "arm: %s", strerror(-r));
	kid_do(&k, '0');
	cr_expect_eq(watch_poll(w, &h, 1), 0, "no hit after the first access");
	usleep(200000); /* the child is blocked: no CPU */
	if (move)
		cr_assert_eq(watch_move(w, 42, (uint64_t)&cell[1]), 0);
	kid_do(&k, move ? '1' : '0');
	cr_assert_eq(collect(w, &h), 1, "the second access is the hit");
	cr_expect(h.pair);
	cr_expect_eq(h.cookie, 42);
	cr_expect_eq(h.first_addr, (uint64_t)&cell[0]);
	cr_expect_eq(h.addr, (uint64_t)&cell[move]);
	cr_expect_geq(h.run_ns, SPIN_NS, "the spin is CPU time: %llu", (unsigned long long)h.run_ns);
	cr_expect_lt(h.run_ns, 150000000ULL, "the 200 ms blocked are not: %llu",
		     (unsigned long long)h.run_ns);
	cr_expect_gt(h.time_ns, h.first_time_ns);
	cr_expect_eq(h.width, 8);
	cr_expect_eq(watch_armed(w), 0, "nothing left armed");
	watch_get_stats(w, &st);
	cr_expect_eq(st.errors, 0);
	watch_close(w);
	kid_end(&k);
}

Test(reuse_watch, pair_cpu_time) { pair_case(false); }
Test(reuse_watch, pair_moved_keeps_first_access) { pair_case(true); }

Test(reuse_watch, pair_needs_perf_route)
{
	struct kid k;
	char err[256] = "";
	struct watch_set *w;

	if (watch_fires() == -EIO)
		cr_skip_test("%s", WATCH_NO_FIRE_REASON);
	kid_start(&k);
	w = watch_open(k.pid, WATCH_ROUTE_PTRACE, err, sizeof(err));
	cr_assert(w, "%s", err);
	cr_expect_eq(watch_arm_pair(w, k.pid, (uint64_t)&cell[0], 8, 1, 1000000), -EOPNOTSUPP);
	cr_expect_eq(watch_move(w, 1, (uint64_t)&cell[1]), -EOPNOTSUPP);
	watch_close(w);
	kid_end(&k);
}
