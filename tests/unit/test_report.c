/* test_report.c - `objscope report`: JSON field by field, the text golden
 * file, merging several inputs, errors. Set OBJSCOPE_UPDATE_GOLDEN=1 to
 * rewrite tests/golden/report_small.txt from the current output. */
#include <criterion/criterion.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/profile.h"
#include "report/report.h"
#include "tests/unit/unit_helpers.h"

#define GOLDEN "tests/golden/report_small.txt"

static char rdir[64];

static void mk_rdir(void)
{
	ut_mkdtemp(rdir, sizeof(rdir), "report");
}

static void rm_rdir(void)
{
	ut_rmtree(rdir);
}

static char *rpath(const char *name)
{
	return ut_path(rdir, name);
}

static uint32_t java(struct os_profile *p, const char *m, const char *file, uint32_t line)
{
	return ut_frame(p, OS_FRAME_JAVA, m, NULL, file, line, 0);
}

static void thread(struct os_profile *p, uint32_t kind, const char *name, uint32_t tid,
		   uint64_t samples)
{
	os_profile_add_thread(p, &(struct os_thread){ .kind = kind,
						      .name = os_profile_string(p, name),
						      .pid = 4242, .tid = tid, .samples = samples });
}

/* The fixed profile of the golden file: 4 contexts added out of rank order. */
static struct os_profile *build_small(void)
{
	struct os_profile *p = os_profile_new();
	char *argv[] = { "java", "-XX:+PreserveFramePointer", "Bench" };
	uint32_t main_f, fb[10], sa, sb, sc, sd, s_kernel, s_sum, ca, cb, cc;
	uint64_t acc_b[] = { 100, 20, 10, 8, 6, 4, 2 };
	char name[32];
	int i;

	os_profile_set_argv(p, 3, argv);
	os_profile_add_pid(p, 4242);
	os_profile_add_note(p, "no PMU: software sampler, no load latency");
	p->meta.duration_s = 2.5;
	p->meta.sampler = os_profile_string(p, "soft");
	p->meta.event = os_profile_string(p, "task-clock");
	p->meta.period = 1000000;
	p->meta.freq = 1000;
	p->meta.min_size = 256;
	p->meta.mode = os_profile_string(p, "record");
	p->meta.hostname = os_profile_string(p, "testhost");
	p->meta.start_time = 1700000000;
	p->c = (struct os_counters){
		.samples_total = 1000, .samples_addressed = 800, .samples_heap = 600,
		.samples_attributed = 500, .lost = 2, .dropped_events = 1,
		.unaddressed_nomem = 150, .unaddressed_clobbered = 40,
		.unaddressed_undecodable = 10, .small_allocs = 5000, .small_bytes = 320000,
		.tracked_allocs = 301, .tracked_bytes = 3001000, .frees = 100, .gc_count = 3,
		.moves = 50,
	};

	main_f = java(p, "Bench.main", "Bench.java", 40);
	sa = os_profile_stack(p, (uint32_t[]){ java(p, "Bench.makeData", "Bench.java", 12), main_f },
			      2);
	fb[0] = ut_frame(p, OS_FRAME_NATIVE, "malloc", "/lib/x86_64-linux-gnu/libc.so.6", NULL, 0, 0x9a0f0);
	fb[1] = ut_frame(p, OS_FRAME_UNKNOWN, NULL, NULL, NULL, 0, 0x7f0012345678);
	fb[2] = ut_frame(p, OS_FRAME_NATIVE, "fill", "/opt/app/bin/app", "/src/app/fill.c", 33, 0x1140);
	fb[3] = ut_frame(p, OS_FRAME_NATIVE, NULL, "/opt/app/lib/libfoo.so", NULL, 0, 0x1a2b);
	for (i = 4; i < 10; i++) {
		snprintf(name, sizeof(name), "level%d", i);
		fb[i] = ut_frame(p, OS_FRAME_NATIVE, name, "/opt/app/bin/app", NULL, 0, 0x2000 + i);
	}
	sb = os_profile_stack(p, fb, 10);
	sc = os_profile_stack(p, (uint32_t[]){ java(p, "Bench.readAll", "Bench.java", 70), main_f },
			      2);
	sd = os_profile_stack(p, (uint32_t[]){ java(p, "Bench.header", NULL, 0) }, 1);
	s_kernel = os_profile_stack(p, (uint32_t[]){ java(p, "Bench.kernel", "Bench.java", 30),
						     main_f }, 2);
	s_sum = os_profile_stack(p, (uint32_t[]){ java(p, "Bench.sum", "Bench.java", 50) }, 1);

