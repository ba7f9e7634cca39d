/* test_preload.c - libobjscope.so inside a real program: runs
 * build/fixtures/preload_chain under LD_PRELOAD with a fresh shm file, then
 * drains the rings and checks what the hooks wrote. Run from the repository
 * root after `make build/libobjscope.so build/fixtures/preload_chain`. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/ring.h"

#define PL_SO "build/libobjscope.so"
#define PL_FIXTURE "build/fixtures/preload_chain"
#define PL_NSLOTS 16
#define PL_RING (1u << 20)
#define PL_MIN 4096

struct pl_ev {
	struct os_event ev;
	uint64_t frames[OS_MAX_FRAMES];
	uint32_t slot;
};

struct pl_run {
	char shm_path[128];
	char syms_path[128];
	char out_path[128];
	struct os_shm_header *hdr;
	size_t size;
	struct pl_ev *evs;
	size_t nev, cap;
	uint32_t cur_slot;
	uint64_t bad;
	const char *sym_name[16];
	uint64_t sym_addr[16];
	int nsyms;
};

static int pl_seq;

static void pl_make_shm(struct pl_run *r, uint64_t magic)
{
	int fd;

	snprintf(r->shm_path, sizeof(r->shm_path), "/dev/shm/objscope-test-%d-%d", getpid(), pl_seq++);
	r->size = os_shm_size(PL_NSLOTS, PL_RING);
	fd = open(r->shm_path, O_RDWR | O_CREAT | O_EXCL, 0600);
	cr_assert(fd >= 0, "create %s", r->shm_path);
	cr_assert(ftruncate(fd, (off_t)r->size) == 0);
	r->hdr = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	cr_assert(r->hdr != MAP_FAILED);
	r->hdr->magic = magic;
	r->hdr->version = OS_SHM_VERSION;
	r->hdr->nslots = PL_NSLOTS;
	r->hdr->ring_bytes = PL_RING;
	r->hdr->total_bytes = r->size;
	r->hdr->min_size = PL_MIN;
	r->hdr->flags = OS_SHM_F_TRACK_MMAP | OS_SHM_F_NATIVE_EXACT;
}

static void pl_cleanup(struct pl_run *r)
{
	if (r->hdr)
		munmap(r->hdr, r->size);
	unlink(r->shm_path);
	unlink(r->syms_path);
	unlink(r->out_path);
	free(r->evs);
	for (int i = 0; i < r->nsyms; i++)
		free((char *)r->sym_name[i]);
}

/* Runs the fixture, stdout to r->out_path; preload/shm NULL to leave unset. */
static int pl_exec(struct pl_run *r, const char *preload, const char *shm)
{
	static int n;
	pid_t pid;
	int status = -1;

	if (r->syms_path[0]) { /* a run before on this r: its files go */
		unlink(r->syms_path);
		unlink(r->out_path);
	}
	snprintf(r->syms_path, sizeof(r->syms_path), "/tmp/objscope-syms-%d-%d", getpid(), n);
	snprintf(r->out_path, sizeof(r->out_path), "/tmp/objscope-out-%d-%d", getpid(), n++);
	fflush(NULL);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		int fd = open(r->out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (fd < 0 || dup2(fd, 1) < 0)
			_exit(126);
		unsetenv("LD_PRELOAD");
		unsetenv(OS_SHM_ENV);
		if (preload)
			setenv("LD_PRELOAD", preload, 1);
		if (shm)
			setenv(OS_SHM_ENV, shm, 1);
		execl(PL_FIXTURE, PL_FIXTURE, r->syms_path, (char *)NULL);
		_exit(127);
	}
	cr_assert(waitpid(pid, &status, 0) == pid);
	return status;
}

static char *pl_slurp(const char *path)
{
	static char buf[4][4096];
	static int k;
	char *b = buf[k++ & 3];
	FILE *f = fopen(path, "r");
	size_t n;

	cr_assert(f, "open %s", path);
	n = fread(b, 1, sizeof(buf[0]) - 1, f);
	b[n] = 0;
	fclose(f);
	return b;
}

static void pl_collect(const struct os_event *ev, void *arg)
{
	struct pl_run *r = arg;
	struct pl_ev *e;

	if (r->nev == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 256;
		r->evs = realloc(r->evs, r->cap * sizeof(*r->evs));
		cr_assert(r->evs);
	}
	e = &r->evs[r->nev++];
	memset(e, 0, sizeof(*e));
	e->ev = *ev;
	for (uint32_t i = 0; i < ev->nframes && i < OS_MAX_FRAMES; i++)
		e->frames[i] = ev->frames[i];
	e->slot = r->cur_slot;
}

