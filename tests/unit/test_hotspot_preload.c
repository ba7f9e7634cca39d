/* test_hotspot_preload.c - the HotSpot adapter of libobjscope.so inside a
 * real JVM: runs tests/java/AllocCount.java (compiled at test time into
 * build/java/) under LD_PRELOAD with a fresh shm file, drains the rings and
 * checks the events: every 4 KiB array reaches the allocation hooks (exact
 * mode), with the right size and one Klass*, paths with interpreted frames,
 * GC begin/end pairs, moves inside the heap, one sane OS_EV_JVM, and the
 * program's stdout/stderr byte-identical to a run without objscope.
 * Run from the repository root after `make build/libobjscope.so`. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtimes/hotspot/hotspot.h"
#include "runtimes/hotspot/hotspot_abi.h"
#include "common/ring.h"

#define HP_SO "build/libobjscope.so"
#define HP_CLASSDIR "build/java"
#define HP_SRC "tests/java/AllocCount.java"
#define HP_NSLOTS 48
#define HP_RING (4u << 20)
#define HP_MIN 4096
#define HP_N 3000
#define HP_SIZE 4104 /* not 4096: the JDK allocates a byte[4096] of its own */
#define HP_OBJ (HP_SIZE + 16) /* byte[] header: mark, compressed klass, length; 8-aligned */

struct hp_result {
	uint64_t jalloc, jalloc_n, jalloc_bad_heap, method_frames, paths_with_method;
	uint64_t jalloc_outside; /* arrays of HP_OBJ made outside any TLAB */
	double jalloc_w;         /* their weights (os_hs_weight_jvm), summed */
	uint64_t klass, klass_mismatch;
	uint64_t gc_begin, gc_end, gc_unpaired, moves, moves_outside, jvm, bad, dropped;
	struct os_jvm_info info;
	uint32_t jvm_nframes;
	uint64_t last_begin_seq;
};

static int hp_seq;

static int hp_have_java(void)
{
	return system("command -v java >/dev/null 2>&1 && command -v javac >/dev/null 2>&1") == 0;
}

/* Compiles AllocCount into a directory of this process and renames the
 * class into HP_CLASSDIR: tests running in parallel (criterion's default
 * --jobs, or two suites in one tree) each compile it, and a JVM must never
 * load a class file another javac is still writing (seen: "plain run of
 * -XX:+UseZGC failed" with two test_unit runs side by side). */
static void hp_compile(void)
{
	char dir[64], cmd[512];
	int r;

	snprintf(dir, sizeof(dir), HP_CLASSDIR "/.hp-%d", (int)getpid());
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p %s && javac -d %s " HP_SRC " && mv -f %s/AllocCount.class " HP_CLASSDIR
		 "/AllocCount.class; r=$?; rm -rf %s; exit $r",
		 dir, dir, dir, dir);
	r = system(cmd);
	cr_assert_eq(r, 0, "javac %s", HP_SRC);
}

/* Arrays AllocCount makes: HP_N, more where a test needs more seen. */
static int hp_n = HP_N;

/* Runs `java <gcflag> AllocCount N SIZE`; stdout/stderr to files; with the
 * preload when shm is not NULL. Returns the wait status. */
static int hp_exec(const char *gcflag, const char *shm, const char *mode, const char *out,
		   const char *err)
{
	char n[16], size[16];
	pid_t pid;
	int status = -1;

	snprintf(n, sizeof(n), "%d", hp_n);
	snprintf(size, sizeof(size), "%d", HP_SIZE);
	fflush(NULL);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0)
			_exit(126);
		unsetenv("LD_PRELOAD");
		unsetenv(OS_SHM_ENV);
		unsetenv(OS_JAVA_MODE_ENV);
		unsetenv("JAVA_TOOL_OPTIONS");
		unsetenv("JDK_JAVA_OPTIONS");
		if (shm) {
			setenv("LD_PRELOAD", HP_SO, 1);
			setenv(OS_SHM_ENV, shm, 1);
		}
		if (mode)
			setenv(OS_JAVA_MODE_ENV, mode, 1);
		execlp("java", "java", gcflag, "-Xmx256m", "-cp", HP_CLASSDIR, "AllocCount", n, size,
		       (char *)NULL);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	if (shm) { /* the perf map objscope's -XX:+DumpPerfMapAtExit wrote */
		char map[64];

		snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)pid);
		unlink(map);
	}
	return status;
}

