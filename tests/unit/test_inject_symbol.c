/* test_inject_symbol.c - os_inject_symbol (attacher/inject/inject.c), read
 * through the symbolizer's ELF reader: the run-time address of a libc
 * function in this very process is the one the dynamic linker gave us. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <unistd.h>

#include "attacher/inject/inject.h"

Test(inject_symbol, libc_function_of_ourselves)
{
	uint64_t addr = 0;
	void *want = dlsym(RTLD_DEFAULT, "getpid");

	cr_assert_not_null(want);
	cr_assert_eq(os_inject_symbol(getpid(), "/libc.so.6", "getpid", &addr), 0);
	cr_assert_eq(addr, (uint64_t)(uintptr_t)want, "0x%llx, dlsym says %p",
		     (unsigned long long)addr, want);
	cr_assert_eq(os_inject_symbol(getpid(), "/libc.so.6", "no_such_function_here", &addr),
		     -ENOENT);
	cr_assert_eq(os_inject_symbol(getpid(), "/no-such-object.so", "getpid", &addr), -ENOENT);
}
