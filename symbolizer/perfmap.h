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

#include <stddef.h>
#include <stdint.h>

struct os_perfmap;

struct os_perfmap_sym {
	uint64_t start;
	uint64_t size;
	const char *name;  /* lives until os_perfmap_free() */
};

/* Parses one line in place (*name points into `line`). */
int os_perfmap_parse_line(char *line, uint64_t *start, uint64_t *size, char **name);

/* Bounds of what is read from a perf map (written by the target: hostile
 * input). A real JVM's map is a few MiB; a longer one is refused (-EFBIG),
 * a longer line (the longest Java signatures are a few KiB) is skipped and
 * counted (os_perfmap_long_lines). */
#define OS_PERFMAP_MAX_BYTES (512ULL << 20)
#define OS_PERFMAP_MAX_LINE (64u << 10)
/* What is kept of one (perfmap.c): at most this many entries (24 bytes
 * each) and bytes of names, whatever the file's size. A JVM's map after
 * one entry per start address holds some 10^4-10^5 entries; one whose
 * distinct entries still fill half of either after compaction is refused
 * (-EFBIG). Peak memory of a load: about 2 x 48 MiB (entries and qsort's
 * copy) + 128 MiB (names). */
#define OS_PERFMAP_MAX_ENTRIES (2u << 20)
#define OS_PERFMAP_MAX_NAMES (128u << 20)

/* Reads a perf map file; lines that do not parse are skipped. Opened with
 * os_open_untrusted (no symlink, data files only, never blocks), parsed by
 * os_perfmap_load_fd_unprivileged. A load
 * during which objscope is asked to stop (os_fs_stop) ends with -EINTR. */
int os_perfmap_load(const char *path, struct os_perfmap **out);
/* The same from an open file (read from its offset to its end), or from
 * memory (tests, the fuzzer). */
int os_perfmap_load_fd(int fd, struct os_perfmap **out);
int os_perfmap_load_mem(const char *buf, size_t len, struct os_perfmap **out);
/* os_perfmap_load_fd, as root parsed in a child that first gives root up
 * (uid/gid nobody, no groups, PR_SET_NO_NEW_PRIVS): a parser bug is then
 * nobody's; the result is checked (caps, names inside the arena, sorted
 * entries; -EPROTO otherwise). Where root cannot be given up, parsed here.
 * -EINTR when objscope is asked to stop meanwhile (the child is killed). */
int os_perfmap_load_fd_unprivileged(int fd, struct os_perfmap **out);
size_t os_perfmap_count(const struct os_perfmap *pm);
size_t os_perfmap_long_lines(const struct os_perfmap *pm);
void os_perfmap_free(struct os_perfmap *pm);

/* The entry containing addr: 0, or -ENOENT. */
int os_perfmap_find(const struct os_perfmap *pm, uint64_t addr, struct os_perfmap_sym *sym);

#endif
