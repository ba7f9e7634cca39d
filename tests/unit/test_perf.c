/* Tests of perf record parsing with synthetic records (no PMU needed). */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "attacher/sampling/perf.h"

struct rec {
	uint64_t w[512];
	size_t n;
};

static void put(struct rec *r, uint64_t v)
{
	r->w[r->n++] = v;
}

static uint64_t pair(uint32_t lo, uint32_t hi)
{
	return (uint64_t)hi << 32 | lo;
}

#define ALL_TYPES                                                                          \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |           \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | \
	 PERF_SAMPLE_STACK_USER | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC)

/* Builds a sample the way the kernel lays it out for ALL_TYPES. */
static void build(struct rec *r, uint64_t mask, size_t stack_bytes, uint64_t dyn)
{
	r->n = 0;
	put(r, 0x401000);                /* ip */
	put(r, pair(100, 101));          /* pid, tid */
	put(r, 123456789);               /* time */
	put(r, 0x7f0000001000);          /* addr */
	put(r, pair(1, 0));              /* cpu */
	put(r, 1000000);                 /* period */
	put(r, 6);                       /* callchain: nr */
	put(r, (uint64_t)PERF_CONTEXT_KERNEL);
	put(r, 0xffffffff81000000ULL);   /* a kernel frame: must be dropped */
	put(r, (uint64_t)PERF_CONTEXT_USER);
	put(r, 0x401000);
	put(r, 0x402000);
	put(r, 0x403000);
	put(r, PERF_SAMPLE_REGS_ABI_64); /* regs: abi then one word per mask bit */
	for (int b = 0; b < 64; b++)
		if (mask & (1ULL << b))
			put(r, 0x1000 + (uint64_t)b);
	put(r, stack_bytes);             /* stack: size, data, dyn_size */
	for (size_t i = 0; i < stack_bytes / 8; i++)
		put(r, 0xabc0 + i);
	if (stack_bytes)
		put(r, dyn);
	put(r, 77);                      /* weight */
	put(r, 0x42);                    /* data_src */
}

Test(perf, parses_every_field)
{
	struct rec r;
	struct os_perf_sample s;

	build(&r, OS_REGS_MASK, 64, 40);
	cr_assert_eq(os_perf_parse_sample(r.w, r.n * 8, ALL_TYPES, OS_REGS_MASK, &s), 0);
	cr_expect_eq(s.ip, 0x401000);
	cr_expect_eq(s.pid, 100);
	cr_expect_eq(s.tid, 101);
	cr_expect_eq(s.time, 123456789);
	cr_expect_eq(s.addr, 0x7f0000001000);
	cr_expect_eq(s.cpu, 1);
	cr_expect_eq(s.period, 1000000);
	cr_assert_eq(s.nchain, 3, "kernel frames and context markers are dropped");
	cr_expect_eq(s.chain[0], 0x401000);
	cr_expect_eq(s.chain[2], 0x403000);
	cr_expect(s.has & OS_PS_REGS);
	cr_expect(s.has & OS_PS_ADDR);
	cr_expect_eq(s.regs[OS_REG_AX], 0x1000);
	cr_expect_eq(s.regs[OS_REG_SP], 0x1000 + OS_REG_SP);
	cr_expect_eq(s.regs[OS_REG_R15], 0x1000 + OS_REG_R15);
	cr_expect_eq(s.regs[OS_REG_DS], 0, "DS is not in the mask");
	cr_expect_eq(s.stack_len, 40, "dyn_size bounds the valid stack bytes");
	cr_expect_eq(((const uint64_t *)s.stack)[1], 0xabc1);
	cr_expect_eq(s.weight, 77);
	cr_expect_eq(s.data_src, 0x42);
}

Test(perf, truncated_samples_are_rejected)
{
	struct rec r;
	struct os_perf_sample s;

	build(&r, OS_REGS_MASK, 64, 64);
	for (size_t len = 0; len < r.n * 8; len += 8)
		cr_expect_eq(os_perf_parse_sample(r.w, len, ALL_TYPES, OS_REGS_MASK, &s), -EPROTO,
			     "a record cut at %zu bytes must be rejected", len);
}

