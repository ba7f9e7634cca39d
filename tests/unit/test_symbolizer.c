#include "symbolizer/symbolizer.h"

#include "common/procmaps.h"
#include "common/safefs.h"
#include "symbolizer/perfmap.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- the sym_target fixture, run stopped on its stdin ---- */

struct fx_func {
	char name[32];
	uint64_t addr;
	int first, last;   /* source line range, 0 when unknown */
};

struct target {
	pid_t pid;
	int stdin_fd;
	char lib[PATH_MAX];
	struct fx_func funcs[8];
	int nfuncs;
};

static const char *build_dir(void)
{
	const char *b = getenv("OBJSCOPE_BUILD");

	return b && *b ? b : "build";
}

static void start_target(struct target *t)
{
	char exe[PATH_MAX], rel[PATH_MAX], line[256];
	int in[2], out[2];
	FILE *f;

	memset(t, 0, sizeof(*t));
	snprintf(exe, sizeof(exe), "%s/fixtures/sym_target", build_dir());
	snprintf(rel, sizeof(rel), "%s/fixtures/libsymlib.so", build_dir());
	cr_assert(access(exe, X_OK) == 0 && realpath(rel, t->lib),
		  "fixtures missing: run `make fixtures` (%s, %s)", exe, rel);
	cr_assert_eq(pipe(in), 0);
	cr_assert_eq(pipe(out), 0);
	t->pid = fork();
	cr_assert_geq(t->pid, 0);
	if (t->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(exe, exe, t->lib, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	t->stdin_fd = in[1];
	f = fdopen(out[0], "r");
	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f) && strcmp(line, "ready\n")) {
		struct fx_func *fn = &t->funcs[t->nfuncs];
		unsigned long long a;

		if (t->nfuncs < 8 &&
		    sscanf(line, "%31s %llx %d %d", fn->name, &a, &fn->first, &fn->last) == 4) {
			fn->addr = a;
			t->nfuncs++;
		}
	}
	fclose(f);
	cr_assert_eq(t->nfuncs, 4, "sym_target did not start");
}

static void stop_target(struct target *t)
{
	int status;

	close(t->stdin_fd);
	waitpid(t->pid, &status, 0);
}

static const struct fx_func *func(const struct target *t, const char *name)
{
	for (int i = 0; i < t->nfuncs; i++)
		if (!strcmp(t->funcs[i].name, name))
			return &t->funcs[i];
	cr_assert_fail("fixture did not print %s", name);
	return NULL;
}

