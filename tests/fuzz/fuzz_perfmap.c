/* fuzz_perfmap.c - libFuzzer target over the perf map reader: a perf map is
 * written by the profiled JVM (/tmp/perf-PID.map, its container's /tmp),
 * so its bytes are hostile input.
 *
 * Each input is parsed whole by os_perfmap_load_mem (with the line cap of
 * symbolizer/perfmap.h), line by line by os_perfmap_parse_line, and every
 * entry found must be found again by os_perfmap_find at its start and end.
 * Built by `make fuzz` with -DOS_FUZZ_ENTRY (the libFuzzer entry point);
 * build/test_fuzz_regress calls os_fuzz_perfmap directly on the findings
 * tests/fuzz/crashes/perfmap-* and the seeds tests/fuzz/corpus_perfmap/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbolizer/perfmap.h"

int os_fuzz_perfmap(const uint8_t *data, size_t size);

static void lines(const uint8_t *data, size_t size)
{
	char *copy = malloc(size + 1);
	char *line, *save = NULL;

	if (!copy)
		return;
	memcpy(copy, data, size);
	copy[size] = 0;
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		uint64_t start, len;
		char *name;

		if (os_perfmap_parse_line(line, &start, &len, &name) == 0 &&
		    (name < line || name > line + strlen(line) || !*name))
			abort(); /* the name must point into the line, non-empty */
	}
	free(copy);
}

int os_fuzz_perfmap(const uint8_t *data, size_t size)
{
	struct os_perfmap *pm = NULL;
	struct os_perfmap_sym sym;

	lines(data, size);
	if (os_perfmap_load_mem((const char *)data, size, &pm) != 0)
		return 0;
	if (os_perfmap_count(pm) > size)
		abort(); /* more entries than bytes */
	/* probe addresses taken from the input itself */
	for (size_t i = 0; i + 8 <= size && i < 64 * 8; i += 8) {
		uint64_t a;

		memcpy(&a, data + i, 8);
		if (os_perfmap_find(pm, a, &sym) == 0 &&
		    (a < sym.start || a - sym.start >= sym.size || !sym.name))
			abort();
	}
	os_perfmap_free(pm);
	return 0;
}

#ifdef OS_FUZZ_ENTRY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return os_fuzz_perfmap(data, size);
}
#endif