	cc = os_profile_add_context(p, &(struct os_context){
		.type = os_profile_string(p, "byte[]"), .stack = sc, .allocations = 50,
		.bytes = 200000, .samples = 50 });
	ca = os_profile_add_context(p, &(struct os_context){
		.type = os_profile_string(p, "double[]"), .stack = sa, .allocations = 100,
		.bytes = 800000, .samples = 300, .metrics = { 0, 30, 0 } });
	cb = os_profile_add_context(p, &(struct os_context){
		.type = OS_NONE, .stack = sb, .allocations = 150, .bytes = 2000000, .samples = 150 });
	os_profile_add_context(p, &(struct os_context){
		.type = os_profile_string(p, "byte[]"), .stack = sd, .allocations = 1, .bytes = 1000 });
	(void)cc;

	os_profile_add_access(p, &(struct os_access){ .context = ca, .stack = s_sum, .samples = 60 });
	os_profile_add_access(p, &(struct os_access){ .context = ca, .stack = s_kernel,
						      .samples = 240, .metrics = { 0, 25, 0 } });
	for (i = 0; i < 7; i++) {
		uint32_t f = ut_frame(p, OS_FRAME_NATIVE, "consume", "/opt/app/bin/app", "/src/app/use.c",
				100 + i, 0x3000 + i);
		uint32_t s = os_profile_stack(p, (uint32_t[]){ f, fb[2] }, 2);

		os_profile_add_access(p, &(struct os_access){ .context = cb, .stack = s,
							      .samples = acc_b[i] });
	}

	thread(p, OS_THR_JAVA, "main", 4243, 700);
	thread(p, OS_THR_GC, "GC Thread#0", 4244, 100);
	thread(p, OS_THR_JIT, "C2 CompilerThread0", 4245, 50);
	thread(p, OS_THR_VM, "VM Thread", 4246, 20);
	thread(p, OS_THR_NATIVE, "worker", 4250, 130);
	return p;
}

static void write_profile(struct os_profile *p, const char *path)
{
	char err[256];

	cr_assert_eq(os_profile_write(p, path, err, sizeof(err)), 0, "%s", err);
	os_profile_free(p);
}

/* Runs `objscope report ARGS...`; returns its exit status. */
#define REPORT(...)                                                                  \
	({                                                                           \
		char *av_[] = { "report", __VA_ARGS__, NULL };                       \
		cmd_report((int)(sizeof(av_) / sizeof(av_[0])) - 1, av_);            \
	})

static char *slurp_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	cr_assert_not_null(f, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, n + 1);
	cr_assert_eq(fread(buf, 1, n, f), (size_t)n);
	fclose(f);
	return buf;
}

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;

	cr_assert(json_object_object_get_ex(o, key, &v), "missing field %s", key);
	return v;
}

static const char *sget(json_object *o, const char *key)
{
	json_object *v = get(o, key);

	cr_assert(json_object_is_type(v, json_type_string), "%s is not a string", key);
	return json_object_get_string(v);
}

static int64_t iget(json_object *o, const char *key)
{
	json_object *v = get(o, key);

	cr_assert(json_object_is_type(v, json_type_int), "%s is not an integer", key);
	return json_object_get_int64(v);
}

static void assert_strings(json_object *arr, const char *const *want, size_t n)
{
	size_t i;

	cr_assert(json_object_is_type(arr, json_type_array));
	cr_assert_eq(json_object_array_length(arr), n);
	for (i = 0; i < n; i++)
		cr_assert_str_eq(json_object_get_string(json_object_array_get_idx(arr, i)), want[i]);
}

static json_object *load_json(const char *path)
{
	json_object *root = json_object_from_file(path);

	cr_assert_not_null(root, "%s is not valid JSON", path);
	return root;
}

TestSuite(report, .init = mk_rdir, .fini = rm_rdir);

