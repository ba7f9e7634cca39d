/* test_sampler_soft.c - the software sampler's known-boundary reuse: a
 * decode miss sweeps from the nearest sampled IP below it instead of the
 * function start, reads fewer code bytes, and finds exactly what the sweep
 * from the function start finds. */
#include <capstone/capstone.h>
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <link.h>
#include <string.h>

#include "tests/unit/unit_helpers.h"
#include "attacher/sampling/sampler.h"

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

static struct result sample_with(struct os_sampler *s, uint64_t ip,
				 const struct os_code_access *acc)
{
	struct os_perf_sample ps;
	struct result r = { 0, 0, 0 };

	memset(&ps, 0, sizeof(ps));
	ps.pid = ps.tid = 42;
	ps.ip = ip;
	ps.has = OS_PS_REGS;
	for (int i = 0; i < OS_REG_COUNT; i++)
		ps.regs[i] = 0x1000ULL * (uint64_t)(i + 1);
	r.st = s->ops->address(s, &ps, 1, acc, &r.addr, &r.insn);
	return r;
}

static struct result sample_at(struct os_sampler *s, uint64_t ip)
{
	return sample_with(s, ip, &ca);
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

/* Real code: functions of this process's libc, read in place. */
static uint64_t fn_start, fn_size;

static ssize_t self_read(void *arg, uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	(void)arg;
	(void)pid;
	if (addr < fn_start - 64 || addr + len > fn_start + fn_size)
		return -1;
	memcpy(buf, (const void *)(uintptr_t)addr, len);
	bytes_read += len;
	last_from_off = (size_t)(addr - fn_start);
	return (ssize_t)len;
}

static uint64_t self_start(void *arg, uint32_t asid, uint64_t addr)
{
	(void)arg;
	(void)asid;
	return addr >= fn_start && addr < fn_start + fn_size ? fn_start : 0;
}

static const struct os_code_access self_ca = { NULL, self_read, self_start };

/* Start and size of libc function `name` (0 when it is not a plain
 * function of a sane size for these tests). */
static bool libc_function(const char *name, uint64_t *start, uint64_t *size)
{
	void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD), *p;
	const ElfW(Sym) *sym = NULL;
	Dl_info info;

