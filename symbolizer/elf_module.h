/* elf_module.h - one ELF file of the symbolizer: its PT_LOAD layout, its
 * function symbols and its DWARF line table (internal to symbolizer/).
 *
 * A module is created without I/O and opened once by os_elfmod_load(); a
 * file that is missing, truncated or not ELF at all yields a module without
 * symbols, never a crash. Addresses here are ELF virtual addresses (vaddr);
 * the caller maps process addresses to them with os_elfmod_vaddr().
 *
 * Symbols: STT_FUNC and STT_GNU_IFUNC from .symtab, else from the .symtab of
 * the separate debug file (/usr/lib/debug/.build-id/xx/yyyy.debug, else the
 * .gnu_debuglink file under /usr/lib/debug/DIR, DIR/.debug or DIR, its CRC
 * checked), else from .dynsym (exported functions only: an address outside
 * them is no function's, os_elfmod_nearest gives a hint); zero-sized
 * symbols extend to the next symbol (not those of .dynsym). Names are
 * demangled on first use. Lines come from libdwfl (which also finds separate
 * debug files by build-id and debuglink) and are cached per address.
 *
 * Strings returned live until os_elfmod_free().
 * Return convention: 0 on success, -errno on failure.
 */
#ifndef OBJSCOPE_SYM_ELF_MODULE_H
#define OBJSCOPE_SYM_ELF_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct os_elfmod;

struct os_elfsym {
	const char *name;   /* demangled */
	uint64_t start;     /* vaddr */
	uint64_t size;
};

/* NULL on out of memory. */
struct os_elfmod *os_elfmod_new(const char *path);
void os_elfmod_free(struct os_elfmod *m);

/* Opens and reads the file once, from `open_path` (NULL: the module path).
 * Later calls return the result of the first one; -ENOENT etc. when the file
 * could not be opened, -ENOEXEC when it is not a usable ELF file. */
int os_elfmod_load(struct os_elfmod *m, const char *open_path);
/* Before the load: the file must be this inode (of the maps entry that
 * names it); a file opened by name that is another gives -ESTALE. Files
 * are opened without blocking, regular files only (elf_module.c). */
void os_elfmod_expect_id(struct os_elfmod *m, uint32_t dev_major, uint32_t dev_minor,
			 uint64_t ino);
bool os_elfmod_loaded(const struct os_elfmod *m);
/* The file actually opened (NULL unless loaded successfully). */
const char *os_elfmod_open_path(const struct os_elfmod *m);
/* That file opened again with the same checks (the name may now be another
 * file): a read-only fd for the caller, or -errno. */
int os_elfmod_open_fd(const struct os_elfmod *m);

/* The ELF vaddr of the byte at `addr` of a mapping [map_start, ...) of this
 * file that starts at file offset `pgoff`: the PT_LOAD segment holding that
 * offset gives vaddr = addr - map_start + pgoff - p_offset + p_vaddr. Without
 * a matching segment the file offset itself is returned. */
uint64_t os_elfmod_vaddr(const struct os_elfmod *m, uint64_t map_start, uint64_t pgoff,
			 uint64_t addr);

/* The run-time address of the exported function `name` (its .dynsym entry:
 * what the dynamic linker resolves, the first one of that name), in a
 * mapping [map_start, ...) of this file at file offset pgoff (the PT_LOAD
 * segment holding that offset places it). The file is opened from open_path
 * (NULL: the module path) with the checks of os_elfmod_load and read afresh,
 * for this lookup only: on a module that is not loaded (-EBUSY otherwise).
 * 0, -ENOENT (no such function, no segment there), -ENOEXEC (not ELF), or
 * the error of the open. */
int os_elfmod_dynsym_addr(struct os_elfmod *m, const char *open_path, uint64_t map_start,
			  uint64_t pgoff, const char *name, uint64_t *addr);

/* The function containing vaddr: 0, or -ENOENT. */
int os_elfmod_symbol(struct os_elfmod *m, uint64_t vaddr, struct os_elfsym *sym);
/* For a module named from .dynsym only (stripped, no debug file), an
 * address in none of its functions: the exported function before it, in the
 * same executable section, at most NEAR_MAX (64 KiB) before it. Code there
 * is a static function placed after that one (or its cold part), not the
 * function itself: a hint for the reader, never its name. 0, or -ENOENT
 * (modules with a .symtab, addresses inside a function, too far, another
 * section). */
int os_elfmod_nearest(struct os_elfmod *m, uint64_t vaddr, struct os_elfsym *sym);
/* The file's GNU build-id in hex, NULL without one (or before the load). */
const char *os_elfmod_build_id(const struct os_elfmod *m);
/* Only the start (vaddr) of that function: no name demangled. */
int os_elfmod_symbol_start(struct os_elfmod *m, uint64_t vaddr, uint64_t *start);

/* Source lines from a separate debug file (/usr/lib/debug/.build-id/..,
 * .gnu_debuglink) as well as from the module's own DWARF: off by default
 * (decompressing libc6-dbg's DWARF costs ~60 ms of CPU per run; symbols
 * are read from such a file either way). Set before the first line lookup. */
void os_elfmod_set_separate_lines(struct os_elfmod *m, bool on);

/* Loads the module's DWARF (decompressing a detached debug file can take
 * ~80 ms for libc6-dbg) if that was not done yet, so that it happens while
 * the target runs rather than when the profile is written. */
void os_elfmod_warm_lines(struct os_elfmod *m);

/* Source file, line and column (0 when the DWARF has none; column may be
 * NULL) of vaddr: 0, or -ENOENT (no debug info / no line). */
int os_elfmod_line(struct os_elfmod *m, uint64_t vaddr, const char **file, uint32_t *line,
		   uint32_t *column);

#endif