Test(report, json_fields)
{
	json_object *root, *meta, *objs, *o, *acc, *types, *threads, *t;
	static const char *const stack_a[] = { "Bench.makeData(Bench.java:12)",
					       "Bench.main(Bench.java:40)" };
	static const char *const stack_b[] = {
		"malloc", "[unknown] 0x7f0012345678", "fill (fill.c:33)", "libfoo.so+0x1a2b",
		"level4", "level5", "level6", "level7", "level8", "level9",
	};
	static const char *const kernel[] = { "Bench.kernel(Bench.java:30)",
					      "Bench.main(Bench.java:40)" };
	static const char *const command[] = { "java", "-XX:+PreserveFramePointer", "Bench" };
	struct stat st;

	write_profile(build_small(), rpath("small.data"));
	cr_assert_eq(REPORT("--format", "json", "-o", rpath("out.json"), rpath("small.data")), 0);
	cr_assert_neq(stat(rpath("out.json.tmp"), &st), 0, "temporary output left behind");
	root = load_json(rpath("out.json"));

	cr_assert_str_eq(sget(root, "format"), "objscope-report");
	cr_assert_eq(iget(root, "version"), 1);

	meta = get(root, "meta");
	assert_strings(get(meta, "command"), command, 3);
	cr_assert_eq(json_object_array_length(get(meta, "pids")), 1);
	cr_assert_eq(json_object_get_int64(json_object_array_get_idx(get(meta, "pids"), 0)), 4242);
	cr_assert_float_eq(json_object_get_double(get(meta, "duration_s")), 2.5, 1e-9);
	cr_assert_str_eq(sget(meta, "sampler"), "soft");
	cr_assert_str_eq(sget(meta, "event"), "task-clock");
	cr_assert_eq(iget(meta, "period"), 1000000);
	cr_assert_eq(iget(meta, "samples_total"), 1000);
	cr_assert_eq(iget(meta, "samples_addressed"), 800);
	cr_assert_eq(iget(meta, "samples_heap"), 600);
	cr_assert_eq(iget(meta, "samples_attributed"), 500);
	cr_assert_eq(iget(meta, "lost"), 2);
	cr_assert_eq(iget(meta, "dropped_events"), 1);
	cr_assert_eq(iget(meta, "gc_count"), 3);
	cr_assert_eq(iget(meta, "min_size"), 256);
	cr_assert_eq(iget(get(meta, "counters"), "small_allocs"), 5000);
	cr_assert_eq(iget(get(meta, "unaddressed"), "no_memory_operand"), 150);
	cr_assert_str_eq(json_object_get_string(json_object_array_get_idx(get(meta, "notes"), 0)),
			 "no PMU: software sampler, no load latency");

	objs = get(root, "objects");
	cr_assert_eq(json_object_array_length(objs), 4);
	cr_assert_eq(iget(root, "objects_total"), 4);

	/* Rank 1: double[] with 300 of the 500 attributed samples. */
	o = json_object_array_get_idx(objs, 0);
	cr_assert_eq(iget(o, "id"), 1);
	cr_assert_str_eq(sget(o, "type"), "double[]");
	assert_strings(get(o, "alloc_stack"), stack_a, 2);
	cr_assert_eq(iget(o, "allocations"), 100);
	cr_assert_eq(iget(o, "bytes"), 800000);
	cr_assert_eq(iget(o, "samples"), 300);
	cr_assert_float_eq(json_object_get_double(get(o, "share")), 0.6, 1e-9);
	cr_assert_eq(iget(get(o, "metrics"), "l1_miss"), 30);
	cr_assert_eq(iget(get(o, "metrics"), "latency_cycles"), 0);
	cr_assert_eq(iget(get(o, "metrics"), "remote"), 0);
	acc = get(o, "accesses");
	cr_assert_eq(json_object_array_length(acc), 2);
	assert_strings(get(json_object_array_get_idx(acc, 0), "stack"), kernel, 2);
	cr_assert_eq(iget(json_object_array_get_idx(acc, 0), "samples"), 240);
	cr_assert_eq(iget(json_object_array_get_idx(acc, 1), "samples"), 60);
	cr_assert_null(get(o, "replica"));
	cr_assert_null(get(o, "lifetime"));
	cr_assert_null(get(o, "reuse"));
	cr_assert_null(get(o, "numa"));

	/* Rank 2: unknown type, native and unresolved frames, all kept. */
	o = json_object_array_get_idx(objs, 1);
	cr_assert_eq(iget(o, "id"), 2);
	cr_assert_str_eq(sget(o, "type"), "");
	assert_strings(get(o, "alloc_stack"), stack_b, 10);
	cr_assert_float_eq(json_object_get_double(get(o, "share")), 0.3, 1e-9);
	acc = get(o, "accesses");
	cr_assert_eq(json_object_array_length(acc), 7);
	cr_assert_eq(iget(json_object_array_get_idx(acc, 0), "samples"), 100);
	cr_assert_eq(iget(json_object_array_get_idx(acc, 6), "samples"), 2);
	cr_assert_str_eq(json_object_get_string(json_object_array_get_idx(
				 get(json_object_array_get_idx(acc, 0), "stack"), 0)),
			 "consume (use.c:100)");

	/* Ranks 3 and 4: byte[] with samples, then the one without. */
	o = json_object_array_get_idx(objs, 2);
	cr_assert_str_eq(sget(o, "type"), "byte[]");
	cr_assert_eq(iget(o, "samples"), 50);
	cr_assert_eq(json_object_array_length(get(o, "accesses")), 0);
	o = json_object_array_get_idx(objs, 3);
	cr_assert_eq(iget(o, "id"), 4);
	cr_assert_eq(iget(o, "samples"), 0);
	cr_assert_float_eq(json_object_get_double(get(o, "share")), 0.0, 1e-12);
	cr_assert_str_eq(json_object_get_string(json_object_array_get_idx(get(o, "alloc_stack"), 0)),
			 "Bench.header");

	types = get(root, "types");
	cr_assert_eq(json_object_array_length(types), 3);
	t = json_object_array_get_idx(types, 0);
	cr_assert_str_eq(sget(t, "type"), "double[]");
	cr_assert_eq(iget(t, "samples"), 300);
	t = json_object_array_get_idx(types, 1);
	cr_assert_str_eq(sget(t, "type"), "");
	cr_assert_eq(iget(t, "samples"), 150);
	t = json_object_array_get_idx(types, 2);
	cr_assert_str_eq(sget(t, "type"), "byte[]");
	cr_assert_eq(iget(t, "samples"), 50);

	threads = get(root, "threads");
	cr_assert_eq(json_object_array_length(threads), 5);
	t = json_object_array_get_idx(threads, 0);
	cr_assert_str_eq(sget(t, "kind"), "java");
	cr_assert_str_eq(sget(t, "name"), "main");
	cr_assert_eq(iget(t, "samples"), 700);
	cr_assert_eq(iget(t, "tid"), 4243);
	cr_assert_str_eq(sget(json_object_array_get_idx(threads, 1), "kind"), "native");
	cr_assert_str_eq(sget(json_object_array_get_idx(threads, 2), "kind"), "gc");
	cr_assert_str_eq(sget(json_object_array_get_idx(threads, 3), "kind"), "jit");
	cr_assert_str_eq(sget(json_object_array_get_idx(threads, 4), "kind"), "vm");
	json_object_put(root);
}

