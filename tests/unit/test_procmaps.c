#include "common/procmaps.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

Test(procmaps, file_line)
{
	char line[] = "55d4c8a00000-55d4c8a02000 r-xp 00001000 fd:01 1234567"
		      "                    /usr/bin/cat\n";
	struct os_maps_entry e;

	cr_assert_eq(os_maps_parse_line(line, &e), 0);
	cr_assert_eq(e.start, 0x55d4c8a00000ULL);
	cr_assert_eq(e.end, 0x55d4c8a02000ULL);
	cr_assert_str_eq(e.perms, "r-xp");
	cr_assert(os_maps_is_exec(&e));
	cr_assert_eq(e.offset, 0x1000);
	cr_assert_eq(e.dev_major, 0xfd);
	cr_assert_eq(e.dev_minor, 1);
	cr_assert_eq(e.inode, 1234567);
	cr_assert_str_eq(e.path, "/usr/bin/cat");
	cr_assert_not(e.deleted);
}

Test(procmaps, anonymous_and_special)
{
	char anon[] = "7f0000000000-7f0000021000 rw-p 00000000 00:00 0 \n";
	char vdso[] = "7ffd1b1e0000-7ffd1b1e2000 r-xp 00000000 00:00 0                  [vdso]";
	struct os_maps_entry e;

	cr_assert_eq(os_maps_parse_line(anon, &e), 0);
	cr_assert_str_eq(e.path, "");
	cr_assert_not(os_maps_is_exec(&e));
	cr_assert_eq(os_maps_parse_line(vdso, &e), 0);
	cr_assert_str_eq(e.path, "[vdso]");
	cr_assert_eq(e.end - e.start, 0x2000);
}

Test(procmaps, spaces_and_deleted)
{
	char sp[] = "7f1000000000-7f1000001000 r-xp 00002000 08:02 42   /opt/my app/lib x.so\n";
	char del[] = "7f2000000000-7f2000004000 r-xp 00000000 08:02 43 /tmp/jit code (deleted)\n";
	struct os_maps_entry e;

	cr_assert_eq(os_maps_parse_line(sp, &e), 0);
	cr_assert_str_eq(e.path, "/opt/my app/lib x.so");
	cr_assert_eq(e.offset, 0x2000);
	cr_assert_not(e.deleted);
	cr_assert_eq(os_maps_parse_line(del, &e), 0);
	cr_assert_str_eq(e.path, "/tmp/jit code");
	cr_assert(e.deleted);
}

Test(procmaps, bad_lines)
{
	char l1[] = "garbage";
	char l2[] = "1000-2000 r-xp";
	char l3[] = "2000-1000 r-xp 00000000 00:00 0";
	char l4[] = "1000-2000 r-xp 00000000 0000 0 /x";
	char l5[] = "-1000-2000 r-xp 00000000 00:00 0";
	struct os_maps_entry e;

	cr_assert_eq(os_maps_parse_line(l1, &e), -EINVAL);
	cr_assert_eq(os_maps_parse_line(l2, &e), -EINVAL);
	cr_assert_eq(os_maps_parse_line(l3, &e), -EINVAL);
	cr_assert_eq(os_maps_parse_line(l4, &e), -EINVAL);
	cr_assert_eq(os_maps_parse_line(l5, &e), -EINVAL);
}

struct collect {
	int n;
	uint64_t starts[8];
	char paths[8][64];
};

static int collect_cb(const struct os_maps_entry *e, void *arg)
{
	struct collect *c = arg;

	if (c->n == 8)
		return -E2BIG;
	c->starts[c->n] = e->start;
	snprintf(c->paths[c->n], sizeof(c->paths[0]), "%s", e->path);
	c->n++;
	return 0;
}

static int stop_cb(const struct os_maps_entry *e, void *arg)
{
	(void)e;
	return ++*(int *)arg == 2 ? 77 : 0;
}

Test(procmaps, text_walk)
{
	const char *text = "1000-2000 r-xp 00000000 08:01 5 /bin/a\n"
			   "\n"
			   "3000-4000 rw-p 00001000 08:01 5 /bin/a\n"
			   "5000-6000 ---p 00000000 00:00 0";
	struct collect c = { 0 };
	int calls = 0;

	cr_assert_eq(os_maps_foreach_text(text, collect_cb, &c), 0);
	cr_assert_eq(c.n, 3);
	cr_assert_eq(c.starts[1], 0x3000);
	cr_assert_str_eq(c.paths[1], "/bin/a");
	cr_assert_str_eq(c.paths[2], "");
	cr_assert_eq(os_maps_foreach_text(text, stop_cb, &calls), 77);
	cr_assert_eq(calls, 2);
	cr_assert_eq(os_maps_foreach_text("1000-2000 r-xp 0 08:01 5 /a\nbroken\n", collect_cb, &c),
		     -EINVAL);
}

static int find_self_cb(const struct os_maps_entry *e, void *arg)
{
	uint64_t addr = (uint64_t)(uintptr_t)&find_self_cb;

	if (addr >= e->start && addr < e->end && os_maps_is_exec(e) && e->path[0] == '/')
		*(int *)arg = 1;
	return 0;
}

Test(procmaps, own_process)
{
	int found = 0;

	cr_assert_eq(os_maps_foreach_pid(getpid(), find_self_cb, &found), 0);
	cr_assert_eq(found, 1, "own code not found in /proc/self/maps");
	cr_assert_eq(os_maps_foreach_pid(0x7ffffff0, find_self_cb, &found), -ENOENT);
}
