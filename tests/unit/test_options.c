/* test_options.c - command-line options: --call-graph auto|dwarf|fp and the
 * JDK-launcher test that `record` uses to pick frame-pointer access paths. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attacher/options.h"

static char dir[64];

static void touch(const char *rel, mode_t mode)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, mode);
	cr_assert_geq(fd, 0, "create %s", path);
	close(fd);
}

static void mk(const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	cr_assert_eq(mkdir(path, 0755), 0, "mkdir %s", path);
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/objscope-opts-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	/* a JDK 9+ layout, a JDK 8 layout and a tool without any */
	mk("jdk");
	mk("jdk/bin");
	mk("jdk/lib");
	touch("jdk/bin/java", 0755);
	touch("jdk/bin/javac", 0755);
	touch("jdk/lib/libjli.so", 0644);
	mk("jdk8");
	mk("jdk8/bin");
	mk("jdk8/lib");
	mk("jdk8/lib/amd64");
	mk("jdk8/lib/amd64/jli");
	touch("jdk8/bin/java", 0755);
	touch("jdk8/lib/amd64/jli/libjli.so", 0644);
	mk("tool");
	mk("tool/bin");
	mk("tool/lib");
	touch("tool/bin/java", 0755); /* named java, but no libjli next to it */
	mk("links");
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_expect_eq(system(cmd), 0);
}

static bool launcher(const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	return os_jdk_launcher(path);
}

Test(options, jdk_launcher_by_path, .init = setup, .fini = teardown)
{
	char target[PATH_MAX], link[PATH_MAX];

	cr_expect(launcher("jdk/bin/java"));
	cr_expect(launcher("jdk/bin/javac"), "every launcher of the JDK, not only java");
	cr_expect(launcher("jdk8/bin/java"), "JDK 8 keeps libjli in lib/amd64/jli");
	cr_expect(!launcher("tool/bin/java"), "a binary called java without libjli is not one");
	cr_expect(!launcher("jdk/bin/missing"));
	/* /usr/bin/java -> /etc/alternatives/java -> .../bin/java: resolved */
	snprintf(target, sizeof(target), "%s/jdk/bin/java", dir);
	snprintf(link, sizeof(link), "%s/links/java", dir);
	cr_assert_eq(symlink(target, link), 0);
	cr_expect(launcher("links/java"), "a symbolic link to a launcher is a launcher");
	cr_expect(!os_jdk_launcher(NULL));
	cr_expect(!os_jdk_launcher(""));
}

Test(options, jdk_launcher_found_in_path, .init = setup, .fini = teardown)
{
	char path[PATH_MAX * 2], *old = getenv("PATH") ? strdup(getenv("PATH")) : NULL;

	snprintf(path, sizeof(path), "%s/tool/bin:%s/jdk/bin", dir, dir);
	setenv("PATH", path, 1);
	/* the first java in PATH decides, as for execvp */
	cr_expect(!os_jdk_launcher("java"), "tool/bin/java comes first in PATH");
	cr_expect(os_jdk_launcher("javac"));
	snprintf(path, sizeof(path), "%s/jdk/bin:%s/tool/bin", dir, dir);
	setenv("PATH", path, 1);
	cr_expect(os_jdk_launcher("java"));
	cr_expect(!os_jdk_launcher("no-such-program"));
	if (old)
		setenv("PATH", old, 1);
	free(old);
	cr_expect(!os_jdk_launcher("sh"), "sh is not a JDK launcher");
}

Test(options, call_graph_modes)
{
	struct os_opts o;
	char *auto_args[] = { "record", "--", "x", NULL };
	char *fp_args[] = { "record", "--call-graph", "fp", "--", "x", NULL };
	char *dwarf_args[] = { "record", "--call-graph", "dwarf", "--", "x", NULL };
	char *bad_args[] = { "record", "--call-graph", "lbr", "--", "x", NULL };

	cr_assert_geq(os_opts_parse(&o, "record", 3, auto_args), 0);
	cr_expect(o.call_graph_auto && o.call_graph_dwarf, "default: auto, dwarf until decided");
	cr_assert_geq(os_opts_parse(&o, "record", 5, fp_args), 0);
	cr_expect(!o.call_graph_auto && !o.call_graph_dwarf);
	cr_assert_geq(os_opts_parse(&o, "record", 5, dwarf_args), 0);
	cr_expect(!o.call_graph_auto && o.call_graph_dwarf, "an explicit dwarf stays dwarf");
	cr_expect_eq(os_opts_parse(&o, "record", 5, bad_args), -1);
}