Test(report, text_matches_golden)
{
	const char *src = getenv("OBJSCOPE_SRCDIR");
	char golden[512];
	char *got, *want;

	snprintf(golden, sizeof(golden), "%s/%s", src ? src : ".", GOLDEN);
	write_profile(build_small(), rpath("small.data"));
	cr_assert_eq(REPORT("-o", rpath("out.txt"), rpath("small.data")), 0);
	got = slurp_text(rpath("out.txt"));
	if (getenv("OBJSCOPE_UPDATE_GOLDEN")) {
		FILE *f = fopen(golden, "w");

		cr_assert_not_null(f);
		fputs(got, f);
		cr_assert_eq(fclose(f), 0);
	}
	want = slurp_text(golden);
	cr_assert_str_eq(got, want, "text report differs from %s", golden);
	free(got);
	free(want);
}

Test(report, several_files_are_merged)
{
	json_object *root, *o;

	write_profile(build_small(), rpath("a.data"));
	write_profile(build_small(), rpath("b.data"));
	cr_assert_eq(REPORT("--format=json", "-o", rpath("m.json"), rpath("a.data"),
			    rpath("b.data")), 0);
	root = load_json(rpath("m.json"));
	cr_assert_eq(iget(get(root, "meta"), "samples_total"), 2000);
	cr_assert_eq(json_object_array_length(get(root, "objects")), 4);
	o = json_object_array_get_idx(get(root, "objects"), 0);
	cr_assert_eq(iget(o, "samples"), 600);
	cr_assert_eq(iget(o, "bytes"), 1600000);
	cr_assert_float_eq(json_object_get_double(get(o, "share")), 0.6, 1e-9);
	cr_assert_eq(iget(json_object_array_get_idx(get(o, "accesses"), 0), "samples"), 480);
	cr_assert_eq(json_object_array_length(get(root, "threads")), 5);
	json_object_put(root);
}

