/* offline.c - naming a profile's unnamed native frames from a directory of
 * debug files, by build-id (offline.h). */
#include "symbolizer/offline.h"

#include "common/grow.h"
#include "common/hashmap.h"
#include "common/profile.h"
#include "symbolizer/elf_module.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_LISTED 3 /* missing modules named in the note */

struct dbg_mod {
	uint32_t build_id;   /* string id */
	uint32_t module;     /* string id of the first frame's module */
	struct os_elfmod *m; /* NULL: no matching file in the directory */
};

/* Build-ids come from the profile, which may be from anywhere: they become
 * path components only when they are plain hex. */
static bool plain_hex(const char *s)
{
	size_t n = strspn(s, "0123456789abcdef");

	return n == strlen(s) && n >= 4 && n <= 128 && n % 2 == 0;
}

/* The ELF file at path (links resolved: a directory the user names may
 * hold .build-id links), if its build-id is want. */
static struct os_elfmod *try_file(const char *path, const char *want)
{
	char real[PATH_MAX];
	struct os_elfmod *m;
	const char *id;

	if (!realpath(path, real))
		return NULL;
	m = os_elfmod_new(real);
	if (!m)
		return NULL;
	if (os_elfmod_load(m, NULL) || !(id = os_elfmod_build_id(m)) || strcmp(id, want)) {
		os_elfmod_free(m);
		return NULL;
	}
	return m;
}

static struct os_elfmod *find_file(const char *dir, const char *id, const char *module)
{
	char path[PATH_MAX + 256];
	struct os_elfmod *m;
	const char *base;

	snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", dir, id, id + 2);
	if ((m = try_file(path, id)))
		return m;
	snprintf(path, sizeof(path), "%s/%s/debuginfo", dir, id);
	if ((m = try_file(path, id)))
		return m;
	if (!module || module[0] != '/' || strstr(module, "/.."))
		return NULL;
	snprintf(path, sizeof(path), "%s%s", dir, module);
	if ((m = try_file(path, id)))
		return m;
	base = strrchr(module, '/') + 1;
	snprintf(path, sizeof(path), "%s/%s", dir, base);
	return *base ? try_file(path, id) : NULL;
}

static const char *basename_of(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;

	return s ? s + 1 : p ? p : "?";
}

/* The note: what was named, and which modules' files were not found. */
static int add_note(struct os_profile *q, const char *dir, const struct os_offline_stats *st,
		    const struct os_profile *p, const struct dbg_mod *mods, size_t nmods)
{
	char note[1024];
	size_t len, listed = 0;

	len = (size_t)snprintf(note, sizeof(note),
			       "--debug-dir %s: %zu frames named from the debug files of %zu "
			       "modules; %zu frames left unnamed",
			       dir, st->named, st->modules_found, st->unnamed);
	if (st->modules_missing && len < sizeof(note))
		len += (size_t)snprintf(note + len, sizeof(note) - len,
					"; no file in the directory for %zu modules:",
					st->modules_missing);
	for (size_t i = 0; i < nmods && listed < MAX_LISTED && len < sizeof(note); i++) {
		if (mods[i].m)
			continue;
		len += (size_t)snprintf(note + len, sizeof(note) - len, "%s %s (build-id %s)",
					listed ? "," : "",
					basename_of(os_profile_str(p, mods[i].module)),
					os_profile_str(p, mods[i].build_id));
		listed++;
	}
	if (st->no_build_id && len < sizeof(note))
		snprintf(note + len, sizeof(note) - len,
			 "; %zu frames have no build-id (profile of an earlier objscope)",
			 st->no_build_id);
	return os_profile_add_note(q, note);
}

int os_sym_name_from_dir(struct os_profile **pp, const char *dir, bool lines,
			 struct os_offline_stats *st)
{
	struct os_profile *p = *pp, *q;
	struct dbg_mod *mods = NULL;
	size_t nmods = 0, cap = 0;
	struct os_hmap ix;       /* build-id string id -> index into mods */
	struct stat sb;
	int ret = 0;

	memset(st, 0, sizeof(*st));
	if (stat(dir, &sb))
		return -errno;
	if (!S_ISDIR(sb.st_mode))
		return -ENOTDIR;
	os_hmap_init(&ix);
	for (uint32_t i = 0; i < p->nframes && !ret; i++) {
		struct os_frame *f = &p->frames[i];
		const char *id, *file = NULL;
		struct os_elfsym es;
		uint32_t line = 0, column = 0, name, sfile;
		uint64_t k;

		if (f->kind != OS_FRAME_NATIVE || f->name != OS_NONE || f->module == OS_NONE)
			continue;
		id = os_profile_str(p, f->build_id);
		if (!id || !plain_hex(id)) {
			st->no_build_id++;
			st->unnamed++;
			continue;
		}
		if (!os_hmap_get(&ix, f->build_id, &k)) {
			struct dbg_mod *n = os_grow(mods, &cap, nmods + 1, sizeof(*n), 16);

			if (!n) {
				ret = -ENOMEM;
				break;
			}
			mods = n;
			mods[nmods] = (struct dbg_mod){
				f->build_id, f->module,
				find_file(dir, id, os_profile_str(p, f->module)) };
			if (os_hmap_put(&ix, f->build_id, nmods)) {
				os_elfmod_free(mods[nmods].m);
				ret = -ENOMEM;
				break;
			}
			k = nmods++;
			if (mods[k].m)
				st->modules_found++;
			else
				st->modules_missing++;
		}
		if (!mods[k].m || os_elfmod_symbol(mods[k].m, f->addr, &es)) {
			st->unnamed++;
			continue;
		}
		if (lines)
			os_elfmod_line(mods[k].m, f->addr, &file, &line, &column);
		name = os_profile_string(p, es.name);
		sfile = file ? os_profile_string(p, file) : OS_NONE;
		if (name == OS_NONE || (file && sfile == OS_NONE)) {
			ret = -ENOMEM; /* the frame left as it was */
			break;
		}
		f->name = name;
		f->file = sfile;
		f->line = file ? line : 0;
		f->column = file ? column : 0;
		if (!lines)
			f->addr = 0; /* as report --no-lines leaves named frames */
		f->near_sym = OS_NONE; /* a name, no hint any more */
		f->near_off = 0;
		st->named++;
	}
	/* frames renamed in place: fold those that now read the same into a
	 * fresh profile, as the report does with every file it reads */
	q = ret ? NULL : os_profile_new();
	if (!ret && (!q || os_profile_merge(q, p) || add_note(q, dir, st, p, mods, nmods)))
		ret = -ENOMEM;
	if (!ret) {
		os_profile_free(p);
		*pp = q;
	} else {
		os_profile_free(q);
	}
	for (size_t i = 0; i < nmods; i++)
		os_elfmod_free(mods[i].m);
	free(mods);
	os_hmap_destroy(&ix);
	return ret;
}
