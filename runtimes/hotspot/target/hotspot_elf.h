/* hotspot_elf.h - finds local (non-exported) function symbols of a loaded
 * shared object by reading the .symtab of its file on disk (libjvm's
 * internal functions are invisible to dlsym). Install time only: maps the
 * file, no allocation. Return convention: 0 on success, -errno on failure. */
#ifndef OBJSCOPE_PRELOAD_HOTSPOT_ELF_H
#define OBJSCOPE_PRELOAD_HOTSPOT_ELF_H

#include <stddef.h>
#include <stdint.h>

struct osp_elf_want {
	const char *name;   /* exact symbol name (mangled) */
	uintptr_t addr;     /* out: load base + st_value, 0 when not found */
	size_t size;        /* out: st_size */
};

/* Looks up every name of want[0..n) in the .symtab of `path`; addresses are
 * relocated by `base` (the object's load bias). Returns the number found
 * (>= 0) or -errno when the file cannot be read or has no .symtab. */
int osp_elf_find_local(const char *path, uintptr_t base, struct osp_elf_want *want, int n);

#endif
