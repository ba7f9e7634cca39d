/* symbolizer.h - addresses of target processes to names.
 *
 * Keeps the executable mappings of every process seen (from perf MMAP2
 * records and/or /proc/PID/maps), opens each mapped ELF file once (PIE,
 * shared libraries; .symtab, else .dynsym; DWARF lines through libdw;
 * separate debug files by build-id / debuglink where installed) and resolves
 * addresses to demangled function names with file:line. JIT code is named
 * from perf map files (/tmp/perf-PID.map).
 *
 * Files are opened lazily on the first resolution that needs them, once per
 * path ("[anon]" and "[...]" regions are never opened); a file that cannot be
 * read (missing, deleted, not ELF, truncated) gives results without symbol.
 * Not thread-safe: one thread uses a symbolizer at a time.
 *
 * Strings returned point into the symbolizer and live until os_sym_free().
 * Return convention: 0 on success, -errno on failure.
 */
#ifndef OBJSCOPE_SYMBOLIZER_H
#define OBJSCOPE_SYMBOLIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct os_symbolizer;

struct os_sym_result {
	const char *func;     /* demangled function name, NULL if unknown */
	const char *module;   /* mapped file path (or "[anon]", "[jit]"), NULL if unmapped */
	const char *file;     /* source file, NULL if unknown */
	uint32_t line;        /* 0 if unknown */
	uint32_t column;      /* of line, 0 if unknown: two calls on one line differ here */
	uint64_t offset;      /* addr - module load bias (ELF vaddr), or addr if unmapped */
	uint64_t sym_start;   /* absolute address where the function starts, 0 if unknown */
	uint64_t sym_size;    /* 0 if unknown */
	bool is_java;         /* named from a perf map (JIT code) */
	/* func NULL in a module named from its exported symbols only (stripped,
	 * no debug file): the exported function just before the address in the
	 * same section (elf_module.h, os_elfmod_nearest), and the distance from
	 * its start. The code there is not that function: a hint to show as
	 * such, NULL if there is no plausible one. */
	const char *near_func;
	uint64_t near_off;
	const char *build_id; /* hex GNU build-id of the module's file, NULL if none */
};

struct os_symbolizer *os_sym_new(void);
void os_sym_free(struct os_symbolizer *s);
/* Source lines of native frames also from separate debug files (e.g.
 * Debian's libc6-dbg under /usr/lib/debug), not only from a module's own
 * DWARF: `record/attach --debug-lines`. Off by default: decompressing
 * libc6-dbg's DWARF costs ~60 ms of CPU per run. Function names come from
 * such files either way. Applies to modules first seen after the call. */
void os_sym_set_separate_lines(struct os_symbolizer *s, bool on);

/* A file mapping of `pid` (pgoff = file offset of `start`). Anonymous and
 * special mappings ("[vdso]", "//anon", "" = "[anon]") are accepted and
 * resolve to no symbol. A new mapping replaces what it overlaps (splitting
 * older mappings), as mmap does. -EINVAL when end <= start. */
int os_sym_add_mapping(struct os_symbolizer *s, uint32_t pid, uint64_t start, uint64_t end,
		       uint64_t pgoff, const char *path);
/* The same with the device and inode of the mapped file (from the maps
 * entry or a perf MMAP2 record; ino 0: unknown): the file opened by name
 * must be that inode, else it is looked for in the process's root and its
 * map_files, and not read at all when none is (os_sym_modules_refused). */
int os_sym_add_mapping_id(struct os_symbolizer *s, uint32_t pid, uint64_t start, uint64_t end,
			  uint64_t pgoff, const char *path, uint32_t dev_major,
			  uint32_t dev_minor, uint64_t ino);
/* Modules not read because the file by that name was not the one mapped. */
size_t os_sym_modules_refused(const struct os_symbolizer *s);
/* Adds the executable mappings of /proc/PID/maps (over those known). Files
 * that cannot be opened by their path are looked for under /proc/PID/root
 * (containers); deleted files are read at once through
 * /proc/PID/map_files/START-END and named "PATH (deleted)". */
int os_sym_load_maps(struct os_symbolizer *s, uint32_t pid);
/* The child shares the parent's mappings until it execs (they are copied;
 * the perf map is not). -ENOENT when the parent is unknown. */
int os_sym_fork(struct os_symbolizer *s, uint32_t ppid, uint32_t pid);
/* exec: forget the mappings and perf map of pid (the process stays known). */
void os_sym_exec(struct os_symbolizer *s, uint32_t pid);
/* Reads a perf map file ("0xSTART 0xSIZE name" lines, hex with or without
 * 0x, the name may contain spaces) for pid's JIT code, replacing the one
 * read before (read it again when it has grown). Bad lines are skipped. */
int os_sym_load_perf_map(struct os_symbolizer *s, uint32_t pid, const char *path);
/* The same from a file the caller opened and checked (os_open_untrusted:
 * regular, owner, no link). The map is bounded (perfmap.h: 512 MiB, lines
 * of 64 KiB; -EFBIG when larger); *long_lines (may be NULL) gets the number
 * of over-long lines skipped. */
int os_sym_load_perf_map_fd(struct os_symbolizer *s, uint32_t pid, int fd, size_t *long_lines);
bool os_sym_has_process(struct os_symbolizer *s, uint32_t pid);

/* Resolves an absolute address of pid. Returns 0 and fills *r (fields NULL
 * / 0 where unknown) when the address is in a known mapping or perf map
 * entry, -ENOENT otherwise (r->offset = addr then). File mappings win; a
 * perf map entry names addresses outside them (is_java, module "[jit]",
 * offset = addr); other anonymous or special mappings give their module
 * name and offset = addr - start + pgoff. For return addresses pass
 * addr - 1. Line lookups are cached per address. */
int os_sym_resolve(struct os_symbolizer *s, uint32_t pid, uint64_t addr,
		   struct os_sym_result *r);
/* The file of the module at addr (os_sym_module_at's path), opened again
 * with the checks it was read with (regular, no final symlink, the mapped
 * inode, inside the process's root): a read-only fd for the caller to pass
 * to libdwfl instead of the path (a name can be replaced meanwhile, and a
 * /proc/PID/root/... path opened by name resolves links against the host),
 * or -errno. */
int os_sym_module_fd(struct os_symbolizer *s, uint32_t pid, uint64_t addr);
/* os_sym_resolve's sym_start where it names a function (func != NULL), else
 * 0; without the name's demangling and the source line lookup. */
uint64_t os_sym_func_start(struct os_symbolizer *s, uint32_t pid, uint64_t addr);

/* The ELF file mapped at addr of pid: the path to open, its load bias
 * (runtime address - ELF vaddr) and the mapping's range. 0, or -ENOENT when
 * addr is not in a readable ELF mapping. Used by the DWARF unwinder. */
int os_sym_module_at(struct os_symbolizer *s, uint32_t pid, uint64_t addr, const char **path,
		     uint64_t *bias, uint64_t *start, uint64_t *end);

/* Demangles a C++ (Itanium ABI) name into buf; returns buf, or `name` itself
 * when it is not mangled. */
const char *os_sym_demangle(const char *name, char *buf, unsigned long len);

#endif
