/* The kernel's sample filter for chosen threads (attacher/sampling/bpf_filter.h),
 * on real perf events: a thread in the filter's map has its samples counted
 * there and none written to the ring; another thread's are written as
 * before. Skipped where this kernel or these privileges refuse BPF. */
#include <criterion/criterion.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "attacher/sampling/bpf_filter.h"

struct spinner {
	pthread_t th;
	atomic_int go, tid;
};

static void *spin(void *arg)
{
	struct spinner *s = arg;
	struct timespec t0, t;
	volatile uint64_t x = 0;

	atomic_store(&s->tid, (int)syscall(SYS_gettid));
	while (!atomic_load(&s->go))
		usleep(1000);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do { /* 300 ms of this thread's CPU */
		for (int i = 0; i < 100000; i++)
			x += (uint64_t)i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 300000000L);
	return NULL;
}

/* A task-clock sampling event (1 ms) on thread tid, its ring mapped. */
static int open_event(int tid, void **ring, size_t *len)
{
	struct perf_event_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = 1000000;
	a.sample_type = PERF_SAMPLE_TID;
	fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	*len = (size_t)(1 + 16) * (size_t)getpagesize();
	*ring = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	cr_assert_neq(*ring, MAP_FAILED);
	return fd;
}

Test(bpf_filter, drops_and_counts_the_chosen_threads_samples)
{
	struct os_bpf_filter f;
	struct spinner a = { 0 }, b = { 0 };
	char err[160];
	void *ra, *rb;
	size_t la, lb;
	int fa, fb, rc;
	uint64_t na, nb, heada, headb;

	rc = os_bpf_filter_open(&f, err, sizeof(err));
	if (rc == -EPERM || rc == -ENOSYS || rc == -EINVAL || rc == -EACCES)
		cr_skip_test("BPF refused here: %s", err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert_not(os_bpf_filter_on(&f), "on only once given to an event");
	cr_assert_eq(pthread_create(&a.th, NULL, spin, &a), 0);
	cr_assert_eq(pthread_create(&b.th, NULL, spin, &b), 0);
	while (!atomic_load(&a.tid) || !atomic_load(&b.tid))
		usleep(1000);
	fa = open_event(atomic_load(&a.tid), &ra, &la);
	fb = open_event(atomic_load(&b.tid), &rb, &lb);
	if (fa < 0 || fb < 0)
		cr_skip_test("perf_event_open refused: %s", strerror(-(fa < 0 ? fa : fb)));
	rc = os_bpf_filter_attach(&f, fa);
	if (rc == -EPERM || rc == -EINVAL || rc == -EOPNOTSUPP)
		cr_skip_test("PERF_EVENT_IOC_SET_BPF refused here: %s", strerror(-rc));
	cr_assert_eq(rc, 0, "%s", strerror(-rc));
	cr_assert_eq(os_bpf_filter_attach(&f, fb), 0);
	cr_assert(os_bpf_filter_on(&f));
	cr_assert_eq(os_bpf_filter_add(&f, (uint32_t)atomic_load(&a.tid)), 0);
	cr_assert_eq(os_bpf_filter_add(&f, (uint32_t)atomic_load(&a.tid)), 0, "added twice: fine");
	atomic_store(&a.go, 1);
	atomic_store(&b.go, 1);
	pthread_join(a.th, NULL);
	pthread_join(b.th, NULL);
	heada = ((struct perf_event_mmap_page *)ra)->data_head;
	headb = ((struct perf_event_mmap_page *)rb)->data_head;
	na = os_bpf_filter_take(&f, (uint32_t)atomic_load(&a.tid), true);
	nb = os_bpf_filter_take(&f, (uint32_t)atomic_load(&b.tid), true);
	cr_log_info("filtered thread: %llu samples counted, %llu ring bytes; other: %llu ring bytes",
		    (unsigned long long)na, (unsigned long long)heada, (unsigned long long)headb);
	cr_expect_geq(na, 150, "300 ms at 1 kHz: %llu counted", (unsigned long long)na);
	cr_expect_eq(heada, 0, "the filtered thread's samples reached its ring");
	cr_expect_gt(headb, 150 * 16, "the other thread's samples were not written");
	cr_expect_eq(nb, 0, "a thread not in the map is never counted");
	cr_expect_eq(os_bpf_filter_take(&f, (uint32_t)atomic_load(&a.tid), false), 0,
		     "taken out of the map");
	munmap(ra, la);
	munmap(rb, lb);
	close(fa);
	close(fb);
	os_bpf_filter_close(&f);
	cr_expect_eq(os_bpf_filter_add(&f, 1), -EBADF, "closed: nothing added");
}