static const char *base(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* Resolves fn's address and an address inside fn and checks name, start,
 * module and (when the fixture knows it) the source line range. */
static void check_function(struct os_symbolizer *s, uint32_t pid, const struct fx_func *fn,
			   const char *want_name, const char *want_module, const char *want_file)
{
	struct os_sym_result r;
	uint64_t mid;

	cr_assert_eq(os_sym_resolve(s, pid, fn->addr, &r), 0, "%s not resolved", fn->name);
	cr_assert_not_null(r.func, "%s: no symbol", fn->name);
	cr_assert_str_eq(r.func, want_name);
	cr_assert_eq(r.sym_start, fn->addr, "%s: sym_start %#lx, real %#lx", fn->name,
		     (unsigned long)r.sym_start, (unsigned long)fn->addr);
	cr_assert_gt(r.sym_size, 0);
	cr_assert_not_null(r.module);
	cr_assert_str_eq(base(r.module), want_module);
	cr_assert_eq((fn->addr - r.offset) & 0xfff, 0, "load bias must be page-aligned");
	cr_assert_not(r.is_java);
	if (want_file) {
		cr_assert_not_null(r.file, "%s: no line info", fn->name);
		cr_assert_str_eq(base(r.file), want_file);
		if (fn->first)
			cr_assert(r.line > (uint32_t)fn->first && r.line < (uint32_t)fn->last,
				  "%s: line %u outside %d..%d", fn->name, r.line, fn->first,
				  fn->last);
	}

	mid = fn->addr + r.sym_size / 2;
	cr_assert_eq(os_sym_resolve(s, pid, mid, &r), 0);
	cr_assert_str_eq(r.func, want_name);
	cr_assert_eq(r.sym_start, fn->addr);
	/* the sampler's cheap lookup agrees with the full one */
	cr_assert_eq(os_sym_func_start(s, pid, fn->addr), fn->addr);
	cr_assert_eq(os_sym_func_start(s, pid, mid), fn->addr);
	cr_assert_eq(os_sym_func_start(s, pid, fn->addr + r.sym_size - 1), fn->addr);
	if (want_file && fn->first && r.line)
		cr_assert(r.line > (uint32_t)fn->first && r.line < (uint32_t)fn->last,
			  "%s+%#lx: line %u outside %d..%d", fn->name,
			  (unsigned long)(mid - fn->addr), r.line, fn->first, fn->last);
}

Test(symbolizer, pie_executable)
{
	struct os_symbolizer *s = os_sym_new();
	struct target t;

	start_target(&t);
	cr_assert_eq(os_sym_load_maps(s, t.pid), 0);
	cr_assert(os_sym_has_process(s, t.pid));
	check_function(s, t.pid, func(&t, "target_leaf"), "target_leaf", "sym_target",
		       "sym_target.c");
	stop_target(&t);
	os_sym_free(s);
}

Test(symbolizer, shared_library)
{
	struct os_symbolizer *s = os_sym_new();
	struct os_sym_result r;
	struct target t;

	start_target(&t);
	cr_assert_eq(os_sym_load_maps(s, t.pid), 0);
	check_function(s, t.pid, func(&t, "symlib_work"), "symlib_work", "libsymlib.so",
		       "symlib.c");
	check_function(s, t.pid, func(&t, "symlib_hidden"), "symlib_hidden", "libsymlib.so",
		       "symlib.c");
	/* Linked at 0x240000, text at vaddr 0x241000, loaded elsewhere. */
	cr_assert_eq(os_sym_resolve(s, t.pid, func(&t, "symlib_work")->addr, &r), 0);
	cr_assert(r.offset >= 0x241000 && r.offset < 0x242000, "vaddr %#lx",
		  (unsigned long)r.offset);
	cr_assert_neq(r.offset, func(&t, "symlib_work")->addr);
	stop_target(&t);
	os_sym_free(s);
}

Test(symbolizer, cxx_demangled)
{
	struct os_symbolizer *s = os_sym_new();
	struct target t;

	start_target(&t);
	cr_assert_eq(os_sym_load_maps(s, t.pid), 0);
	check_function(s, t.pid, func(&t, "cxx_method"), "ns::Klass::method(int)",
		       "libsymlib.so", "symlib_cxx.cpp");
	stop_target(&t);
	os_sym_free(s);
}

struct copy_ctx {
	struct os_symbolizer *s;
	const char *lib, *copy;
	uint32_t pid;
	int n;
};

static int add_as_copy(const struct os_maps_entry *e, void *arg)
{
	struct copy_ctx *c = arg;

	if (!strcmp(e->path, c->lib) && os_maps_is_exec(e)) {
		c->n++;
		return os_sym_add_mapping(c->s, c->pid, e->start, e->end, e->offset, c->copy);
	}
	return 0;
}

/* The library's mappings, but named after a stripped copy: only .dynsym. */
Test(symbolizer, dynsym_only)
{
	struct os_symbolizer *s = os_sym_new();
	char copy[] = "/tmp/objscope-symlib-XXXXXX", cmd[2 * PATH_MAX];
	struct os_sym_result r;
	struct target t;
	struct copy_ctx c;
	int fd;

	start_target(&t);
	fd = mkstemp(copy);
	cr_assert_geq(fd, 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "strip --strip-all -o '%s' '%s'", copy, t.lib);
	cr_assert_eq(system(cmd), 0, "strip failed");

	c = (struct copy_ctx){ s, t.lib, copy, 4242, 0 };
	cr_assert_eq(os_maps_foreach_pid(t.pid, add_as_copy, &c), 0);
	cr_assert_geq(c.n, 1);
	check_function(s, 4242, func(&t, "symlib_work"), "symlib_work", base(copy), NULL);
	cr_assert_eq(os_sym_resolve(s, 4242, func(&t, "symlib_work")->addr, &r), 0);
	cr_assert_null(r.file, "stripped copy has no line info");
	check_function(s, 4242, func(&t, "cxx_method"), "ns::Klass::method(int)", base(copy),
		       NULL);
	/* The static function is not in .dynsym. */
	cr_assert_eq(os_sym_resolve(s, 4242, func(&t, "symlib_hidden")->addr, &r), 0);
	cr_assert(!r.func || strcmp(r.func, "symlib_hidden"));
	unlink(copy);
	stop_target(&t);
	os_sym_free(s);
}

/* vaddr of section `name` of the ELF file at path (0 when absent). */
static uint64_t section_vaddr(const char *path, const char *name)
{
	char cmd[PATH_MAX + 128], line[512];
	unsigned long long a = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf -SW '%s'", path);
	f = popen(cmd, "r");
	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *at = strstr(line, name), sec[64], type[64];

		if (at && at[strlen(name)] == ' ' && at[-1] == ' ' &&
		    sscanf(at, "%63s %63s %llx", sec, type, &a) == 3)
			break;
		a = 0;
	}
	pclose(f);
	return a;
}