Test(perf, absurd_lengths_are_rejected)
{
	struct rec r;
	struct os_perf_sample s;

	build(&r, OS_REGS_MASK, 64, 64);
	r.w[6] = 1ULL << 40; /* callchain nr far beyond the record */
	cr_expect_eq(os_perf_parse_sample(r.w, r.n * 8, ALL_TYPES, OS_REGS_MASK, &s), -EPROTO);
	build(&r, OS_REGS_MASK, 64, 64);
	r.w[13 + 1 + __builtin_popcountll(OS_REGS_MASK)] = 1ULL << 30; /* stack size */
	cr_expect_eq(os_perf_parse_sample(r.w, r.n * 8, ALL_TYPES, OS_REGS_MASK, &s), -EPROTO);
}

Test(perf, no_user_regs_means_no_address)
{
	uint64_t w[] = { 0x401000, pair(5, 6), 99, PERF_SAMPLE_REGS_ABI_NONE };
	struct os_perf_sample s;

	cr_assert_eq(os_perf_parse_sample(w, sizeof(w),
					  PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
						  PERF_SAMPLE_REGS_USER,
					  OS_REGS_MASK, &s),
		     0);
	cr_expect_not(s.has & OS_PS_REGS, "a sample taken in a kernel thread has no user regs");
	cr_expect_eq(s.tid, 6);
}

/* ---- hold mode on a real task-clock event of this process ---- */
#include <linux/perf_event.h>
#include <time.h>
#include <unistd.h>

struct held {
	uint64_t samples, in_ring, lost, last_time[1024], disorder;
	const uint8_t *stack[64];
	uint64_t sum[64], len[64];
	unsigned nkept;
};

