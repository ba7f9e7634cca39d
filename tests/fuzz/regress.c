/* regress.c - replays every fuzzer finding (tests/fuzz/crashes/) and the
 * seed corpora through the fuzz targets, so a parser bug the fuzzer found
 * once stays fixed: the profile reader (tests/fuzz/corpus/, findings
 * crash-*...), the perf map reader (tests/fuzz/corpus_perfmap/, findings
 * perfmap-*), the /proc/PID/maps parser (tests/fuzz/corpus_maps/,
 * findings maps-*) and the JVM attach reply check (tests/fuzz/corpus_jattach/,
 * findings jattach-*). Run from the repository root
 * (build/test_fuzz_regress; `make fuzz-regress`). Under `make asan` the
 * replay runs with AddressSanitizer/UBSan. Profile findings and seeds also
 * go through every report command and format (tests/fuzz/fuzz_report.c).
 *
 * Also checks what the target cannot: a rejected input gets exactly one
 * error line (no newline inside), a seed profile is accepted. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int os_fuzz_perfmap(const uint8_t *data, size_t size);
int os_fuzz_maps(const uint8_t *data, size_t size);
int os_fuzz_jattach(const uint8_t *data, size_t size);
int os_fuzz_report(const uint8_t *data, size_t size);

/* Every report command and format over buf (fuzz_report.c); their one-line
 * errors for a rejected profile are not shown. */
static void report_all(const uint8_t *buf, size_t len)
{
	FILE *err = stderr, *null = fopen("/dev/null", "w");

	if (null)
		stderr = null;
	os_fuzz_report(buf, len);
	stderr = err;
	if (null)
		fclose(null);
}

/* Loads dir/name; returns its bytes (malloc'd, at least 1 byte allocated). */
static uint8_t *load(const char *dir, const char *name, size_t *len)
{
	char path[4096];
	struct stat st;
	uint8_t *buf;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	cr_assert_eq(stat(path, &st), 0, "cannot stat %s", path);
	buf = malloc((size_t)st.st_size + 1);
	f = fopen(path, "rb");
	cr_assert(buf && f, "cannot read %s", path);
	cr_assert_eq(fread(buf, 1, (size_t)st.st_size, f), (size_t)st.st_size);
	fclose(f);
	*len = (size_t)st.st_size;
	return buf;
}

/* Calls fn on every regular file of dir; returns how many. */
static int each_file(const char *dir, void (*fn)(const char *, const char *))
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	cr_assert_not_null(d, "cannot open %s (run from the repository root)", dir);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || strcmp(e->d_name, "README") == 0)
			continue;
		fn(dir, e->d_name);
		n++;
	}
	closedir(d);
	return n;
}

static void replay(const char *dir, const char *name)
{
	struct os_profile *p = NULL;
	char err[512] = "";
	size_t len;
	uint8_t *buf = load(dir, name, &len);
	int rc;

	cr_log_info("replaying %s/%s (%zu bytes)", dir, name, len);
	if (!strncmp(name, "perfmap-", 8) || !strncmp(name, "maps-", 5) ||
	    !strncmp(name, "jattach-", 8)) {
		if (name[0] == 'p')
			os_fuzz_perfmap(buf, len);
		else if (name[0] == 'j')
			os_fuzz_jattach(buf, len);
		else
			os_fuzz_maps(buf, len);
		free(buf);
		return;
	}
	/* profile findings (crash-*: the reader's, report-*: a report's)
	 * go through both the reader and every report */
	LLVMFuzzerTestOneInput(buf, len);
	report_all(buf, len);
	rc = os_profile_read_mem(buf, len, &p, err, sizeof(err));
	if (rc < 0) {
		cr_expect_null(p, "%s: a failed read returned a profile", name);
		cr_expect(err[0] != 0 && strchr(err, '\n') == NULL,
			  "%s: the error is not one line: '%s'", name, err);
	}
	os_profile_free(p);
	free(buf);
}

static void seed_reads(const char *dir, const char *name)
{
	struct os_profile *p = NULL;
	char err[512] = "";
	size_t len;
	uint8_t *buf = load(dir, name, &len);

	cr_expect_eq(os_profile_read_mem(buf, len, &p, err, sizeof(err)), 0,
		     "seed %s is not a valid profile: %s", name, err);
	os_profile_free(p);
	free(buf);
}

Test(fuzz_regress, findings_replay_cleanly)
{
	each_file("tests/fuzz/crashes", replay);
}

Test(fuzz_regress, seed_corpus_reads_and_replays)
{
	cr_expect_geq(each_file("tests/fuzz/corpus", seed_reads), 3, "the seed corpus is too small");
	each_file("tests/fuzz/corpus", replay);
}

/* The fuzz target of a parser seed (each_file's callback has no context). */
static int (*seed_target)(const uint8_t *, size_t);

static void replay_seed(const char *dir, const char *name)
{
	size_t len;
	uint8_t *buf = load(dir, name, &len);

	cr_log_info("replaying %s/%s (%zu bytes)", dir, name, len);
	seed_target(buf, len);
	free(buf);
}

static int replay_seeds(const char *dir, int (*target)(const uint8_t *, size_t))
{
	seed_target = target;
	return each_file(dir, replay_seed);
}

Test(fuzz_regress, parser_seeds_replay)
{
	cr_expect_geq(replay_seeds("tests/fuzz/corpus_jattach", os_fuzz_jattach), 3);
	cr_expect_geq(replay_seeds("tests/fuzz/corpus_perfmap", os_fuzz_perfmap), 2);
	cr_expect_geq(replay_seeds("tests/fuzz/corpus_maps", os_fuzz_maps), 2);
}
