/* got.c - GOT patching of the loaded objects (see got.h). */
#include "preload/got.h"

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define OSP_GOT_MAX 4096 /* entries remembered for restore */

struct osp_got_entry {
	void **at;
	void *orig;
	void *hook;
	int relro;              /* lies in a page ld.so made read-only */
};

static struct osp_got_entry osp_got_saved[OSP_GOT_MAX];
static size_t osp_got_nsaved;

struct osp_got_walk {
	const struct osp_got_sym *syms;
	size_t nsyms;
	const char *const *skip;
	const char *only;       /* when set: only objects whose name holds it */
	int patched;
	int full;
};

/* Marks an object we must never touch: the one holding this code. */
static int osp_got_is_self(const struct dl_phdr_info *info)
{
	uintptr_t self = (uintptr_t)&osp_got_is_self;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && self >= lo && self < lo + ph->p_memsz)
			return 1;
	}
	return 0;
}

static int osp_got_skipped(const char *name, const char *const *skip)
{
	for (; skip && *skip; skip++)
		if (strstr(name, *skip))
			return 1;
	return 0;
}

/* Writes `val` at `at`; RELRO pages are opened and closed around it. */
static int osp_got_write(void **at, void *val, int relro)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	void *page = (void *)((uintptr_t)at & ~(pg - 1));

	if (relro && mprotect(page, pg, PROT_READ | PROT_WRITE) != 0)
		return -errno;
	__atomic_store_n(at, val, __ATOMIC_RELEASE);
	if (relro && mprotect(page, pg, PROT_READ) != 0)
		return -errno;
	return 0;
}

static void osp_got_patch_one(struct osp_got_walk *w, void **at, void *hook, int relro)
{
	void *cur = __atomic_load_n(at, __ATOMIC_ACQUIRE);

	if (cur == hook) { /* already ours (a re-arm without restore) */
		w->patched++;
		return;
	}
	if (osp_got_nsaved == OSP_GOT_MAX) {
		w->full = 1;
		return;
	}
	if (osp_got_write(at, hook, relro) != 0)
		return;
	osp_got_saved[osp_got_nsaved++] = (struct osp_got_entry){ at, cur, hook, relro };
	w->patched++;
}

static int osp_got_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct osp_got_walk *w = arg;
	const ElfW(Phdr) *dynph = NULL;
	uintptr_t base = info->dlpi_addr, relro_lo = 0, relro_hi = 0;
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	const ElfW(Rela) *tabs[2] = { NULL, NULL };
	size_t tabsz[2] = { 0, 0 };

	(void)size;
	if (osp_got_skipped(info->dlpi_name ? info->dlpi_name : "", w->skip) ||
	    osp_got_is_self(info))
		return 0;
	if (w->only && (!info->dlpi_name || !strstr(info->dlpi_name, w->only)))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_DYNAMIC)
			dynph = ph;
		if (ph->p_type == PT_GNU_RELRO) {
			/* ld.so protects whole pages only */
			relro_lo = (base + ph->p_vaddr) & ~(pg - 1);
			relro_hi = (base + ph->p_vaddr + ph->p_memsz) & ~(pg - 1);
		}
	}
	if (!dynph)
		return 0;
	for (const ElfW(Dyn) *d = (const ElfW(Dyn) *)(base + dynph->p_vaddr); d->d_tag != DT_NULL;
	     d++) {
		/* ld.so relocates these in place, except in read-only dynamic
		 * sections (the vDSO): add the base when it was not done */
		uintptr_t v = d->d_un.d_ptr < base ? d->d_un.d_ptr + base : d->d_un.d_ptr;

		switch (d->d_tag) {
		case DT_SYMTAB:
			symtab = (const ElfW(Sym) *)v;
			break;
		case DT_STRTAB:
			strtab = (const char *)v;
			break;
		case DT_JMPREL:
			tabs[0] = (const ElfW(Rela) *)v;
			break;
		case DT_PLTRELSZ:
			tabsz[0] = d->d_un.d_val;
			break;
		case DT_RELA:
			tabs[1] = (const ElfW(Rela) *)v;
			break;
		case DT_RELASZ:
			tabsz[1] = d->d_un.d_val;
			break;
		case DT_PLTREL:
			if (d->d_un.d_val != DT_RELA)
				return 0; /* x86_64 uses RELA only */
			break;
		}
	}
	if (!symtab || !strtab)
		return 0;
	for (int t = 0; t < 2; t++) {
		for (size_t i = 0; tabs[t] && i < tabsz[t] / sizeof(ElfW(Rela)); i++) {
			const ElfW(Rela) *r = &tabs[t][i];
			uint32_t type = (uint32_t)ELF64_R_TYPE(r->r_info);
			const char *name;
			uintptr_t at;

			if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
				continue;
			name = strtab + symtab[ELF64_R_SYM(r->r_info)].st_name;
			at = base + r->r_offset;
			for (size_t k = 0; k < w->nsyms; k++)
				if (strcmp(name, w->syms[k].name) == 0)
					osp_got_patch_one(w, (void **)at, w->syms[k].hook,
							  at >= relro_lo && at < relro_hi);
		}
	}
	return 0;
}

int osp_got_patch(const struct osp_got_sym *syms, size_t nsyms, const char *const *skip)
{
	struct osp_got_walk w = { syms, nsyms, skip, NULL, 0, 0 };

	dl_iterate_phdr(osp_got_object, &w);
	return w.full ? -ENOSPC : w.patched;
}

int osp_got_patch_only(const struct osp_got_sym *syms, size_t nsyms, const char *only)
{
	struct osp_got_walk w = { syms, nsyms, NULL, only, 0, 0 };

	dl_iterate_phdr(osp_got_object, &w);
	return w.full ? -ENOSPC : w.patched;
}

int osp_got_restore(void)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	int n = 0;

	while (osp_got_nsaved > 0) {
		struct osp_got_entry *e = &osp_got_saved[--osp_got_nsaved];
		void *page = (void *)((uintptr_t)e->at & ~(pg - 1));

		/* the object may have been unloaded since: mprotect and msync
		 * answer ENOMEM for an unmapped page, and a value that is not
		 * our hook belongs to someone else */
		if (e->relro ? mprotect(page, pg, PROT_READ | PROT_WRITE) != 0
			     : msync(page, pg, MS_ASYNC) != 0)
			continue;
		if (__atomic_load_n(e->at, __ATOMIC_ACQUIRE) == e->hook) {
			__atomic_store_n(e->at, e->orig, __ATOMIC_RELEASE);
			n++;
		}
		if (e->relro)
			mprotect(page, pg, PROT_READ);
	}
	return n;
}
