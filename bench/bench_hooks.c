/* bench_hooks.c - cost of libobjscope.so's hooks inside a program.
 * Usage: bench_hooks [--quick] [PRELOAD_SO]   (default build/libobjscope.so;
 *        --quick: 100x fewer calls, for the test suite)
 * Creates a shm file, re-executes itself under LD_PRELOAD twice (armed with
 * OBJSCOPE_SHM, and inert without it) and prints ns per call for:
 *   memcpy 64 B through the hook vs libc's memcpy called directly,
 *   malloc+free of a tracked block (8 KiB) at call depth 3 and 20,
 *   malloc+free of a small (counted only) block, vs libc directly. */
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/ring.h"

#define B_RING (64u << 20)
#define B_SLOTS 2
#define B_ALLOCS 50000

typedef void *(*copy_fn)(void *, const void *, size_t);
typedef void *(*malloc_fn)(size_t);
typedef void (*free_fn)(void *);

static double b_now(void)
{
	return (double)os_now_ns();
}

/* Best of 5 rounds: the machine is shared, the minimum is the cost. */
static double b_copy(copy_fn fn, long n)
{
	static char src[64], dst[64];
	double best = 1e9;

	for (int r = 0; r < 5; r++) {
		double t0 = b_now(), t;

		for (long i = 0; i < n; i++) {
			fn(dst, src, 64);
			__asm__ volatile("" ::: "memory");
		}
		t = (b_now() - t0) / n;
		best = t < best ? t : best;
	}
	return best;
}

/* Allocates at `depth` extra frames so the unwinder has work to do. */
__attribute__((noinline, optimize("no-optimize-sibling-calls")))
static double b_alloc(malloc_fn m, free_fn f, size_t size, long n, int depth)
{
	volatile int keep = depth;
	double t0;

	if (depth > 0)
		return b_alloc(m, f, size, n, depth - 1) + (keep - depth);
	t0 = b_now();
	for (long i = 0; i < n; i++) {
		void *volatile p = m(size);

		f(p);
	}
	return (b_now() - t0) / n;
}

static int b_child(const char *mode)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	copy_fn hook_cpy = (copy_fn)dlsym(RTLD_DEFAULT, "memcpy");
	copy_fn libc_cpy = (copy_fn)dlsym(libc, "memcpy");
	malloc_fn hook_m = (malloc_fn)dlsym(RTLD_DEFAULT, "malloc");
	malloc_fn libc_m = (malloc_fn)dlsym(libc, "malloc");
	free_fn hook_f = (free_fn)dlsym(RTLD_DEFAULT, "free");
	free_fn libc_f = (free_fn)dlsym(libc, "free");
	long n = getenv("OBJSCOPE_BENCH_QUICK") ? 200000 : 20000000;

	if (!libc || !libc_cpy || !libc_m || hook_cpy == libc_cpy) {
		fprintf(stderr, "bench_hooks: the preload library is not interposed\n");
		return 1;
	}
	b_copy(libc_cpy, n / 10);
	b_copy(hook_cpy, n / 10);
	printf("%-6s memcpy 64B        libc %6.2f ns   hook %6.2f ns\n", mode,
	       b_copy(libc_cpy, n), b_copy(hook_cpy, n));
	printf("%-6s malloc+free 32B   libc %6.2f ns   hook %6.2f ns\n", mode,
	       b_alloc(libc_m, libc_f, 32, n / 10, 0), b_alloc(hook_m, hook_f, 32, n / 10, 0));
	printf("%-6s malloc+free 8KiB  libc %6.2f ns   hook %6.2f ns (depth 3)  %6.2f ns (depth 20)\n",
	       mode, b_alloc(libc_m, libc_f, 8192, B_ALLOCS, 0),
	       b_alloc(hook_m, hook_f, 8192, B_ALLOCS, 0),
	       b_alloc(hook_m, hook_f, 8192, B_ALLOCS, 17));
	return 0;
}

