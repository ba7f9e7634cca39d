/* offline.h - naming a profile's frames later, on another machine, from a
 * directory of debug files (`objscope report --debug-dir DIR`).
 *
 * The recorder keeps, for every native frame it could not name (a stripped
 * module without its debug file), the module, the offset (ELF vaddr) and
 * the module's GNU build-id (docs/PROFILE-FORMAT.md, FRAMES). Here each such
 * build-id is looked for in DIR, in these layouts, the first one whose
 * build-id matches winning:
 *   DIR/.build-id/xx/rest.debug     (/usr/lib/debug, -dbgsym packages)
 *   DIR/BUILDID/debuginfo           (a debuginfod client cache)
 *   DIR/MODULE-PATH                 (a copy of the target's root: --symfs)
 *   DIR/MODULE-BASENAME
 * and the frames take their function, source file and line from that
 * file's .symtab and DWARF. A file whose build-id differs is never used
 * (another build: its offsets mean other code).
 *
 * Return convention: 0 on success, -errno on failure.
 */
#ifndef OBJSCOPE_SYM_OFFLINE_H
#define OBJSCOPE_SYM_OFFLINE_H

#include <stdbool.h>
#include <stddef.h>

struct os_profile;

struct os_offline_stats {
	size_t named;          /* frames named from a debug file */
	size_t unnamed;        /* frames without a name left (no file, no symbol there) */
	size_t modules_found;  /* build-ids matched by a file of DIR */
	size_t modules_missing; /* build-ids with no file in DIR */
	size_t no_build_id;    /* unnamed frames without a build-id (older profiles) */
};

/* Names the unnamed native frames of *p from the files of dir and replaces
 * *p by the profile refolded (frames, paths and objects that now read the
 * same are merged), with a note saying what was named and what was not.
 * lines false (report --no-lines): named frames get no file and line, and
 * lose their offset, as the report's other named frames then do.
 * -ENOTDIR / -ENOENT when dir is not a directory (nothing changed), -ENOMEM
 * (*p then unchanged or refolded as far as it got, always a valid profile). */
int os_sym_name_from_dir(struct os_profile **p, const char *dir, bool lines,
			 struct os_offline_stats *st);

#endif
