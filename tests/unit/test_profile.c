/* test_profile.c - the profile file: builder, round trip, hostile input,
 * merge, frame strings. */
#include <criterion/criterion.h>
#include <math.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "common/profile.h"
#include "tests/unit/unit_helpers.h"

#define HDR 24
#define END 20

static char tmpdir[64];

static void mk_tmpdir(void)
{
	ut_mkdtemp(tmpdir, sizeof(tmpdir), "profile");
}

static void rm_tmpdir(void)
{
	ut_rmtree(tmpdir);
}

static char *tmp_path(const char *name)
{
	return ut_path(tmpdir, name);
}

/* A profile with every section and field set. */
/* A frame of a stripped module: no name, the nearest exported function as
 * a hint, the module's build-id. */
static uint32_t stripped_frame(struct os_profile *p, const char *module, uint64_t off,
			       const char *near, uint64_t near_off, const char *build_id)
{
	struct os_frame f = {
		.kind = OS_FRAME_NATIVE,
		.name = OS_NONE,
		.module = os_profile_string(p, module),
		.file = OS_NONE,
		.addr = off,
		.near_sym = near ? os_profile_string(p, near) : OS_NONE,
		.near_off = near_off,
		.build_id = build_id ? os_profile_string(p, build_id) : OS_NONE,
	};

	return os_profile_frame(p, &f);
}

static struct os_profile *build_full(void)
{
	struct os_profile *p = os_profile_new();
	char *argv[] = { "java", "-Xmx1g", "Bench" };
	uint64_t *c;
	uint32_t f[7], s_alloc, s_alloc2, s_acc, ctx;
	size_t i;

	cr_assert_not_null(p);
	cr_assert_eq(os_profile_set_argv(p, 3, argv), 0);
	cr_assert_eq(os_profile_add_pid(p, 1234), 0);
	cr_assert_eq(os_profile_add_pid(p, 1240), 0);
	cr_assert_eq(os_profile_add_note(p, "no PMU: software sampler used"), 0);
	p->meta.duration_s = 12.5;
	p->meta.sampler = os_profile_string(p, "soft");
	p->meta.event = os_profile_string(p, "task-clock");
	p->meta.period = 1000000;
	p->meta.freq = 1000;
	p->meta.min_size = 256;
	p->meta.mode = os_profile_string(p, "record");
	p->meta.hostname = os_profile_string(p, "host1");
	p->meta.start_time = 1700000000;
	c = (uint64_t *)&p->c;
	for (i = 0; i < sizeof(p->c) / sizeof(uint64_t); i++)
		c[i] = 100 + i;

	f[0] = ut_frame(p, OS_FRAME_JAVA, "Bench.makeData", NULL, "Bench.java", 12, 0x10);
	f[1] = ut_frame(p, OS_FRAME_JAVA, "Bench.main", NULL, "Bench.java", 40, 0x20);
	f[2] = ut_frame(p, OS_FRAME_NATIVE, "malloc", "/lib/libc.so.6", NULL, 0, 0x9a0);
	f[3] = ut_frame(p, OS_FRAME_UNKNOWN, NULL, NULL, NULL, 0, 0x7f0012345678);
	f[4] = ut_frame(p, OS_FRAME_KERNEL, "do_page_fault", NULL, NULL, 0, 0);
	f[5] = ut_frame(p, OS_FRAME_SYNTHETIC, "[allocated before attach]", NULL, NULL, 0, 0);
	f[6] = stripped_frame(p, "/lib/liblzma.so.5", 0x1e94e, "lzma_code", 0x4e, "72a44fc3ed");
	s_alloc = os_profile_stack(p, (uint32_t[]){ f[0], f[1] }, 2);
	s_alloc2 = os_profile_stack(p, (uint32_t[]){ f[6], f[2], f[3], f[5] }, 4);
	s_acc = os_profile_stack(p, (uint32_t[]){ f[4], f[1] }, 2);

	ctx = os_profile_add_context(p, &(struct os_context){
		.type = os_profile_string(p, "double[]"), .stack = s_alloc, .allocations = 10,
		.bytes = 8000, .samples = 70, .metrics = { 1, 2, 3 },
		.replica = { 90, 10, 12, 5, 1, 64, 40, 8 } });
	cr_assert_eq(ctx, 0);
	p->analyses |= OS_AN_REPLICAS;
	cr_assert_eq(os_profile_add_context(p, &(struct os_context){
		.type = OS_NONE, .stack = s_alloc2, .allocations = 5, .bytes = 5000,
		.samples = 30, .metrics = { 4, 5, 6 } }), 1);
	cr_assert_eq(os_profile_add_access(p, &(struct os_access){
		.context = 0, .stack = s_acc, .samples = 60, .metrics = { 7, 8, 9 } }), 0);
	cr_assert_eq(os_profile_add_access(p, &(struct os_access){
		.context = 0, .stack = OS_NONE, .samples = 10 }), 1);
	cr_assert_eq(os_profile_add_access(p, &(struct os_access){
		.context = 1, .stack = s_alloc2, .samples = 30 }), 2);
	cr_assert_eq(os_profile_add_thread(p, &(struct os_thread){
		.kind = OS_THR_JAVA, .name = os_profile_string(p, "main"), .pid = 1234,
		.tid = 1235, .samples = 90 }), 0);
	cr_assert_eq(os_profile_add_thread(p, &(struct os_thread){
		.kind = OS_THR_GC, .name = os_profile_string(p, "GC Thread#0"), .pid = 1234,
		.tid = 1236, .samples = 10 }), 1);
	/* sample estimates (Java hybrid mode): fractional */
	p->contexts[0].samples_est = 280.5;
	p->contexts[1].samples_est = 30;
	p->accesses[0].samples_est = 240.25;
	p->accesses[1].samples_est = 40.25;
	p->accesses[2].samples_est = 30;
	p->est.samples_attributed = 310.5;
	p->est.samples_java_attributed = 280.5;
	p->analyses |= OS_AN_ESTIMATES;
	/* estimated allocation paths (Java, section PATHEST): context 1 is a
	 * class-only context that gave 12.5 samples to the site context 0 */
	p->contexts[0].pe = (struct os_pathest){ .kind = OS_PATH_SITE, .class_sites = 2,
						 .path_est = 12.5, .seen = 3, .class_seen = 40 };
	p->contexts[1].pe = (struct os_pathest){ .kind = OS_PATH_CLASS, .class_sites = 2,
						 .path_est = -12.5, .class_seen = 40 };
	p->accesses[0].path_est = 10.25;
	p->accesses[2].path_est = -10.25;
	p->analyses |= OS_AN_PATHEST;
	/* samples by thread and time bucket (version 2) */
	p->slice_ms = 100;
	cr_assert_eq(os_profile_add_slice(p, &(struct os_slice){ 0, 0, 0, 0, 50 }), 0);
	cr_assert_eq(os_profile_add_slice(p, &(struct os_slice){ 0, 1, 1, 7, 10 }), 1);
	cr_assert_eq(os_profile_add_slice(p, &(struct os_slice){ 0, OS_NONE, 0, 3, 10 }), 2);
	cr_assert_eq(os_profile_add_slice(p, &(struct os_slice){ 1, 2, 0, 120, 30 }), 3);
	return p;
}

static void assert_ids_eq(uint32_t na, const uint32_t *a, uint32_t nb, const uint32_t *b)
{
	cr_assert_eq(na, nb);
	if (na)
		cr_assert_arr_eq(a, b, na * sizeof(*a));
}

static void assert_profiles_eq(const struct os_profile *a, const struct os_profile *b)
{
	uint32_t i;

	cr_assert_eq(a->nstrings, b->nstrings);
	for (i = 0; i < a->nstrings; i++)
		cr_assert_str_eq(a->strings[i], b->strings[i]);
	cr_assert_eq(a->nframes, b->nframes);
	for (i = 0; i < a->nframes; i++) { /* field by field: the struct has padding */
		cr_assert_eq(a->frames[i].kind, b->frames[i].kind);
		cr_assert_eq(a->frames[i].name, b->frames[i].name);
		cr_assert_eq(a->frames[i].module, b->frames[i].module);
		cr_assert_eq(a->frames[i].file, b->frames[i].file);
		cr_assert_eq(a->frames[i].line, b->frames[i].line);
		cr_assert_eq(a->frames[i].addr, b->frames[i].addr);
		cr_assert_eq(a->frames[i].near_sym, b->frames[i].near_sym);
		cr_assert_eq(a->frames[i].near_off, b->frames[i].near_off);
		cr_assert_eq(a->frames[i].build_id, b->frames[i].build_id);
	}
	cr_assert_eq(a->nstacks, b->nstacks);
	for (i = 0; i < a->nstacks; i++)
		assert_ids_eq(a->stacks[i].nframes, a->stacks[i].frames, b->stacks[i].nframes,
			      b->stacks[i].frames);
	/* No padding in these records: compared bytewise. */
	cr_assert_eq(a->ncontexts, b->ncontexts);
	if (a->ncontexts)
		cr_assert_arr_eq(a->contexts, b->contexts, a->ncontexts * sizeof(*a->contexts));
	cr_assert_eq(a->naccesses, b->naccesses);
	if (a->naccesses)
		cr_assert_arr_eq(a->accesses, b->accesses, a->naccesses * sizeof(*a->accesses));
	cr_assert_eq(a->nthreads, b->nthreads);
	if (a->nthreads)
		cr_assert_arr_eq(a->threads, b->threads, a->nthreads * sizeof(*a->threads));
	cr_assert_eq(a->nslices, b->nslices);
	if (a->nslices)
		cr_assert_arr_eq(a->slices, b->slices, a->nslices * sizeof(*a->slices));
	cr_assert_eq(a->slice_ms, b->slice_ms);
	cr_assert_arr_eq(&a->c, &b->c, sizeof(a->c));
	cr_assert_eq(a->analyses, b->analyses);
	cr_assert_eq(a->est.samples_attributed, b->est.samples_attributed);
	cr_assert_eq(a->est.samples_java_attributed, b->est.samples_java_attributed);
	assert_ids_eq(a->meta.argc, a->meta.argv, b->meta.argc, b->meta.argv);
	assert_ids_eq(a->meta.npids, a->meta.pids, b->meta.npids, b->meta.pids);
	assert_ids_eq(a->meta.nnotes, a->meta.notes, b->meta.nnotes, b->meta.notes);
	cr_assert_eq(a->meta.duration_s, b->meta.duration_s);
	cr_assert_eq(a->meta.sampler, b->meta.sampler);
	cr_assert_eq(a->meta.event, b->meta.event);
	cr_assert_eq(a->meta.period, b->meta.period);
	cr_assert_eq(a->meta.freq, b->meta.freq);
	cr_assert_eq(a->meta.min_size, b->meta.min_size);
	cr_assert_eq(a->meta.mode, b->meta.mode);
	cr_assert_eq(a->meta.hostname, b->meta.hostname);
	cr_assert_eq(a->meta.start_time, b->meta.start_time);
}

