/* Tests of attacher/watch/watch.c: hardware watchpoints on the threads of a real
 * target (tests/fixtures/watch_target.c), through both routes. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "attacher/watch/watch.h"
#include "tests/unit/unit_helpers.h"

#define FIXTURE "build/fixtures/watch_target"
#define NW 3   /* NWORKERS of the fixture */

/* The fixture's cell values (watch_target.c k8/k4/k2/k1). */
static uint64_t kval(int i, int f)
{
	switch (f) {
	case 0:
		return 0x1122334455667700ULL | (uint64_t)i;
	case 1:
		return 0xa0b0c0d0u + (uint32_t)i;
	case 2:
		return (uint16_t)(0xbee0 + i);
	default:
		return (uint8_t)(0x40 + i);
	}
}

static const unsigned flen[4] = { 8, 4, 2, 1 };

struct tgt {
	pid_t pid;
	int ctl;         /* fixture's fd 3, read end */
	int cmd;         /* fixture's fd 4, write end */
	char dir[128];
	char out[256];
	char buf[4096];  /* unread control bytes */
	size_t nbuf;
	pid_t wtid[NW];
	uint64_t field[NW][4];
	uint64_t idle[NW];
	pid_t leaver;
	uint64_t leaver_idle;
};

static uint64_t now_ms(void)
{
	return os_now_ns() / 1000000;
}

/* Next control line into line; 1, or 0 on timeout / end of file. */
static int tgt_line(struct tgt *t, char *line, size_t len, int timeout_ms)
{
	uint64_t end = now_ms() + (uint64_t)timeout_ms;

	for (;;) {
		char *nl = memchr(t->buf, '\n', t->nbuf);
		struct pollfd p = { t->ctl, POLLIN, 0 };
		ssize_t n;
		int64_t left;

		if (nl) {
			size_t l = (size_t)(nl - t->buf);

			cr_assert_lt(l, len);
			memcpy(line, t->buf, l);
			line[l] = 0;
			memmove(t->buf, nl + 1, t->nbuf - l - 1);
			t->nbuf -= l + 1;
			return 1;
		}
		left = (int64_t)end - (int64_t)now_ms();
		if (poll(&p, 1, left > 0 ? (int)left : 0) <= 0)
			return 0;
		n = read(t->ctl, t->buf + t->nbuf, sizeof(t->buf) - t->nbuf - 1);
		if (n <= 0)
			return 0;
		t->nbuf += (size_t)n;
	}
}

static void tgt_expect(struct tgt *t, const char *what)
{
	char line[256];

	cr_assert(tgt_line(t, line, sizeof(line), 10000), "fixture said no '%s'", what);
	cr_assert_str_eq(line, what);
}

static void tgt_cmd(struct tgt *t, char c)
{
	cr_assert_eq(write(t->cmd, &c, 1), 1);
}