	if (!h)
		return false;
	p = dlsym(h, name);
	dlclose(h);
	if (!p || !dladdr1(p, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym ||
	    ELF64_ST_TYPE(sym->st_info) != STT_FUNC ||
	    (uintptr_t)info.dli_fbase + sym->st_value != (uintptr_t)p)
		return false;
	*start = (uint64_t)(uintptr_t)p;
	*size = sym->st_size;
	return *size >= 256 && *size <= 4096;
}

/* The instruction starts of [fn_start, fn_start + fn_size), by capstone;
 * returns their number (0 when the sweep does not end at the end). */
static size_t true_starts(uint64_t *out, size_t max)
{
	csh cs;
	cs_insn *insn;
	const uint8_t *code = (const uint8_t *)(uintptr_t)fn_start;
	size_t size = fn_size, n = 0;
	uint64_t a = fn_start;

	cr_assert_eq(cs_open(CS_ARCH_X86, CS_MODE_64, &cs), CS_ERR_OK);
	insn = cs_malloc(cs);
	cr_assert_not_null(insn);
	while (size && n < max) {
		out[n++] = a;
		if (!cs_disasm_iter(cs, &code, &size, &a, insn))
			break;
	}
	cs_free(insn, 1);
	cs_close(&cs);
	return size == 0 ? n : 0;
}

/* 256 B to 4 KiB in Debian 12's libc (others are skipped). */
static const char *const libc_funcs[] = {
	"qsort_r", "malloc", "free", "realloc", "getdelim", "fnmatch", "regexec", "setlocale",
	"fclose", "fwrite", "tsearch", "regcomp", "tdelete", "getpwnam_r", "wordexp", "newlocale",
	"sscanf", "calloc", "if_nameindex", "gethostbyname_r", "getnameinfo", "argp_parse",
	"backtrace_symbols", "realpath", "iconv", "readdir",
};

/* On real code (libc functions, every instruction boundary as an IP, in a
 * scrambled order): a sampler that has learned boundaries from its earlier
 * sweeps answers every IP exactly as a fresh sampler sweeping from the
 * function start, and reads far fewer code bytes. */
Test(sampler_soft, learned_boundaries_real_code_same_answers, .timeout = 60)
{
	static uint64_t starts[4096];
	size_t nfuncs = 0, nips = 0, nok = 0, learn_bytes = 0, fresh_bytes = 0;
	uint32_t x = 0x2545f491;

	for (size_t f = 0; f < sizeof(libc_funcs) / sizeof(libc_funcs[0]); f++) {
		struct os_sampler learn;
		size_t n;

		if (!libc_function(libc_funcs[f], &fn_start, &fn_size))
			continue;
		n = true_starts(starts, sizeof(starts) / sizeof(starts[0]));
		if (n < 16)
			continue;
		nfuncs++;
		new_sampler(&learn);
		/* scramble (the IP after the last instruction is the function end:
		 * leave it out, self_start does not cover it) */
		for (size_t i = n - 1; i > 1; i--) {
			size_t j;
			uint64_t t;

			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			j = 1 + x % i;
			t = starts[i];
			starts[i] = starts[j];
			starts[j] = t;
		}
		for (size_t i = 1; i < n; i++) {
			struct os_sampler fresh;
			struct result a, b;

			bytes_read = 0;
			a = sample_with(&learn, starts[i], &self_ca);
			learn_bytes += bytes_read;
			new_sampler(&fresh);
			bytes_read = 0;
			b = sample_with(&fresh, starts[i], &self_ca);
			fresh_bytes += bytes_read;
			fresh.ops->destroy(&fresh);
			cr_assert_eq(a.st, b.st, "%s+%#lx: %d vs %d", libc_funcs[f],
				     (unsigned long)(starts[i] - fn_start), a.st, b.st);
			cr_assert_eq(a.insn, b.insn, "%s+%#lx", libc_funcs[f],
				     (unsigned long)(starts[i] - fn_start));
			if (a.st == OS_DEC_OK)
				cr_assert_eq(a.addr, b.addr, "%s+%#lx", libc_funcs[f],
					     (unsigned long)(starts[i] - fn_start));
			nips++;
			nok += a.st != OS_DEC_UNDECODABLE;
		}
		learn.ops->destroy(&learn);
	}
	cr_assert_geq(nfuncs, 5, "only %zu usable libc functions", nfuncs);
	cr_assert_gt(nips, 2000, "%zu IPs", nips);
	cr_expect_eq(nok, nips, "%zu of %zu IPs decoded with the function start", nok, nips);
	cr_expect_lt(learn_bytes * 4, fresh_bytes, "%zu vs %zu bytes", learn_bytes, fresh_bytes);
}

/* A second miss in a function sweeps from a boundary learned by the first
 * one's sweep, a line below it, not from the function start: there is no
 * sampled IP below it. */
Test(sampler_soft, second_miss_sweeps_from_learned_boundary)
{
	static uint64_t starts[4096];
	struct os_sampler s, fresh;
	struct result a, b;
	size_t n = 0, mid;

	for (size_t f = 0; f < sizeof(libc_funcs) / sizeof(libc_funcs[0]) && n < 200; f++)
		if (libc_function(libc_funcs[f], &fn_start, &fn_size) && fn_size >= 1024)
			n = true_starts(starts, sizeof(starts) / sizeof(starts[0]));
	cr_assert_geq(n, 200, "no libc function of 1-4 KiB found");
	new_sampler(&s);
	bytes_read = 0;
	sample_with(&s, starts[n - 1], &self_ca);      /* sweeps the whole function */
	cr_expect_eq(last_from_off, 0);
	cr_expect_eq(bytes_read, starts[n - 1] - fn_start);

	mid = n / 2;
	bytes_read = 0;
	a = sample_with(&s, starts[mid], &self_ca);
	cr_expect_gt(last_from_off, 0, "swept from the function start");
	cr_expect_leq(bytes_read, 64 + 15, "swept %zu bytes", bytes_read);
	new_sampler(&fresh);
	b = sample_with(&fresh, starts[mid], &self_ca);
	cr_expect_eq(a.st, b.st);
	cr_expect_eq(a.insn, b.insn);
	cr_expect_eq(a.insn, starts[mid - 1]);
	fresh.ops->destroy(&fresh);
	s.ops->destroy(&s);
}
