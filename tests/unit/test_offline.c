/* test_offline.c - naming a profile's frames later from a directory of debug
 * files (symbolizer/offline.c, `report --debug-dir`). */
#include "common/profile.h"
#include "symbolizer/elf_module.h"
#include "symbolizer/offline.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *build_dir(void)
{
	const char *b = getenv("OBJSCOPE_BUILD");

	return b && *b ? b : "build";
}

/* vaddr of symbol `name` in the ELF file at path (nm). */
static uint64_t sym_vaddr(const char *path, const char *name)
{
	char cmd[PATH_MAX + 64], line[512], sym[256], type;
	unsigned long long a, found = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "nm '%s'", path);
	f = popen(cmd, "r");
	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a, &type, sym) == 3 && !strcmp(sym, name))
			found = a;
	pclose(f);
	cr_assert_neq(found, 0, "%s not in %s", name, path);
	return found;
}

static uint32_t unnamed_frame(struct os_profile *p, const char *module, uint64_t off,
			      const char *build_id)
{
	struct os_frame f = {
		.kind = OS_FRAME_NATIVE,
		.name = OS_NONE,
		.module = os_profile_string(p, module),
		.file = OS_NONE,
		.addr = off,
		.near_sym = os_profile_string(p, "symlib_work"),
		.near_off = 0x10,
		.build_id = build_id ? os_profile_string(p, build_id) : OS_NONE,
	};

	return os_profile_frame(p, &f);
}

/* A profile recorded where libsymlib was stripped names its
 * frames on another machine from the library's debug file, found by
 * build-id; a file of another build (same name) is not used; what was not
 * found is said in a note. */
Test(offline, names_frames_by_build_id)
{
	char lib[PATH_MAX], rel[PATH_MAX], dir[] = "/tmp/objscope-dbgdir-XXXXXX";
	char cmd[3 * PATH_MAX], buf[256], want[256], *id;
	struct os_offline_stats st;
	struct os_profile *p = os_profile_new();
	struct os_elfmod *m;
	uint32_t fr[4], stack;
	uint64_t hidden, work;
	const char *note;

	snprintf(rel, sizeof(rel), "%s/fixtures/libsymlib.so", build_dir());
	cr_assert_not_null(realpath(rel, lib), "fixtures missing: run `make fixtures`");
	m = os_elfmod_new(lib);
	cr_assert_eq(os_elfmod_load(m, NULL), 0);
	cr_assert_not_null(os_elfmod_build_id(m), "the fixture has no build-id");
	id = strdup(os_elfmod_build_id(m));
	os_elfmod_free(m);
	hidden = sym_vaddr(lib, "symlib_hidden");
	work = sym_vaddr(lib, "symlib_work");

	cr_assert_not_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p '%s/.build-id/%.2s' && objcopy --only-keep-debug '%s' "
		 "'%s/.build-id/%.2s/%s.debug' && cp '%s' '%s/libother.so'",
		 dir, id, lib, dir, id, id + 2, lib, dir);
	cr_assert_eq(system(cmd), 0);

	fr[0] = unnamed_frame(p, "/opt/app/libsym.so", hidden + 4, id);
	fr[1] = unnamed_frame(p, "/opt/app/libsym.so", work + 2, id);
	/* libother.so is in the directory by name, but of another build: at
	 * that offset it has symlib_work, which must not be taken */
	fr[2] = unnamed_frame(p, "/opt/app/libother.so", work + 2, "00112233445566778899");
	fr[3] = unnamed_frame(p, "/opt/app/libold.so", 0x99, NULL);
	stack = os_profile_stack(p, fr, 4);
	os_profile_add_context(p, &(struct os_context){ .type = OS_NONE, .stack = stack,
							.allocations = 1, .bytes = 64,
							.samples = 3 });

	cr_assert_eq(os_sym_name_from_dir(&p, dir, true, &st), 0);
	cr_assert_eq(st.named, 2);
	cr_assert_eq(st.modules_found, 1);
	cr_assert_eq(st.modules_missing, 1);
	cr_assert_eq(st.no_build_id, 1);
	cr_assert_eq(st.unnamed, 2);
	cr_assert_eq(p->ncontexts, 1);
	stack = p->contexts[0].stack;
	cr_assert_eq(p->stacks[stack].nframes, 4);
	{
		const struct os_frame *f = &p->frames[p->stacks[stack].frames[0]];

		cr_assert_str_eq(os_profile_str(p, f->name), "symlib_hidden");
		cr_assert_not_null(os_profile_str(p, f->file), "no line from the debug file");
		cr_assert_not_null(strstr(os_profile_str(p, f->file), "symlib.c"));
		cr_assert_gt(f->line, 0);
		cr_assert_eq(f->near_sym, OS_NONE, "a named frame keeps no hint");
		cr_assert_eq(f->addr, hidden + 4, "the offset is kept");
	}
	os_profile_frame_str(p, p->stacks[stack].frames[1], buf, sizeof(buf));
	cr_assert_eq(strncmp(buf, "symlib_work (symlib.c:", 22), 0, "%s", buf);
	os_profile_frame_str(p, p->stacks[stack].frames[2], buf, sizeof(buf));
	snprintf(want, sizeof(want), "libother.so+0x%llx (nearest export: symlib_work+0x10)",
		 (unsigned long long)work + 2);
	cr_assert_str_eq(buf, want);
	os_profile_frame_str(p, p->stacks[stack].frames[3], buf, sizeof(buf));
	cr_assert_str_eq(buf, "libold.so+0x99 (nearest export: symlib_work+0x10)");
	cr_assert_eq(p->meta.nnotes, 1);
	note = os_profile_str(p, p->meta.notes[0]);
	cr_assert_not_null(strstr(note, "2 frames named"), "%s", note);
	cr_assert_not_null(strstr(note, "libother.so (build-id 00112233445566778899)"), "%s", note);
	cr_assert_not_null(strstr(note, "1 frames have no build-id"), "%s", note);

	cr_assert_eq(os_sym_name_from_dir(&p, "/nonexistent-objscope-dir", true, &st), -ENOENT);
	cr_assert_eq(os_sym_name_from_dir(&p, lib, true, &st), -ENOTDIR);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
	free(id);
	os_profile_free(p);
}

