/* unit_helpers.c - see unit_helpers.h. */
#include "tests/unit/unit_helpers.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

void ut_mkdtemp(char *dir, size_t len, const char *name)
{
	snprintf(dir, len, "/tmp/objscope-test-%s-XXXXXX", name);
	cr_assert_not_null(mkdtemp(dir));
}

void ut_rmtree(const char *dir)
{
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_expect_eq(system(cmd), 0);
}

char *ut_path(const char *dir, const char *name)
{
	static char buf[8][160];
	static int n;
	char *p = buf[n++ % 8];

	snprintf(p, sizeof(buf[0]), "%s/%s", dir, name);
	return p;
}

uint32_t ut_frame(struct os_profile *p, uint32_t kind, const char *name, const char *module,
		  const char *file, uint32_t line, uint64_t addr)
{
	struct os_frame f = {
		.kind = kind,
		.name = name ? os_profile_string(p, name) : OS_NONE,
		.module = module ? os_profile_string(p, module) : OS_NONE,
		.file = file ? os_profile_string(p, file) : OS_NONE,
		.line = line,
		.addr = addr,
	};

	return os_profile_frame(p, &f);
}
