/* bench_watch.c - what a hardware watchpoint costs, per route (attacher/watch/watch.h).
 *
 * A forked single-threaded target runs a fixed loop (some arithmetic, then a
 * read and a write of one 8-byte word), timing every iteration with the TSC:
 * iterations longer than STALL_NS are stalls, their time is "stolen" from
 * the target. Meanwhile the bench, as a collector would, repeats a cycle
 * every PACE_US:
 *  - hit:   watch_arm on the word, watch_poll_wait until the hit (which
 *    disarms), the collector answering as fast as it can;
 *  - hit/cad: the same, but polled like the collector does, once per round
 *    of its loop: a non-blocking watch_poll every CADENCE_MS (default 5 ms:
 *    `objscope record`'s poll timeout; `attach` uses 20 ms); the perf run
 *    of this mode is PERF_CAD_LONGER times longer, to get enough hits;
 *  - nohit: watch_arm on a word nobody touches, then watch_disarm;
 *  - raw-modify (perf only, no watch.c): one breakpoint event kept open and
 *    moved with PERF_EVENT_IOC_MODIFY_ATTRIBUTES + REFRESH + DISABLE, the
 *    alternative to opening one event per watchpoint.
 * Modes rotate within each round (unwatched first, then the others in a
 * rotated order) and medians over rounds are reported:
 *  - target cost per cycle = (stolen time in the mode - stolen time of
 *    the unwatched run of the same round) / cycles. For "hit" this is what
 *    the watched thread pays per hit, arming included (ptrace: stopped to
 *    arm, stopped on the SIGTRAP until the collector answers; perf: the IPIs
 *    that install/remove the event on its CPU, the debug exception and the
 *    sample). Three ways to count stolen time: "t.16us-1ms", stalls of 16 us
 *    to 1 ms only (the signature of installing a breakpoint and of a hit on
 *    this machine, rare in unwatched runs: the least noisy); "t.<1ms", all
 *    stalls under 1 ms; "t.all", every stall (the only one that sees a
 *    thread stopped for milliseconds, and the noisiest: this shared machine
 *    preempts for milliseconds). "t.loop": difference of whole-loop times;
 *  - collector side: watch_arm time, arm -> hit collected, collector CPU per
 *    cycle.
 * The collector thread's timer slack is set to 1 ns (prctl) so that the
 * ptrace route's 20 us polling naps are what they say.
 *
 * Usage: bench_watch [--quick] [--rounds N] [--pace-us N] [--iters N] [--cadence-ms N] [-v]
 *   --quick: 20k iterations, 1 round (for `make bench-quick`).
 *   -v: histogram of iteration durations per mode.
 * Exit status 0 (also when the kernel has no breakpoint PMU: says SKIPPED);
 * 1 when a measurement failed (printed why).
 */
#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "common/clock.h"
#include "attacher/watch/watch.h"

#define MAXR 32
#define NBINS 24
#define STALL_NS 1000
#define SHORT_NS 1000000
#define MID_NS 16000
#define PERF_CAD_LONGER 8

enum mode {
	M_NONE, M_PERF_HIT, M_PTRACE_HIT, M_PERF_CAD, M_PTRACE_CAD, M_PERF_NOHIT, M_PTRACE_NOHIT,
	M_RAW_MODIFY, NMODES
};
static const char *mode_name[NMODES] = {
	"unwatched", "perf hit", "ptrace hit", "perf hit/cad", "ptrace hit/cad", "perf nohit",
	"ptrace nohit", "raw-modify",
};
static long cadence_ms = 5;

struct shm {
	volatile uint64_t word __attribute__((aligned(64)));
	volatile uint64_t idle __attribute__((aligned(64)));
	volatile int go;          /* round number to run; -1: exit */
	volatile int done;        /* last round finished */
	volatile pid_t tid;
	volatile double tsc_per_ns;
	volatile long run_iters[MAXR * NMODES];   /* iterations of each run */
	volatile uint64_t elapsed_ns[MAXR * NMODES];
	volatile uint64_t stolen_ns[MAXR * NMODES];
	volatile uint64_t stolen_short_ns[MAXR * NMODES];   /* stalls < SHORT_NS only */
	volatile uint64_t stolen_mid_ns[MAXR * NMODES];     /* MID_NS <= stall < SHORT_NS */
	volatile uint64_t stalls[MAXR * NMODES];
	volatile uint64_t hist[MAXR * NMODES][NBINS];   /* iterations by log2(ns) */
};