static void pl_drain(struct pl_run *r)
{
	for (uint32_t i = 0; i < PL_NSLOTS; i++) {
		r->cur_slot = i;
		os_ring_drain(os_shm_slot(r->hdr, i), PL_RING, pl_collect, r, &r->bad);
	}
	cr_assert_eq(r->bad, 0, "malformed ring bytes: %lu", (unsigned long)r->bad);
}

static void pl_load_syms(struct pl_run *r)
{
	FILE *f = fopen(r->syms_path, "r");
	char name[64];
	void *addr;

	cr_assert(f, "fixture wrote no symbol file");
	while (r->nsyms < 16 && fscanf(f, "%63s %p", name, &addr) == 2) {
		r->sym_name[r->nsyms] = strdup(name);
		r->sym_addr[r->nsyms++] = (uint64_t)(uintptr_t)addr;
	}
	fclose(f);
}

/* 1 when pc lies after the start of `name` and before the next known symbol. */
static int pl_in_func(struct pl_run *r, uint64_t pc, const char *name)
{
	uint64_t start = 0, next = UINT64_MAX;

	for (int i = 0; i < r->nsyms; i++)
		if (strcmp(r->sym_name[i], name) == 0)
			start = r->sym_addr[i];
	cr_assert(start, "no symbol %s", name);
	for (int i = 0; i < r->nsyms; i++)
		if (r->sym_addr[i] > start && r->sym_addr[i] < next)
			next = r->sym_addr[i];
	if (next == UINT64_MAX)
		next = start + 4096;
	return pc > start && pc < next;
}

static const struct pl_ev *pl_find(struct pl_run *r, uint16_t type, uint64_t size)
{
	for (size_t i = 0; i < r->nev; i++)
		if (r->evs[i].ev.type == type && r->evs[i].ev.size == size)
			return &r->evs[i];
	return NULL;
}

/* The first event of `type` at `addr` after `from` (NULL: from the start). */
static const struct pl_ev *pl_find_addr(struct pl_run *r, const struct pl_ev *from, uint16_t type,
					uint64_t addr)
{
	for (size_t i = from ? (size_t)(from - r->evs) + 1 : 0; i < r->nev; i++)
		if (r->evs[i].ev.type == type && r->evs[i].ev.addr == addr)
			return &r->evs[i];
	return NULL;
}

/* The first event of every used slot announces its thread. */
static const struct pl_ev *pl_first_in_slot(struct pl_run *r, uint32_t slot)
{
	for (size_t i = 0; i < r->nev; i++)
		if (r->evs[i].slot == slot)
			return &r->evs[i];
	return NULL;
}

static void pl_run_profiled(struct pl_run *r, char *native_out)
{
	char so[PATH_MAX];
	int st;

	cr_assert(realpath(PL_SO, so), "%s missing: run make first", PL_SO);
	cr_assert(access(PL_FIXTURE, X_OK) == 0, "%s missing: run make first", PL_FIXTURE);
	st = pl_exec(r, NULL, NULL);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "native run failed: %d", st);
	strcpy(native_out, pl_slurp(r->out_path));
	unlink(r->syms_path);
	unlink(r->out_path);
	st = pl_exec(r, so, r->shm_path);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "profiled run failed: %d", st);
}

