/* fuzz_elf.c - libFuzzer target over the symbolizer's ELF and DWARF
 * reading (symbolizer/elf_module.c on libelf/libdw): the libraries and
 * executables a target maps are its files, so their bytes are hostile input
 * to a root objscope.
 *
 * Each input is written to a file (objscope reads modules from files) and
 * loaded as a module: segments, symbol tables (.symtab, else .dynsym),
 * sections, build-id, the debuglink lookup beside it, then every query the
 * symbolizer makes, at addresses taken from the input itself and from the
 * symbols found: the function at an address, its start, the nearest
 * exported one, the line (libdwfl's DWARF line table), the run-time address
 * of a .dynsym function. A result must be consistent (a symbol contains
 * the address it was found for; names are strings).
 * Built by `make fuzz` with -DOS_FUZZ_ENTRY; build/test_fuzz_regress calls
 * os_fuzz_elf on the findings tests/fuzz/crashes/elf-* and the seeds
 * tests/fuzz/corpus_elf/ (tests/fuzz/regress_elf.c).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolizer/elf_module.h"

int os_fuzz_elf(const uint8_t *data, size_t size);

/* One file per process, rewritten for each input. */
static const char *input_path(void)
{
	static char path[256];

	if (!path[0]) {
		const char *dir = getenv("TMPDIR");

		if (access("/dev/shm", W_OK) == 0)
			dir = "/dev/shm";
		snprintf(path, sizeof(path), "%s/objscope-fuzz-elf-%d", dir && *dir ? dir : "/tmp",
			 (int)getpid());
	}
	return path;
}

static void check_sym(const struct os_elfsym *s, uint64_t vaddr)
{
	if (!s->name || (s->size && (vaddr < s->start || vaddr - s->start >= s->size)))
		abort(); /* a symbol that does not contain its address */
	(void)strlen(s->name);
}

static void query(struct os_elfmod *m, uint64_t a)
{
	struct os_elfsym s;
	const char *file = NULL;
	uint32_t line = 0, col = 0;
	uint64_t start;

	if (os_elfmod_symbol(m, a, &s) == 0)
		check_sym(&s, a);
	if (os_elfmod_symbol_start(m, a, &start) == 0 && start > a)
		abort();
	if (os_elfmod_nearest(m, a, &s) == 0 && !s.name)
		abort();
	if (os_elfmod_line(m, a, &file, &line, &col) == 0 && file)
		(void)strlen(file);
	(void)os_elfmod_vaddr(m, 0x400000, a & ~(uint64_t)0xfff, 0x400000 + (a & 0xffff));
}

int os_fuzz_elf(const uint8_t *data, size_t size)
{
	const char *path = input_path();
	struct os_elfmod *m;
	uint64_t addr;
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	close(fd);
	m = os_elfmod_new(path);
	if (!m)
		return 0;
	os_elfmod_set_separate_lines(m, true);
	if (os_elfmod_load(m, NULL) == 0) {
		const char *id = os_elfmod_build_id(m);

		if (id && strlen(id) > 128)
			abort();
		os_elfmod_warm_lines(m);
		/* addresses from the input: words of its first bytes and the
		 * usual load addresses */
		for (size_t i = 0; i + 8 <= size && i < 32 * 8; i += 8) {
			memcpy(&addr, data + i, 8);
			query(m, addr);
		}
		for (uint64_t a = 0; a < 0x3000; a += 0x101)
			query(m, a);
		query(m, 0x400000);
		query(m, UINT64_MAX);
	}
	os_elfmod_free(m);
	/* the per-lookup read of .dynsym, on a fresh module */
	m = os_elfmod_new(path);
	if (m) {
		(void)os_elfmod_dynsym_addr(m, NULL, 0x7f0000000000, 0, "malloc", &addr);
		os_elfmod_free(m);
	}
	return 0;
}

#ifdef OS_FUZZ_ENTRY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return os_fuzz_elf(data, size);
}
#endif