static void b_discard(const struct os_event *ev, void *arg)
{
	(void)ev;
	(*(unsigned long *)arg)++;
}

/* Drains every ring as the collector would, until the child exits. */
static int b_collect(struct os_shm_header *h, pid_t pid, unsigned long *events)
{
	uint64_t bad = 0;
	int st = 1;

	for (;;) {
		pid_t w = h ? waitpid(pid, &st, WNOHANG) : waitpid(pid, &st, 0);

		for (uint32_t i = 0; h && i < h->nslots; i++)
			os_ring_drain(os_shm_slot(h, i), h->ring_bytes, b_discard, events, &bad);
		if (w == pid)
			break;
		if (w < 0)
			return 1;
		usleep(200);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

static int b_run(const char *self, const char *so, struct os_shm_header *h, const char *shm,
		 const char *mode, unsigned long *events)
{
	pid_t pid = fork();

	if (pid < 0)
		return 1;
	if (pid == 0) {
		setenv("LD_PRELOAD", so, 1);
		if (shm)
			setenv(OS_SHM_ENV, shm, 1);
		else
			unsetenv(OS_SHM_ENV);
		execl(self, self, "--child", mode, (char *)NULL);
		_exit(127);
	}
	return b_collect(h, pid, events);
}

int main(int argc, char **argv)
{
	char so[PATH_MAX], self[PATH_MAX], shm[64];
	struct os_shm_header *h;
	size_t size = os_shm_size(B_SLOTS, B_RING);
	unsigned long events = 0;
	int fd, rc = 1;

	if (argc == 3 && strcmp(argv[1], "--child") == 0)
		return b_child(argv[2]);
	if (argc > 1 && strcmp(argv[1], "--quick") == 0) {
		setenv("OBJSCOPE_BENCH_QUICK", "1", 1); /* read by the children */
		argc--;
		argv++;
	}
	if (!realpath(argc > 1 ? argv[1] : "build/libobjscope.so", so) ||
	    !realpath("/proc/self/exe", self)) {
		fprintf(stderr, "bench_hooks: preload library not found (build it first)\n");
		return 1;
	}
	snprintf(shm, sizeof(shm), "/dev/shm/objscope-bench-%d", getpid());
	fd = open(shm, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)size) != 0)
		goto out;
	h = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED)
		goto out;
	h->magic = OS_SHM_MAGIC;
	h->version = OS_SHM_VERSION;
	h->nslots = B_SLOTS;
	h->ring_bytes = B_RING;
	h->total_bytes = size;
	h->min_size = 4096;
	h->flags = OS_SHM_F_NATIVE_EXACT; /* the tracked lines time the exact path */
	/* BENCH_SMALL_SAMPLE=BYTES: byte sampling of the small blocks
	 * (--small-sample, docs/NATIVE.md); unset: off */
	h->small_sample = getenv("BENCH_SMALL_SAMPLE") ? strtoull(getenv("BENCH_SMALL_SAMPLE"),
								  NULL, 0) : 0;
	rc = b_run(self, so, NULL, NULL, "inert", &events) ||
	     b_run(self, so, h, shm, "armed", &events);
	if (rc == 0)
		printf("armed: %lu events drained, %lu dropped\n", events,
		       (unsigned long)os_shm_slot(h, 0)->stats.dropped);
	/* 2 x B_ALLOCS tracked blocks (depth 3 and 20), an ALLOC and a FREE
	 * event each: fewer means the library never armed (a stale build with
	 * another shm layout did that) and the "armed" lines timed the inert
	 * hooks */
	if (rc == 0 && events < 4 * B_ALLOCS) {
		fprintf(stderr, "bench_hooks: the armed run wrote %lu events, expected at least %d: "
			"the preload library did not arm (rebuild it and this bench)\n", events,
			4 * B_ALLOCS);
		rc = 1;
	}
	munmap(h, size);
out:
	if (fd >= 0)
		close(fd);
	unlink(shm);
	return rc;
}
