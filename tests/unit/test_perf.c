/* Tests of perf record parsing with synthetic records (no PMU needed). */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "attacher/perf.h"

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
