/* reuse_calib.c - what the reuse model needs from this machine (reuse.h):
 * the instruction rate of a reference loop, the cost of a watchpoint
 * trap, the cache sizes. Run once, at the start of the collection. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "attacher/analyses/reuse.h"
#include "attacher/watch/watch.h"

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

double os_ru_calibrate_ips(void)
{
	static uint64_t buf[32] __attribute__((aligned(64)));
	double best = 0;

	for (int run = 0; run < 5; run++) {
		uint64_t n = 1000000, i = 0, s = 0, t0 = thread_cpu_ns(), dt;

		/* 8 instructions per iteration, 2 of them loads */
		__asm__ volatile("1:\n\t"
				 "mov (%[b],%[i],8), %%rax\n\t"
				 "add %%rax, %[s]\n\t"
				 "mov 8(%[b],%[i],8), %%rdx\n\t"
				 "add %%rdx, %[s]\n\t"
				 "add $2, %[i]\n\t"
				 "and $30, %[i]\n\t"
				 "dec %[n]\n\t"
				 "jnz 1b\n\t"
				 : [s] "+r"(s), [i] "+r"(i), [n] "+r"(n)
				 : [b] "r"(buf)
				 : "rax", "rdx", "cc", "memory");
		dt = thread_cpu_ns() - t0;
		if (dt && 8e6 / (double)dt > best)
			best = 8e6 / (double)dt;
	}
	return best;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double os_ru_trap_once(struct watch_set *self, uint64_t cookie)
{
	static volatile uint64_t cell[8] __attribute__((aligned(64)));
	pid_t tid = (pid_t)syscall(SYS_gettid);
	struct watch_hit h;
	int r = watch_arm_pair(self, tid, (uint64_t)&cell[0], 8, cookie, 0);

	if (r)
		return r;
	cell[0] = 1; /* first access: its trap is what is measured */
	cell[0] = 2;
	if (watch_poll_wait(self, &h, 1, 100) == 1 && h.pair)
		return (double)h.run_ns;
	watch_disarm(self, cookie);
	return -EIO;
}

double os_ru_median(double *v, size_t n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* "32K" / "512K" / "32768K" / "8M" -> bytes; 0 when unreadable. */
static uint64_t read_size(const char *path)
{
	FILE *f = fopen(path, "r");
	unsigned long long v = 0;
	char unit = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%llu%c", &v, &unit) < 1)
		v = 0;
	fclose(f);
	if (unit == 'K')
		v <<= 10;
	else if (unit == 'M')
		v <<= 20;
	else if (unit == 'G')
		v <<= 30;
	return v;
}

void os_ru_cache_sizes(uint64_t out[3])
{
	memset(out, 0, 3 * sizeof(*out));
	for (int i = 0; i < 8; i++) {
		char path[128], type[32] = "";
		unsigned level = 0;
		FILE *f;

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
		f = fopen(path, "r");
		if (!f)
			break;
		if (fscanf(f, "%u", &level) != 1)
			level = 0;
		fclose(f);
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
		f = fopen(path, "r");
		if (f) {
			if (fscanf(f, "%31s", type) != 1)
				type[0] = 0;
			fclose(f);
		}
		if (!strcmp(type, "Instruction") || level < 1)
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
		if (level == 1)
			out[0] = read_size(path);
		else if (level == 2)
			out[1] = read_size(path);
		else /* the last level there is */
			out[2] = read_size(path);
	}
}
