/* stripped.c - end-to-end tests of frames in stripped distribution libraries:
 * `objscope record -- xz -9 -k FILE`, where Debian's liblzma has
 * no .symtab, names its frames `liblzma.so.5.4.1+0xOFF` (ELF vaddr, the same
 * in every run), never `[unknown] 0x7f...`. Run from the repository root
 * after `make all fixtures`; skipped where xz is not installed.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/e2e/helpers.h"

/* Above this an address is in the part of the address space where
 * executables and libraries are mapped (x86-64: PIE at 0x55..., libraries
 * at 0x7f...). */
#define MODULE_REGION 0x550000000000ULL

static char *tmp;

static void setup(void)
{
	tmp = e2e_suite_setup();
}

static void teardown(void)
{
	e2e_suite_teardown(&tmp);
}

TestSuite(e2e_stripped, .init = setup, .fini = teardown, .timeout = 120);

/* prog found in PATH, or NULL. */
static char *in_path(const char *prog)
{
	const char *path = getenv("PATH");
	static char buf[4096];

	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, p, prog);
		if (n && access(buf, X_OK) == 0)
			return buf;
		p += n + (p[n] == ':');
	}
	return NULL;
}

/* About 1 MiB of text that compresses slowly enough to be sampled. */
static void write_input(const char *path)
{
	static const char *const words[] = { "alpha", "beta", "gamma", "delta", "omega",
					     "kappa", "sigma", "theta", "lambda", "zeta" };
	uint64_t x = 88172645463325252ULL;
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f);
	for (int i = 0; i < 150000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		fprintf(f, "%s %" PRIu64 "%c", words[x % 10], x % 100000, i % 8 == 7 ? '\n' : ' ');
	}
	cr_assert_eq(fclose(f), 0);
}

/* Records xz on the input into tmp/NAME, returns `report --format collapsed`
 * (every frame of every path, ';'-separated, one path a line). */
static char *record_xz(const char *xz, const char *name)
{
	char *profile = e2e_path(tmp, name), *input = e2e_path(tmp, "input.txt"), *out;
	const char *argv[] = { xz, "-9", "-k", "-f", input, NULL };
	const char *rep[] = { E2E_OBJSCOPE, "report", "--format", "collapsed", profile, NULL };
	/* blocks below --min-size are sampled by bytes at random (docs/NATIVE.md),
	 * so their allocation paths differ between runs: off here, where the
	 * subject is how frames of a stripped library are named */
	const char *opts[] = { "--small-sample", "0", NULL };
	struct e2e_result res;

	cr_assert_eq(e2e_record(tmp, profile, opts, argv, &res), 0, "cannot run objscope record");
	cr_assert_eq(res.status, 0, "objscope record exited %d; stderr: %s", res.status, res.err);
	e2e_result_free(&res);
	cr_assert_eq(e2e_run(tmp, rep, NULL, &res), 0);
	cr_assert_eq(res.status, 0, "report exited %d: %s", res.status, res.err);
	out = res.out;
	res.out = NULL;
	e2e_result_free(&res);
	free(profile);
	free(input);
	return out;
}

struct frames {
	char **v;
	size_t n, cap;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The distinct frames of the collapsed output (sorted), without the sample
 * count that ends each line. */
static struct frames split_frames(const char *collapsed)
{
	struct frames f = { 0 };
	const char *p = collapsed;

	while (*p) {
		size_t eol = strcspn(p, "\n"), n;

		for (const char *q = p; q < p + eol;) {
			n = strcspn(q, ";\n");
			if (q + n == p + eol) { /* last frame: " COUNT" follows */
				const char *sp = q + n;

				while (sp > q && sp[-1] != ' ')
					sp--;
				if (sp > q)
					n = (size_t)(sp - 1 - q);
			}
			if (f.n == f.cap) {
				f.cap = f.cap ? 2 * f.cap : 256;
				f.v = realloc(f.v, f.cap * sizeof(*f.v));
				cr_assert_not_null(f.v);
			}
			f.v[f.n++] = strndup(q, n);
			q += n;
			while (q < p + eol && *q != ';')
				q++;
			q += q < p + eol;
		}
		p += eol + (p[eol] == '\n');
	}
	qsort(f.v, f.n, sizeof(*f.v), cmp_str);
	if (f.n) {
		size_t j = 1;

		for (size_t i = 1; i < f.n; i++) {
			if (strcmp(f.v[i], f.v[j - 1]))
				f.v[j++] = f.v[i];
			else
				free(f.v[i]);
		}
		f.n = j;
	}
	return f;
}

static void frames_free(struct frames *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->v[i]);
	free(f->v);
}