static long iters = 1000000;
static int work = 40;

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

static void target(struct shm *s)
{
	struct timespec nap = { 0, 200000 };
	int run = 0;

	s->tid = (pid_t)syscall(SYS_gettid);
	{
		/* TSC ticks per ns, over 20 ms. */
		uint64_t t0 = os_now_ns(), c0 = __rdtsc(), t1;

		do
			t1 = os_now_ns();
		while (t1 - t0 < 20000000);
		s->tsc_per_ns = (double)(__rdtsc() - c0) / (double)(t1 - t0);
	}
	for (;;) {
		uint64_t t0, v = 1, prev, hist[NBINS] = { 0 }, stolen = 0, stolen_short = 0, stalls = 0;
		uint64_t stolen_mid = 0;
		double per_ns = s->tsc_per_ns;
		long n;
		int k, b;

		while (s->go < run && s->go != -1)
			nanosleep(&nap, NULL);
		if (s->go == -1)
			_exit(0);
		t0 = os_now_ns();
		prev = __rdtsc();
		for (n = 0; n < s->run_iters[run]; n++) {
			uint64_t c, d;

			v += s->word;
			for (k = 0; k < work; k++)
				v = v * 6364136223846793005ULL + 1442695040888963407ULL;
			s->word = v;
			c = __rdtsc();
			d = (uint64_t)((double)(c - prev) / per_ns);
			prev = c;
			b = d ? 63 - __builtin_clzll(d) : 0;
			hist[b >= NBINS ? NBINS - 1 : b]++;
			if (d >= STALL_NS) {
				stolen += d;
				stalls++;
				if (d < SHORT_NS)
					stolen_short += d;
				if (d >= MID_NS && d < SHORT_NS)
					stolen_mid += d;
			}
		}
		s->elapsed_ns[run] = os_now_ns() - t0;
		s->stolen_ns[run] = stolen;
		s->stolen_short_ns[run] = stolen_short;
		s->stolen_mid_ns[run] = stolen_mid;
		s->stalls[run] = stalls;
		for (k = 0; k < NBINS; k++)
			s->hist[run][k] = hist[k];
		s->done = run;
		run++;
	}
}

struct result {
	long cycles, hits;
	double arm_us, hit_us, cpu_us;
};

static void nap_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	if (us > 0)
		nanosleep(&ts, NULL);
}