/* Runs the fixture: controlled (fds 3/4, t != NULL) or plain. */
static pid_t spawn(long iters, long sleep_us, const char *out, int ctl_w, int cmd_r)
{
	char a1[32], a2[32];
	pid_t pid;

	snprintf(a1, sizeof(a1), "%ld", iters);
	snprintf(a2, sizeof(a2), "%ld", sleep_us);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int hc = ctl_w >= 0 ? fcntl(ctl_w, F_DUPFD, 20) : -1;
		int hr = cmd_r >= 0 ? fcntl(cmd_r, F_DUPFD, 20) : -1;

		if (o < 0)
			_exit(127);
		dup2(o, 1);
		close(3);
		close(4);
		if (hc >= 0) {
			dup2(hc, 3);
			dup2(hr, 4);
		}
		execl(FIXTURE, FIXTURE, a1, a2, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static void slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	cr_assert(f, "%s: %s", path, strerror(errno));
	n = fread(buf, 1, len - 1, f);
	buf[n] = 0;
	fclose(f);
}

static void tgt_start(struct tgt *t, long iters, long sleep_us)
{
	int c[2], m[2], i;
	char line[256];

	memset(t, 0, sizeof(*t));
	cr_assert_eq(access(FIXTURE, X_OK), 0, "%s missing: `make fixtures` (or make %s) first",
		     FIXTURE, FIXTURE);
	ut_mkdtemp(t->dir, sizeof(t->dir), "watch");
	snprintf(t->out, sizeof(t->out), "%s", ut_path(t->dir, "out"));
	cr_assert_eq(pipe2(c, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(m, O_CLOEXEC), 0);
	t->pid = spawn(iters, sleep_us, t->out, c[1], m[0]);
	close(c[1]);
	close(m[0]);
	t->ctl = c[0];
	t->cmd = m[1];
	signal(SIGPIPE, SIG_IGN);

	cr_assert(tgt_line(t, line, sizeof(line), 10000), "fixture did not start");
	for (i = 0; i < NW; i++) {
		int idx, tid;
		unsigned long long q, d, w, b, idle;

		cr_assert(tgt_line(t, line, sizeof(line), 10000));
		cr_assert_eq(sscanf(line, "worker %d %d %llx %llx %llx %llx %llx", &idx, &tid, &q, &d,
				    &w, &b, &idle), 7, "line: %s", line);
		cr_assert_eq(idx, i);
		t->wtid[i] = tid;
		t->field[i][0] = q;
		t->field[i][1] = d;
		t->field[i][2] = w;
		t->field[i][3] = b;
		t->idle[i] = idle;
	}
	{
		int tid;
		unsigned long long idle;

		cr_assert(tgt_line(t, line, sizeof(line), 10000));
		cr_assert_eq(sscanf(line, "leaver %d %llx", &tid, &idle), 2, "line: %s", line);
		t->leaver = tid;
		t->leaver_idle = idle;
	}
	tgt_expect(t, "ready");
}

/* Lets the fixture end; its stdout and exit status. */
static int tgt_finish(struct tgt *t, char *out, size_t len)
{
	int st = 0;

	close(t->cmd);
	cr_assert_eq(waitpid(t->pid, &st, 0), t->pid);
	close(t->ctl);
	slurp(t->out, out, len);
	ut_rmtree(t->dir);
	return st;
}

/* stdout and status of an unwatched run with the same ITERS. */
static int plain_run(long iters, char *out, size_t len)
{
	char dir[128];
	pid_t pid;
	int st = 0;

	ut_mkdtemp(dir, sizeof(dir), "watch-plain");
	pid = spawn(iters, 0, ut_path(dir, "out"), -1, -1);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	slurp(ut_path(dir, "out"), out, len);
	ut_rmtree(dir);
	return st;
}

static void check_same_as_plain(long iters, int st, const char *out)
{
	char ref[512];
	int rst = plain_run(iters, ref, sizeof(ref));

	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "watched fixture: status %#x, output %s",
		  st, out);
	cr_assert_eq(st, rst);
	cr_assert_str_eq(out, ref);
	cr_assert(strstr(out, "bad 0 "), "%s", out);
}

/* Polls until n hits were collected (or timeout). */
static int collect(struct watch_set *w, struct watch_hit *hits, int n, int timeout_ms)
{
	uint64_t end = now_ms() + (uint64_t)timeout_ms;
	int got = 0;

	while (got < n && now_ms() < end) {
		int r = watch_poll_wait(w, hits + got, n - got, 20);

		cr_assert_geq(r, 0);
		got += r;
	}
	return got;
}

static struct watch_set *open_or_skip(pid_t pid, enum watch_route route)
{
	char err[256] = "";
	struct watch_set *w = watch_open(pid, route, err, sizeof(err));

	cr_assert(w, "watch_open: %s", err);
	return w;
}

/* The breakpoint PMU exists (perf and ptrace both use it) and its
 * breakpoints fire (watch_fires): otherwise the test is skipped, saying
 * which. */
#define skip_unless_bp()                                                               \
	do {                                                                           \
		if (access("/sys/bus/event_source/devices/breakpoint", F_OK))          \
			cr_skip_test("no breakpoint PMU in this kernel");               \
		if (watch_fires() == -EIO)                                             \
			cr_skip_test("%s", WATCH_NO_FIRE_REASON);                      \
	} while (0)

/* TracerPid of a thread of pid (-1 when unreadable). */
static int tracer_of(pid_t pid, pid_t tid)
{
	char path[96], line[256];
	FILE *f;
	int tr = -1;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "TracerPid: %d", &tr) == 1)
			break;
	fclose(f);
	return tr;
}