static uint8_t *slurp(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	int fd = open(path, O_RDONLY);

	cr_assert_geq(fd, 0);
	cr_assert_eq(fstat(fd, &st), 0);
	buf = malloc(st.st_size + 1);
	cr_assert_not_null(buf);
	cr_assert_eq(read(fd, buf, st.st_size), st.st_size);
	close(fd);
	*len = st.st_size;
	return buf;
}

static void spit(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f);
	cr_assert_eq(fwrite(buf, 1, len, f), len);
	cr_assert_eq(fclose(f), 0);
}

/* The bytes of build_full() as written. */
static uint8_t *full_bytes(size_t *len)
{
	struct os_profile *p = build_full();
	char err[256];

	cr_assert_eq(os_profile_write(p, tmp_path("full.data"), err, sizeof(err)), 0, "%s", err);
	os_profile_free(p);
	return slurp(tmp_path("full.data"), len);
}

static void le32_put(uint8_t *d, uint32_t v)
{
	d[0] = v;
	d[1] = v >> 8;
	d[2] = v >> 16;
	d[3] = v >> 24;
}

static uint32_t le32_get(const uint8_t *d)
{
	return d[0] | d[1] << 8 | d[2] << 16 | (uint32_t)d[3] << 24;
}

/* Re-seals a modified file: file size in the header and END checksum. */
static void reseal(uint8_t *buf, size_t len)
{
	for (int i = 0; i < 8; i++)
		buf[16 + i] = (uint8_t)((uint64_t)len >> (8 * i));
	le32_put(buf + len - 4, (uint32_t)crc32(crc32(0, NULL, 0), buf, len - END));
}

/* Offset of the body of the first section of `type`. */
static size_t find_section(const uint8_t *buf, size_t len, uint32_t type)
{
	size_t off = HDR;

	while (off + 16 <= len) {
		uint64_t slen = le32_get(buf + off + 8) | (uint64_t)le32_get(buf + off + 12) << 32;

		if (le32_get(buf + off) == type)
			return off + 16;
		off += 16 + slen;
	}
	cr_assert_fail("section %u not found", type);
	return 0;
}

TestSuite(profile, .init = mk_tmpdir, .fini = rm_tmpdir);

Test(profile, interning_gives_equal_ids_for_equal_content)
{
	struct os_profile *p = os_profile_new();
	char name[32];
	uint32_t a, b, f1, f2, s1, s2, i, base;

	a = os_profile_string(p, "alpha");
	b = os_profile_string(p, "beta");
	cr_assert_neq(a, b);
	cr_assert_eq(os_profile_string(p, "alpha"), a);
	cr_assert_str_eq(os_profile_str(p, b), "beta");
	cr_assert_null(os_profile_str(p, OS_NONE));

	f1 = ut_frame(p, OS_FRAME_NATIVE, "f", "/m", NULL, 0, 1);
	f2 = ut_frame(p, OS_FRAME_NATIVE, "f", "/m", NULL, 0, 2);
	cr_assert_neq(f1, f2);
	cr_assert_eq(ut_frame(p, OS_FRAME_NATIVE, "f", "/m", NULL, 0, 1), f1);
	s1 = os_profile_stack(p, (uint32_t[]){ f1, f2 }, 2);
	s2 = os_profile_stack(p, (uint32_t[]){ f2, f1 }, 2);
	cr_assert_neq(s1, s2);
	cr_assert_eq(os_profile_stack(p, (uint32_t[]){ f1, f2 }, 2), s1);
	cr_assert_eq(os_profile_stack(p, NULL, 0), os_profile_stack(p, NULL, 0));

	/* Many strings: every one keeps its id through table growth. */
	base = p->nstrings;
	for (i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "s%u", i);
		cr_assert_eq(os_profile_string(p, name), base + i);
	}
	for (i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "s%u", i);
		cr_assert_eq(os_profile_string(p, name), base + i);
		cr_assert_str_eq(os_profile_str(p, base + i), name);
	}
	cr_assert_eq(p->nstrings, base + 20000);
	os_profile_free(p);
}

Test(profile, round_trip_keeps_everything)
{
	struct os_profile *p = build_full(), *q = NULL;
	char err[256] = "";
	struct stat st;

	cr_assert_eq(os_profile_write(p, tmp_path("rt.data"), err, sizeof(err)), 0, "%s", err);
	cr_assert_neq(stat(tmp_path("rt.data.tmp"), &st), 0, "temporary file left behind");
	cr_assert_eq(os_profile_read(tmp_path("rt.data"), &q, err, sizeof(err)), 0, "%s", err);
	assert_profiles_eq(p, q);

	/* A profile read back can be extended like a new one. */
	cr_assert_eq(os_profile_string(q, "double[]"), os_profile_string(p, "double[]"));
	cr_assert_eq(os_profile_string(q, "new"), p->nstrings);
	os_profile_free(p);
	os_profile_free(q);
}

