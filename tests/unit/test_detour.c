/* test_detour.c - preload/detour.c on the functions of
 * build/fixtures/libdetour_lib.so (C at -O2 and hand-written prologues, one
 * relocation case each): the detoured function runs the replacement, the
 * trampoline runs the original, and what cannot be relocated is refused and
 * counted. Run from the repository root. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>

#include "preload/detour.h"

#define DT_LIB "build/fixtures/libdetour_lib.so"

static void *dt_lib;

static void dt_open(void)
{
	dt_lib = dlopen(DT_LIB, RTLD_NOW | RTLD_LOCAL);
	cr_assert(dt_lib, "dlopen %s: %s (run from the repository root)", DT_LIB, dlerror());
}

static void dt_close(void)
{
	dlclose(dt_lib);
}

/* Address and ELF symbol size of a fixture function. */
static void *dt_sym(const char *name, size_t *size)
{
	const ElfW(Sym) *sym = NULL;
	Dl_info info;
	void *p = dlsym(dt_lib, name);

	cr_assert(p, "dlsym %s", name);
	cr_assert(dladdr1(p, &info, (void **)&sym, RTLD_DL_SYMENT) && sym, "dladdr1 %s", name);
	*size = sym->st_size;
	return p;
}

static int dt_calls;

typedef long (*dt_fn1)(long);
typedef long (*dt_sum_fn)(const long *, long);

static dt_fn1 dt_orig1;
static dt_sum_fn dt_orig_sum;

static long dt_repl1(long x)
{
	dt_calls++;
	return dt_orig1(x);
}

static long dt_repl_sum(const long *a, long n)
{
	dt_calls++;
	return dt_orig_sum(a, n) + 1000000;
}

/* Detours `name`, checks f(arg) == want through replacement and trampoline. */
static void dt_check1(const char *name, long arg, long want)
{
	size_t size;
	dt_fn1 f = (dt_fn1)dt_sym(name, &size);
	struct osp_detour_stats st0, st1;
	int err;

	cr_assert_eq(f(arg), want, "%s before the detour", name);
	osp_detour_get_stats(&st0);
	err = osp_detour_install((void *)f, size, (void *)dt_repl1, (void **)&dt_orig1);
	cr_assert_eq(err, 0, "install %s: %d", name, err);
	osp_detour_get_stats(&st1);
	cr_assert_eq(st1.installed, st0.installed + 1);
	cr_assert_eq(((uint8_t *)f)[0], 0xe9, "%s starts with jmp rel32", name);
	dt_calls = 0;
	cr_assert_eq(f(arg), want, "%s through the detour", name);
	cr_assert_eq(dt_calls, 1, "%s: replacement ran once", name);
	cr_assert_eq(dt_orig1(arg), want, "%s: trampoline is the original", name);
	cr_assert_eq(dt_calls, 1);
	if (want != -1) /* branch-taking cases use another argument too */
		cr_assert_eq(f(0), dt_orig1(0));
}

TestSuite(detour, .init = dt_open, .fini = dt_close);

Test(detour, c_loop_prologue_o2)
{
	long a[5] = { 1, 2, 3, 4, 5 }, want = 1 + 4 + 9 + 16 + 25;
	size_t size;
	dt_sum_fn f = (dt_sum_fn)dt_sym("dl_sum", &size);

	cr_assert_eq(osp_detour_init(NULL), 0);
	cr_assert_eq(f(a, 5), want);
	cr_assert_eq(osp_detour_install((void *)f, size, (void *)dt_repl_sum, (void **)&dt_orig_sum), 0);
	dt_calls = 0;
	cr_assert_eq(f(a, 5), want + 1000000);
	cr_assert_eq(f(a, 0), 1000000, "jle taken in the relocated prologue");
	cr_assert_eq(dt_calls, 2);
	cr_assert_eq(dt_orig_sum(a, 5), want);
}

Test(detour, c_riprel_global_o2)
{
	dt_check1("dl_bump", 3, 6);
}

Test(detour, asm_riprel_lea)
{
	dt_check1("dl_riprel", 2, 33);
}

Test(detour, asm_jcc_rel8)
{
	size_t size;
	dt_fn1 f = (dt_fn1)dt_sym("dl_jcc8", &size);

	dt_check1("dl_jcc8", 41, 42);
	cr_assert_eq(f(0), -1, "taken branch of the widened jcc");
	cr_assert_eq(dt_orig1(0), -1);
}

Test(detour, asm_call_rel32)
{
	dt_check1("dl_call", 5, 115);
}

Test(detour, asm_jmp_rel8)
{
	dt_check1("dl_jmp8", 0, 7);
}

static void dt_refused(const char *name, int want_err, int short_fn)
{
	size_t size;
	void *f = dt_sym(name, &size);
	uint8_t before[8], after[8];
	struct osp_detour_stats st0, st1;
	void *orig = NULL;

	memcpy(before, f, sizeof(before));
	osp_detour_get_stats(&st0);
	cr_assert_eq(osp_detour_install(f, size, (void *)dt_repl1, &orig), want_err, "%s", name);
	osp_detour_get_stats(&st1);
	memcpy(after, f, sizeof(after));
	cr_assert_arr_eq(before, after, sizeof(before), "%s left untouched", name);
	cr_assert_null(orig);
	cr_assert_eq(st1.installed, st0.installed);
	if (short_fn)
		cr_assert_eq(st1.refused_short, st0.refused_short + 1);
	else
		cr_assert_eq(st1.refused_reloc, st0.refused_reloc + 1);
}

Test(detour, refuses_branch_into_prologue)
{
	long (*f)(long) = (long (*)(long))dlsym(dt_lib, "dl_loopback");

	dt_refused("dl_loopback", -ENOTSUP, 0);
	cr_assert_eq(f(4), 10);
}

Test(detour, refuses_jrcxz)
{
	dt_refused("dl_jrcxz", -ENOTSUP, 0);
}

Test(detour, refuses_short_functions)
{
	dt_refused("dl_tiny", -ENOSPC, 1);
	dt_refused("dl_add", -ENOSPC, 1); /* lea; ret at -O2 */
}

Test(detour, trampoline_within_rel32_reach)
{
	size_t size;
	uint8_t *f = dt_sym("dl_riprel", &size);
	int32_t rel;
	uint8_t *stub;
	uint64_t abs_target;

	cr_assert_eq(osp_detour_install(f, size, (void *)dt_repl1, (void **)&dt_orig1), 0);
	memcpy(&rel, f + 1, 4);
	stub = f + 5 + rel;
	cr_assert_eq(stub[0], 0xff, "stub: jmp [rip+0]");
	cr_assert_eq(stub[1], 0x25);
	memcpy(&abs_target, stub + 6, sizeof(abs_target));
	cr_assert_eq(abs_target, (uint64_t)(uintptr_t)dt_repl1);
	cr_assert_eq(osp_detour_install(NULL, 16, (void *)dt_repl1, (void **)&dt_orig1), -EINVAL);
}