/* report --no-lines: a frame named from the directory gets no file or line
 * and loses its offset, like the other named frames of such a report. */
Test(offline, no_lines)
{
	char lib[PATH_MAX], rel[PATH_MAX], dir[] = "/tmp/objscope-dbgdir-XXXXXX";
	char cmd[3 * PATH_MAX], *id;
	struct os_offline_stats st;
	struct os_profile *p = os_profile_new();
	const struct os_frame *f;
	struct os_elfmod *m;
	uint32_t fr;

	snprintf(rel, sizeof(rel), "%s/fixtures/libsymlib.so", build_dir());
	cr_assert_not_null(realpath(rel, lib), "fixtures missing: run `make fixtures`");
	m = os_elfmod_new(lib);
	cr_assert_eq(os_elfmod_load(m, NULL), 0);
	id = strdup(os_elfmod_build_id(m));
	os_elfmod_free(m);
	cr_assert_not_null(mkdtemp(dir));
	/* the symfs layout: the module's path under the directory */
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/opt/app' && cp '%s' '%s/opt/app/libsym.so'", dir,
		 lib, dir);
	cr_assert_eq(system(cmd), 0);
	fr = unnamed_frame(p, "/opt/app/libsym.so", sym_vaddr(lib, "symlib_hidden") + 4, id);
	os_profile_add_context(p, &(struct os_context){ .type = OS_NONE,
							.stack = os_profile_stack(p, &fr, 1) });
	cr_assert_eq(os_sym_name_from_dir(&p, dir, false, &st), 0);
	cr_assert_eq(st.named, 1);
	f = &p->frames[p->stacks[p->contexts[0].stack].frames[0]];
	cr_assert_str_eq(os_profile_str(p, f->name), "symlib_hidden");
	cr_assert_eq(f->file, OS_NONE);
	cr_assert_eq(f->line, 0);
	cr_assert_eq(f->addr, 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
	free(id);
	os_profile_free(p);
}