Test(profile, empty_profile_round_trips)
{
	struct os_profile *p = os_profile_new(), *q = NULL;
	char err[256] = "";

	cr_assert_eq(os_profile_write(p, tmp_path("e.data"), err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(os_profile_read(tmp_path("e.data"), &q, err, sizeof(err)), 0, "%s", err);
	assert_profiles_eq(p, q);
	cr_assert_eq(q->meta.sampler, OS_NONE);
	os_profile_free(p);
	os_profile_free(q);
}

Test(profile, every_truncation_is_rejected)
{
	struct os_profile *q;
	char err[256], want[128];
	size_t len, n;
	uint8_t *buf = full_bytes(&len);
	int ret;

	for (n = 0; n < len; n++) {
		q = (void *)1;
		err[0] = 0;
		ret = os_profile_read_mem(buf, n, &q, err, sizeof(err));
		cr_assert(ret == -EPROTO || ret == -EINVAL, "length %zu: ret %d", n, ret);
		cr_assert_null(q);
		cr_assert_neq(err[0], 0, "length %zu: no message", n);
		if (n >= HDR) {
			snprintf(want, sizeof(want),
				 "truncated profile (expected %zu bytes, got %zu)", len, n);
			cr_assert_str_eq(err, want);
		}
	}
	free(buf);
}

Test(profile, truncated_file_message_names_the_file)
{
	struct os_profile *q;
	char err[256], want[256];
	size_t len;
	uint8_t *buf = full_bytes(&len);

	spit(tmp_path("cut.data"), buf, len - 1);
	cr_assert_eq(os_profile_read(tmp_path("cut.data"), &q, err, sizeof(err)), -EPROTO);
	snprintf(want, sizeof(want), "%s: truncated profile (expected %zu bytes, got %zu)",
		 tmp_path("cut.data"), len, len - 1);
	cr_assert_str_eq(err, want);
	free(buf);
}

Test(profile, every_flipped_byte_is_rejected)
{
	struct os_profile *q;
	char err[256];
	size_t len, i;
	uint8_t *buf = full_bytes(&len);
	int ret;

	for (i = 0; i < len; i++) {
		buf[i] ^= 0x5a;
		q = NULL;
		ret = os_profile_read_mem(buf, len, &q, err, sizeof(err));
		cr_assert_lt(ret, 0, "flip at %zu accepted", i);
		cr_assert_null(q);
		if (i >= HDR && i < len - END)
			cr_assert_str_eq(err, "corrupt profile: checksum mismatch", "at %zu", i);
		buf[i] ^= 0x5a;
	}
	cr_assert_eq(os_profile_read_mem(buf, len, &q, err, sizeof(err)), 0);
	os_profile_free(q);
	free(buf);
}

Test(profile, wrong_version_is_unsupported)
{
	struct os_profile *q;
	char err[256], want[256];
	size_t len;
	uint8_t *buf = full_bytes(&len);

	le32_put(buf + 8, 7);
	spit(tmp_path("v7.data"), buf, len);
	cr_assert_eq(os_profile_read(tmp_path("v7.data"), &q, err, sizeof(err)), -ENOTSUP);
	snprintf(want, sizeof(want),
		 "%s: unsupported profile version 7 (this objscope reads versions 1 to 3)",
		 tmp_path("v7.data"));
	cr_assert_str_eq(err, want);
	cr_assert_null(q);
	free(buf);
}

Test(profile, empty_and_garbage_files_are_not_profiles)
{
	struct os_profile *q;
	char err[256], want[256];
	uint8_t garbage[4096];
	size_t i;

	spit(tmp_path("empty"), "", 0);
	cr_assert_eq(os_profile_read(tmp_path("empty"), &q, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s: not an objscope profile (empty file)", tmp_path("empty"));
	cr_assert_str_eq(err, want);

	srand(42);
	for (i = 0; i < sizeof(garbage); i++)
		garbage[i] = (uint8_t)rand();
	spit(tmp_path("garbage"), garbage, sizeof(garbage));
	cr_assert_eq(os_profile_read(tmp_path("garbage"), &q, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s: not an objscope profile", tmp_path("garbage"));
	cr_assert_str_eq(err, want);

	cr_assert_eq(os_profile_read(tmp_path("missing"), &q, err, sizeof(err)), -ENOENT);
	cr_assert(strstr(err, "cannot open profile") != NULL, "%s", err);
}

Test(profile, hostile_counts_with_valid_checksum_are_rejected)
{
	struct os_profile *q;
	char err[256];
	size_t len, off;
	uint8_t *buf = full_bytes(&len);

	/* A string count far beyond the section: no huge allocation, an error. */
	off = find_section(buf, len, OS_SEC_STRINGS);
	le32_put(buf + off, 0xfffffff0u);
	reseal(buf, len);
	cr_assert_eq(os_profile_read_mem(buf, len, &q, err, sizeof(err)), -EPROTO);
	cr_assert_str_eq(err, "corrupt profile: STRINGS section is malformed (a count or length"
			      " overruns it)");
	free(buf);

	/* Frame count overrunning: count * record size > section. */
	buf = full_bytes(&len);
	off = find_section(buf, len, OS_SEC_FRAMES);
	le32_put(buf + off, 0x10000000u);
	reseal(buf, len);
	cr_assert_eq(os_profile_read_mem(buf, len, &q, err, sizeof(err)), -EPROTO);
	free(buf);

	/* A context pointing at a stack that does not exist. */
	buf = full_bytes(&len);
	off = find_section(buf, len, OS_SEC_CONTEXTS);
	le32_put(buf + off + 8 + 4, 999); /* count, recsize, then ctx 0: type, stack */
	reseal(buf, len);
	cr_assert_eq(os_profile_read_mem(buf, len, &q, err, sizeof(err)), -EPROTO);
	cr_assert_str_eq(err, "corrupt profile: context 0 refers to a missing type or stack");
	free(buf);

	/* An access pointing at a missing context. */
	buf = full_bytes(&len);
	off = find_section(buf, len, OS_SEC_ACCESSES);
	le32_put(buf + off + 8, 7);
	reseal(buf, len);
	cr_assert_eq(os_profile_read_mem(buf, len, &q, err, sizeof(err)), -EPROTO);
	free(buf);

	/* A section length running past the end. */
	buf = full_bytes(&len);
	off = find_section(buf, len, OS_SEC_STRINGS);
	le32_put(buf + off - 8, 0xffffff00u);
	reseal(buf, len);
	cr_assert_eq(os_profile_read_mem(buf, len, &q, err, sizeof(err)), -EPROTO);
	free(buf);
}

Test(profile, unknown_sections_are_skipped)
{
	struct os_profile *p = build_full(), *q;
	char err[256];
	size_t len, nlen;
	uint8_t *buf = full_bytes(&len), *nbuf;
	static const uint8_t extra[16 + 5] = { 99, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0,
					       'h', 'e', 'l', 'l', 'o' };

	/* Insert a section of a type this version does not know before END. */
	nlen = len + sizeof(extra);
	nbuf = malloc(nlen);
	memcpy(nbuf, buf, len - END);
	memcpy(nbuf + len - END, extra, sizeof(extra));
	memcpy(nbuf + nlen - END, buf + len - END, END);
	reseal(nbuf, nlen);
	cr_assert_eq(os_profile_read_mem(nbuf, nlen, &q, err, sizeof(err)), 0, "%s", err);
	assert_profiles_eq(p, q);
	os_profile_free(q);
	os_profile_free(p);
	free(nbuf);
	free(buf);
}

/* Files of the first writers have 28-byte FRAMES records (no near_sym,
 * build_id, near_off): they read, those fields none. */
Test(profile, frames_of_28_byte_records_still_read)
{
	struct os_profile *p = build_full(), *q;
	size_t len, nlen, sec, n, rec, i;
	uint8_t *buf = full_bytes(&len), *nbuf;
	uint64_t slen;
	char err[256], s[160];

	sec = find_section(buf, len, OS_SEC_FRAMES);
	n = le32_get(buf + sec);
	rec = le32_get(buf + sec + 4);
	cr_assert_eq(rec, 48);
	nlen = len - n * (rec - 28);
	nbuf = malloc(nlen);
	cr_assert_not_null(nbuf);
	memcpy(nbuf, buf, sec + 8);
	le32_put(nbuf + sec + 4, 28);
	for (i = 0; i < n; i++)
		memcpy(nbuf + sec + 8 + i * 28, buf + sec + 8 + i * rec, 28);
	memcpy(nbuf + sec + 8 + n * 28, buf + sec + 8 + n * rec, len - (sec + 8 + n * rec));
	slen = 8 + n * 28;
	le32_put(nbuf + sec - 8, (uint32_t)slen);
	le32_put(nbuf + sec - 4, (uint32_t)(slen >> 32));
	reseal(nbuf, nlen);
	cr_assert_eq(os_profile_read_mem(nbuf, nlen, &q, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(q->nframes, p->nframes);
	for (i = 0; i < p->nframes; i++) {
		cr_assert_eq(q->frames[i].kind, p->frames[i].kind);
		cr_assert_eq(q->frames[i].name, p->frames[i].name);
		cr_assert_eq(q->frames[i].module, p->frames[i].module);
		cr_assert_eq(q->frames[i].addr, p->frames[i].addr);
		cr_assert_eq(q->frames[i].near_sym, OS_NONE);
		cr_assert_eq(q->frames[i].build_id, OS_NONE);
		cr_assert_eq(q->frames[i].near_off, 0);
	}
	/* the stripped frame prints as module+offset, without a hint */
	os_profile_frame_str(q, q->stacks[q->contexts[1].stack].frames[0], s, sizeof(s));
	cr_assert_str_eq(s, "liblzma.so.5+0x1e94e");
	os_profile_frame_str(p, p->stacks[p->contexts[1].stack].frames[0], s, sizeof(s));
	cr_assert_str_eq(s, "liblzma.so.5+0x1e94e (nearest export: lzma_code+0x4e)");
	os_profile_free(q);
	os_profile_free(p);
	free(nbuf);
	free(buf);
}

/* A near_sym or build_id naming no string is corrupt. */
Test(profile, frame_hint_ids_are_checked)
{
	struct os_profile *q;
	size_t len, sec, n, i;
	uint8_t *buf = full_bytes(&len);
	char err[256];

	sec = find_section(buf, len, OS_SEC_FRAMES);
	n = le32_get(buf + sec);
	for (int field = 0; field < 2; field++) {
		uint8_t *b2 = malloc(len);

		memcpy(b2, buf, len);
		for (i = 0; i < n; i++)
			le32_put(b2 + sec + 8 + i * 44 + 28 + 4 * field, 1u << 30);
		reseal(b2, len);
		cr_assert_eq(os_profile_read_mem(b2, len, &q, err, sizeof(err)), -EPROTO);
		free(b2);
	}
	free(buf);
}

/* The REPLICAS section is optional: without it the analysis did not run;
 * with it, every record names an existing context. */
Test(profile, replicas_section_optional_and_checked)
{
	struct os_profile *p = build_full(), *q;
	char err[256] = "";
	size_t len, off;
	uint8_t *buf;

	p->analyses = 0;
	cr_assert_eq(os_profile_write(p, tmp_path("norep.data"), err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(os_profile_read(tmp_path("norep.data"), &q, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(q->analyses & OS_AN_REPLICAS, 0);
	cr_assert_eq(q->contexts[0].replica.equivalent, 0, "counts without the section");
	os_profile_free(q);
	os_profile_free(p);

	buf = full_bytes(&len);
	cr_assert_eq(os_profile_read_mem(buf, len, &q, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(q->analyses,
		     OS_AN_REPLICAS | OS_AN_ESTIMATES | OS_AN_SLICES | OS_AN_PATHEST);
	cr_assert_eq(q->contexts[0].replica.full_differ_match, 1);
	cr_assert_eq(q->contexts[0].replica.exact_objects, 64);
	os_profile_free(q);
	off = find_section(buf, len, OS_SEC_REPLICAS);
	cr_assert_eq(le32_get(buf + off), 1, "only contexts with counts are written");
	/* a writer that knew only the first 7 counts (record of 60 bytes):
	 * the 8th reads as 0, the others as written */
	{
		size_t rec = le32_get(buf + off + 4), cut = rec - 60;
		uint8_t *b2 = malloc(len);
		uint64_t slen;

		cr_assert_eq(rec, 68);
		memcpy(b2, buf, off + 8 + 60);
		memcpy(b2 + off + 8 + 60, buf + off + 8 + rec, len - (off + 8 + rec));
		le32_put(b2 + off + 4, 60);
		slen = le32_get(b2 + off - 8) - cut;
		le32_put(b2 + off - 8, (uint32_t)slen);
		reseal(b2, len - cut);
		cr_assert_eq(os_profile_read_mem(b2, len - cut, &q, err, sizeof(err)), 0, "%s", err);
		cr_assert_eq(q->contexts[0].replica.exact_twins, 40);
		cr_assert_eq(q->contexts[0].replica.full_match, 0);
		os_profile_free(q);
		/* shorter than the 7 counts: rejected */
		le32_put(b2 + off + 4, 52);
		reseal(b2, len - cut);
		cr_assert_eq(os_profile_read_mem(b2, len - cut, &q, err, sizeof(err)), -EPROTO);
		free(b2);
	}
	le32_put(buf + off + 8, 7); /* context 7 does not exist */
	reseal(buf, len);
	cr_assert_eq(os_profile_read_mem(buf, len, &q, err, sizeof(err)), -EPROTO);
	cr_assert(strstr(err, "REPLICAS") != NULL, "%s", err);
	free(buf);
}

/* PATHEST (estimated allocation paths): records name existing contexts and
 * a known kind; a reader without the section ranks by ESTIMATES alone. */
Test(profile, pathest_section_checked)
{
	struct os_profile *q;
	char err[256] = "";
	size_t len, off;
	uint8_t *buf = full_bytes(&len);

	cr_assert_eq(os_profile_read_mem(buf, len, &q, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(q->contexts[1].pe.kind, OS_PATH_CLASS);
	cr_assert_eq(q->contexts[1].pe.path_est, -12.5);
	cr_assert_eq(q->accesses[2].path_est, -10.25);
	os_profile_free(q);
	off = find_section(buf, len, OS_SEC_PATHEST);
	cr_assert_eq(le32_get(buf + off), 2, "contexts of a kind are written");
	le32_put(buf + off + 12, 3); /* context 0: kind 3 is none */
	reseal(buf, len);
	cr_assert_eq(os_profile_read_mem(buf, len, &q, err, sizeof(err)), -EPROTO);
	cr_assert(strstr(err, "PATHEST") != NULL, "%s", err);
	le32_put(buf + off + 12, OS_PATH_SITE);
	le32_put(buf + off + 8, 9); /* context 9 does not exist */
	reseal(buf, len);
	cr_assert_eq(os_profile_read_mem(buf, len, &q, err, sizeof(err)), -EPROTO);
	free(buf);
}

/* A version 1 file (before SLICES): reads, with no slices; a version 2
 * file's slices are checked like every other reference. */
Test(profile, version_1_files_read_and_slices_checked)
{
	struct os_profile *p = build_full(), *q;
	char err[256] = "";
	size_t len, off, cut, nlen;
	uint8_t *buf = full_bytes(&len), *b1;

	cr_assert_eq(le32_get(buf + 8), OS_PROFILE_VERSION);
	off = find_section(buf, len, OS_SEC_SLICES) - 16;
	cut = 16 + le32_get(buf + off + 8);
	nlen = len - cut;
	b1 = malloc(len);
	memcpy(b1, buf, off);
	memcpy(b1 + off, buf + off + cut, len - off - cut);
	le32_put(b1 + 8, 1);
	reseal(b1, nlen);
	cr_assert_eq(os_profile_read_mem(b1, nlen, &q, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(q->analyses & OS_AN_SLICES, 0);
	cr_assert_eq(q->nslices, 0);
	cr_assert_eq(q->ncontexts, p->ncontexts);
	cr_assert_eq(q->contexts[0].samples, 70);
	os_profile_free(q);
	free(b1);

	/* slices of a version 2 file: every index checked */
	off = find_section(buf, len, OS_SEC_SLICES);
	cr_assert_eq(le32_get(buf + off), 100, "bucket width");
	cr_assert_eq(le32_get(buf + off + 4), 4, "slices");
	cr_assert_eq(le32_get(buf + off + 8), 24, "record size");
	{
		static const struct {
			size_t field;
			uint32_t v;
		} bad[] = {
			{ 0, 2 },  /* context 2 does not exist */
			{ 4, 3 },  /* access 3 does not exist */
			{ 4, 2 },  /* access 2 is of context 1 */
			{ 8, 2 },  /* thread 2 does not exist */
		};
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			uint8_t *b2 = malloc(len);

			memcpy(b2, buf, len);
			le32_put(b2 + off + 12 + bad[i].field, bad[i].v);
			reseal(b2, len);
			cr_assert_eq(os_profile_read_mem(b2, len, &q, err, sizeof(err)), -EPROTO,
				     "case %zu", i);
			cr_assert(strstr(err, "slice 0") != NULL, "%s", err);
			free(b2);
		}
		le32_put(buf + off, 0); /* a bucket width of 0 */
		reseal(buf, len);
		cr_assert_eq(os_profile_read_mem(buf, len, &q, err, sizeof(err)), -EPROTO);
		cr_assert(strstr(err, "SLICES") != NULL, "%s", err);
	}
	os_profile_free(p);
	free(buf);
}

/* Merging: slices follow their contexts, accesses and threads, are scaled
 * with the other counts, and a profile without them drops them. */
Test(profile, merge_combines_slices)
{
	struct os_profile *a = build_full(), *b = build_full(), *all = os_profile_new();
	uint64_t sum = 0;

	cr_assert_eq(os_profile_merge(all, a), 0);
	cr_assert_eq(os_profile_merge(all, b), 0);
	cr_assert(all->analyses & OS_AN_SLICES);
	cr_assert_eq(all->slice_ms, 100);
	for (uint32_t i = 0; i < all->nslices; i++) {
		const struct os_slice *s = &all->slices[i];

		cr_assert_lt(s->context, all->ncontexts);
		cr_assert_lt(s->thread, all->nthreads);
		if (s->access != OS_NONE)
			cr_assert_eq(all->accesses[s->access].context, s->context);
		if (s->bucket == 120) {
			cr_assert_eq(all->contexts[s->context].allocations, 10, "context 1's");
			cr_assert_eq(all->threads[s->thread].tid, 1235);
		}
		sum += s->samples;
	}
	cr_assert_eq(sum, 200, "both inputs' 100 samples");
	/* a wider bucket: the narrower one's buckets are widened */
	b->slice_ms = 1000;
	a->slices[3].bucket = 125; /* 12.5 s: bucket 12 of 1 s */
	os_profile_free(all);
	all = os_profile_new();
	cr_assert_eq(os_profile_merge(all, a), 0);
	cr_assert_eq(os_profile_merge(all, b), 0);
	cr_assert_eq(all->slice_ms, 1000);
	{
		bool twelve = false;

		for (uint32_t i = 0; i < all->nslices; i++) {
			cr_assert_neq(all->slices[i].bucket, 125, "not widened");
			twelve |= all->slices[i].bucket == 12;
		}
		cr_assert(twelve, "12.5 s at 100 ms is bucket 12 at 1 s");
	}
	/* an input without slices: the merge has none */
	b->analyses &= ~(uint32_t)OS_AN_SLICES;
	b->nslices = 0;
	cr_assert_eq(os_profile_merge(all, b), 0);
	cr_assert_eq(all->analyses & OS_AN_SLICES, 0);
	cr_assert_eq(all->nslices, 0);
	os_profile_free(all);
	os_profile_free(a);
	os_profile_free(b);
}

Test(profile, write_failure_leaves_no_file)
{
	struct os_profile *p = build_full();
	struct rlimit rl = { 64, 64 };
	char err[256] = "";
	struct stat st;
	int ret;

	/* A file size limit makes write() fail like a full disk would. */
	signal(SIGXFSZ, SIG_IGN);
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	ret = os_profile_write(p, tmp_path("big.data"), err, sizeof(err));
	cr_assert_eq(ret, -EFBIG);
	cr_assert(strstr(err, "cannot write profile") != NULL, "%s", err);
	cr_assert_neq(stat(tmp_path("big.data"), &st), 0);
	cr_assert_neq(stat(tmp_path("big.data.tmp"), &st), 0);
	os_profile_free(p);

	cr_assert_lt(os_profile_write(p = build_full(), "/nonexistent/dir/x.data", err,
				      sizeof(err)), 0);
	cr_assert(strstr(err, "/nonexistent/dir/x.data: cannot create") == err, "%s", err);
	os_profile_free(p);
}

/* -o /dev/null or a FIFO: the profile goes into it, and the path stays what
 * it was (a rename of FILE.tmp over it would replace the device or pipe). */
Test(profile, non_regular_output_is_written_in_place)
{
	struct os_profile *p = build_full();
	const char *fifo = tmp_path("pipe");
	char err[256] = "";
	struct stat st;
	int fds[2];
	pid_t child;

	cr_assert_eq(mkfifo(fifo, 0600), 0);
	cr_assert_eq(pipe(fds), 0);
	child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) { /* reader: counts the bytes and reports them */
		char buf[4096];
		long total = 0;
		ssize_t n;
		int fd = open(fifo, O_RDONLY);

		while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0)
			total += n;
		if (write(fds[1], &total, sizeof(total)) != sizeof(total))
			_exit(2);
		_exit(0);
	}
	close(fds[1]);
	cr_assert_eq(os_profile_write(p, fifo, err, sizeof(err)), 0, "%s", err);
	long got = 0;
	cr_assert_eq(read(fds[0], &got, sizeof(got)), (ssize_t)sizeof(got));
	close(fds[0]);
	waitpid(child, NULL, 0);
	cr_assert_gt(got, 64, "the reader got %ld bytes", got);
	cr_assert_eq(lstat(fifo, &st), 0);
	cr_assert(S_ISFIFO(st.st_mode), "the FIFO was replaced");
	cr_assert_neq(stat(tmp_path("pipe.tmp"), &st), 0);
	cr_assert_lt(os_profile_write(p, "/tmp", err, sizeof(err)), 0);
	os_profile_free(p);
}

static void put_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void assert_content(const char *path, const char *text)
{
	char buf[256] = "";
	int fd = open(path, O_RDONLY);
	ssize_t n;

	cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	cr_assert_eq(n, (ssize_t)strlen(text), "%s: %zd bytes", path, n);
	cr_assert_str_eq(buf, text);
}

/* A symlink planted at the old temporary name (out.data.tmp) or
 * at the output's own name is never written through. */
Test(profile, planted_links_are_not_written_through)
{
	struct os_profile *p = build_full(), *back = NULL;
	char victim[160], out[160], err[256] = "";
	struct stat st;

	snprintf(victim, sizeof(victim), "%s", tmp_path("victim"));
	snprintf(out, sizeof(out), "%s", tmp_path("out.data"));
	put_file(victim, "precious", 0644);
	cr_assert_eq(symlink(victim, tmp_path("out.data.tmp")), 0);
	cr_assert_eq(os_profile_write(p, out, err, sizeof(err)), 0, "%s", err);
	assert_content(victim, "precious");
	cr_assert_eq(os_profile_read(out, &back, err, sizeof(err)), 0, "%s", err);
	os_profile_free(back);
	cr_assert_eq(lstat(tmp_path("out.data.tmp"), &st), 0);
	cr_assert(S_ISLNK(st.st_mode), "the planted link is left alone");

	/* a link at the output name that is not ours: replaced, not followed */
	cr_assert_eq(unlink(out), 0);
	cr_assert_eq(symlink(victim, out), 0);
	cr_assert_eq(lchown(out, 65534, 65534), 0);
	cr_assert_eq(os_profile_write(p, out, err, sizeof(err)), 0, "%s", err);
	assert_content(victim, "precious");
	cr_assert_eq(lstat(out, &st), 0);
	cr_assert(S_ISREG(st.st_mode), "the link was replaced by the profile");
	os_profile_free(p);
}

/* 0600 whatever the umask allows (as perf.data); the previous one is kept
 * as FILE.old; no temporary file is left behind. */
Test(profile, written_0600_and_previous_kept_as_old)
{
	struct os_profile *p = build_full(), *back = NULL;
	char out[160], old[160], err[256] = "";
	struct stat st;
	mode_t um = umask(022);

	snprintf(out, sizeof(out), "%s", tmp_path("m.data"));
	snprintf(old, sizeof(old), "%s", tmp_path("m.data.old"));
	put_file(out, "previous", 0644);
	cr_assert_eq(os_profile_write(p, out, err, sizeof(err)), 0, "%s", err);
	umask(um);
	cr_assert_eq(stat(out, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0600, "mode %o", st.st_mode & 07777);
	assert_content(old, "previous");
	cr_assert_eq(os_profile_read(out, &back, err, sizeof(err)), 0, "%s", err);
	os_profile_free(back);
	/* the directory holds the profile and its .old, nothing else */
	int n = 0;
	FILE *ls;
	char cmd[256], line[256];

	snprintf(cmd, sizeof(cmd), "ls -A %s", tmpdir);
	ls = popen(cmd, "r");
	cr_assert_not_null(ls);
	while (fgets(line, sizeof(line), ls))
		n++;
	pclose(ls);
	cr_assert_eq(n, 2, "%d entries in the directory", n);
	os_profile_free(p);
}

/* A FIFO with no reader, or one planted by another user: one clear error
 * at once, never a hang; the FIFO stays. A device other than /dev/null is
 * refused, /dev/null accepted. */
Test(profile, unusable_special_outputs_refused_without_hanging, .timeout = 5)
{
	struct os_profile *p = build_full();
	char fifo[160], err[256] = "";
	struct stat st;

	snprintf(fifo, sizeof(fifo), "%s", tmp_path("fifo"));
	cr_assert_eq(mkfifo(fifo, 0666), 0);
	cr_assert_eq(os_profile_write(p, fifo, err, sizeof(err)), -ENXIO, "%s", err);
	cr_assert(strstr(err, "FIFO that nobody reads") != NULL, "%s", err);
	cr_assert_eq(os_profile_check_output(fifo, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(chown(fifo, 65534, 65534), 0);
	cr_assert_eq(os_profile_check_output(fifo, err, sizeof(err)), -EPERM);
	cr_assert(strstr(err, "FIFO owned by uid 65534") != NULL, "%s", err);
	cr_assert_lt(os_profile_write(p, fifo, err, sizeof(err)), 0);
	cr_assert_eq(lstat(fifo, &st), 0);
	cr_assert(S_ISFIFO(st.st_mode));

	cr_assert_eq(os_profile_write(p, "/dev/null", err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(os_profile_check_output("/dev/zero", err, sizeof(err)), -EBADFD);
	cr_assert(strstr(err, "/dev/zero: is a device") == err, "%s", err);
	cr_assert_lt(os_profile_write(p, "/dev/zero", err, sizeof(err)), 0);
	os_profile_free(p);
}

/* What the output check catches before a run, leaving nothing. */
Test(profile, output_checked_before_a_run)
{
	char err[256] = "", ro[160];
	struct stat st;

	cr_assert_eq(os_profile_check_output(tmp_path("new.data"), err, sizeof(err)), 0, "%s", err);
	cr_assert_neq(stat(tmp_path("new.data"), &st), 0, "the check created the file");
	cr_assert_eq(os_profile_check_output("/nonexistent/dir/x.data", err, sizeof(err)), -ENOENT);
	cr_assert(strstr(err, "/nonexistent/dir/x.data: cannot create: directory /nonexistent/dir")
		  == err, "%s", err);
	cr_assert_eq(os_profile_check_output(tmpdir, err, sizeof(err)), -EISDIR);
	cr_assert(strstr(err, "is a directory") != NULL, "%s", err);
	cr_assert_eq(os_profile_check_output("", err, sizeof(err)), -EINVAL);
	/* an unwritable directory (as a user: root may write anywhere) */
	snprintf(ro, sizeof(ro), "%s", tmp_path("ro"));
	cr_assert_eq(mkdir(ro, 0555), 0);
	if (geteuid() != 0) {
		cr_assert_eq(os_profile_check_output(ut_path(ro, "x.data"), err, sizeof(err)),
			     -EACCES);
		cr_assert(strstr(err, "Permission denied") != NULL, "%s", err);
	}
}

Test(profile, merge_twice_doubles_counts)
{
	struct os_profile *p = build_full(), *m = os_profile_new();
	uint32_t i;

	cr_assert_eq(os_profile_merge(m, p), 0);
	cr_assert_eq(os_profile_merge(m, p), 0);
	cr_assert_eq(m->ncontexts, p->ncontexts);
	cr_assert_eq(m->naccesses, p->naccesses);
	cr_assert_eq(m->nthreads, p->nthreads);
	for (i = 0; i < p->ncontexts; i++) {
		cr_assert_eq(m->contexts[i].samples, 2 * p->contexts[i].samples);
		cr_assert_eq(m->contexts[i].bytes, 2 * p->contexts[i].bytes);
		cr_assert_eq(m->contexts[i].allocations, 2 * p->contexts[i].allocations);
		cr_assert_eq(m->contexts[i].metrics[OS_M_REMOTE],
			     2 * p->contexts[i].metrics[OS_M_REMOTE]);
		cr_assert_eq(m->contexts[i].replica.equivalent,
			     2 * p->contexts[i].replica.equivalent);
		cr_assert_eq(m->contexts[i].replica.exact_twins,
			     2 * p->contexts[i].replica.exact_twins);
	}
	cr_assert_eq(m->analyses,
		     OS_AN_REPLICAS | OS_AN_ESTIMATES | OS_AN_SLICES | OS_AN_PATHEST);
	for (i = 0; i < p->ncontexts; i++) {
		cr_assert_eq(m->contexts[i].samples_est, 2 * p->contexts[i].samples_est);
		cr_assert_eq(m->contexts[i].pe.path_est, 2 * p->contexts[i].pe.path_est);
		cr_assert_eq(m->contexts[i].pe.seen, 2 * p->contexts[i].pe.seen);
		cr_assert_eq(m->contexts[i].pe.kind, p->contexts[i].pe.kind);
		cr_assert_eq(m->contexts[i].pe.class_sites, p->contexts[i].pe.class_sites);
	}
	for (i = 0; i < p->naccesses; i++)
		cr_assert_eq(m->accesses[i].path_est, 2 * p->accesses[i].path_est);
	cr_assert_eq(m->est.samples_attributed, 2 * p->est.samples_attributed);
	cr_assert_eq(m->est.samples_java_attributed, 2 * p->est.samples_java_attributed);
	for (i = 0; i < p->naccesses; i++) {
		cr_assert_eq(m->accesses[i].samples, 2 * p->accesses[i].samples);
		cr_assert_eq(m->accesses[i].samples_est, 2 * p->accesses[i].samples_est);
	}
	for (i = 0; i < p->nthreads; i++)
		cr_assert_eq(m->threads[i].samples, 2 * p->threads[i].samples);
	cr_assert_eq(m->c.samples_total, 2 * p->c.samples_total);
	cr_assert_eq(m->c.truncated_paths, 2 * p->c.truncated_paths);
	cr_assert_eq(m->meta.npids, 2);
	cr_assert_eq(m->meta.nnotes, 1);
	cr_assert_eq(m->meta.argc, 3);
	cr_assert_str_eq(os_profile_str(m, m->meta.argv[2]), "Bench");
	cr_assert_str_eq(os_profile_str(m, m->meta.sampler), "soft");
	cr_assert_eq(m->meta.duration_s, 12.5);
	os_profile_free(p);
	os_profile_free(m);
}

/* A frame is a call site, not a line: three calls written on one
 * line are three contexts after a merge, told apart by the column DWARF
 * gives (and shown with it), or by their offset where there is no column;
 * the same call site in two profiles still meets. */
Test(profile, merge_keeps_call_sites_of_one_line_apart)
{
	struct os_profile *a = os_profile_new(), *m = os_profile_new();
	uint32_t f[5], st[5];
	char buf[128];

	f[0] = ut_frame_col(a, OS_FRAME_NATIVE, "main", "/bin/app", "one.c", 10, 7, 0x1189);
	f[1] = ut_frame_col(a, OS_FRAME_NATIVE, "main", "/bin/app", "one.c", 10, 21, 0x1196);
	f[2] = ut_frame_col(a, OS_FRAME_NATIVE, "main", "/bin/app", "one.c", 10, 35, 0x11a3);
	/* no column (DWARF without one): the module offset is the call site */
	f[3] = ut_frame(a, OS_FRAME_NATIVE, "main", "/bin/app", "two.c", 20, 0x2000);
	f[4] = ut_frame(a, OS_FRAME_NATIVE, "main", "/bin/app", "two.c", 20, 0x2010);
	for (int i = 0; i < 5; i++) {
		st[i] = os_profile_stack(a, &f[i], 1);
		os_profile_add_context(a, &(struct os_context){ .type = OS_NONE, .stack = st[i],
								.allocations = 1, .bytes = 4096,
								.samples = (uint64_t)i + 1 });
	}
	cr_assert_eq(os_profile_merge(m, a), 0);
	cr_assert_eq(m->ncontexts, 5, "call sites of one line merged: %u contexts", m->ncontexts);
	os_profile_frame_str(m, m->stacks[m->contexts[1].stack].frames[0], buf, sizeof(buf));
	cr_assert_str_eq(buf, "main (one.c:10:21)");
	os_profile_frame_str(m, m->stacks[m->contexts[3].stack].frames[0], buf, sizeof(buf));
	cr_assert_str_eq(buf, "main (two.c:20)");
	/* merged again (a second run of the same binary): each meets itself */
	cr_assert_eq(os_profile_merge(m, a), 0);
	cr_assert_eq(m->ncontexts, 5);
	for (int i = 0; i < 5; i++)
		cr_assert_eq(m->contexts[i].samples, 2 * ((uint64_t)i + 1));
	os_profile_free(a);
	os_profile_free(m);
}

/* Two profiles that intern in different orders: equal contexts meet. */
Test(profile, merge_matches_contexts_by_strings)
{
	struct os_profile *a = os_profile_new(), *b = os_profile_new();
	uint32_t fa, fb, fb2, sa, sb, sb2;
	char buf[128];

	os_profile_string(a, "padding");
	fa = ut_frame_col(a, OS_FRAME_NATIVE, "alloc_node", "/bin/app", "tree.c", 10, 7, 0x100);
	sa = os_profile_stack(a, &fa, 1);
	os_profile_add_context(a, &(struct os_context){ .type = os_profile_string(a, "node"),
							.stack = sa, .allocations = 1, .bytes = 64,
							.samples = 5 });
	os_profile_add_access(a, &(struct os_access){ .context = 0, .stack = sa, .samples = 5 });
	os_profile_add_pid(a, 1);
	a->meta.duration_s = 3;

	/* Same strings, line and column, another offset (another build of
	 * the same source): still the same call site, the same context. */
	fb2 = ut_frame(b, OS_FRAME_NATIVE, "other", "/bin/app", NULL, 0, 0x200);
	sb2 = os_profile_stack(b, &fb2, 1);
	fb = ut_frame_col(b, OS_FRAME_NATIVE, "alloc_node", "/bin/app", "tree.c", 10, 7, 0x104);
	sb = os_profile_stack(b, &fb, 1);
	os_profile_add_context(b, &(struct os_context){ .type = OS_NONE, .stack = sb2,
							.allocations = 2, .bytes = 10, .samples = 1 });
	os_profile_add_context(b, &(struct os_context){ .type = os_profile_string(b, "node"),
							.stack = sb, .allocations = 3, .bytes = 192,
							.samples = 7 });
	os_profile_add_access(b, &(struct os_access){ .context = 1, .stack = sb, .samples = 7 });
	os_profile_add_pid(b, 2);
	b->meta.duration_s = 5;

	cr_assert_eq(os_profile_merge(a, b), 0);
	cr_assert_eq(a->ncontexts, 2);
	cr_assert_eq(a->contexts[0].samples, 12);
	cr_assert_eq(a->contexts[0].allocations, 4);
	cr_assert_eq(a->contexts[0].bytes, 256);
	cr_assert_eq(a->contexts[1].samples, 1);
	cr_assert_eq(a->contexts[1].type, OS_NONE);
	cr_assert_eq(a->naccesses, 1);
	cr_assert_eq(a->accesses[0].samples, 12);
	cr_assert_eq(a->meta.npids, 2);
	cr_assert_eq(a->meta.duration_s, 5);
	os_profile_frame_str(a, a->stacks[a->contexts[1].stack].frames[0], buf, sizeof(buf));
	cr_assert_str_eq(buf, "other");
	os_profile_free(a);
	os_profile_free(b);
}

Test(profile, frame_strings)
{
	struct os_profile *p = os_profile_new();
	char buf[160];
	struct {
		uint32_t id;
		const char *want;
	} cases[] = {
		{ ut_frame(p, OS_FRAME_JAVA, "Bench.makeData", NULL, "Bench.java", 12, 0),
		  "Bench.makeData(Bench.java:12)" },
		{ ut_frame(p, OS_FRAME_JAVA, "Bench.run", NULL, NULL, 0, 0), "Bench.run" },
		{ ut_frame(p, OS_FRAME_JAVA, "Bench.x", NULL, "src/Bench.java", 0, 0),
		  "Bench.x(Bench.java)" },
		{ ut_frame(p, OS_FRAME_NATIVE, "fill", "/bin/app", "/src/app/fill.c", 33, 0x40),
		  "fill (fill.c:33)" },
		{ ut_frame(p, OS_FRAME_NATIVE, "memcpy", "/lib/libc.so.6", NULL, 0, 0x40), "memcpy" },
		{ ut_frame(p, OS_FRAME_NATIVE, NULL, "/lib/libfoo.so", NULL, 0, 0x1a2b),
		  "libfoo.so+0x1a2b" },
		{ stripped_frame(p, "/usr/lib/liblzma.so.5.4.1", 0x16928, "lzma_mf_is_supported",
				 0xfb8, "72a44f"),
		  "liblzma.so.5.4.1+0x16928 (nearest export: lzma_mf_is_supported+0xfb8)" },
		{ stripped_frame(p, "/usr/lib/liblzma.so.5.4.1", 0x2000, NULL, 0, NULL),
		  "liblzma.so.5.4.1+0x2000" },
		{ ut_frame(p, OS_FRAME_NATIVE, NULL, NULL, NULL, 0, 0xdeadbeef), "[unknown] 0xdeadbeef" },
		{ ut_frame(p, OS_FRAME_UNKNOWN, NULL, NULL, NULL, 0, 0x7f00aa), "[unknown] 0x7f00aa" },
		{ ut_frame(p, OS_FRAME_JAVA, NULL, NULL, NULL, 0, 0x1234), "[unknown] 0x1234" },
		{ ut_frame(p, OS_FRAME_KERNEL, "clear_page", NULL, NULL, 0, 0), "clear_page [kernel]" },
		{ ut_frame(p, OS_FRAME_SYNTHETIC, "[allocated before attach]", NULL, NULL, 0, 0),
		  "[allocated before attach]" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		os_profile_frame_str(p, cases[i].id, buf, sizeof(buf));
		cr_assert_str_eq(buf, cases[i].want);
	}
	os_profile_frame_str(p, 9999, buf, sizeof(buf));
	cr_assert_str_eq(buf, "[invalid frame 9999]");
	os_profile_frame_str(p, cases[0].id, buf, 6);
	cr_assert_str_eq(buf, "Bench");
	os_profile_free(p);
}

/* The ESTIMATES section is optional: a profile without it (native, exact
 * mode, or written before it existed) reads with no estimates; with it,
 * every record names an existing context / access and holds a finite,
 * non-negative number. */
Test(profile, estimates_section_optional_and_checked)
{
	struct os_profile *p = build_full(), *q;
	char err[256] = "";
	size_t len, off;
	uint8_t *buf;
	double d;

	p->analyses &= ~(uint32_t)OS_AN_ESTIMATES;
	cr_assert_eq(os_profile_write(p, tmp_path("noest.data"), err, sizeof(err)), 0, "%s", err);
	buf = slurp(tmp_path("noest.data"), &len);
	for (off = HDR; off + 16 <= len; off += 16 + le32_get(buf + off + 8))
		cr_assert_neq(le32_get(buf + off), OS_SEC_ESTIMATES, "no section without estimates");
	free(buf);
	cr_assert_eq(os_profile_read(tmp_path("noest.data"), &q, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(q->analyses & OS_AN_ESTIMATES, 0);
	cr_assert_eq(q->contexts[0].samples_est, 0);
	cr_assert_eq(q->contexts[0].samples, 70, "counts unchanged");
	cr_assert_eq(q->est.samples_attributed, 0);
	os_profile_free(q);
	os_profile_free(p);

	buf = full_bytes(&len);
	cr_assert_eq(os_profile_read_mem(buf, len, &q, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(q->contexts[0].samples_est, 280.5);
	cr_assert_eq(q->accesses[1].samples_est, 40.25);
	cr_assert_eq(q->est.samples_java_attributed, 280.5);
	os_profile_free(q);
	off = find_section(buf, len, OS_SEC_ESTIMATES);
	cr_assert_neq(off, 0);
	/* layout: f64 attributed, f64 java, u32 n, u32 rec, records */
	cr_assert_eq(le32_get(buf + off + 16), 2, "contexts with estimates");
	cr_assert_eq(le32_get(buf + off + 20), 12);
	/* a context index out of range */
	le32_put(buf + off + 24, 9);
	reseal(buf, len);
	cr_assert_eq(os_profile_read_mem(buf, len, &q, err, sizeof(err)), -EPROTO);
	cr_assert(strstr(err, "ESTIMATES") != NULL, "%s", err);
	le32_put(buf + off + 24, 0);
	/* a negative estimate */
	d = -1;
	memcpy(buf + off + 28, &d, 8);
	reseal(buf, len);
	cr_assert_eq(os_profile_read_mem(buf, len, &q, err, sizeof(err)), -EPROTO);
	/* a count that overruns the section */
	d = 280.5;
	memcpy(buf + off + 28, &d, 8);
	le32_put(buf + off + 16, 1000);
	reseal(buf, len);
	cr_assert_eq(os_profile_read_mem(buf, len, &q, err, sizeof(err)), -EPROTO);
	le32_put(buf + off + 16, 2);
	reseal(buf, len);
	cr_assert_eq(os_profile_read_mem(buf, len, &q, err, sizeof(err)), 0, "%s", err);
	os_profile_free(q);
	free(buf);
}

/* Variances of the estimates (version 3): the contexts' ESTIMATES records
 * carry one, checked (finite, not negative) where they are read; records
 * without one (earlier files) read as not stated; PATHEST's evidence the
 * same. A merge sums them, scaled by the square of the factor, and states
 * them only when every input with estimates did. */
Test(profile, estimate_variances_round_trip_and_checked)
{
	struct os_profile *p = build_full(), *q, *m, *full;
	char err[256] = "";
	size_t len, off;
	uint8_t *buf;
	double d;

	p->contexts[0].samples_var = 144;
	p->contexts[1].samples_var = 9;
	p->contexts[0].pe.evidence = 0;
	p->contexts[1].pe.evidence = 0;
	p->analyses |= OS_AN_EST_VAR;
	cr_assert_eq(os_profile_write(p, tmp_path("var.data"), err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(os_profile_read(tmp_path("var.data"), &q, err, sizeof(err)), 0, "%s", err);
	cr_assert(q->analyses & OS_AN_EST_VAR);
	cr_assert_eq(q->contexts[0].samples_var, 144);
	cr_assert_eq(q->contexts[1].samples_var, 9);
	cr_assert_eq(q->contexts[0].pe.evidence, 0, "volume alone: 0, not NaN");
	m = os_profile_new();
	cr_assert_eq(os_profile_merge(m, q), 0);
	cr_assert_eq(os_profile_merge(m, q), 0);
	cr_assert(m->analyses & OS_AN_EST_VAR);
	cr_assert_eq(m->contexts[0].samples_var, 288, "variances add");
	os_profile_free(m);
	m = os_profile_new();
	cr_assert_eq(os_profile_merge(m, q), 0);
	full = build_full(); /* estimates, no variances */
	cr_assert_eq(os_profile_merge(m, full), 0);
	cr_assert_eq(m->analyses & OS_AN_EST_VAR, 0, "not stated by every input");
	os_profile_free(full);
	os_profile_free(m);
	os_profile_free(q);

	buf = slurp(tmp_path("var.data"), &len);
	off = find_section(buf, len, OS_SEC_ESTIMATES);
	cr_assert_eq(le32_get(buf + off + 20), 20, "index, estimate, variance");
	d = -1; /* a negative variance */
	memcpy(buf + off + 24 + 12, &d, 8);
	reseal(buf, len);
	cr_assert_eq(os_profile_read_mem(buf, len, &q, err, sizeof(err)), -EPROTO);
	cr_assert(strstr(err, "ESTIMATES") != NULL, "%s", err);
	d = NAN;
	memcpy(buf + off + 24 + 12, &d, 8);
	reseal(buf, len);
	cr_assert_eq(os_profile_read_mem(buf, len, &q, err, sizeof(err)), -EPROTO);
	free(buf);

	/* records of the earlier layout: no variances, evidence not stated */
	buf = full_bytes(&len);
	cr_assert_eq(os_profile_read_mem(buf, len, &q, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(q->analyses & OS_AN_EST_VAR, 0);
	os_profile_free(q);
	off = find_section(buf, len, OS_SEC_PATHEST);
	cr_assert_eq(le32_get(buf + off + 4), 44, "PATHEST records with evidence");
	free(buf);
	os_profile_free(p);
}

/* Merging a profile with estimates and one without: the one without
 * counts its samples (weight 1), in either order. */
Test(profile, merge_estimates_with_plain_profile)
{
	struct os_profile *est = build_full(), *plain = build_full(), *m;

	plain->analyses &= ~(uint32_t)OS_AN_ESTIMATES;
	for (int order = 0; order < 2; order++) {
		m = os_profile_new();
		cr_assert_eq(os_profile_merge(m, order ? plain : est), 0);
		cr_assert_eq(os_profile_merge(m, order ? est : plain), 0);
		cr_assert(m->analyses & OS_AN_ESTIMATES);
		cr_assert_eq(m->contexts[0].samples, 140);
		cr_assert_eq(m->contexts[0].samples_est, 280.5 + 70, "order %d: %f", order,
			     m->contexts[0].samples_est);
		cr_assert_eq(m->contexts[1].samples_est, 60);
		cr_assert_eq(m->accesses[0].samples_est, 240.25 + 60);
		cr_assert_eq(m->est.samples_attributed, 310.5 + (double)est->c.samples_attributed);
		cr_assert_eq(m->est.samples_java_attributed,
			     280.5 + (double)est->c.samples_java_attributed);
		os_profile_free(m);
	}
	m = os_profile_new();
	cr_assert_eq(os_profile_merge(m, plain), 0);
	cr_assert_eq(m->analyses & OS_AN_ESTIMATES, 0, "no estimates from plain profiles");
	os_profile_free(m);
	os_profile_free(est);
	os_profile_free(plain);
}

/* Which metrics a profile measured is derived from its sampler:
 * the software sampler measures no latency and no data source, so its
 * metric slots (here non-zero, as a buggy or foreign writer could leave
 * them) are not measured; a sampler objscope does not know measured
 * nothing it can vouch for. */
Test(profile, metrics_measured_from_sampler)
{
	struct os_profile *p = build_full(), *m = os_profile_new();

	cr_assert_eq(os_sampler_metrics("soft"), 0);
	cr_assert_eq(os_sampler_metrics("no-such-sampler"), 0);
	cr_assert_eq(os_sampler_metrics(NULL), 0);
	cr_assert_eq(os_profile_metrics(p), 0);
	cr_assert_eq(os_profile_metrics(m), 0, "no sampler recorded: nothing measured");
	cr_assert_eq(os_profile_merge(m, p), 0);
	cr_assert_eq(os_profile_metrics(m), 0);
	cr_assert_eq(m->merge.unmeasured, OS_M_ALL);
	os_profile_free(p);
	os_profile_free(m);
}

/* The note os_profile_merge left about periods, or NULL; asserts there is
 * at most one. */
static const char *period_note(const struct os_profile *m)
{
	const char *found = NULL;

	for (uint32_t i = 0; i < m->meta.nnotes; i++) {
		const char *n = os_profile_str(m, m->meta.notes[i]);

		if (strncmp(n, "merged ", 7) == 0) {
			cr_assert_null(found, "two merge notes: '%s' and '%s'", found, n);
			found = n;
		}
	}
	return found;
}

static struct os_profile *at_period(uint64_t period, uint64_t freq)
{
	struct os_profile *p = build_full();

	p->meta.period = period;
	p->meta.freq = freq;
	return p;
}

/* Profiles taken at different -F are normalised, in either
 * order: every sample count scaled to the smallest period (a sample at 2P
 * counts 2 at P); allocations, bytes, replica and event counters are not. */
Test(profile, merge_scales_sample_counts_to_the_smallest_period)
{
	for (int order = 0; order < 2; order++) {
		struct os_profile *fine = at_period(1000000, 1000), *coarse = at_period(2000000, 500);
		struct os_profile *m = os_profile_new();
		const char *note;

		cr_assert_eq(os_profile_merge(m, order ? coarse : fine), 0);
		cr_assert_eq(os_profile_merge(m, order ? fine : coarse), 0);
		cr_assert_eq(m->meta.period, 1000000, "order %d", order);
		cr_assert_eq(m->meta.freq, 0, "no single frequency was requested");
		cr_assert_eq(m->contexts[0].samples, 70 + 2 * 70, "order %d", order);
		cr_assert_eq(m->contexts[1].samples, 30 + 2 * 30);
		cr_assert_eq(m->contexts[0].samples_est, 280.5 * 3);
		cr_assert_eq(m->contexts[0].metrics[OS_M_REMOTE], 3 * 3);
		cr_assert_eq(m->accesses[0].samples, 60 * 3);
		cr_assert_eq(m->accesses[0].samples_est, 240.25 * 3);
		cr_assert_eq(m->threads[0].samples, 90 * 3);
		cr_assert_eq(m->c.samples_total, 100 * 3);
		cr_assert_eq(m->c.samples_attributed, fine->c.samples_attributed * 3);
		cr_assert_eq(m->c.lost, fine->c.lost * 3);
		cr_assert_eq(m->c.samples_jit, fine->c.samples_jit * 3);
		cr_assert_eq(m->est.samples_attributed, 310.5 * 3);
		/* not samples: summed as they are */
		cr_assert_eq(m->contexts[0].allocations, 20);
		cr_assert_eq(m->contexts[0].bytes, 16000);
		cr_assert_eq(m->contexts[0].replica.equivalent, 180);
		cr_assert_eq(m->c.tracked_bytes, fine->c.tracked_bytes * 2);
		cr_assert_eq(m->c.gc_count, fine->c.gc_count * 2);
		cr_assert_eq(m->c.dropped_events, fine->c.dropped_events * 2);
		cr_assert_eq(m->merge.inputs, 2);
		cr_assert(m->merge.scaled && !m->merge.inexact && !m->merge.raw);
		cr_assert_eq(m->merge.period_min, 1000000);
		cr_assert_eq(m->merge.period_max, 2000000);
		note = period_note(m);
		cr_assert_not_null(note, "the merge is not said");
		cr_assert_str_eq(note, "merged 2 profiles sampled at different periods (1000000 to"
				       " 2000000 task-clock): sample counts scaled to period 1000000"
				       " (a sample at period N counts N/1000000)");
		os_profile_free(m);
		os_profile_free(fine);
		os_profile_free(coarse);
	}
}

/* A third input at a smaller period rescales what was merged; the note is
 * replaced, not repeated. */
Test(profile, merge_rescales_when_a_finer_period_comes)
{
	struct os_profile *p2 = at_period(2000000, 500), *p1 = at_period(1000000, 1000);
	struct os_profile *p05 = at_period(500000, 2000), *m = os_profile_new();

	cr_assert_eq(os_profile_merge(m, p2), 0);
	cr_assert_eq(os_profile_merge(m, p1), 0);
	cr_assert_eq(os_profile_merge(m, p05), 0);
	cr_assert_eq(m->meta.period, 500000);
	cr_assert_eq(m->contexts[0].samples, 70 * 4 + 70 * 2 + 70);
	cr_assert_eq(m->c.samples_total, 100 * 7);
	cr_assert_eq(m->threads[1].samples, 10 * 7);
	cr_assert_eq(m->meta.nnotes, 2, "the sampler note and one merge note");
	cr_assert_str_eq(period_note(m), "merged 3 profiles sampled at different periods (500000"
					 " to 2000000 task-clock): sample counts scaled to period"
					 " 500000 (a sample at period N counts N/500000)");
	os_profile_free(m);
	os_profile_free(p2);
	os_profile_free(p1);
	os_profile_free(p05);
}

/* A ratio that is not whole (-F 1000 and a period of 1.5 ms) is rounded to
 * the nearest, and the note says so. */
Test(profile, merge_rounds_a_fractional_ratio)
{
	struct os_profile *a = at_period(1000000, 1000), *b = at_period(1500000, 0);
	struct os_profile *m = os_profile_new();

	cr_assert_eq(os_profile_merge(m, a), 0);
	cr_assert_eq(os_profile_merge(m, b), 0);
	cr_assert_eq(m->meta.period, 1000000);
	cr_assert_eq(m->contexts[0].samples, 70 + 105);
	cr_assert_eq(m->c.samples_addressed, 101 + 152, "151.5 rounds to 152");
	cr_assert(m->merge.inexact);
	cr_assert(strstr(period_note(m), "counts N/1000000, rounded)") != NULL, "%s",
		  period_note(m));
	os_profile_free(m);
	os_profile_free(a);
	os_profile_free(b);
}

/* Samples of different events, or of an unknown period, are not
 * comparable: summed as they are, and said. Equal periods: nothing said. */
Test(profile, merge_of_incomparable_periods_is_raw_and_said)
{
	struct os_profile *a = at_period(1000000, 1000), *b = at_period(2000000, 500);
	struct os_profile *z = at_period(0, 0), *m = os_profile_new();

	b->meta.event = os_profile_string(b, "cycles");
	cr_assert_eq(os_profile_merge(m, a), 0);
	cr_assert_eq(os_profile_merge(m, b), 0);
	cr_assert_eq(m->meta.period, 1000000, "the first profile's");
	cr_assert_eq(m->contexts[0].samples, 140);
	cr_assert(m->merge.raw && !m->merge.scaled);
	cr_assert(strstr(period_note(m), "not comparable") != NULL, "%s", period_note(m));
	os_profile_free(m);

	m = os_profile_new();
	cr_assert_eq(os_profile_merge(m, a), 0);
	cr_assert_eq(os_profile_merge(m, z), 0);
	cr_assert_eq(m->contexts[0].samples, 140);
	cr_assert(m->merge.raw);
	cr_assert_not_null(period_note(m));
	os_profile_free(m);

	m = os_profile_new();
	cr_assert_eq(os_profile_merge(m, a), 0);
	cr_assert_eq(os_profile_merge(m, a), 0);
	cr_assert_eq(m->merge.inputs, 2);
	cr_assert(!m->merge.raw && !m->merge.scaled);
	cr_assert_null(period_note(m));
	cr_assert_eq(m->meta.freq, 1000);
	os_profile_free(m);
	os_profile_free(a);
	os_profile_free(b);
	os_profile_free(z);
}

/* OVERHEAD (16): the figures round-trip, NaN (not measured)
 * included; a merge keeps a lone input's figures and drops them once a
 * second run comes in (one run's figures). */
Test(profile, overhead_section_round_trips_one_run_only)
{
	struct os_profile *p = build_full(), *q = NULL, *all = os_profile_new();
	char err[256] = "";

	p->ovh = (struct os_overhead){ .max_pct = 2, .spent_pct = 1.9, .target_cpu_s = 12.5,
				       .collector_cpu_s = 0.4, .collector_sampling_s = 0.2,
				       .fixed_pct = 1.6, .kernel_s = 0.05, .hooks_s = NAN,
				       .sample_ns = 21000, .calibration_s = 0.01,
				       .sampled_share = 0.3, .samples_per_s = 400,
				       .samples_per_cpu_s = 380, .settled_spent_pct = 0.4,
				       .calibrated = 1, .steered = 1 };
	p->analyses |= OS_AN_OVERHEAD;
	cr_assert_eq(os_profile_write(p, tmp_path("ovh.data"), err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(os_profile_read(tmp_path("ovh.data"), &q, err, sizeof(err)), 0, "%s", err);
	cr_assert(q->analyses & OS_AN_OVERHEAD);
	cr_assert(isnan(q->ovh.hooks_s), "not measured stays not measured");
	q->ovh.hooks_s = p->ovh.hooks_s = 0; /* NaN != NaN: the rest compared as bytes */
	cr_assert_arr_eq(&q->ovh, &p->ovh, sizeof(p->ovh));
	cr_assert_eq(os_profile_merge(all, q), 0);
	cr_assert(all->analyses & OS_AN_OVERHEAD, "a lone input keeps its figures");
	cr_assert_float_eq(all->ovh.samples_per_s, 400, 1e-9);
	cr_assert_eq(os_profile_merge(all, q), 0);
	cr_assert_eq(all->analyses & OS_AN_OVERHEAD, 0, "two runs: no one run's figures");
	os_profile_free(all);
	os_profile_free(p);
	os_profile_free(q);
}
