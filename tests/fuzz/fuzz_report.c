/* fuzz_report.c - libFuzzer target over every report command and format.
 *
 * Each input is repaired (fuzz_repair.h: version, file size, END section,
 * CRC-32) so that it reaches the section decoders, then handed as a file to
 * `objscope report` (cmd_report) in every form: text, text -v,
 * --per-thread, each --sort, JSON, HTML, pprof, collapsed, --diff in text,
 * JSON and HTML, a merge of two copies, --no-lines, and the filters --tid,
 * --comm, --time, --include, --exclude. Output goes to /dev/null. A profile
 * the reader accepts must render in every form without a fault (ASan,
 * UBSan); one it rejects must be rejected by each command with exit 1.
 *
 * Build and run: `make fuzz` (clang -fsanitize=fuzzer,address,undefined;
 * FUZZ_SECONDS for longer); seeds in tests/fuzz/corpus/, findings go to
 * tests/fuzz/crashes/report-* and are replayed by build/test_fuzz_regress
 * (tests/fuzz/regress.c) through os_fuzz_report. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/profile.h"
#include "report/report.h"
#include "tests/fuzz/fuzz_repair.h"

int os_fuzz_report(const uint8_t *data, size_t size);

/* Every command, each followed by the profile's path (twice where marked). */
#define MAXARGS 8
static const struct {
	const char *args[MAXARGS];
	int files; /* times the profile is named */
} commands[] = {
	{ { NULL }, 1 },
	{ { "-v", "--top", "0", NULL }, 1 },
	{ { "--per-thread", NULL }, 1 },
	{ { "--sort", "bytes", NULL }, 1 },
	{ { "--sort", "allocations", "-v", NULL }, 1 },
	{ { "--no-lines", NULL }, 1 },
	{ { "--format", "json", NULL }, 1 },
	{ { "--format", "json", "--per-thread", NULL }, 1 },
	{ { "--format", "html", NULL }, 1 },
	{ { "--format", "pprof", NULL }, 1 },
	{ { "--format", "collapsed", NULL }, 1 },
	{ { "--diff", NULL }, 2 },
	{ { "--diff", "--format", "json", NULL }, 2 },
	{ { "--diff", "--format", "html", NULL }, 2 },
	{ { "--format", "json", NULL }, 2 }, /* a merge */
	{ { "--tid", "1,2,3", NULL }, 1 },
	{ { "--comm", "main", "--format", "json", NULL }, 1 },
	{ { "--time", "0.05,1.5", "-v", NULL }, 1 },
	{ { "--include", "a|main", "--format", "collapsed", NULL }, 1 },
	{ { "--exclude", "[0-9]", "--format", "html", NULL }, 1 },
};

static int memfd = -1;
static char path[64];

static int run(unsigned k)
{
	char *argv[4 + MAXARGS + 2];
	int argc = 0;

	argv[argc++] = (char *)"report";
	argv[argc++] = (char *)"-o";
	argv[argc++] = (char *)"/dev/null";
	for (int i = 0; i < MAXARGS && commands[k].args[i]; i++)
		argv[argc++] = (char *)commands[k].args[i];
	for (int i = 0; i < commands[k].files; i++)
		argv[argc++] = path;
	argv[argc] = NULL;
	return cmd_report(argc, argv);
}

int os_fuzz_report(const uint8_t *data, size_t size)
{
	struct os_profile *p = NULL;
	uint8_t *buf;
	int ok;

	if (!fz_repairable(data, size))
		return 0;
	if (memfd < 0) {
		memfd = memfd_create("fuzz-profile", MFD_CLOEXEC);
		if (memfd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	}
	buf = malloc(size);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	fz_repair(buf, size);
	ok = os_profile_read_mem(buf, size, &p, NULL, 0) == 0;
	os_profile_free(p);
	if (ftruncate(memfd, 0) || pwrite(memfd, buf, size, 0) != (ssize_t)size)
		abort();
	free(buf);
	for (unsigned k = 0; k < sizeof(commands) / sizeof(commands[0]); k++) {
		int rc = run(k);

		/* a profile read is reported (0) or refused by an option that
		 * needs what it lacks (1: --per-thread without slices); one
		 * refused is refused by every command with 1 */
		if (!ok && rc != 1)
			abort();
		if (ok && rc != 0 && rc != 1)
			abort();
	}
	return 0;
}

#ifdef OS_FUZZ_ENTRY
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Rejected inputs print one line each on stdio's stderr; sanitizers and
 * libFuzzer write to file descriptor 2 and are unaffected. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (!getenv("OS_FUZZ_VERBOSE")) {
		FILE *null = fopen("/dev/null", "w");

		if (null)
			stderr = null;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return os_fuzz_report(data, size);
}
#endif
