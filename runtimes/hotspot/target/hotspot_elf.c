/* hotspot_elf.c - .symtab lookup in a mapped ELF file. See hotspot_elf.h.
 * A deliberately small reader: the preload library must not pull libelf
 * (which allocates through the hooked malloc) into the target. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtimes/hotspot/target/hotspot_elf.h"

static int he_scan(const uint8_t *m, size_t len, uintptr_t base, struct osp_elf_want *want, int n)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)m;
	const Elf64_Shdr *sh;
	int found = 0;

	if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > len)
		return -EINVAL;
	sh = (const Elf64_Shdr *)(m + eh->e_shoff);
	for (int i = 0; i < eh->e_shnum; i++) {
		const Elf64_Shdr *st = &sh[i], *str;
		const Elf64_Sym *sym;
		size_t nsym;

		if (st->sh_type != SHT_SYMTAB || st->sh_link >= eh->e_shnum)
			continue;
		str = &sh[st->sh_link];
		if (st->sh_offset + st->sh_size > len || str->sh_offset + str->sh_size > len ||
		    st->sh_entsize != sizeof(Elf64_Sym))
			return -EINVAL;
		sym = (const Elf64_Sym *)(m + st->sh_offset);
		nsym = st->sh_size / sizeof(Elf64_Sym);
		for (size_t k = 0; k < nsym && found < n; k++) {
			const char *name;

			if (ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC || sym[k].st_value == 0 ||
			    sym[k].st_name >= str->sh_size)
				continue;
			name = (const char *)(m + str->sh_offset + sym[k].st_name);
			for (int w = 0; w < n; w++) {
				if (want[w].addr || strcmp(name, want[w].name) != 0)
					continue;
				want[w].addr = base + sym[k].st_value;
				want[w].size = sym[k].st_size;
				found++;
			}
		}
		return found;
	}
	return -ENOENT;
}

int osp_elf_find_local(const char *path, uintptr_t base, struct osp_elf_want *want, int n)
{
	void *m = MAP_FAILED;
	struct stat st;
	int fd, ret;

	for (int w = 0; w < n; w++) {
		want[w].addr = 0;
		want[w].size = 0;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0) {
		ret = -errno;
		goto out;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED) {
		ret = -errno;
		goto out;
	}
	ret = he_scan(m, (size_t)st.st_size, base, want, n);
	munmap(m, (size_t)st.st_size);
out:
	close(fd);
	return ret;
}