static int hp_in(uint64_t a, uint64_t lo, uint64_t hi)
{
	return a >= lo && a < hi;
}

static void hp_event(const struct os_event *ev, void *arg)
{
	struct hp_result *r = arg;
	uint64_t m = 0;

	switch (ev->type) {
	case OS_EV_JALLOC:
		r->jalloc++;
		for (uint32_t i = 0; i < ev->nframes; i++)
			m += (ev->frames[i] & OS_FRAME_METHOD) != 0;
		r->method_frames += m;
		r->paths_with_method += m > 0;
		if (ev->size != HP_OBJ)
			break;
		r->jalloc_n++;
		r->jalloc_outside += !(ev->aux & ~OS_HS_THIN_BIT);
		if (r->jvm) /* the JVM event, with the mode and T, comes first */
			r->jalloc_w += (double)os_hs_weight_jvm(&r->info, ev->aux, ev->size) / OS_W_ONE;
		if (!r->klass)
			r->klass = ev->aux2;
		r->klass_mismatch += ev->aux2 != r->klass;
		break;
	case OS_EV_GC_BEGIN:
		r->gc_begin++;
		r->gc_unpaired += r->last_begin_seq != 0;
		r->last_begin_seq = ev->aux2;
		break;
	case OS_EV_GC_END:
		r->gc_end++;
		r->gc_unpaired += ev->aux2 != r->last_begin_seq;
		r->last_begin_seq = 0;
		break;
	case OS_EV_MOVES:
		for (uint32_t i = 0; i + 2 < ev->nframes; i += 3) {
			r->moves++;
			r->moves_outside += !hp_in(ev->frames[i], r->info.heap_start, r->info.heap_end) ||
					    !hp_in(ev->frames[i + 1], r->info.heap_start,
						   r->info.heap_end) ||
					    ev->frames[i + 2] <= 64;
		}
		break;
	case OS_EV_JVM:
		r->jvm++;
		r->jvm_nframes = ev->nframes;
		if (ev->nframes == OS_JVM_INFO_WORDS)
			memcpy(&r->info, ev->frames, sizeof(r->info));
		break;
	default:
		break;
	}
}

static char *hp_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *b;

	cr_assert(f, "open %s", path);
	b = calloc(1, 1 << 20);
	cr_assert(b);
	*len = fread(b, 1, (1 << 20) - 1, f);
	fclose(f);
	return b;
}

static void hp_same_file(const char *a, const char *b)
{
	size_t la, lb;
	char *x = hp_slurp(a, &la), *y = hp_slurp(b, &lb);

	cr_assert(la == lb && memcmp(x, y, la) == 0, "%s and %s differ:\n%s\n---\n%s", a, b, x, y);
	free(x);
	free(y);
}

/* Runs with and without objscope, checks identical output, drains. The JVM
 * event is drained first so that moves can be checked against the heap. */
