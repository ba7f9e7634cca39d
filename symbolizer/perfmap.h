/* perfmap.h - perf map files naming JIT code (/tmp/perf-PID.map), internal
 * to symbolizer/. Format (perf Documentation/jit-interface.txt): one symbol
 * per line, "START SIZE name", START and SIZE in hex with or without "0x",
 * the name is the rest of the line (it may contain spaces). When entries
 * overlap (code cache reuse) the later line wins for its start address.
 *
 * Return convention: 0 on success, -errno on failure (-EINVAL: bad line).
 */
#ifndef OBJSCOPE_SYM_PERFMAP_H
#define OBJSCOPE_SYM_PERFMAP_H

#include <stdint.h>

struct os_perfmap;

struct os_perfmap_sym {
	uint64_t start;
	uint64_t size;
	const char *name;  /* lives until os_perfmap_free() */
};

/* Parses one line in place (*name points into `line`). */
int os_perfmap_parse_line(char *line, uint64_t *start, uint64_t *size, char **name);

/* Reads a perf map file; lines that do not parse are skipped. */
int os_perfmap_load(const char *path, struct os_perfmap **out);
void os_perfmap_free(struct os_perfmap *pm);

/* The entry containing addr: 0, or -ENOENT. */
int os_perfmap_find(const struct os_perfmap *pm, uint64_t addr, struct os_perfmap_sym *sym);

#endif