static int raw_event(struct shm *s, struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->type = PERF_TYPE_BREAKPOINT;
	a->size = sizeof(*a);
	a->bp_type = HW_BREAKPOINT_RW;
	a->bp_addr = (uint64_t)(uintptr_t)&s->idle;
	a->bp_len = 8;
	a->sample_period = 1;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR;
	a->disabled = 1;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, a, s->tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* One run of the target loop under mode m. */
static int run_mode(struct shm *s, int run, enum mode m, long pace_us, struct result *res)
{
	enum watch_route route = (m == M_PTRACE_HIT || m == M_PTRACE_CAD || m == M_PTRACE_NOHIT)
					 ? WATCH_ROUTE_PTRACE : WATCH_ROUTE_PERF;
	bool cad = m == M_PERF_CAD || m == M_PTRACE_CAD;
	bool hit = m == M_PERF_HIT || m == M_PTRACE_HIT || cad;
	struct watch_set *w = NULL;
	struct perf_event_attr a;
	double c0 = cpu_s(), arm_sum = 0, hit_sum = 0;
	uint64_t cookie = 1;
	char err[256];
	int fd = -1;

	memset(res, 0, sizeof(*res));
	if (m == M_RAW_MODIFY) {
		fd = raw_event(s, &a);
		if (fd < 0) {
			fprintf(stderr, "bench_watch: perf_event_open: %s\n", strerror(errno));
			return -1;
		}
	} else if (m != M_NONE) {
		w = watch_open(s->tid, route, err, sizeof(err));
		if (!w) {
			fprintf(stderr, "bench_watch: %s\n", err);
			return -1;
		}
	}
	/* perf at the collector's pace hits rarely: a longer loop for it. */
	s->run_iters[run] = m == M_PERF_CAD ? iters * PERF_CAD_LONGER : iters;
	s->go = run;
	while (s->done < run) {
		struct watch_hit h;
		uint64_t t0, t1;
		int r;

		if (m == M_NONE) {
			nap_us(pace_us > 1000 ? pace_us : 1000);
			continue;
		}
		t0 = os_now_ns();
		if (m == M_RAW_MODIFY) {
			a.bp_addr = (uint64_t)(uintptr_t)&s->idle + (cookie & 1) * 8;
			if (ioctl(fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &a) ||
			    ioctl(fd, PERF_EVENT_IOC_REFRESH, 1) ||
			    ioctl(fd, PERF_EVENT_IOC_DISABLE, 0)) {
				fprintf(stderr, "bench_watch: modify: %s\n", strerror(errno));
				close(fd);
				return -1;
			}
			arm_sum += (double)(os_now_ns() - t0);
			res->cycles++;
			cookie++;
			nap_us(pace_us);
			continue;
		}
		r = watch_arm(w, s->tid, (uint64_t)(uintptr_t)(hit ? &s->word : &s->idle), 8, cookie,
			      1000000000ULL);
		t1 = os_now_ns();
		if (r) {
			fprintf(stderr, "bench_watch: watch_arm: %s\n", strerror(-r));
			watch_close(w);
			return -1;
		}
		arm_sum += (double)(t1 - t0);
		res->cycles++;
		if (hit) {
			/* As fast as possible, or at the collector's pace:
			 * one non-blocking watch_poll per round. */
			do {
				if (cad)
					nap_us(cadence_ms * 1000);
				r = cad ? watch_poll(w, &h, 1) : watch_poll_wait(w, &h, 1, 1);
			} while (r == 0 && s->done < run);
			if (r == 1) {
				res->hits++;
				hit_sum += (double)(os_now_ns() - t0);
				if (!h.value_ok || h.width != 8 || h.cookie != cookie) {
					fprintf(stderr, "bench_watch: bad hit (width %u, value_ok %d)\n",
						h.width, h.value_ok);
					watch_close(w);
					return -1;
				}
			} else {
				watch_disarm(w, cookie);
			}
		} else {
			watch_disarm(w, cookie);
		}
		cookie++;
		nap_us(pace_us);
	}
	if (res->cycles) {
		res->arm_us = arm_sum / (double)res->cycles * 1e-3;
		res->cpu_us = (cpu_s() - c0) / (double)res->cycles * 1e6;
	}
	res->hit_us = res->hits ? hit_sum / (double)res->hits * 1e-3 : 0;
	if (w) {
		struct watch_stats st;

		watch_get_stats(w, &st);
		watch_close(w);
		if (st.errors) {
			fprintf(stderr, "bench_watch: %llu watch errors\n",
				(unsigned long long)st.errors);
			return -1;
		}
	}
	if (fd >= 0)
		close(fd);
	return 0;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
	double c[MAXR];

	if (!n)
		return 0;
	memcpy(c, v, (size_t)n * sizeof(*v));
	qsort(c, (size_t)n, sizeof(*c), cmp_d);
	return n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	static struct result res[NMODES][MAXR];
	static double cost[NMODES][MAXR], scost[NMODES][MAXR], lcost[NMODES][MAXR];
	static double mcost[NMODES][MAXR];
	static double loop[NMODES][MAXR];
	static double stalls[NMODES][MAXR];
	static uint64_t hsum[NMODES][NBINS];
	int rounds = 5, quick = 0, verbose = 0, run = 0, i, r, m;
	long pace_us = 200;
	struct shm *s;
	pid_t child;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			quick = 1;
		else if (!strcmp(argv[i], "-v"))
			verbose = 1;
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--pace-us") && i + 1 < argc)
			pace_us = atol(argv[++i]);
		else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
			iters = atol(argv[++i]);
		else if (!strcmp(argv[i], "--cadence-ms") && i + 1 < argc)
			cadence_ms = atol(argv[++i]);
		else {
			fprintf(stderr, "usage: bench_watch [--quick] [--rounds N] [--pace-us N] "
					"[--iters N] [--cadence-ms N] [-v]\n");
			return 2;
		}
	}
	if (quick) {
		iters = 20000;
		rounds = 1;
	}
	if (rounds < 1 || rounds > MAXR)
		rounds = 5;
	if (access("/sys/bus/event_source/devices/breakpoint", F_OK)) {
		printf("bench_watch: SKIPPED: no breakpoint PMU in this kernel, nothing to measure\n");
		return 0;
	}
	if (watch_fires() == -EIO) {
		printf("bench_watch: SKIPPED: %s, nothing to measure\n", WATCH_NO_FIRE_REASON);
		return 0;
	}
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (s == MAP_FAILED)
		return 1;
	memset((void *)s, 0, sizeof(*s));
	s->done = -1;
	child = fork();
	if (child < 0)
		return 1;
	if (child == 0)
		target(s);
	while (!s->tid)
		usleep(1000);

	for (r = 0; r < rounds; r++) {
		int runs[NMODES];

		for (i = 0; i < NMODES; i++) {
			/* Unwatched first, the others rotated per round. */
			m = i == 0 ? 0 : 1 + (i - 1 + r) % (NMODES - 1);
			if (run_mode(s, run, (enum mode)m, pace_us, &res[m][r])) {
				s->go = -1;
				waitpid(child, NULL, 0);
				return 1;
			}
			runs[m] = run++;
		}
		for (m = 0; m < NMODES; m++) {
			int k = runs[m], k0 = runs[M_NONE];
			double c = (double)(res[m][r].cycles ? res[m][r].cycles : 1);
			/* the unwatched run scaled to this run's iterations */
			double x = (double)s->run_iters[k] / (double)s->run_iters[k0];

			loop[m][r] = (double)s->elapsed_ns[k] * 1e-9;
			cost[m][r] = ((double)s->stolen_ns[k] - x * (double)s->stolen_ns[k0]) / c * 1e-3;
			scost[m][r] = ((double)s->stolen_short_ns[k] -
				       x * (double)s->stolen_short_ns[k0]) / c * 1e-3;
			mcost[m][r] = ((double)s->stolen_mid_ns[k] -
				       x * (double)s->stolen_mid_ns[k0]) / c * 1e-3;
			lcost[m][r] = ((double)s->elapsed_ns[k] - x * (double)s->elapsed_ns[k0]) / c *
				      1e-3;
			stalls[m][r] = (double)s->stalls[k] - x * (double)s->stalls[k0];
			for (i = 0; i < NBINS; i++)
				hsum[m][i] += s->hist[k][i];
		}
	}
	s->go = -1;
	waitpid(child, NULL, 0);

	printf("bench_watch: target loop %ld iterations (unwatched %.3f s), %d round%s, "
	       "a cycle every %ld us%s\n", iters, median(loop[M_NONE], rounds), rounds,
	       rounds > 1 ? "s" : "", pace_us, quick ? " (--quick)" : "");
	printf("  %-14s %7s %6s %13s %13s %13s %13s %10s %10s %11s %10s\n", "mode", "cycles",
	       "hits", "t.16us-1ms", "t.<1ms", "t.all", "t.loop", "stalls", "watch_arm", "arm->hit",
	       "coll. CPU");
	for (m = 1; m < NMODES; m++) {
		double cyc[MAXR], hits[MAXR], arm[MAXR], hit[MAXR], cpu[MAXR];

		for (r = 0; r < rounds; r++) {
			cyc[r] = (double)res[m][r].cycles;
			hits[r] = (double)res[m][r].hits;
			arm[r] = res[m][r].arm_us;
			hit[r] = res[m][r].hit_us;
			cpu[r] = res[m][r].cpu_us;
		}
		printf("  %-14s %7.0f %6.0f %10.2f us %10.2f us %10.2f us %10.2f us %6.2f/cyc %7.2f us "
		       "%8.2f us %7.2f us\n", mode_name[m], median(cyc, rounds), median(hits, rounds),
		       median(mcost[m], rounds), median(scost[m], rounds), median(cost[m], rounds), median(lcost[m], rounds),
		       median(stalls[m], rounds) / (median(cyc, rounds) ? median(cyc, rounds) : 1),
		       median(arm, rounds), median(hit, rounds), median(cpu, rounds));
	}
	if (verbose) {
		printf("  iterations by duration (log2 ns), all rounds:\n   %12s", "");
		for (m = 0; m < NMODES; m++)
			printf(" %12s", mode_name[m]);
		printf("\n");
		for (i = 0; i < NBINS; i++) {
			bool any = false;

			for (m = 0; m < NMODES; m++)
				any |= hsum[m][i] != 0;
			if (!any)
				continue;
			printf("   >= %7llu ns", 1ULL << i);
			for (m = 0; m < NMODES; m++)
				printf(" %12llu", (unsigned long long)hsum[m][i]);
			printf("\n");
		}
	}
	return 0;
}
