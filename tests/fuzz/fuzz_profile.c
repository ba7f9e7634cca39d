/* fuzz_profile.c - libFuzzer target over the profile reader.
 *
 * Each input is read twice by os_profile_read_mem(): as it is, and (when it
 * starts with the magic and is long enough) with its header's file size, its
 * END section header and its CRC-32 repaired, so that mutations reach the
 * section decoders instead of stopping at the checksum. A profile that reads
 * must format every frame and string id it holds without faulting.
 *
 * Build and run: `make fuzz` (clang -fsanitize=fuzzer,address,undefined);
 * seed corpus in tests/fuzz/corpus/, findings go to tests/fuzz/crashes/ and
 * are replayed by build/test_fuzz_regress (tests/fuzz/regress.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/profile.h"
#include "tests/fuzz/fuzz_repair.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Touches everything a report would: strings and formatted frames. */
static void walk(const struct os_profile *p)
{
	char buf[512];

	for (uint32_t i = 0; i < p->nframes; i++)
		os_profile_frame_str(p, i, buf, sizeof(buf));
	for (uint32_t i = 0; i < p->nstrings; i++)
		(void)strlen(os_profile_str(p, i));
	for (uint32_t i = 0; i < p->nstacks; i++)
		for (uint32_t j = 0; j < p->stacks[i].nframes; j++)
			os_profile_frame_str(p, p->stacks[i].frames[j], buf, sizeof(buf));
}

static void read_one(const uint8_t *data, size_t size)
{
	struct os_profile *p = NULL;
	char err[256];

	if (os_profile_read_mem(data, size, &p, err, sizeof(err)) == 0) {
		walk(p);
		os_profile_free(p);
	} else if (p) {
		abort(); /* failure must not hand out a profile */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *fixed;

	read_one(data, size);
	if (!fz_repairable(data, size))
		return 0;
	fixed = malloc(size);
	if (!fixed)
		return 0;
	memcpy(fixed, data, size);
	fz_repair(fixed, size);
	read_one(fixed, size);
	free(fixed);
	return 0;
}