static void hp_run(const char *gcflag, const char *mode, struct hp_result *r)
{
	char shm[96], o1[96], e1[96], o2[96], e2[96];
	struct os_shm_header *h;
	size_t size = os_shm_size(HP_NSLOTS, HP_RING);
	int fd, st;

	if (!hp_have_java())
		cr_skip_test("java/javac not installed");
	hp_compile();
	snprintf(shm, sizeof(shm), "/dev/shm/objscope-hstest-%d-%d", getpid(), hp_seq);
	snprintf(o1, sizeof(o1), "/tmp/objscope-hs-%d-%d.out1", getpid(), hp_seq);
	snprintf(e1, sizeof(e1), "/tmp/objscope-hs-%d-%d.err1", getpid(), hp_seq);
	snprintf(o2, sizeof(o2), "/tmp/objscope-hs-%d-%d.out2", getpid(), hp_seq);
	snprintf(e2, sizeof(e2), "/tmp/objscope-hs-%d-%d.err2", getpid(), hp_seq++);
	fd = open(shm, O_RDWR | O_CREAT | O_EXCL, 0600);
	cr_assert(fd >= 0);
	cr_assert_eq(ftruncate(fd, (off_t)size), 0);
	h = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	cr_assert(h != MAP_FAILED);
	h->magic = OS_SHM_MAGIC;
	h->version = OS_SHM_VERSION;
	h->nslots = HP_NSLOTS;
	h->ring_bytes = HP_RING;
	h->total_bytes = size;
	h->min_size = HP_MIN;
	h->flags = OS_SHM_F_MOVES;

	st = hp_exec(gcflag, NULL, NULL, o1, e1);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "plain run of %s failed", gcflag);
	st = hp_exec(gcflag, shm, mode, o2, e2);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "profiled run of %s failed", gcflag);
	hp_same_file(o1, o2);
	hp_same_file(e1, e2);

	memset(r, 0, sizeof(*r));
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < HP_NSLOTS; i++) {
			struct os_slot *s = os_shm_slot(h, i);
			uint64_t tail = atomic_load(&s->tail);

			os_ring_drain(s, HP_RING, hp_event, r, &r->bad);
			if (pass == 0) { /* rewind: first pass only looked for the JVM event */
				atomic_store(&s->tail, tail);
				continue;
			}
			r->dropped += atomic_load(&s->stats.dropped);
		}
		if (pass == 0) {
			struct os_jvm_info info = r->info;

			memset(r, 0, sizeof(*r));
			r->info = info;
		}
	}
	r->dropped += atomic_load(&h->no_slot_events);
	munmap(h, size);
	unlink(shm);
	unlink(o1);
	unlink(e1);
	unlink(o2);
	unlink(e2);
}

static void hp_check_jvm(const struct hp_result *r, const char *gc, uint32_t mode)
{
	const struct os_jvm_info *in = &r->info;

	cr_assert_eq(r->jvm, 1, "one OS_EV_JVM");
	cr_assert_eq(r->jvm_nframes, OS_JVM_INFO_WORDS);
	cr_assert_str_eq(in->gc, gc);
	cr_assert_eq(in->mode, mode, "mode in force %u", in->mode);
	cr_assert_lt(in->heap_start, in->heap_end);
	cr_assert_lt(in->interp_start, in->interp_end);
	cr_assert_neq(in->libjvm_base, 0);
	for (int i = 0; i < OS_JVM_NTABLES; i++) {
		cr_assert_neq(in->tables[i].addr, 0, "table %d", i);
		cr_assert_neq(in->tables[i].stride, 0, "table %d", i);
	}
	cr_assert_eq(r->bad, 0, "malformed records");
	cr_assert_eq(r->dropped, 0, "events dropped");
}

/* Exact mode on a stop-the-world collector: all N arrays seen, GCs paired,
 * moves in the heap. */
static void hp_check_stw(const char *gcflag, const char *gc)
{
	struct hp_result r;

	hp_run(gcflag, NULL, &r);
	hp_check_jvm(&r, gc, OS_JVM_MODE_EXACT);
	cr_assert_eq(r.jalloc_n, HP_N, "%s: %lu of %d arrays reached the hooks", gc,
		     (unsigned long)r.jalloc_n, HP_N);
	cr_assert_neq(r.klass, 0);
	cr_assert_eq(r.klass_mismatch, 0, "one Klass* for byte[]");
	cr_assert_gt(r.paths_with_method, HP_N / 2, "interpreted frames in the paths (%lu)",
		     (unsigned long)r.paths_with_method);
	cr_assert_geq(r.gc_begin, 2, "System.gc() twice");
	cr_assert_eq(r.gc_begin, r.gc_end);
	cr_assert_eq(r.gc_unpaired, 0);
	cr_assert_gt(r.moves, 0, "%s: no move logged", gc);
	cr_assert_eq(r.moves_outside, 0, "moves outside the heap");
}

Test(hotspot_preload, g1_exact, .timeout = 120)
{
	hp_check_stw("-XX:+UseG1GC", "G1");
}

Test(hotspot_preload, parallel_exact, .timeout = 120)
{
	hp_check_stw("-XX:+UseParallelGC", "Parallel");
}

Test(hotspot_preload, serial_exact, .timeout = 120)
{
	hp_check_stw("-XX:+UseSerialGC", "Serial");
}

Test(hotspot_preload, g1_sampled, .timeout = 120)
{
	struct hp_result r;

	hp_run("-XX:+UseG1GC", "sampled", &r);
	hp_check_jvm(&r, "G1", OS_JVM_MODE_SAMPLED);
	cr_assert_gt(r.jalloc_n, 0);
	cr_assert_lt(r.jalloc_n, HP_N, "default TLABs hide most arrays (%lu seen)",
		     (unsigned long)r.jalloc_n);
}