/* An unnamed frame of liblzma shown as module+offset. */
static bool lzma_offset_frame(const char *s)
{
	const char *m = strstr(s, "liblzma.so");

	return m && strstr(m, "+0x");
}

/* The liblzma module+offset frames of every object's allocation path in
 * profile tmp/name, sorted: from the JSON report, which lists every object
 * (the collapsed stacks carry only objects that happened to get samples,
 * which differ from run to run). */
static struct frames alloc_lzma_frames(const char *name)
{
	char *profile = e2e_path(tmp, name), msg[512];
	json_object *report = e2e_report_json(tmp, profile, msg, sizeof(msg)), *objects;
	struct frames f = { 0 };

	cr_assert_not_null(report, "%s", msg);
	objects = e2e_get(report, "objects");
	for (size_t i = 0; objects && i < json_object_array_length(objects); i++) {
		json_object *st = e2e_get(json_object_array_get_idx(objects, i), "alloc_stack");

		for (size_t k = 0; st && k < json_object_array_length(st); k++) {
			const char *t = e2e_frame_text(st, k);

			if (!t || !lzma_offset_frame(t))
				continue;
			f.v = realloc(f.v, (f.n + 1) * sizeof(*f.v));
			f.v[f.n++] = strdup(t);
		}
	}
	qsort(f.v, f.n, sizeof(*f.v), cmp_str);
	json_object_put(report);
	free(profile);
	return f;
}

Test(e2e_stripped, xz_frames_are_module_offset)
{
	char *xz = in_path("xz"), *input, *c1, *c2, *xzc;
	struct frames f1, f2, l1 = { 0 }, l2 = { 0 }, a1, a2;
	size_t unknown = 0;

	if (!xz)
		cr_skip_test("xz is not installed");
	xzc = strdup(xz);
	input = e2e_path(tmp, "input.txt");
	write_input(input);
	c1 = record_xz(xzc, "xz1.data");
	f1 = split_frames(c1);
	for (size_t i = 0; i < f1.n; i++) {
		const char *u = strstr(f1.v[i], "[unknown] 0x");

		if (u && strtoull(u + 12, NULL, 16) >= MODULE_REGION) {
			cr_log_error("frame in a mapped module left unnamed: %s", f1.v[i]);
			unknown++;
		}
		if (lzma_offset_frame(f1.v[i])) {
			l1.v = realloc(l1.v, (l1.n + 1) * sizeof(*l1.v));
			l1.v[l1.n++] = f1.v[i];
		}
	}
	cr_assert_eq(unknown, 0, "%zu frames of mapped modules read [unknown] 0x...", unknown);
	if (!l1.n) {
		/* every liblzma frame was named: it has symbols here (a debug file) */
		for (size_t i = 0; i < f1.n; i++)
			cr_assert(!strstr(f1.v[i], "liblzma"), "%s", f1.v[i]);
		cr_skip_test("liblzma is not stripped here (or its debug file is installed)");
	}
	/* the offsets are the same in a second run (the allocation paths of xz
	 * -9's tracked blocks are; the sampled access paths differ): every
	 * liblzma frame of an allocation path comes back */
	c2 = record_xz(xzc, "xz2.data");
	f2 = split_frames(c2);
	a1 = alloc_lzma_frames("xz1.data");
	a2 = alloc_lzma_frames("xz2.data");
	cr_assert_gt(a1.n, 0, "no liblzma frame in the allocation paths");
	for (size_t i = 0; i < a1.n; i++)
		cr_assert_not_null(bsearch(&a1.v[i], a2.v, a2.n, sizeof(*a2.v), cmp_str),
				   "allocation frame %s not in the second run", a1.v[i]);
	frames_free(&a1);
	frames_free(&a2);
	free(l1.v);
	free(l2.v);
	frames_free(&f1);
	frames_free(&f2);
	free(c1);
	free(c2);
	free(input);
	free(xzc);
}