Test(preload, records_paths_threads_and_forks)
{
	struct pl_run r = { 0 };
	char native[4096];
	static const char *chain[5] = { "chain5", "chain4", "chain3", "chain2", "chain1" };
	static const uint64_t sizes[3] = { 40000, 50000, 60000 };
	const struct pl_ev *e, *f, *first;
	uint32_t main_slot, main_pid, main_tid;
	struct os_slot *ms;

	pl_make_shm(&r, OS_SHM_MAGIC);
	pl_run_profiled(&r, native);
	cr_expect_str_eq(pl_slurp(r.out_path), native, "output changed under the preload");
	pl_load_syms(&r);
	pl_drain(&r);
	cr_assert_eq(r.hdr->processes, 2, "processes %u", r.hdr->processes);
	/* At most one event after the worker's slot retired: libunwind's own
	 * thread-exit destructor munmaps its cache after ours ran. */
	cr_expect_leq(r.hdr->no_slot_events, 1, "%lu", (unsigned long)r.hdr->no_slot_events);

	/* Tracked allocations: sizes, complete 5-deep paths, matching frees. */
	for (int k = 0; k < 3; k++) {
		e = pl_find(&r, OS_EV_ALLOC, sizes[k]);
		cr_assert(e, "no ALLOC of %lu", (unsigned long)sizes[k]);
		cr_assert_geq(e->ev.nframes, 5, "only %u frames", e->ev.nframes);
		for (int i = 0; i < 5; i++)
			cr_expect(pl_in_func(&r, e->frames[i], chain[i]),
				  "size %lu frame %d %#lx not in %s", (unsigned long)sizes[k], i,
				  (unsigned long)e->frames[i], chain[i]);
		f = pl_find_addr(&r, e, OS_EV_FREE, e->ev.addr);
		cr_assert(f, "no FREE for block of %lu", (unsigned long)sizes[k]);
		cr_expect(f->slot == e->slot && f->ev.nframes == 0);
	}
	e = pl_find(&r, OS_EV_ALLOC, 40000);
	main_slot = e->slot;
	main_pid = e->ev.pid;
	main_tid = e->ev.tid;
	cr_expect_eq(main_pid, main_tid, "main thread tid");

	/* Small allocations are counted, never events. */
	ms = os_shm_slot(r.hdr, main_slot);
	cr_expect_geq(ms->stats.small_allocs, 100);
	cr_expect_geq(ms->stats.small_bytes, 2400);
	cr_expect_geq(ms->stats.tracked_allocs, 3);
	for (size_t i = 0; i < r.nev; i++)
		if (r.evs[i].ev.type == OS_EV_ALLOC || r.evs[i].ev.type == OS_EV_REALLOC)
			cr_expect_geq(r.evs[i].ev.size, PL_MIN, "small block became an event");
	first = pl_first_in_slot(&r, main_slot);
	cr_expect_eq(first->ev.type, OS_EV_THREAD);
	cr_expect_eq(ms->pid, main_pid);

	/* The worker thread: own slot, THREAD event with its name, exited. */
	e = pl_find(&r, OS_EV_ALLOC, 70000);
	cr_assert(e, "no ALLOC from the worker thread");
	cr_expect_neq(e->slot, main_slot);
	cr_expect_eq(e->ev.pid, main_pid);
	cr_expect_neq(e->ev.tid, main_tid);
	first = pl_first_in_slot(&r, e->slot);
	cr_assert_eq(first->ev.type, OS_EV_THREAD);
	cr_expect_eq(first->ev.size, strlen("os-worker"));
	cr_expect(first->ev.nframes == 2 && memcmp(first->frames, "os-worker", 9) == 0,
		  "thread name '%.16s'", (const char *)first->frames);
	cr_expect_eq(os_shm_slot(r.hdr, e->slot)->state, OS_SLOT_EXITED);
	cr_expect(pl_find_addr(&r, e, OS_EV_FREE, e->ev.addr));

	/* Anonymous mmap tracked with its path, munmap reported. */
	e = pl_find(&r, OS_EV_MMAP, 1 << 20);
	cr_assert(e, "no MMAP event");
	cr_expect_eq(e->slot, main_slot);
	cr_expect_geq(e->ev.nframes, 1);
	cr_expect(pl_find_addr(&r, e, OS_EV_MUNMAP, e->ev.addr));

	/* The fork child: a different slot, its own pid, never the parent's ring. */
	e = pl_find(&r, OS_EV_ALLOC, 80000);
	cr_assert(e, "no ALLOC from the fork child");
	cr_expect_neq(e->slot, main_slot);
	cr_expect_neq(e->ev.pid, main_pid);
	cr_expect_eq(os_shm_slot(r.hdr, e->slot)->pid, e->ev.pid);
	first = pl_first_in_slot(&r, e->slot);
	cr_expect_eq(first->ev.type, OS_EV_THREAD);
	cr_expect_eq(first->ev.pid, e->ev.pid);
	for (size_t i = 0; i < r.nev; i++)
		if (r.evs[i].slot == main_slot)
			cr_expect_eq(r.evs[i].ev.pid, main_pid, "foreign pid in the parent's ring");
	pl_cleanup(&r);
}

Test(preload, inert_without_env_or_with_bad_header)
{
	struct pl_run r = { 0 };
	char native[4096], so[PATH_MAX];
	int st;

	/* A header with the wrong magic: the library must stay disarmed. */
	pl_make_shm(&r, OS_SHM_MAGIC ^ 1);
	pl_run_profiled(&r, native);
	cr_expect_str_eq(pl_slurp(r.out_path), native);
	pl_drain(&r);
	cr_expect_eq(r.nev, 0, "%zu events written to a foreign shm", r.nev);
	cr_expect_eq(r.hdr->processes, 0);

	/* No OBJSCOPE_SHM at all: pure pass-through. */
	cr_assert(realpath(PL_SO, so));
	st = pl_exec(&r, so, NULL);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	cr_expect_str_eq(pl_slurp(r.out_path), native);
	pl_cleanup(&r);
}

Test(preload, disarmed_header_passes_through)
{
	struct pl_run r = { 0 };
	char native[4096];

	pl_make_shm(&r, OS_SHM_MAGIC);
	r.hdr->disarmed = 1;
	pl_run_profiled(&r, native);
	cr_expect_str_eq(pl_slurp(r.out_path), native);
	pl_drain(&r);
	cr_expect_eq(r.nev, 0, "%zu events while disarmed", r.nev);
	cr_expect_eq(r.hdr->processes, 2);
	pl_cleanup(&r);
}
