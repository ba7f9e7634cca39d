/* procmaps.h - the one parser of /proc/PID/maps (collector side only).
 *
 * A maps line looks like
 *   55d4c8a00000-55d4c8a02000 r-xp 00001000 08:01 1234567   /usr/bin/cat
 * The path is everything after the inode (it may contain spaces); the
 * kernel appends " (deleted)" when the file was unlinked, which the parser
 * strips and reports in `deleted`. Anonymous mappings have path "".
 *
 * Return convention: 0 on success, -errno on failure (-EINVAL for a line
 * that does not parse). A callback returning non-zero stops the walk and
 * that value is returned.
 */
#ifndef OBJSCOPE_PROCMAPS_H
#define OBJSCOPE_PROCMAPS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct os_maps_entry {
	uint64_t start;
	uint64_t end;
	uint64_t offset;     /* file offset of `start` */
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	char perms[5];       /* "r-xp", NUL-terminated */
	bool deleted;        /* the path had a " (deleted)" suffix */
	const char *path;    /* "" for anonymous; "[heap]", "[vdso]", ... as is */
};

static inline bool os_maps_is_exec(const struct os_maps_entry *e)
{
	return e->perms[2] == 'x';
}

/* Parses one line (with or without its trailing newline). `line` is
 * modified in place: e->path points into it. */
int os_maps_parse_line(char *line, struct os_maps_entry *e);

typedef int (*os_maps_cb)(const struct os_maps_entry *e, void *arg);

/* Calls cb for every line of `text` (several lines, '\n'-separated). The
 * text is copied line by line, so it is not modified. */
int os_maps_foreach_text(const char *text, os_maps_cb cb, void *arg);

/* Calls cb for every mapping of process `pid` (reads /proc/PID/maps).
 * -ENOENT when the process does not exist. */
int os_maps_foreach_pid(pid_t pid, os_maps_cb cb, void *arg);

#endif