Test(report, top_limits_objects)
{
	json_object *root;
	char *txt;

	write_profile(build_small(), rpath("small.data"));
	cr_assert_eq(REPORT("--format", "json", "--top", "1", "-o", rpath("t.json"),
			    rpath("small.data")), 0);
	root = load_json(rpath("t.json"));
	cr_assert_eq(json_object_array_length(get(root, "objects")), 1);
	cr_assert_eq(iget(root, "objects_total"), 4);
	json_object_put(root);

	cr_assert_eq(REPORT("--top", "2", "-o", rpath("t.txt"), rpath("small.data")), 0);
	txt = slurp_text(rpath("t.txt"));
	cr_assert(strstr(txt, "2 of 4 shown") != NULL);
	cr_assert(strstr(txt, "byte[]") == NULL, "rank 3 shown despite --top 2");
	free(txt);
}

Test(report, empty_profile_says_why)
{
	struct os_profile *p = os_profile_new();
	char *txt;

	p->c.samples_total = 100;
	p->c.unaddressed_nomem = 100;
	write_profile(p, rpath("empty.data"));
	cr_assert_eq(REPORT("-o", rpath("e.txt"), rpath("empty.data")), 0);
	txt = slurp_text(rpath("e.txt"));
	cr_assert(strstr(txt, "no samples were attributed to objects: none of the 100 samples"
			      " carried a data address (100 without a memory operand") != NULL,
		  "%s", txt);
	free(txt);
}

Test(report, errors_exit_non_zero_without_output)
{
	struct stat st;

	write_profile(build_small(), rpath("small.data"));
	cr_assert_eq(REPORT("--format", "svg", "-o", rpath("x.svg"), rpath("small.data")), 2);
	cr_assert_neq(stat(rpath("x.svg"), &st), 0);
	cr_assert_eq(REPORT("--format", "", rpath("small.data")), 2);
	cr_assert_eq(REPORT("--top", "many", rpath("small.data")), 2);
	cr_assert_eq(REPORT("--bogus", rpath("small.data")), 2);
	cr_assert_eq(REPORT("-o", rpath("y.txt"), rpath("missing.data")), 1);
	cr_assert_neq(stat(rpath("y.txt"), &st), 0);

	/* A corrupt second input: nothing written. */
	cr_assert_eq(REPORT("-o", rpath("z.txt"), rpath("small.data"), "/dev/null"), 1);
	cr_assert_neq(stat(rpath("z.txt"), &st), 0);
	cr_assert_neq(stat(rpath("z.txt.tmp"), &st), 0);

	/* Output directory missing. */
	cr_assert_eq(REPORT("-o", "/nonexistent/dir/r.txt", rpath("small.data")), 1);
}

Test(report, default_input_is_objscope_data)
{
	char cwd[512];
	json_object *root;

	cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
	write_profile(build_small(), rpath("objscope.data"));
	cr_assert_eq(chdir(rdir), 0);
	cr_assert_eq(REPORT("--format", "json", "-o", "d.json"), 0);
	root = load_json("d.json");
	cr_assert_eq(iget(get(root, "meta"), "samples_attributed"), 500);
	json_object_put(root);
	cr_assert_eq(chdir(cwd), 0);
}
