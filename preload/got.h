/* got.h - redirects the imports of the objects already loaded in the process
 * (attach mode: nothing was preloaded, so the program's calls of malloc, mmap,
 * ... must be sent to the hooks by rewriting their GOT entries).
 *
 * For every object reported by dl_iterate_phdr, except those whose name
 * matches a skip entry and the object holding this library, every
 * R_X86_64_JUMP_SLOT / R_X86_64_GLOB_DAT relocation (.got.plt and .got) whose
 * symbol is one of the requested names gets the hook's address. Entries in
 * the PT_GNU_RELRO range (full RELRO, BIND_NOW) are written after making the
 * page writable, and the page is made read-only again. Every write is
 * remembered so that osp_got_restore() puts the original values back.
 *
 * Libraries loaded after the patch (a later dlopen) are not patched.
 * Not for hooks or signal handlers: uses dl_iterate_phdr and mprotect.
 * Return convention: a count (>= 0) on success, -errno on failure.
 */
#ifndef OBJSCOPE_PRELOAD_GOT_H
#define OBJSCOPE_PRELOAD_GOT_H

#include <stddef.h>

struct osp_got_sym {
	const char *name;   /* imported symbol, e.g. "malloc" (no version) */
	void *hook;         /* what the entry should point to */
};

/* Patches every matching entry; `skip` is a NULL-terminated list of
 * substrings of object names left alone (e.g. "/libc.so."). Returns the
 * number of entries patched (entries already patched count again), or
 * -ENOSPC when the table of saved entries is full (what fitted stays
 * patched and is restorable). */
int osp_got_patch(const struct osp_got_sym *syms, size_t nsyms, const char *const *skip);

/* Same, for the objects whose name contains `only` (e.g. "/libjvm.so":
 * memcpy/memmove are redirected in libjvm alone, where GC copies are). */
int osp_got_patch_only(const struct osp_got_sym *syms, size_t nsyms, const char *only);

/* Writes back the original value of every entry patched so far; returns the
 * number of entries restored. */
int osp_got_restore(void);

#endif