/* A perf breakpoint of the test's own on tid (holds one debug register). */
static int raw_bp(pid_t tid, uint64_t addr)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_BREAKPOINT;
	a.size = sizeof(a);
	a.bp_type = HW_BREAKPOINT_W;
	a.bp_addr = addr;
	a.bp_len = HW_BREAKPOINT_LEN_8;
	a.sample_period = 1;
	a.exclude_kernel = 1;
	return (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static void test_hits(enum watch_route route)
{
	struct watch_hit hits[32];
	struct watch_stats st;
	struct watch_set *w;
	struct tgt t;
	char out[512];
	int i, f, n, seen[NW][4] = { { 0 } };

	skip_unless_bp();
	tgt_start(&t, 4000, 100);
	w = open_or_skip(t.pid, route);
	tgt_cmd(&t, 'g');

	/* Registers held by someone else (two perf breakpoints of our own on
	 * worker 2): the kernel refuses the third of ours. */
	{
		int raw[2];

		for (i = 0; i < 2; i++) {
			raw[i] = raw_bp(t.wtid[2], t.idle[2] + 32 + 8 * (unsigned)i);
			cr_assert_geq(raw[i], 0, "perf_event_open: %s", strerror(errno));
		}
		cr_assert_eq(watch_arm(w, t.wtid[2], t.idle[2], 8, 500, 5000000000ULL), 0);
		cr_assert_eq(watch_arm(w, t.wtid[2], t.idle[2] + 8, 8, 501, 5000000000ULL), 0);
		cr_assert_eq(watch_arm(w, t.wtid[2], t.idle[2] + 16, 8, 502, 0), -ENOSPC);
		cr_assert_eq(watch_free_slots(w, t.wtid[2]), 0);
		cr_assert_eq(watch_disarm(w, 500), 0);
		cr_assert_eq(watch_disarm(w, 501), 0);
		close(raw[0]);
		close(raw[1]);
		cr_assert_eq(watch_free_slots(w, t.wtid[2]), 4);
	}

	/* All four registers of worker 0 on words it never touches (no hit
	 * frees one meanwhile), then a fifth: ENOSPC. */
	for (f = 0; f < 4; f++)
		cr_assert_eq(watch_arm(w, t.wtid[0], t.idle[0] + 8 * (unsigned)f, 8,
				       (uint64_t)(400 + f), 5000000000ULL), 0);
	cr_assert_eq(watch_free_slots(w, t.wtid[0]), 0);
	cr_assert_eq(watch_free_slots(w, t.wtid[1]), 4);
	cr_assert_eq(watch_arm(w, t.wtid[0], t.field[0][0], 8, 999, 0), -ENOSPC);
	cr_assert_eq(watch_arm(w, t.wtid[0], t.idle[0] + 1, 8, 998, 0), -EINVAL);
	cr_assert_eq(watch_armed(w), 4);
	cr_assert_eq(watch_disarm_range(w, t.idle[0], t.idle[0] + 32), 4);
	cr_assert_eq(watch_armed(w), 0);
	cr_assert_eq(watch_free_slots(w, t.wtid[0]), 4);

	/* Every field of every worker: 12 hits. */
	for (i = 0; i < NW; i++)
		for (f = 0; f < 4; f++)
			cr_assert_eq(watch_arm(w, t.wtid[i], t.field[i][f], flen[f],
					       (uint64_t)(100 + i * 4 + f), 5000000000ULL), 0,
				     "arm worker %d field %d", i, f);

	n = collect(w, hits, NW * 4, 5000);
	cr_assert_eq(n, NW * 4, "%d hits", n);
	for (int k = 0; k < n; k++) {
		struct watch_hit *h = &hits[k];
		uint64_t c = h->cookie - 100;

		cr_assert_lt(c, (uint64_t)NW * 4);
		i = (int)(c / 4);
		f = (int)(c % 4);
		seen[i][f]++;
		cr_assert_eq(h->tid, t.wtid[i]);
		cr_assert_eq(h->addr, t.field[i][f]);
		cr_assert_eq(h->len, flen[f]);
		cr_assert(h->value_ok);
		cr_assert_eq(h->value, kval(i, f), "worker %d field %d: %#llx", i, f,
			     (unsigned long long)h->value);
		cr_assert_eq(h->width, flen[f], "worker %d field %d: width %u ip %#llx", i, f,
			     h->width, (unsigned long long)h->ip);
		cr_assert_neq(h->ip, 0);
		cr_assert_neq(h->time_ns, 0);
	}
	for (i = 0; i < NW; i++)
		for (f = 0; f < 4; f++)
			cr_assert_eq(seen[i][f], 1);
	cr_assert_eq(watch_armed(w), 0);
	cr_assert_eq(watch_free_slots(w, t.wtid[0]), 4);

	/* disarm_range and disarm on words nobody touches. */
	for (i = 0; i < NW; i++)
		cr_assert_eq(watch_arm(w, t.wtid[i], t.idle[i], 8, (uint64_t)(200 + i),
				       i == 2 ? 100000000ULL : 60000000000ULL), 0);
	cr_assert_eq(watch_armed(w), 3);
	cr_assert_eq(watch_disarm_range(w, t.idle[1] - 64, t.idle[1] + 1), 1);
	cr_assert_eq(watch_disarm_range(w, t.idle[1] + 8, t.idle[1] + 64), 0);
	cr_assert_eq(watch_armed(w), 2);
	cr_assert_eq(watch_disarm(w, 200), 0);
	cr_assert_eq(watch_disarm(w, 200), -ENOENT);
	cr_assert_eq(watch_armed(w), 1);
	/* Expiry: the one left (100 ms). */
	for (int k = 0; k < 100 && watch_armed(w); k++)
		cr_assert_eq(watch_poll_wait(w, hits, 4, 10), 0);
	cr_assert_eq(watch_armed(w), 0);
	/* Nothing armed: no thread stays seized. */
	for (i = 0; i < NW; i++)
		cr_assert_eq(tracer_of(t.pid, t.wtid[i]), 0, "worker %d still traced", i);

	watch_get_stats(w, &st);
	cr_assert_eq(st.armed, 2 + 4 + NW * 4 + 3);
	cr_assert_eq(st.hits, NW * 4);
	cr_assert_eq(st.enospc, 2);
	cr_assert_eq(st.disarmed, 2 + 4 + 2);
	cr_assert_eq(st.expired, 1);
	cr_assert_eq(st.thread_gone, 0);
	cr_assert_eq(st.errors, 0);
	if (route == WATCH_ROUTE_PTRACE)
		cr_assert_geq(st.sigtraps_consumed, NW * 4);
	else
		cr_assert_eq(st.sigtraps_consumed, 0);

	/* Closed with watchpoints armed (ptrace: threads seized): the target
	 * runs on and ends normally. */
	for (i = 0; i < NW; i++)
		cr_assert_eq(watch_arm(w, t.wtid[i], t.idle[i], 8, (uint64_t)(300 + i),
				       60000000000ULL), 0);
	cr_assert_eq(watch_arm(w, t.wtid[1], t.field[1][0], 8, 310, 60000000000ULL), 0);
	cr_assert_eq(tracer_of(t.pid, t.wtid[0]), route == WATCH_ROUTE_PTRACE ? getpid() : 0);
	watch_close(w);
	for (i = 0; i < NW; i++)
		cr_assert_eq(tracer_of(t.pid, t.wtid[i]), 0, "worker %d still traced", i);
	if (route == WATCH_ROUTE_PERF) {
		/* watch_close gave the debug registers back (pooled events
		 * included). (ptrace: the kernel keeps a thread's ptrace
		 * breakpoints, disabled, until it exits or execs.) */
		int raw[4];

		for (i = 0; i < 4; i++) {
			raw[i] = raw_bp(t.wtid[0], t.idle[0] + 8 * (unsigned)i);
			cr_assert_geq(raw[i], 0, "slot %d: %s", i, strerror(errno));
		}
		for (i = 0; i < 4; i++)
			close(raw[i]);
	}
	/* No debug register may stay armed: the workers now write the words
	 * that were watched (a SIGTRAP would kill the fixture). */
	tgt_cmd(&t, 'i');
	tgt_expect(&t, "done");
	usleep(50000);   /* let them write for a while before they stop */
	check_same_as_plain(4000, tgt_finish(&t, out, sizeof(out)), out);
}

Test(watch, hits_perf) { test_hits(WATCH_ROUTE_PERF); }
Test(watch, hits_ptrace) { test_hits(WATCH_ROUTE_PTRACE); }

static void test_thread_exit(enum watch_route route)
{
	struct watch_hit hits[8];
	struct watch_stats st;
	struct watch_set *w;
	struct tgt t;
	char out[512];
	uint64_t end;

	skip_unless_bp();
	tgt_start(&t, 200, 100);
	w = open_or_skip(t.pid, route);
	cr_assert_eq(watch_arm(w, t.leaver, t.leaver_idle, 8, 1, 30000000000ULL), 0);
	cr_assert_eq(watch_arm(w, t.leaver, t.leaver_idle - 8, 4, 2, 30000000000ULL), 0);
	cr_assert_eq(watch_armed(w), 2);
	tgt_cmd(&t, 'x');
	tgt_cmd(&t, 'g');
	end = now_ms() + 5000;
	while (watch_armed(w) && now_ms() < end)
		cr_assert_eq(watch_poll_wait(w, hits, 8, 20), 0);
	watch_get_stats(w, &st);
	cr_assert_eq(watch_armed(w), 0);
	cr_assert_eq(st.thread_gone, 2);
	cr_assert_eq(st.errors, 0);
	/* Make sure it is gone, then: ESRCH. */
	end = now_ms() + 5000;
	while (syscall(SYS_tgkill, t.pid, t.leaver, 0) == 0 && now_ms() < end)
		usleep(1000);
	cr_assert_eq(watch_arm(w, t.leaver, t.leaver_idle, 8, 3, 1000000000ULL), -ESRCH);
	watch_close(w);
	tgt_expect(&t, "done");
	check_same_as_plain(200, tgt_finish(&t, out, sizeof(out)), out);
}

Test(watch, thread_exit_perf) { test_thread_exit(WATCH_ROUTE_PERF); }
Test(watch, thread_exit_ptrace) { test_thread_exit(WATCH_ROUTE_PTRACE); }

/* Worker 0 takes SIGSEGVs (own handler) and SIGALRMs while watched: under
 * ptrace every one stops it into us and must be handed back. */
static void test_signals(enum watch_route route)
{
	const long iters = 800;
	struct watch_hit hits[8];
	struct watch_stats st;
	struct watch_set *w;
	struct tgt t;
	char out[512], line[256];
	uint64_t end;
	bool done = false;

	skip_unless_bp();
	tgt_start(&t, iters, 200);
	w = open_or_skip(t.pid, route);
	cr_assert_eq(watch_arm(w, t.wtid[0], t.idle[0], 8, 1, 60000000000ULL), 0);
	cr_assert_eq(watch_arm(w, t.wtid[0], t.idle[0] + 8, 8, 2, 60000000000ULL), 0);
	tgt_cmd(&t, 'g');
	end = now_ms() + 20000;
	while (!done && now_ms() < end) {
		cr_assert_eq(watch_poll_wait(w, hits, 8, 5), 0);
		done = tgt_line(&t, line, sizeof(line), 0) && !strcmp(line, "done");
	}
	cr_assert(done, "fixture did not finish its iterations");
	cr_assert_eq(watch_armed(w), 2);
	watch_get_stats(w, &st);
	if (route == WATCH_ROUTE_PTRACE)
		cr_assert_geq(st.signals_passed, 2 * (uint64_t)(iters / 16),
			      "%llu signals passed", (unsigned long long)st.signals_passed);
	else
		cr_assert_eq(st.signals_passed, 0);
	cr_assert_eq(st.errors, 0);
	watch_close(w);
	tgt_finish(&t, out, sizeof(out));
	{
		char want[64];

		snprintf(want, sizeof(want), "segv %ld alrm %ld\n", iters / 16, iters / 16);
		cr_assert(strstr(out, want), "%s", out);
	}
	check_same_as_plain(iters, 0, out);
}

Test(watch, signals_perf) { test_signals(WATCH_ROUTE_PERF); }
Test(watch, signals_ptrace) { test_signals(WATCH_ROUTE_PTRACE); }

/* Argument checks need no target but ourselves. */
Test(watch, arguments)
{
	static volatile uint64_t word[2] __attribute__((aligned(16)));
	char err[128] = "";
	struct watch_set *w;
	pid_t me = (pid_t)syscall(SYS_gettid);

	cr_assert_str_eq(watch_route_name(WATCH_ROUTE_PERF), "perf");
	cr_assert_str_eq(watch_route_name(WATCH_ROUTE_PTRACE), "ptrace");
	cr_assert_eq(watch_route_parse("ptrace"), WATCH_ROUTE_PTRACE);
	cr_assert_eq(watch_route_parse("perf"), WATCH_ROUTE_PERF);
	cr_assert_eq(watch_route_parse("int3"), -1);
	cr_assert_null(watch_open(0, WATCH_ROUTE_PERF, err, sizeof(err)));
	cr_assert_neq(err[0], 0);
	skip_unless_bp();
	w = watch_open(getpid(), WATCH_ROUTE_PERF, err, sizeof(err));
	cr_assert(w, "%s", err);
	cr_assert_eq(watch_arm(w, me, (uint64_t)(uintptr_t)&word[0], 3, 1, 0), -EINVAL);
	cr_assert_eq(watch_arm(w, me, (uint64_t)(uintptr_t)&word[0] + 4, 8, 1, 0), -EINVAL);
	cr_assert_eq(watch_arm(w, me, (uint64_t)(uintptr_t)&word[0], 8, 1, 0), 0);
	cr_assert_eq(watch_arm(w, me, (uint64_t)(uintptr_t)&word[1], 8, 1, 0), -EEXIST);
	cr_assert_eq(watch_free_slots(w, me), 3);
	word[0] = 42;   /* a hit in our own thread */
	{
		struct watch_hit h;
		int n = watch_poll_wait(w, &h, 1, 1000);

		cr_assert_eq(n, 1);
		cr_assert_eq(h.cookie, 1);
		cr_assert_eq(h.value, 42);
		cr_assert_eq(h.width, 8);
		cr_assert(h.is_write);
	}
	cr_assert_eq(watch_disarm(w, 1), -ENOENT);

	/* Events disarmed before their hit are reused (moved to the new
	 * address): the old address must not trap any more, the new one
	 * exactly once. */
	for (int k = 0; k < 3; k++) {
		struct watch_hit h[4];

		cr_assert_eq(watch_arm(w, me, (uint64_t)(uintptr_t)&word[0], 8, 10, 0), 0);
		cr_assert_eq(watch_disarm(w, 10), 0);
		cr_assert_eq(watch_arm(w, me, (uint64_t)(uintptr_t)&word[1] + 4, 4, 11, 0), 0);
		word[0] = 7;
		cr_assert_eq(watch_poll_wait(w, h, 4, 20), 0, "the old address trapped");
		word[1] = 0x1234567800000000ULL;
		word[1] = 0x2234567800000000ULL;
		cr_assert_eq(watch_poll_wait(w, h, 4, 1000), 1);
		cr_assert_eq(h[0].cookie, 11);
		cr_assert_eq(h[0].addr, (uint64_t)(uintptr_t)&word[1] + 4);
		cr_assert_eq(h[0].len, 4);
		cr_assert_eq(h[0].value, 0x22345678);
		cr_assert_eq(h[0].width, 8);
		cr_assert_eq(watch_poll_wait(w, h, 4, 20), 0);
	}
	{
		struct watch_stats st;

		watch_get_stats(w, &st);
		cr_assert_eq(st.hits, 4);
		cr_assert_eq(st.disarmed, 3);
		cr_assert_eq(st.errors, 0);
	}
	watch_close(w);
}

/* The fixture is our child and its main thread is seized: a stop of that
 * thread must not be taken by watch_reap_child (it stays the watch_set's),
 * and the real exit is. */
Test(watch, reap_child_ptrace)
{
	struct watch_hit hits[4];
	struct watch_stats st;
	struct watch_set *w;
	struct tgt t;
	char out[512];
	int status = 0, r = 0;
	uint64_t end;

	skip_unless_bp();
	tgt_start(&t, 100, 0);
	w = open_or_skip(t.pid, WATCH_ROUTE_PTRACE);
	cr_assert_eq(watch_arm(w, t.pid, t.leaver_idle, 8, 1, 30000000000ULL), 0);
	/* SIGWINCH (ignored by default) still stops a traced thread. */
	cr_assert_eq(syscall(SYS_tgkill, t.pid, t.pid, SIGWINCH), 0);
	usleep(20000);
	cr_assert_eq(watch_reap_child(t.pid, &status), 0);
	end = now_ms() + 5000;
	do {
		cr_assert_eq(watch_poll_wait(w, hits, 4, 10), 0);
		watch_get_stats(w, &st);
	} while (st.signals_passed < 1 && now_ms() < end);
	cr_assert_eq(st.signals_passed, 1);
	cr_assert_eq(watch_armed(w), 1);
	watch_close(w);
	tgt_cmd(&t, 'g');
	tgt_expect(&t, "done");
	close(t.cmd);
	end = now_ms() + 10000;
	while ((r = watch_reap_child(t.pid, &status)) == 0 && now_ms() < end)
		usleep(1000);
	cr_assert_eq(r, 1);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(t.ctl);
	slurp(t.out, out, sizeof(out));
	ut_rmtree(t.dir);
	check_same_as_plain(100, status, out);
}

/* watch_fires() says what an armed watchpoint does here: where it answers 0
 * a watchpoint on a word of this thread traps at the next write; where it
 * answers -EIO (a VM that accepts breakpoints and never delivers them)
 * watch_open refuses, saying so, and the answer stays. OBJSCOPE_WATCH_FIRES=0
 * gives the refusal on any machine. */
Test(watch, open_refused_where_breakpoints_never_fire)
{
	static volatile uint64_t word __attribute__((aligned(8)));
	pid_t me = (pid_t)syscall(SYS_gettid);
	char err[256] = "";
	struct watch_set *w;
	int r;

	if (access("/sys/bus/event_source/devices/breakpoint", F_OK))
		cr_skip_test("no breakpoint PMU in this kernel");
	r = watch_fires();
	cr_assert(r == 0 || r == -EIO || r == -EACCES || r == -EPERM || r == -ENOSPC,
		  "watch_fires: %s", strerror(-r));
	if (r == -EACCES || r == -EPERM || r == -ENOSPC)
		cr_skip_test("the probe could not be armed here: %s", strerror(-r));
	w = watch_open(getpid(), WATCH_ROUTE_PERF, err, sizeof(err));
	if (r == -EIO) {
		cr_assert_null(w, "watch_open accepted where breakpoints never fire");
		cr_expect(strstr(err, WATCH_NO_FIRE_REASON), "reason: %s", err);
		cr_expect_eq(watch_fires(), -EIO, "the answer is kept");
	} else {
		struct watch_hit h;

		cr_assert(w, "%s", err);
		cr_assert_eq(watch_arm(w, me, (uint64_t)(uintptr_t)&word, 8, 7, 0), 0);
		word = 5;
		cr_expect_eq(watch_poll_wait(w, &h, 1, 1000), 1,
			     "watch_fires said 0 and the watchpoint did not trap");
		watch_close(w);
	}
	setenv("OBJSCOPE_WATCH_FIRES", "0", 1);
	cr_expect_eq(watch_fires(), -EIO);
	w = watch_open(getpid(), WATCH_ROUTE_PTRACE, err, sizeof(err));
	cr_expect_null(w);
	cr_expect(strstr(err, WATCH_NO_FIRE_REASON), "reason: %s", err);
	unsetenv("OBJSCOPE_WATCH_FIRES");
}
