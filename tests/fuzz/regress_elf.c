/* regress_elf.c - replays the ELF/DWARF fuzzer's findings
 * (tests/fuzz/crashes/elf-*) and seeds (tests/fuzz/corpus_elf/) through
 * os_fuzz_elf (tests/fuzz/fuzz_elf.c), in build/test_fuzz_regress: a
 * malformed module once found to crash the symbolizer stays a test. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int os_fuzz_elf(const uint8_t *data, size_t size);

/* Each regular file of dir whose name starts with prefix, through
 * os_fuzz_elf; how many. */
static int replay_dir(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char path[1024];
		uint8_t *buf;
		long len;
		FILE *f;

		if (de->d_name[0] == '.' || strncmp(de->d_name, prefix, strlen(prefix)))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		f = fopen(path, "rb");
		if (!f)
			continue;
		fseek(f, 0, SEEK_END);
		len = ftell(f);
		rewind(f);
		buf = malloc(len > 0 ? (size_t)len : 1);
		cr_assert_not_null(buf);
		cr_assert_eq(fread(buf, 1, (size_t)len, f), (size_t)len);
		fclose(f);
		cr_log_info("replaying %s (%ld bytes)", path, len);
		os_fuzz_elf(buf, (size_t)len);
		free(buf);
		n++;
	}
	closedir(d);
	return n;
}

Test(fuzz_regress_elf, findings_and_seeds_replay)
{
	replay_dir("tests/fuzz/crashes", "elf-");
	cr_expect_geq(replay_dir("tests/fuzz/corpus_elf", ""), 2, "the ELF seed corpus is too small");
}