/* A stripped module (no .symtab, no debug file) names only its
 * exported functions. Other addresses keep their module and an offset that
 * is the ELF vaddr (the same in every run, what addr2line takes); the
 * exported function just before them, in the same section, is offered as
 * a hint, never as their name. */
Test(symbolizer, stripped_module_offsets_and_nearest_export)
{
	struct os_symbolizer *s = os_sym_new();
	char copy[] = "/tmp/objscope-symlib-XXXXXX", cmd[2 * PATH_MAX];
	struct os_sym_result r, w;
	uint64_t work, hidden, fini;
	struct target t;
	struct copy_ctx c;
	int fd;

	start_target(&t);
	fd = mkstemp(copy);
	cr_assert_geq(fd, 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "strip --strip-all -o '%s' '%s'", copy, t.lib);
	cr_assert_eq(system(cmd), 0, "strip failed");
	c = (struct copy_ctx){ s, t.lib, copy, 4242, 0 };
	cr_assert_eq(os_maps_foreach_pid(t.pid, add_as_copy, &c), 0);
	work = func(&t, "symlib_work")->addr;
	hidden = func(&t, "symlib_hidden")->addr;

	cr_assert_eq(os_sym_resolve(s, 4242, work, &w), 0);
	cr_assert_str_eq(w.func, "symlib_work");
	cr_assert_null(w.near_func, "a named frame has no hint");
	cr_assert_not_null(w.build_id);
	cr_assert_eq(strlen(w.build_id), 40, "%s", w.build_id);
	cr_assert_eq(strspn(w.build_id, "0123456789abcdef"), 40);

	/* the first byte past symlib_work (alignment padding before the next
	 * exported function): no name, symlib_work as the nearest export */
	cr_assert_eq(os_sym_resolve(s, 4242, work + w.sym_size, &r), 0);
	cr_assert_null(r.func, "%s", r.func);
	cr_assert_str_eq(base(r.module), base(copy));
	cr_assert_eq(r.offset, w.offset + w.sym_size);
	cr_assert_str_eq(r.near_func, "symlib_work");
	cr_assert_eq(r.near_off, w.sym_size);

	/* the static function lies before every exported one of .text */
	cr_assert_lt(hidden, work);
	cr_assert_eq(os_sym_resolve(s, 4242, hidden + 4, &r), 0);
	cr_assert_null(r.func, "%s", r.func);
	cr_assert_str_eq(base(r.module), base(copy));
	cr_assert_eq(r.offset, w.offset - (work - hidden) + 4, "offset %#lx",
		     (unsigned long)r.offset);
	cr_assert_null(r.near_func, "%s: nothing exported before it in .text", r.near_func);

	/* .fini follows the last exported function, in another section */
	fini = section_vaddr(copy, ".fini");
	cr_assert_gt(fini, w.offset);
	cr_assert_eq(os_sym_resolve(s, 4242, work + (fini - w.offset), &r), 0);
	cr_assert_null(r.func);
	cr_assert_eq(r.offset, fini);
	cr_assert_null(r.near_func, "%s across a section boundary", r.near_func);
	unlink(copy);
	stop_target(&t);
	os_sym_free(s);
}

/* A stripped library whose .gnu_debuglink names a debug file beside it
 * (DIR/.debug/NAME, as gdb looks): names come from that file's .symtab,
 * static functions included; a file by that name whose CRC is not the
 * link's (another build) is not used. */