/* Hybrid mode (what `objscope record` asks for by default): TLABs of
 * random size around T (32 KiB), so the 4120-byte arrays are seen about one
 * in eight (size / T); 2 x HP_N of them, so that ~750 are seen. */
static void hybrid_check(const char *gcflag, const char *gc)
{
	struct hp_result r;

	hp_n = 2 * HP_N;
	hp_run(gcflag, "hybrid", &r);
	hp_n = HP_N;
	hp_check_jvm(&r, gc, OS_JVM_MODE_HYBRID);
	cr_assert_eq(r.info.tlab_bytes, OS_JAVA_TLAB_DEFAULT, "T in force %lu",
		     (unsigned long)r.info.tlab_bytes);
	/* about 2 HP_N x 4120 / T (~750) seen: half to twice that */
	cr_assert_gt(r.jalloc_n, HP_N / 8, "%lu of %d arrays seen", (unsigned long)r.jalloc_n,
		     2 * HP_N);
	cr_assert_lt(r.jalloc_n, HP_N / 2, "%lu of %d arrays seen", (unsigned long)r.jalloc_n,
		     2 * HP_N);
	/* TLAB lengths drawn at random (no phase lock with the loop), and the
	 * Horvitz-Thompson estimate near the true count even for a stream of
	 * equal arrays (each TLAB also holds the array that made it: ~10% low
	 * without the per-thread length correction, docs/JAVA.md); one
	 * standard error is ~3.4% here */
	cr_assert(r.info.flags & OS_JVM_F_TLAB_DITHER, "TLAB sizes not randomised (flags %#x)",
		  r.info.flags);
	/* each array by the weight of its own event: T / s for one that made
	 * a TLAB, 1 for one made outside any (a G1 region's end) */
	cr_log_info("%s hybrid: %lu of %d arrays seen (%lu outside a TLAB), estimated %.0f", gc,
		    (unsigned long)r.jalloc_n, 2 * HP_N, (unsigned long)r.jalloc_outside,
		    r.jalloc_w);
	cr_expect(r.jalloc_w > 0.85 * 2 * HP_N && r.jalloc_w < 1.15 * 2 * HP_N,
		  "estimated %.0f arrays from %lu seen, allocated %d", r.jalloc_w,
		  (unsigned long)r.jalloc_n, 2 * HP_N);
}

Test(hotspot_preload, g1_hybrid, .timeout = 120)
{
	hybrid_check("-XX:+UseG1GC", "G1");
}

Test(hotspot_preload, parallel_hybrid, .timeout = 120)
{
	hybrid_check("-XX:+UseParallelGC", "Parallel");
}

Test(hotspot_preload, serial_hybrid, .timeout = 120)
{
	hybrid_check("-XX:+UseSerialGC", "Serial");
}

Test(hotspot_preload, zgc_runs, .timeout = 120)
{
	struct hp_result r;

	hp_run("-XX:+UseZGC", NULL, &r);
	hp_check_jvm(&r, "Z", OS_JVM_MODE_EXACT);
	/* the map at exit is objscope's: AllocCount runs without DumpPerfMapAtExit;
	 * launch mode turned -XX:+DebugNonSafepoints on */
	cr_assert_eq(r.info.flags, OS_JVM_F_ZGC | OS_JVM_F_CONCURRENT | OS_JVM_F_MAP_OURS |
					   OS_JVM_F_NONSAFEPOINT_DEBUG);
	cr_assert_eq(r.jalloc_n, HP_N);
	cr_assert_eq(r.moves_outside, 0, "ZGC moves are masked to the colorless range");
}

Test(hotspot_preload, shenandoah_runs, .timeout = 120)
{
	struct hp_result r;

	hp_run("-XX:+UseShenandoahGC", NULL, &r);
	hp_check_jvm(&r, "Shenandoah", OS_JVM_MODE_EXACT);
	cr_assert_eq(r.info.flags, OS_JVM_F_CONCURRENT | OS_JVM_F_MAP_OURS |
					   OS_JVM_F_NONSAFEPOINT_DEBUG);
	cr_assert_eq(r.jalloc_n, HP_N);
}