static uint64_t checksum(const uint8_t *p, uint64_t n)
{
	uint64_t h = 1469598103934665603ULL;

	for (uint64_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

static void held_sample(void *arg, const struct os_perf_sample *s)
{
	struct held *h = arg;

	h->samples++;
	if (s->cpu < 1024) {
		if (s->time <= h->last_time[s->cpu])
			h->disorder++; /* one CPU's ring is in time order: a record read twice */
		h->last_time[s->cpu] = s->time;
	}
	if (!(s->has & OS_PS_IN_RING) || !s->stack_len)
		return;
	h->in_ring++;
	if (h->nkept < 64) {
		h->stack[h->nkept] = s->stack;
		h->len[h->nkept] = s->stack_len;
		h->sum[h->nkept++] = checksum(s->stack, s->stack_len);
	}
}

static void held_lost(void *arg, uint64_t n)
{
	((struct held *)arg)->lost += n;
}

static void burn_ms(unsigned ms)
{
	struct timespec a, b;
	volatile uint64_t x = 0;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		for (int i = 0; i < 10000; i++)
			x += (uint64_t)i * i;
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
}

/* Held records stay in the buffer untouched: stacks used in place keep their
 * bytes while the kernel writes on (it cannot reuse held space and counts
 * lost records instead), nothing is read twice, and after a release the
 * kernel writes again. */
Test(perf, hold_keeps_records_in_place)
{
	struct perf_event_attr attr;
	const struct os_perf_cb cbs = { .sample = held_sample, .lost = held_lost };
	struct held h = { 0 };
	struct os_perf *p;
	char err[256];
	uint64_t before;
	int rc;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.sample_period = 200000; /* 5 kHz of CPU time */
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			   PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	attr.sample_regs_user = (1ULL << 6) | (1ULL << 7) | (1ULL << 8); /* bp sp ip */
	attr.sample_stack_user = 4096;
	attr.sample_id_all = 1;
	attr.exclude_kernel = 1;
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	rc = os_perf_open(&p, getpid(), &attr, 8, err, sizeof(err)); /* 32 KiB per CPU */
	if (rc == -EACCES || rc == -EPERM || rc == -ENOENT || rc == -EOPNOTSUPP)
		cr_skip_test("perf_event_open: %s", err);
	cr_assert_eq(rc, 0, "%s", err);
	os_perf_hold(p, true);
	burn_ms(30);
	os_perf_read(p, &cbs, &h);
	cr_assert_gt(h.in_ring, 0, "samples read in place while held (%lu samples)",
		     (unsigned long)h.samples);
	/* Not released: the buffer fills, the kernel drops records and must
	 * leave the held bytes alone. */
	burn_ms(150);
	for (unsigned i = 0; i < h.nkept; i++)
		cr_assert_eq(checksum(h.stack[i], h.len[i]), h.sum[i], "held stack %u overwritten",
			     i);
	os_perf_read(p, &cbs, &h);
	cr_assert_eq(h.disorder, 0, "no record is read twice");
	/* Released: the kernel writes again, first the count of what it lost. */
	os_perf_release(p);
	before = h.samples;
	burn_ms(30);
	os_perf_read(p, &cbs, &h);
	cr_assert_gt(h.samples, before, "samples arrive after the release");
	cr_assert_gt(h.lost, 0, "a full held buffer loses records");
	cr_assert_eq(h.disorder, 0);
	/* Hold off: nothing is flagged in place any more. */
	os_perf_hold(p, false);
	h.in_ring = 0;
	burn_ms(20);
	os_perf_read(p, &cbs, &h);
	cr_assert_eq(h.in_ring, 0);
	os_perf_close(p);
}

/* ---- muting a thread's own events (attach: os_perf_open_threads) ---- */
#include <pthread.h>
#include <sys/syscall.h>

struct busy {
	volatile int stop;
	volatile pid_t tid;
};

static void *busy_thread(void *arg)
{
	struct busy *b = arg;
	volatile uint64_t x = 0;

	b->tid = (pid_t)syscall(SYS_gettid);
	while (!b->stop)
		for (int i = 0; i < 10000; i++)
			x += (uint64_t)i * i;
	return NULL;
}

struct by_tid {
	pid_t muted;
	uint64_t muted_n, others;
};

static void count_tid(void *arg, const struct os_perf_sample *s)
{
	struct by_tid *t = arg;

	if ((pid_t)s->tid == t->muted)
		t->muted_n++;
	else
		t->others++;
}

static void ignore_lost(void *arg, uint64_t n)
{
	(void)arg;
	(void)n;
}

/* A JIT compiler thread's events switched off for good (attach): the
 * budget's on/off switching never enables them again, so the kernel takes
 * no sample of that thread while the others are sampled as before; events
 * opened on a process (inherit, launch) have no thread's own to switch. */
Test(perf, muted_thread_takes_no_samples)
{
	struct perf_event_attr attr;
	const struct os_perf_cb cbs = { .sample = count_tid, .lost = ignore_lost };
	struct busy b = { 0 };
	struct by_tid t = { 0 };
	struct os_perf *p, *q;
	pthread_t th;
	char err[256];
	int rc, muted;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.sample_period = 500000; /* 2 kHz of CPU time */
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
	attr.sample_id_all = 1;
	attr.exclude_kernel = 1;
	cr_assert_eq(pthread_create(&th, NULL, busy_thread, &b), 0);
	while (!b.tid)
		burn_ms(1);
	rc = os_perf_open_threads(&p, getpid(), &attr, 8, err, sizeof(err));
	if (rc == -EACCES || rc == -EPERM || rc == -ENOENT || rc == -EOPNOTSUPP) {
		b.stop = 1;
		pthread_join(th, NULL);
		cr_skip_test("perf_event_open: %s", err);
	}
	cr_assert_eq(rc, 0, "%s", err);
	t.muted = b.tid;
	muted = os_perf_mute_thread(p, b.tid);
	cr_assert_gt(muted, 0, "the busy thread's events were not switched off");
	cr_assert_eq(os_perf_mute_thread(p, b.tid), 0, "switched off twice");
	cr_assert_eq(os_perf_mute_thread(p, 0), 0);
	os_perf_read(p, &cbs, &t); /* what was taken before */
	t.muted_n = t.others = 0;
	/* the budget switches the events off and on again */
	cr_assert_eq(os_perf_steer(p, false), 0);
	cr_assert_eq(os_perf_steer(p, true), 0);
	for (int i = 0; i < 40 && t.others < 50; i++) {
		burn_ms(10);
		os_perf_read(p, &cbs, &t);
	}
	b.stop = 1;
	pthread_join(th, NULL);
	os_perf_read(p, &cbs, &t);
	cr_expect_gt(t.others, 10, "this thread was not sampled: %lu", (unsigned long)t.others);
	cr_expect_eq(t.muted_n, 0, "the muted thread still sampled: %lu samples",
		     (unsigned long)t.muted_n);
	os_perf_close(p);
	/* launch: one inherited event per CPU on the process */
	cr_assert_eq(os_perf_open(&q, getpid(), &attr, 8, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(os_perf_mute_thread(q, getpid()), 0, "a process's events muted");
	os_perf_close(q);
}