Test(symbolizer, debuglink_file_names_functions)
{
	char dir[] = "/tmp/objscope-dbglink-XXXXXX", lib[64], dbg[80], cmd[3 * PATH_MAX];
	struct os_sym_result r;
	struct target t;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(lib, sizeof(lib), "%s/libsym.so", dir);
	snprintf(dbg, sizeof(dbg), "%s/.debug/libsym.dbg", dir);
	start_target(&t);
	snprintf(cmd, sizeof(cmd),
		 "mkdir '%s/.debug' && objcopy --only-keep-debug '%s' '%s' && "
		 "objcopy --strip-all --add-gnu-debuglink='%s' '%s' '%s'",
		 dir, t.lib, dbg, dbg, t.lib, lib);
	cr_assert_eq(system(cmd), 0, "objcopy failed");

	for (int good = 1; good >= 0; good--) {
		struct os_symbolizer *s = os_sym_new();
		struct copy_ctx c = { s, t.lib, lib, 4242, 0 };

		if (!good) { /* the same name, other bytes */
			snprintf(cmd, sizeof(cmd), "printf x >> '%s'", dbg);
			cr_assert_eq(system(cmd), 0);
		}
		cr_assert_eq(os_maps_foreach_pid(t.pid, add_as_copy, &c), 0);
		cr_assert_eq(os_sym_resolve(s, 4242, func(&t, "symlib_hidden")->addr + 4, &r), 0);
		if (good) {
			cr_assert_not_null(r.func, "debuglink file not used");
			cr_assert_str_eq(r.func, "symlib_hidden");
			cr_assert_eq(r.sym_start, func(&t, "symlib_hidden")->addr);
		} else {
			cr_assert_null(r.func, "debug file with the wrong CRC used: %s", r.func);
		}
		cr_assert_eq(os_sym_resolve(s, 4242, func(&t, "symlib_work")->addr, &r), 0);
		cr_assert_str_eq(r.func, "symlib_work");
		os_sym_free(s);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
	stop_target(&t);
}

struct id_ctx {
	struct os_symbolizer *s;
	const char *lib, *name;
	uint32_t pid;
	int n;
};

/* The library's mappings with their device and inode, named `name`. */
static int add_with_id(const struct os_maps_entry *e, void *arg)
{
	struct id_ctx *c = arg;

	if (!strcmp(e->path, c->lib) && os_maps_is_exec(e)) {
		c->n++;
		return os_sym_add_mapping_id(c->s, c->pid, e->start, e->end, e->offset, c->name,
					     e->dev_major, e->dev_minor, e->inode);
	}
	return 0;
}

/* The libraries named by the target's maps are hostile names. A
 * FIFO is not waited on; a file by that name that is not the inode mapped
 * (another file of the host, a root-only file) is not read: its frames stay
 * unnamed, counted; the mapped file is still found through map_files. */
Test(symbolizer, library_not_the_mapped_file_is_not_read, .timeout = 20)
{
	struct os_symbolizer *s = os_sym_new();
	char dir[] = "/tmp/objscope-symid-XXXXXX", fifo[128], copy[128], cmd[2 * PATH_MAX];
	struct os_sym_result r;
	struct target t;
	struct id_ctx c;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/lib.so", dir);
	cr_assert_eq(mkfifo(fifo, 0666), 0);
	cr_assert_eq(os_sym_add_mapping(s, 9, 0x400000, 0x410000, 0, fifo), 0);
	cr_assert_eq(os_sym_resolve(s, 9, 0x401234, &r), 0); /* returns: no hang */
	cr_assert_null(r.func);

	start_target(&t);
	snprintf(copy, sizeof(copy), "%s/copy.so", dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", t.lib, copy);
	cr_assert_eq(system(cmd), 0);
	/* a process that cannot be looked into: only the name is left */
	c = (struct id_ctx){ s, t.lib, copy, 4242, 0 };
	cr_assert_eq(os_maps_foreach_pid(t.pid, add_with_id, &c), 0);
	cr_assert_geq(c.n, 1);
	cr_assert_eq(os_sym_resolve(s, 4242, func(&t, "symlib_work")->addr, &r), 0);
	cr_assert_null(r.func, "a file that is not the mapped inode was read: %s", r.func);
	cr_assert_eq(os_sym_modules_refused(s), 1);
	os_sym_free(s);

	/* the live process: its map_files entry is the mapped file itself */
	if (geteuid() == 0) {
		s = os_sym_new();
		c = (struct id_ctx){ s, t.lib, copy, (uint32_t)t.pid, 0 };
		cr_assert_eq(os_maps_foreach_pid(t.pid, add_with_id, &c), 0);
		check_function(s, t.pid, func(&t, "symlib_work"), "symlib_work", "copy.so",
			       NULL);
		cr_assert_eq(os_sym_modules_refused(s), 0);
		os_sym_free(s);
	}
	/* the right inode by name: read as before */
	s = os_sym_new();
	c = (struct id_ctx){ s, t.lib, t.lib, 4243, 0 };
	cr_assert_eq(os_maps_foreach_pid(t.pid, add_with_id, &c), 0);
	check_function(s, 4243, func(&t, "symlib_work"), "symlib_work", "libsymlib.so", NULL);
	{ /* the fd handed to libdwfl users is that file */
		struct stat a, b;
		int fd = os_sym_module_fd(s, 4243, func(&t, "symlib_work")->addr);

		cr_assert_geq(fd, 0, "%s", strerror(-fd));
		cr_assert_eq(fstat(fd, &a), 0);
		cr_assert_eq(stat(t.lib, &b), 0);
		cr_expect(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
		close(fd);
		cr_expect_lt(os_sym_module_fd(s, 4243, 0x10), 0);
	}
	os_sym_free(s);
	stop_target(&t);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

/* The library's DWARF moved to a separate file found by .gnu_debuglink
 * (as Debian's -dbg packages do): its lines are used only with
 * os_sym_set_separate_lines (record --debug-lines); the function names stay. */
Test(symbolizer, separate_debug_file_lines_only_when_asked)
{
	char dir[] = "/tmp/objscope-dbglink-XXXXXX", lib[64], dbg[64];
	char cmd[3 * PATH_MAX];
	struct os_sym_result r;
	struct target t;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(lib, sizeof(lib), "%s/libsym.so", dir);
	snprintf(dbg, sizeof(dbg), "%s/libsym.so.debug", dir);
	start_target(&t);
	snprintf(cmd, sizeof(cmd),
		 "objcopy --only-keep-debug '%s' '%s' && objcopy --strip-debug "
		 "--add-gnu-debuglink='%s' '%s' '%s'",
		 t.lib, dbg, dbg, t.lib, lib);
	cr_assert_eq(system(cmd), 0, "objcopy failed");

	for (int on = 0; on <= 1; on++) {
		struct os_symbolizer *s = os_sym_new();
		struct copy_ctx c = { s, t.lib, lib, 4242, 0 };

		os_sym_set_separate_lines(s, on);
		cr_assert_eq(os_maps_foreach_pid(t.pid, add_as_copy, &c), 0);
		cr_assert_geq(c.n, 1);
		cr_assert_eq(os_sym_resolve(s, 4242, func(&t, "symlib_work")->addr + 4, &r), 0);
		cr_assert_not_null(r.func);
		cr_assert_str_eq(r.func, "symlib_work");
		if (on)
			check_function(s, 4242, func(&t, "symlib_work"), "symlib_work", "libsym.so",
				       "symlib.c");
		else
			cr_assert_null(r.file, "line from the separate debug file without asking");
		os_sym_free(s);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
	stop_target(&t);
}

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f);
	cr_assert_eq(fwrite(data, 1, len, f), len);
	fclose(f);
}

Test(symbolizer, perf_map)
{
	struct os_symbolizer *s = os_sym_new();
	char path[] = "/tmp/objscope-perfmap-XXXXXX";
	const char *text = "0x7f0000001000 0x100 Interpreter\n"
			   "7f0000002000 80 LFoo;::bar (compiled, tier 4)\n"
			   "not a line\n"
			   "0x7f0000003000 0x40 old stub\n"
			   "0x7f0000003000 0x40 new stub\n";
	struct os_sym_result r;
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	close(fd);
	write_file(path, text, strlen(text));
	cr_assert_eq(os_sym_add_mapping(s, 77, 0x7f0000000000, 0x7f0000010000, 0, "//anon"), 0);
	cr_assert_eq(os_sym_load_perf_map(s, 77, path), 0);

	cr_assert_eq(os_sym_resolve(s, 77, 0x7f0000002010, &r), 0);
	cr_assert(r.is_java);
	cr_assert_str_eq(r.func, "LFoo;::bar (compiled, tier 4)");
	cr_assert_str_eq(r.module, "[jit]");
	cr_assert_eq(r.sym_start, 0x7f0000002000);
	cr_assert_eq(r.sym_size, 0x80);

	cr_assert_eq(os_sym_resolve(s, 77, 0x7f00000010ff, &r), 0);
	cr_assert_str_eq(r.func, "Interpreter");
	cr_assert_eq(os_sym_resolve(s, 77, 0x7f0000003000, &r), 0);
	cr_assert_str_eq(r.func, "new stub");

	/* In the anonymous mapping but named by no perf map line. */
	cr_assert_eq(os_sym_resolve(s, 77, 0x7f0000001100, &r), 0);
	cr_assert_null(r.func);
	cr_assert_not(r.is_java);
	cr_assert_str_eq(r.module, "[anon]");

	cr_assert_eq(os_sym_func_start(s, 77, 0x7f0000002010), 0x7f0000002000);
	cr_assert_eq(os_sym_func_start(s, 77, 0x7f0000001100), 0, "no function: no start");
	cr_assert_eq(os_sym_func_start(s, 77, 0x1234), 0);
	cr_assert_eq(os_sym_func_start(s, 78, 0x7f0000002010), 0, "unknown process");

	/* Outside every mapping and perf map line. */
	cr_assert_eq(os_sym_resolve(s, 77, 0x1234, &r), -ENOENT);
	cr_assert_eq(r.offset, 0x1234);
	cr_assert_null(r.func);

	cr_assert_eq(os_sym_load_perf_map(s, 77, "/nonexistent/perf-77.map"), -ENOENT);
	unlink(path);
	os_sym_free(s);
}

/* The perf map is the target's file. A FIFO, a symlink or another
 * user's file is refused at once (no hang, nothing read); an endless line
 * is skipped and counted, the lines after it still read. */
Test(symbolizer, perf_map_hostile_files, .timeout = 10)
{
	struct os_symbolizer *s = os_sym_new();
	char dir[] = "/tmp/objscope-pmhost-XXXXXX", p[128], victim[128], *big;
	const size_t biglen = OS_PERFMAP_MAX_LINE * 3;
	struct os_sym_result r;
	struct os_perfmap *pm = NULL;
	size_t long_lines = 9;
	int fd;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/fifo.map", dir);
	cr_assert_eq(mkfifo(p, 0666), 0);
	cr_assert_eq(os_sym_load_perf_map(s, 5, p), -EBADFD, "a FIFO was read");

	snprintf(victim, sizeof(victim), "%s/secret", dir);
	write_file(victim, "0x1000 0x100 secret\n", 20);
	snprintf(p, sizeof(p), "%s/link.map", dir);
	cr_assert_eq(symlink(victim, p), 0);
	cr_assert_eq(os_sym_load_perf_map(s, 5, p), -ELOOP, "a symlink was followed");
	cr_assert_eq(os_sym_resolve(s, 5, 0x1010, &r), -ENOENT);

	/* another user's map: refused when the JVM's uid is asked for */
	snprintf(p, sizeof(p), "%s/other.map", dir);
	write_file(p, "0x1000 0x100 planted\n", 21);
	cr_assert_eq(chown(p, 65534, 65534), 0);
	cr_assert_eq(os_open_untrusted(AT_FDCWD, p, 4242, NULL), -EPERM);
	fd = os_open_untrusted(AT_FDCWD, p, 65534, NULL);
	cr_assert_geq(fd, 0);
	close(fd);

	/* an endless line between two good ones */
	big = malloc(biglen + 64);
	cr_assert_not_null(big);
	memset(big, 'A', biglen + 64);
	memcpy(big, "0x2000 0x10 first\n", 18);
	memcpy(big + biglen, "\n0x3000 0x10 last\n", 19);
	snprintf(p, sizeof(p), "%s/long.map", dir);
	write_file(p, big, biglen + 19);
	fd = open(p, O_RDONLY);
	cr_assert_eq(os_sym_load_perf_map_fd(s, 5, fd, &long_lines), 0);
	close(fd);
	cr_assert_eq(long_lines, 1);
	cr_assert_eq(os_sym_resolve(s, 5, 0x2001, &r), 0);
	cr_assert_str_eq(r.func, "first");
	cr_assert_eq(os_sym_resolve(s, 5, 0x3001, &r), 0);
	cr_assert_str_eq(r.func, "last");
	/* the same from memory, the last line without its newline */
	cr_assert_eq(os_perfmap_load_mem(big, biglen + 18, &pm), 0);
	cr_assert_eq(os_perfmap_count(pm), 2);
	cr_assert_eq(os_perfmap_long_lines(pm), 1);
	os_perfmap_free(pm);
	cr_assert_eq(os_perfmap_load_mem(big, OS_PERFMAP_MAX_BYTES + 1, &pm), -EFBIG);
	free(big);
	snprintf(p, sizeof(p), "rm -rf %s", dir);
	cr_assert_eq(system(p), 0);
	os_sym_free(s);
}

Test(symbolizer, perf_map_lines)
{
	char l1[] = "0x10 0x20 a b c\n", l2[] = "10 20 name", l3[] = "10 name", l4[] = "zz 10 x";
	char l5[] = "10 20 \n";
	uint64_t start, size;
	char *name;

	cr_assert_eq(os_perfmap_parse_line(l1, &start, &size, &name), 0);
	cr_assert_eq(start, 0x10);
	cr_assert_eq(size, 0x20);
	cr_assert_str_eq(name, "a b c");
	cr_assert_eq(os_perfmap_parse_line(l2, &start, &size, &name), 0);
	cr_assert_eq(size, 0x20);
	cr_assert_str_eq(name, "name");
	cr_assert_eq(os_perfmap_parse_line(l3, &start, &size, &name), -EINVAL);
	cr_assert_eq(os_perfmap_parse_line(l4, &start, &size, &name), -EINVAL);
	cr_assert_eq(os_perfmap_parse_line(l5, &start, &size, &name), -EINVAL);
}

Test(symbolizer, unknown_addresses)
{
	struct os_symbolizer *s = os_sym_new();
	struct os_sym_result r;

	cr_assert_eq(os_sym_resolve(s, 1, 0xdead, &r), -ENOENT);
	cr_assert_eq(r.offset, 0xdead);
	cr_assert_null(r.module);
	cr_assert_not(os_sym_has_process(s, 1));
	cr_assert_eq(os_sym_add_mapping(s, 1, 0x10000, 0x20000, 0, "[vdso]"), 0);
	cr_assert_eq(os_sym_resolve(s, 1, 0x20000, &r), -ENOENT);
	cr_assert_eq(os_sym_resolve(s, 1, 0xffff, &r), -ENOENT);
	cr_assert_eq(os_sym_resolve(s, 1, 0x10010, &r), 0);
	cr_assert_str_eq(r.module, "[vdso]");
	cr_assert_null(r.func);
	cr_assert_eq(os_sym_add_mapping(s, 1, 0x30000, 0x30000, 0, "/x"), -EINVAL);
	cr_assert_eq(os_sym_add_mapping(s, 1, 0x40000, 0x41000, 0, "anon_inode:[bpf]"), 0);
	cr_assert_eq(os_sym_resolve(s, 1, 0x40010, &r), 0);
	cr_assert_str_eq(r.module, "anon_inode:[bpf]");
	cr_assert_null(r.func);
	os_sym_free(s);
}

Test(symbolizer, bad_files)
{
	struct os_symbolizer *s = os_sym_new();
	char garbage[] = "/tmp/objscope-garbage-XXXXXX", trunc[] = "/tmp/objscope-trunc-XXXXXX";
	char exe[PATH_MAX], buf[8192];
	struct os_sym_result r;
	size_t i, n;
	FILE *f;
	int fd;

	/* An ELF magic followed by noise. */
	fd = mkstemp(garbage);
	cr_assert_geq(fd, 0);
	close(fd);
	srand(7);
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (char)rand();
	memcpy(buf, "\177ELF\2\1\1", 7);
	write_file(garbage, buf, sizeof(buf));

	/* The first pages of a real executable: headers point past the end. */
	fd = mkstemp(trunc);
	cr_assert_geq(fd, 0);
	close(fd);
	snprintf(exe, sizeof(exe), "%s/fixtures/sym_target", build_dir());
	f = fopen(exe, "r");
	cr_assert_not_null(f, "fixture %s missing", exe);
	n = fread(buf, 1, 6000, f);
	fclose(f);
	write_file(trunc, buf, n);

	cr_assert_eq(os_sym_add_mapping(s, 9, 0x400000, 0x410000, 0, garbage), 0);
	cr_assert_eq(os_sym_add_mapping(s, 9, 0x500000, 0x510000, 0x1000, trunc), 0);
	cr_assert_eq(os_sym_add_mapping(s, 9, 0x600000, 0x610000, 0, "/nonexistent/lib.so"), 0);
	cr_assert_eq(os_sym_add_mapping(s, 9, 0x700000, 0x710000, 0, "/etc/hostname"), 0);
	for (uint64_t a = 0x400000; a < 0x800000; a += 0x100000) {
		cr_assert_eq(os_sym_resolve(s, 9, a + 0x1234, &r), 0);
		cr_assert_null(r.func, "symbol %s in a bad file", r.func);
		cr_assert_null(r.file);
		cr_assert_not_null(r.module);
	}
	cr_assert_str_eq(r.module, "/etc/hostname");
	cr_assert_eq(r.offset, 0x1234);
	unlink(garbage);
	unlink(trunc);
	os_sym_free(s);
}

Test(symbolizer, overlapping_fork_exec)
{
	struct os_symbolizer *s = os_sym_new();
	struct os_sym_result r;

	cr_assert_eq(os_sym_add_mapping(s, 10, 0x1000, 0x5000, 0x10000, "/nonexistent/a"), 0);
	cr_assert_eq(os_sym_add_mapping(s, 10, 0x2000, 0x3000, 0, ""), 0);   /* splits a */
	cr_assert_eq(os_sym_add_mapping(s, 10, 0x8000, 0x9000, 0, "/nonexistent/b"), 0);
	cr_assert_eq(os_sym_add_mapping(s, 10, 0x4800, 0x8800, 0, "/nonexistent/c"), 0);

	cr_assert_eq(os_sym_resolve(s, 10, 0x1500, &r), 0);
	cr_assert_str_eq(r.module, "/nonexistent/a");
	cr_assert_eq(r.offset, 0x10500);
	cr_assert_eq(os_sym_resolve(s, 10, 0x2500, &r), 0);
	cr_assert_str_eq(r.module, "[anon]");
	cr_assert_eq(os_sym_resolve(s, 10, 0x3500, &r), 0);
	cr_assert_str_eq(r.module, "/nonexistent/a");
	cr_assert_eq(r.offset, 0x12500);
	cr_assert_eq(os_sym_resolve(s, 10, 0x4900, &r), 0);
	cr_assert_str_eq(r.module, "/nonexistent/c");
	cr_assert_eq(r.offset, 0x100);
	cr_assert_eq(os_sym_resolve(s, 10, 0x8900, &r), 0);
	cr_assert_str_eq(r.module, "/nonexistent/b");
	cr_assert_eq(r.offset, 0x900);

	cr_assert_eq(os_sym_fork(s, 10, 11), 0);
	cr_assert_eq(os_sym_fork(s, 99, 12), -ENOENT);
	cr_assert_eq(os_sym_resolve(s, 11, 0x1500, &r), 0);
	cr_assert_str_eq(r.module, "/nonexistent/a");
	os_sym_exec(s, 11);
	cr_assert_eq(os_sym_resolve(s, 11, 0x1500, &r), -ENOENT);
	cr_assert_eq(os_sym_resolve(s, 10, 0x1500, &r), 0);
	os_sym_free(s);
}

Test(symbolizer, demangle)
{
	char buf[256];
	const char *plain = "main";

	cr_assert_str_eq(os_sym_demangle("_ZN2ns5Klass6methodEi", buf, sizeof(buf)),
			 "ns::Klass::method(int)");
	cr_assert_eq(os_sym_demangle(plain, buf, sizeof(buf)), plain);
	cr_assert_str_eq(os_sym_demangle("_Znotvalid!", buf, sizeof(buf)), "_Znotvalid!");
	cr_assert_str_eq(os_sym_demangle("_ZN2ns5Klass6methodEi", buf, 6), "ns::K");
}

/* Many distinct addresses resolve quickly (symbols and lines are cached). */
Test(symbolizer, many_addresses)
{
	struct os_symbolizer *s = os_sym_new();
	const struct fx_func *fn;
	struct os_sym_result r;
	struct timespec t0, t1;
	struct target t;
	int named = 0;

	start_target(&t);
	cr_assert_eq(os_sym_load_maps(s, t.pid), 0);
	fn = func(&t, "symlib_work");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int pass = 0; pass < 2; pass++)
		for (uint64_t a = fn->addr - 0x100; a < fn->addr + 0x200; a++)
			if (!os_sym_resolve(s, t.pid, a, &r) && r.func)
				named++;
	for (int i = 0; i < 100000; i++)
		os_sym_resolve(s, t.pid, fn->addr + (uint64_t)(i % 64), &r);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cr_assert_gt(named, 2 * 0x100);
	cr_assert_lt((t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, 5.0);
	stop_target(&t);
	os_sym_free(s);
}
