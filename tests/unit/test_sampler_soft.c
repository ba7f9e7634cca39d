/* test_sampler_soft.c - the software sampler's known-boundary reuse: a
 * decode miss sweeps from the nearest sampled IP below it instead of the
 * function start, reads fewer code bytes, and finds exactly what the sweep
 * from the function start finds. */
#include <criterion/criterion.h>
#include <string.h>

#include "tests/unit/unit_helpers.h"
#include "attacher/sampler.h"

#define CODE_ADDR 0x401000ULL

/* ut_walk_code (unit_helpers.c); instruction starts in walk_starts. */
static const uint8_t walk_starts[] = {
	0x03, 0x06, 0x08, 0x0a, 0x0e, 0x10, 0x13, 0x16, 0x1a, 0x1f, 0x23, 0x27, 0x2a, 0x2c,
	0x30, 0x33, 0x35, 0x3a, 0x3f, 0x43, 0x47, 0x4b, 0x4e, 0x50, 0x54, 0x59, 0x5c, 0x5e,
	0x62, 0x63, 0x67, 0x6b,
};
#define NSTARTS (sizeof(walk_starts) / sizeof(walk_starts[0]))

/* The fake target: code at CODE_ADDR (+ pad bytes of int3 before it so that
 * a backward sweep can read 64 bytes), one function starting at CODE_ADDR
 * when `with_start`. Counts what is read. */
#define PAD 128
static uint8_t image[PAD + sizeof(ut_walk_code)];
static bool with_start;
static size_t bytes_read, last_from_off;

static ssize_t fake_read(void *arg, uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	(void)arg;
	(void)pid;
	if (addr < CODE_ADDR - PAD || addr + len > CODE_ADDR + sizeof(ut_walk_code))
		return -1;
	memcpy(buf, image + (addr - (CODE_ADDR - PAD)), len);
	bytes_read += len;
	last_from_off = (size_t)(addr - CODE_ADDR);
	return (ssize_t)len;
}

static uint64_t fake_start(void *arg, uint32_t asid, uint64_t addr)
{
	(void)arg;
	(void)asid;
	return with_start && addr >= CODE_ADDR && addr < CODE_ADDR + sizeof(ut_walk_code) ? CODE_ADDR
										     : 0;
}

static const struct os_code_access ca = { NULL, fake_read, fake_start };

static void new_sampler(struct os_sampler *s)
{
	struct os_opts o;
	char err[128];

	memset(&o, 0, sizeof(o));
	o.freq = 1000;
	memset(s, 0, sizeof(*s));
	s->ops = &os_sampler_soft_ops;
	cr_assert_eq(s->ops->init(s, &o, err, sizeof(err)), 0);
}

struct result {
	enum os_dec_status st;
	uint64_t addr, insn;
};

static struct result sample_at(struct os_sampler *s, uint64_t ip)
{
	struct os_perf_sample ps;
	struct result r = { 0, 0, 0 };

	memset(&ps, 0, sizeof(ps));
	ps.pid = ps.tid = 42;
	ps.ip = ip;
	ps.has = OS_PS_REGS;
	for (int i = 0; i < OS_REG_COUNT; i++)
		ps.regs[i] = 0x1000ULL * (uint64_t)(i + 1);
	r.st = s->ops->address(s, &ps, 1, &ca, &r.addr, &r.insn);
	return r;
}

static void init_image(void)
{
	memset(image, 0xcc, PAD);
	memcpy(image + PAD, ut_walk_code, sizeof(ut_walk_code));
}

TestSuite(sampler_soft, .init = init_image);

/* With a function start: every IP decoded by a sampler that learned the
 * earlier IPs gives the same answer as a fresh sampler sweeping from the
 * function start, while reading (and decoding) fewer bytes. */
Test(sampler_soft, learned_boundaries_match_function_start_sweep)
{
	struct os_sampler learn, fresh;
	size_t learn_bytes = 0, fresh_bytes = 0;

	with_start = true;
	new_sampler(&learn);
	for (size_t i = 0; i < NSTARTS; i++) {
		uint64_t ip = CODE_ADDR + walk_starts[i];
		struct result a, b;

		bytes_read = 0;
		a = sample_at(&learn, ip);
		learn_bytes += bytes_read;
		if (i > 0) /* swept from the previous sample's IP, not from the start */
			cr_expect_eq(last_from_off, walk_starts[i - 1], "ip +%#x read from +%#zx",
				     walk_starts[i], last_from_off);
		new_sampler(&fresh);
		bytes_read = 0;
		b = sample_at(&fresh, ip);
		fresh_bytes += bytes_read;
		cr_expect_eq(last_from_off, 0);
		fresh.ops->destroy(&fresh);
		cr_expect_eq(a.st, b.st, "ip +%#x: %d vs %d", walk_starts[i], a.st, b.st);
		cr_expect_eq(a.insn, b.insn, "ip +%#x", walk_starts[i]);
		if (a.st == OS_DEC_OK)
			cr_expect_eq(a.addr, b.addr, "ip +%#x", walk_starts[i]);
	}
	cr_expect_lt(learn_bytes * 4, fresh_bytes, "%zu vs %zu bytes", learn_bytes, fresh_bytes);
	/* a hit in the per-IP cache reads nothing */
	bytes_read = 0;
	cr_expect_eq(sample_at(&learn, CODE_ADDR + 0x3f).insn, CODE_ADDR + 0x3a);
	cr_expect_eq(bytes_read, 0);
	learn.ops->destroy(&learn);
}

/* Without a function start (JIT code): the first IP needs the backward
 * sweep (64 bytes); an IP a few bytes after a sampled one sweeps forward
 * from it, with the backward sweep's answers. */
Test(sampler_soft, learned_boundary_replaces_backward_sweep)
{
	struct os_sampler s;
	struct result r;

	with_start = false;
	new_sampler(&s);
	bytes_read = 0;
	r = sample_at(&s, CODE_ADDR + 0x43); /* after add dword ptr [rax+0x18], 1 */
	cr_assert_eq(r.st, OS_DEC_OK);
	cr_expect_eq(r.insn, CODE_ADDR + 0x3f);
	cr_expect_eq(r.addr, 0x1000ULL * (OS_REG_AX + 1) + 0x18);
	cr_expect_eq(bytes_read, 64);

	bytes_read = 0;
	r = sample_at(&s, CODE_ADDR + 0x4b); /* after mov rax, [rax+0x10] */
	cr_expect_eq(r.st, OS_DEC_CLOBBERED);
	cr_expect_eq(r.insn, CODE_ADDR + 0x47);
	cr_expect_eq(bytes_read, 0x4b - 0x43);
	cr_expect_eq(last_from_off, 0x43);

	bytes_read = 0;
	r = sample_at(&s, CODE_ADDR + 0x59); /* after movsd qword ptr [r8], xmm1 */
	cr_expect_eq(r.st, OS_DEC_OK);
	cr_expect_eq(r.insn, CODE_ADDR + 0x54);
	cr_expect_eq(r.addr, 0x1000ULL * (OS_REG_R8 + 1));
	cr_expect_eq(last_from_off, 0x4b);
	s.ops->destroy(&s);
}
