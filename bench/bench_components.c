/* bench_components.c - throughput of the collector's attribution engine and
 * of `objscope report` on synthetic workloads.
 *
 * (a) attribution: os_attrib_prepare/os_attrib_event/os_attrib_sample (the
 *     collector's per-event work after the rings are drained) over EVENTS
 *     allocation events (each evicting an older object: a free event too)
 *     among 100,000 live objects allocated from 1,000 paths of 8-24 frames,
 *     and SAMPLES access samples into live objects from 500 access paths.
 *     Prints events/s, samples/s and the growth of peak RSS. Every sample
 *     must be attributed (the bench fails otherwise).
 * (b) report: a profile with CONTEXTS contexts (16-frame allocation stacks
 *     over a pool of 20,000 frames), 4 access paths each, counters of EVENTS
 *     allocations and SAMPLES samples, written with the common/profile.h
 *     builder, then `objscope report --format F PROFILE >/dev/null` run on it for
 *     every format F: seconds (wall and user+sys), throughput (the EVENTS +
 *     SAMPLES the profile stands for, per wall second of report) and peak
 *     RSS of the report process.
 *
 * Usage: bench_components [--quick] [--report-only] [OBJSCOPE]
 *   --report-only: (b) alone
 *   full:    10^7 events, 10^6 samples; (b) twice: 1,000 contexts (a large
 *            real profile) and 100,000 contexts (far beyond one)
 *   --quick: 10^5 events, 10^4 samples, 2,000 contexts (for the test suite)
 *   OBJSCOPE defaults to objscope next to this program's directory
 *   (build/bench/../objscope).
 * Exit status: 0 on success, 1 on a failed check or error.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "attacher/core/attrib.h"
#include "attacher/core/tasks.h"
#include "common/profile.h"
#include "symbolizer/symbolizer.h"

#define B_PID 4000001u      /* above any pid_max: nothing to seed from /proc */
#define B_LIVE 100000u      /* live objects */
#define B_APATHS 1000u      /* allocation paths */
#define B_SPATHS 500u       /* access paths */
#define B_HEAP 0x7f0000000000ULL

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double now_s(void)
{
	return (double)os_now_ns() * 1e-9;
}

/* VmHWM of this process in KiB. */
static long peak_rss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

struct b_obj {
	uint64_t addr, size;
};

