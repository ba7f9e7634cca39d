/* fuzz_maps.c - libFuzzer target over the /proc/PID/maps parser: the paths
 * there are chosen by the target (any file name it maps, with spaces,
 * newlines escaped or not, " (deleted)" suffixes), so they are hostile
 * input to the symbolizer.
 *
 * Each input goes through os_maps_foreach_text (line splitting) and, line
 * by line, os_maps_parse_line; an entry that parses must be consistent
 * (start <= end, 4 permission characters, a path inside the line).
 * Built by `make fuzz` with -DOS_FUZZ_ENTRY; build/test_fuzz_regress calls
 * os_fuzz_maps on tests/fuzz/crashes/maps-* and tests/fuzz/corpus_maps/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/procmaps.h"

int os_fuzz_maps(const uint8_t *data, size_t size);

static int check(const struct os_maps_entry *e, void *arg)
{
	size_t *n = arg;

	if (e->start > e->end || strlen(e->perms) > 4 || !e->path)
		abort();
	(void)strlen(e->path);
	(void)os_maps_is_exec(e);
	(*n)++;
	return 0;
}

int os_fuzz_maps(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct os_maps_entry e;
	size_t n = 0, i = 0;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	os_maps_foreach_text(text, check, &n);
	/* the same lines one by one, parsed in place */
	while (i < size) {
		char *nl = memchr(text + i, '\n', size - i);
		size_t end = nl ? (size_t)(nl - text) : size;

		text[end] = 0;
		if (os_maps_parse_line(text + i, &e) == 0) {
			if (e.path < text + i || e.path > text + end)
				abort();
			check(&e, &n);
		}
		i = end + 1;
	}
	free(text);
	return 0;
}

#ifdef OS_FUZZ_ENTRY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return os_fuzz_maps(data, size);
}
#endif