/* The build-id of the ELF file at path (readelf -n), into id. */
static void build_id_of(const char *path, char *id, size_t len)
{
	char cmd[4200], line[512];
	FILE *f;

	id[0] = 0;
	snprintf(cmd, sizeof(cmd), "readelf -n '%s'", path);
	f = popen(cmd, "r");
	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f)) {
		const char *at = strstr(line, "Build ID: ");

		if (at)
			snprintf(id, len, "%.*s", (int)strcspn(at + 10, " \n"), at + 10);
	}
	pclose(f);
	cr_assert_gt(strlen(id), 2, "%s has no build-id", path);
}

/* Recorded where the program is stripped, named later from a directory of
 * debug files by build-id: `report --debug-dir DIR` gives the functions
 * and lines the unstripped program would have had. */
Test(e2e_stripped, debug_dir_names_frames_later)
{
	const char *help[] = { E2E_OBJSCOPE, "report", "--help", NULL };
	char *prog = e2e_path(tmp, "three_sites_stripped"), *profile = e2e_path(tmp, "ts.data");
	char *dbg = e2e_path(tmp, "debug"), id[256], cmd[8192];
	const char *argv[] = { prog, NULL };
	const char *rep[] = { E2E_OBJSCOPE, "report", profile, NULL, NULL, NULL };
	struct e2e_result res;

	if (!e2e_help_mentions(tmp, help, "--debug-dir"))
		cr_skip_test("report --debug-dir is not wired into report.c in this build");
	build_id_of(E2E_FIXTURE("three_sites"), id, sizeof(id));
	snprintf(cmd, sizeof(cmd),
		 "strip --strip-all -o '%s' '%s' && mkdir -p '%s/.build-id/%.2s' && "
		 "objcopy --only-keep-debug '%s' '%s/.build-id/%.2s/%s.debug'",
		 prog, E2E_FIXTURE("three_sites"), dbg, id, E2E_FIXTURE("three_sites"), dbg, id,
		 id + 2);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	cr_assert_eq(e2e_record(tmp, profile, NULL, argv, &res), 0);
	cr_assert_eq(res.status, 0, "objscope record exited %d; stderr: %s", res.status, res.err);
	e2e_result_free(&res);

	/* without the directory: module+offset, no name */
	cr_assert_eq(e2e_run(tmp, rep, NULL, &res), 0);
	cr_assert_eq(res.status, 0, "%s", res.err);
	cr_assert_null(strstr(res.out, "alloc_random_block"), "%.2000s", res.out);
	cr_assert_not_null(strstr(res.out, "three_sites_stripped+0x"), "%.2000s", res.out);
	e2e_result_free(&res);

	rep[2] = "--debug-dir";
	rep[3] = dbg;
	rep[4] = profile;
	cr_assert_eq(e2e_run(tmp, rep, NULL, &res), 0);
	cr_assert_eq(res.status, 0, "%s", res.err);
	cr_assert_not_null(strstr(res.out, "alloc_random_block (three_sites.c:"), "%.3000s",
			   res.out);
	cr_assert_null(strstr(res.out, "three_sites_stripped+0x"), "%.3000s", res.out);
	e2e_result_free(&res);

	/* a directory that is not one: one line, non-zero exit */
	rep[3] = prog;
	cr_assert_eq(e2e_run(tmp, rep, NULL, &res), 0);
	cr_assert_neq(res.status, 0);
	cr_assert_not_null(strstr(res.err, "--debug-dir"), "%s", res.err);
	cr_assert_eq(e2e_count_lines(res.err, res.err_len), 1, "%s", res.err);
	e2e_result_free(&res);
	free(prog);
	free(profile);
	free(dbg);
}