/* (a) the attribution engine. */
static int bench_attrib(uint64_t nevents, uint64_t nsamples)
{
	struct os_symbolizer *sym = os_sym_new();
	struct os_tasks tasks;
	struct os_attrib a;
	struct os_aspace *as;
	struct b_obj *live = calloc(B_LIVE, sizeof(*live));
	uint64_t (*apath)[24] = calloc(B_APATHS, sizeof(*apath));
	uint32_t *adepth = calloc(B_APATHS, sizeof(*adepth)), *snode = calloc(B_SPATHS, 4);
	union {
		struct os_event ev;
		uint64_t words[sizeof(struct os_event) / 8 + 24];
	} u;
	struct os_obj_event oe;
	uint64_t heap_next = B_HEAP, every, samples = 0, events = 0, frees = 0;
	long rss0;
	double t0, dt;
	int ret = 1;

	if (!sym || !live || !apath || !adepth || !snode || os_tasks_init(&tasks, sym) < 0) {
		fprintf(stderr, "bench_components: out of memory\n");
		return 1;
	}
	if (os_attrib_init(&a, &tasks) < 0) {
		fprintf(stderr, "bench_components: out of memory\n");
		goto out_tasks;
	}
	as = os_tasks_aspace(&tasks, B_PID);
	if (!as)
		goto out;
	/* the heap is one anonymous writable mapping, as glibc's arenas are */
	os_tasks_mmap(&tasks, B_PID, B_HEAP, 1ULL << 40, 0, PROT_READ | PROT_WRITE, "");
	for (uint32_t i = 0; i < B_APATHS; i++) {
		adepth[i] = 8 + (uint32_t)(rnd() % 17);
		for (uint32_t j = 0; j < adepth[i]; j++)
			apath[i][j] = 0x400000 + (rnd() % 4096) * 16; /* shared callers */
		apath[i][0] = 0x500000 + i * 64;                       /* distinct leaves */
	}
	for (uint32_t i = 0; i < B_SPATHS; i++) {
		uint64_t f[6];

		for (uint32_t j = 0; j < 6; j++)
			f[j] = 0x600000 + (rnd() % 2048) * 16;
		f[0] = 0x700000 + i * 32;
		snode[i] = os_attrib_path(&a, as->id, f, 6);
	}
	memset(&u, 0, sizeof(u));
	u.ev.pid = B_PID;
	u.ev.tid = B_PID;
	every = nsamples ? nevents / nsamples : 0;
	rss0 = peak_rss_kb();
	t0 = now_s();
	for (uint64_t i = 0; i < nevents; i++) {
		struct b_obj *o = &live[i % B_LIVE];
		uint32_t p = (uint32_t)(rnd() % B_APATHS);

		if (o->size) { /* evict: the free of the object in this slot */
			u.ev.type = OS_EV_FREE;
			u.ev.nframes = 0;
			u.ev.addr = o->addr;
			u.ev.size = 0;
			u.ev.time = 2 * i;
			if (os_attrib_prepare(&a, &u.ev, &oe))
				os_attrib_event(&a, &oe);
			frees++;
		}
		o->size = 1024 + (rnd() % 64) * 256;
		o->addr = heap_next;
		heap_next += o->size + 64;
		u.ev.type = OS_EV_ALLOC;
		u.ev.nframes = (uint16_t)adepth[p];
		u.ev.addr = o->addr;
		u.ev.size = o->size;
		u.ev.time = 2 * i + 1;
		memcpy(u.ev.frames, apath[p], adepth[p] * sizeof(uint64_t));
		if (os_attrib_prepare(&a, &u.ev, &oe))
			os_attrib_event(&a, &oe);
		events++;
		if (every && i % every == every - 1 && samples < nsamples) {
			uint64_t n = i + 1 < B_LIVE ? i + 1 : B_LIVE;
			struct b_obj *t = &live[rnd() % n];

			os_attrib_sample(&a, as->id, t->addr + rnd() % t->size, 0,
					 snode[rnd() % B_SPATHS]);
			samples++;
		}
	}
	dt = now_s() - t0;
	printf("attribution: %llu allocation + %llu free events, %llu samples in %.2f s: "
	       "%.2f M events/s (samples included), %u contexts, %u access paths, "
	       "peak RSS +%.1f MiB (total %.1f MiB)\n",
	       (unsigned long long)events, (unsigned long long)frees, (unsigned long long)samples,
	       dt, (double)(events + frees + samples) / dt / 1e6, a.nctx, a.nacc,
	       (double)(peak_rss_kb() - rss0) / 1024, (double)peak_rss_kb() / 1024);
	if (a.c.objects_seen != events || a.c.samples_attributed != samples ||
	    a.c.frees != frees) {
		fprintf(stderr,
			"bench_components: attribution is wrong: %llu/%llu objects, %llu/%llu "
			"samples attributed, %llu/%llu frees\n",
			(unsigned long long)a.c.objects_seen, (unsigned long long)events,
			(unsigned long long)a.c.samples_attributed, (unsigned long long)samples,
			(unsigned long long)a.c.frees, (unsigned long long)frees);
		goto out;
	}
	ret = 0;
out:
	os_attrib_destroy(&a);
out_tasks:
	os_tasks_destroy(&tasks);
	os_sym_free(sym);
	free(live);
	free(apath);
	free(adepth);
	free(snode);
	return ret;
}

/* (b) a large synthetic profile, written to `path`. */
static int make_profile(const char *path, uint32_t ncontexts, uint64_t nevents,
			uint64_t nsamples)
{
	struct os_profile *p = os_profile_new();
	uint32_t nframes = 20000, *fids = NULL, stack[16];
	char name[64], err[256] = "";
	char *argv[] = { "synthetic", "workload" };
	uint64_t left = nsamples;
	int ret = -ENOMEM;

	fids = calloc(nframes, sizeof(*fids));
	if (!p || !fids)
		goto out;
	for (uint32_t i = 0; i < nframes; i++) {
		struct os_frame f = { .kind = OS_FRAME_NATIVE, .line = 1 + i % 900,
				      .addr = 0x1000 + (uint64_t)i * 16 };

		snprintf(name, sizeof(name), "synthetic_function_%u", i);
		f.name = os_profile_string(p, name);
		snprintf(name, sizeof(name), "src/module_%u.c", i % 200);
		f.file = os_profile_string(p, name);
		snprintf(name, sizeof(name), "/usr/lib/libsynthetic%u.so", i % 20);
		f.module = os_profile_string(p, name);
		fids[i] = os_profile_frame(p, &f);
		if (fids[i] == OS_NONE)
			goto out;
	}
	for (uint32_t c = 0; c < ncontexts; c++) {
		struct os_context ctx = { .type = OS_NONE };
		uint64_t s = c + 1 == ncontexts ? left : nsamples / ncontexts;

		for (uint32_t j = 0; j < 16; j++)
			stack[j] = fids[rnd() % nframes];
		ctx.stack = os_profile_stack(p, stack, 16);
		ctx.allocations = nevents / ncontexts;
		ctx.bytes = ctx.allocations * 4096;
		ctx.samples = s;
		left -= s;
		if (ctx.stack == OS_NONE || os_profile_add_context(p, &ctx) == OS_NONE)
			goto out;
		for (uint32_t k = 0; k < 4; k++) {
			struct os_access acc = { .context = c, .samples = s / 4 + (k == 0 ? s % 4 : 0) };

			for (uint32_t j = 0; j < 8; j++)
				stack[j] = fids[rnd() % nframes];
			acc.stack = os_profile_stack(p, stack, 8);
			if (acc.stack == OS_NONE || os_profile_add_access(p, &acc) == OS_NONE)
				goto out;
		}
	}
	p->c.samples_total = p->c.samples_addressed = p->c.samples_heap = nsamples;
	p->c.samples_attributed = nsamples;
	p->c.tracked_allocs = p->c.objects_seen = nevents;
	p->c.frees = nevents - ncontexts;
	p->meta.sampler = os_profile_string(p, "soft");
	p->meta.event = os_profile_string(p, "task-clock");
	p->meta.mode = os_profile_string(p, "record");
	p->meta.period = 1000000;
	p->meta.freq = 1000;
	p->meta.min_size = 1024;
	p->meta.duration_s = 60;
	if (os_profile_set_argv(p, 2, argv) < 0 || os_profile_add_pid(p, B_PID) < 0)
		goto out;
	ret = os_profile_write(p, path, err, sizeof(err));
	if (ret < 0)
		fprintf(stderr, "bench_components: %s\n", err);
out:
	if (ret == -ENOMEM)
		fprintf(stderr, "bench_components: out of memory building the profile\n");
	os_profile_free(p);
	free(fids);
	return ret;
}

/* Runs `objscope report --format FMT PROFILE >/dev/null`; 0 on success.
 * `events`: the allocation events + samples the profile stands for. (Not
 * `-o /dev/null`: a report before that case was handled renamed its
 * temporary file over /dev/null.) */
static int time_report(const char *objscope, const char *profile, const char *fmt,
		       uint64_t events)
{
	const char *argv[] = { objscope, "report", "--format", fmt, "--top", "1000000",
			       profile, NULL };
	struct rusage ru;
	double t0 = now_s(), dt, cpu;
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return 1;
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
			_exit(126);
		execv(objscope, (char *const *)argv);
		_exit(127);
	}
	if (wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "bench_components: %s report --format %s failed (status %d)\n",
			objscope, fmt, st);
		return 1;
	}
	dt = now_s() - t0;
	cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
	      (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
	printf("report --format %-9s: %6.2f s (cpu %6.2f s), %7.2f M events/s, peak RSS %7.1f "
	       "MiB\n", fmt, dt, cpu, (double)events / dt / 1e6, (double)ru.ru_maxrss / 1024);
	return 0;
}

static int bench_report(const char *objscope, uint32_t ncontexts, uint64_t nevents,
			uint64_t nsamples)
{
	static const char *const fmts[] = { "json", "text", "html", "collapsed", "pprof" };
	char path[] = "/tmp/objscope-bench-XXXXXX", file[PATH_MAX];
	struct os_profile *p = NULL;
	char err[256];
	struct stat st;
	double t0;
	int ret = 1;

	if (!mkdtemp(path)) {
		perror("bench_components: mkdtemp");
		return 1;
	}
	snprintf(file, sizeof(file), "%s/synthetic.data", path);
	t0 = now_s();
	if (make_profile(file, ncontexts, nevents, nsamples) < 0 || stat(file, &st) < 0)
		goto out;
	printf("profile: %u contexts, %u access paths, %.1f MiB, built and written in %.2f s\n",
	       ncontexts, ncontexts * 4, (double)st.st_size / 1048576, now_s() - t0);
	t0 = now_s();
	if (os_profile_read(file, &p, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_components: %s\n", err);
		goto out;
	}
	printf("os_profile_read: %.2f s\n", now_s() - t0);
	os_profile_free(p);
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++)
		if (time_report(objscope, file, fmts[i], nevents + nsamples))
			goto out;
	ret = 0;
out:
	unlink(file);
	rmdir(path);
	return ret;
}

int main(int argc, char **argv)
{
	uint64_t nevents = 10000000, nsamples = 1000000;
	uint32_t ncontexts = 100000;
	char objscope[PATH_MAX + 16] = "", self[PATH_MAX];
	int i = 1, report_only = 0, quick = 0;
	ssize_t n;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--quick") == 0) {
			nevents = 100000;
			nsamples = 10000;
			ncontexts = 2000;
			quick = 1;
		} else if (strcmp(argv[i], "--report-only") == 0) {
			report_only = 1;
		} else {
			fprintf(stderr, "usage: %s [--quick] [--report-only] [OBJSCOPE]\n",
				argv[0]);
			return 2;
		}
	}
	if (i < argc) {
		snprintf(objscope, sizeof(objscope), "%s", argv[i]);
	} else {
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n > 0) {
			self[n] = 0;
			*strrchr(self, '/') = 0;
			snprintf(objscope, sizeof(objscope), "%s/../objscope", self);
		}
	}
	if (access(objscope, X_OK) != 0) {
		fprintf(stderr, "bench_components: %s not found (build it, or give its path)\n",
			objscope);
		return 1;
	}
	if (!report_only && bench_attrib(nevents, nsamples))
		return 1;
	if (!quick && bench_report(objscope, 1000, nevents, nsamples))
		return 1;
	return bench_report(objscope, ncontexts, nevents, nsamples);
}
