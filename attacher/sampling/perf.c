/* perf.c - per-CPU inherited perf events and their ring buffers. */
#include "attacher/sampling/perf.h"
#include "attacher/sampling/bpf_filter.h"
#include "common/grow.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_CHAIN 256

struct perf_cpu {
	int fd;
	void *base;              /* control page + data */
	size_t data_size;
	uint64_t held;           /* hold mode: drained up to here, not yet released */
	bool has_held;
};

struct os_perf {
	int ncpu;
	struct perf_cpu *cpus;
	uint64_t sample_type;
	uint64_t regs_mask;
	size_t page;
	uint64_t bad;
	int *extra;              /* events writing into a cpus[] buffer (SET_OUTPUT) */
	int nextra, capextra;
	struct steer_ev {        /* the sampling events (os_perf_steer), also in cpus[]/extra */
		int fd;
		pid_t tid;       /* per-thread events (os_perf_open_threads): the thread, else 0 */
		bool muted;      /* switched off for good (os_perf_mute_thread) */
	} *steer;
	size_t nsteer, capsteer;
	pid_t opening;           /* the thread whose events open_thread_cpu opens */
	bool steer_on;
	_Alignas(8) uint8_t scratch[65536]; /* records that wrap around the buffer end (8-aligned:
					     * parsed in place) */
	bool memory;             /* os_perf_open_memory: cpus[0] is an anonymous ring */
	uint64_t chain[MAX_CHAIN];
	bool hold;               /* os_perf_hold */
};

static int perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static int online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	return n > 0 ? (int)n : 1;
}

/* An empty set of per-CPU buffers for events configured by attr. */
static struct os_perf *perf_alloc(const struct perf_event_attr *attr)
{
	struct os_perf *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->page = (size_t)sysconf(_SC_PAGESIZE);
	p->ncpu = online_cpus();
	p->cpus = calloc((size_t)p->ncpu, sizeof(*p->cpus));
	p->sample_type = attr->sample_type;
	p->regs_mask = attr->sample_regs_user;
	if (!p->cpus) {
		free(p);
		return NULL;
	}
	for (int i = 0; i < p->ncpu; i++)
		p->cpus[i].fd = -1;
	return p;
}

static const char *perf_hint(int e)
{
	return e == EACCES || e == EPERM ? " — run as root or set kernel.perf_event_paranoid <= 1"
	       : e == ENOENT || e == EOPNOTSUPP ? " — the kernel does not support this event here"
					       : "";
}

static int fd_push(int **v, int *n, int *cap, int fd)
{
	size_t c = (size_t)*cap;
	int *nv = os_grow_max(*v, &c, (size_t)*n + 1, sizeof(int), 64, INT_MAX);

	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = (int)c;
	(*v)[(*n)++] = fd;
	return 0;
}

/* Side-band records (task, comm, mmap) travel on an event of their own, a
 * software dummy that samples nothing and stays enabled, so that the
 * sampling event can be switched off and on (os_perf_steer) without
 * losing a thread's birth, name or exit, or a mapping: the kernel writes
 * side-band records only for enabled events. Both write into the same
 * ring (SET_OUTPUT). Whether attr asks for side-band: then *side and
 * *samp are the two halves. */
static bool split_sideband(const struct perf_event_attr *attr, struct perf_event_attr *side,
			   struct perf_event_attr *samp)
{
	if (!(attr->task || attr->comm || attr->mmap || attr->mmap2))
		return false;
	*samp = *attr;
	samp->task = samp->comm = samp->comm_exec = 0;
	samp->mmap = samp->mmap2 = samp->mmap_data = 0;
	/* the side-band event: attr's flags, clock, enabling and wakeups, no
	 * sampling; the sample_id_all trailer is laid out by the id bits of
	 * sample_type alone: the same as the sampler's, so one parser reads
	 * both in the shared ring */
	*side = *attr;
	side->type = PERF_TYPE_SOFTWARE;
	side->config = PERF_COUNT_SW_DUMMY;
	side->config1 = side->config2 = 0;
	side->sample_period = 0;
	side->freq = 0;
	side->precise_ip = 0;
	side->sample_type = attr->sample_type & (PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
						 PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |
						 PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER);
	side->sample_regs_user = 0;
	side->sample_stack_user = 0;
	side->sample_max_stack = 0;
	side->branch_sample_type = 0;
	side->exclude_callchain_user = side->exclude_callchain_kernel = 0;
	return true;
}

/* fd writes into cpu's ring: the first event of a CPU owns it (mapped),
 * later ones are redirected into it. steer: a sampling event. 0 or -errno. */
static int ring_add(struct os_perf *p, int cpu, int fd, bool steer, unsigned buf_pages,
		    char *err, size_t errlen)
{
	struct perf_cpu *c = &p->cpus[cpu];
	int e;

	if (steer) {
		struct steer_ev *v = os_grow_max(p->steer, &p->capsteer, p->nsteer + 1,
						 sizeof(*v), 64, INT_MAX);

		if (!v) {
			close(fd);
			return -ENOMEM;
		}
		p->steer = v;
		/* per-thread (opening set): the thread of each sampling event */
		v[p->nsteer++] = (struct steer_ev){ .fd = fd, .tid = p->opening, .muted = false };
	}
	if (c->fd < 0) {
		c->fd = fd;
		c->data_size = (size_t)buf_pages * p->page;
		c->base = mmap(NULL, c->data_size + p->page, PROT_READ | PROT_WRITE, MAP_SHARED,
			       fd, 0);
		if (c->base == MAP_FAILED) {
			e = errno;
			c->base = NULL;
			snprintf(err, errlen, "mmap of the perf ring buffer: %s%s", strerror(e),
				 e == EPERM ? " — raise kernel.perf_event_mlock_kb" : "");
			return -e;
		}
		return 0;
	}
	if (fd_push(&p->extra, &p->nextra, &p->capextra, fd) < 0) {
		close(fd);
		return -ENOMEM;
	}
	if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, c->fd) < 0) {
		e = errno;
		snprintf(err, errlen, "perf: redirecting an event into cpu %d's ring: %s", cpu,
			 strerror(e));
		return -e;
	}
	return 0;
}

/* The events of pid (a process with inherit, or a thread) on cpu: the
 * side-band event first (it owns the ring), then the sampler. 0, or
 * -errno with errno left as perf_event_open set it, *failed_fd_open true
 * when the failure was perf_event_open's. */
static int open_events(struct os_perf *p, struct perf_event_attr *attr, pid_t pid, int cpu,
		       unsigned buf_pages, bool *open_failed, char *err, size_t errlen)
{
	struct perf_event_attr side, samp;
	bool split = split_sideband(attr, &side, &samp);
	int fd, rc;

	*open_failed = false;
	if (split) {
		fd = perf_event_open(&side, pid, cpu);
		if (fd < 0) {
			*open_failed = true;
			return -errno;
		}
		rc = ring_add(p, cpu, fd, false, buf_pages, err, errlen);
		if (rc < 0)
			return rc;
	}
	fd = perf_event_open(split ? &samp : attr, pid, cpu);
	if (fd < 0) {
		*open_failed = true;
		return -errno;
	}
	return ring_add(p, cpu, fd, true, buf_pages, err, errlen);
}

int os_perf_open(struct os_perf **out, pid_t pid, struct perf_event_attr *attr,
		 unsigned buf_pages, char *err, size_t errlen)
{
	struct os_perf *p;
	int rc = 0, i;

	*out = NULL;
	p = perf_alloc(attr);
	if (!p)
		return -ENOMEM;
	for (i = 0; i < p->ncpu; i++) {
		bool open_failed;

		rc = open_events(p, attr, pid, i, buf_pages, &open_failed, err, errlen);
		if (rc == -ENODEV && open_failed && p->cpus[i].fd < 0)
			continue; /* offline CPU: skip it */
		if (rc < 0) {
			if (open_failed)
				snprintf(err, errlen, "perf_event_open (cpu %d): %s%s", i,
					 strerror(-rc), perf_hint(-rc));
			goto out;
		}
	}
	p->steer_on = !attr->disabled;
	*out = p;
	return 0;
out:
	os_perf_close(p);
	return rc;
}

int os_perf_open_memory(struct os_perf **out, pid_t pid, struct perf_event_attr *attr,
			unsigned buf_pages, char *err, size_t errlen)
{
	struct os_perf *p = perf_alloc(attr);
	struct perf_cpu *c;

	(void)pid;
	*out = NULL;
	if (!p) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	c = &p->cpus[0];
	c->data_size = (size_t)buf_pages * p->page;
	c->base = mmap(NULL, c->data_size + p->page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c->base == MAP_FAILED) {
		c->base = NULL;
		os_perf_close(p);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	p->memory = true;
	*out = p;
	return 0;
}

int os_perf_memory_write(struct os_perf *p, const void *rec, size_t len)
{
	struct perf_cpu *c = &p->cpus[0];
	struct perf_event_mmap_page *mp = c->base;
	uint8_t *data = (uint8_t *)c->base + p->page;
	uint64_t head = mp->data_head;

	if (!p->memory || len % 8 || len > c->data_size - (head - mp->data_tail))
		return -ENOSPC;
	for (size_t i = 0; i < len; i++)
		data[(head + i) & (c->data_size - 1)] = ((const uint8_t *)rec)[i];
	__atomic_store_n(&mp->data_head, head + len, __ATOMIC_RELEASE);
	return 0;
}

static int ioctl_all(struct os_perf *p, unsigned long req)
{
	int i, rc = 0;

	for (i = 0; i < p->ncpu; i++)
		if (p->cpus[i].fd >= 0 && ioctl(p->cpus[i].fd, req, 0) < 0)
			rc = -errno;
	for (i = 0; i < p->nextra; i++)
		if (ioctl(p->extra[i], req, 0) < 0)
			rc = -errno;
	return rc;
}

int os_perf_enable(struct os_perf *p)
{
	return ioctl_all(p, PERF_EVENT_IOC_ENABLE);
}

int os_perf_disable(struct os_perf *p)
{
	return ioctl_all(p, PERF_EVENT_IOC_DISABLE);
}

int os_perf_steer(struct os_perf *p, bool on)
{
	int rc = 0;

	if (on == p->steer_on)
		return 0;
	for (size_t i = 0; i < p->nsteer; i++) {
		if (p->steer[i].muted)
			continue; /* off for good */
		if (ioctl(p->steer[i].fd, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0) < 0)
			rc = -errno;
	}
	p->steer_on = on;
	return rc;
}

int os_perf_mute_thread(struct os_perf *p, pid_t tid)
{
	int n = 0;

	if (!p || tid <= 0)
		return 0;
	for (size_t i = 0; i < p->nsteer; i++) {
		if (p->steer[i].tid != tid || p->steer[i].muted)
			continue;
		/* DISABLE reaches the copies that threads it made inherited;
		 * os_perf_steer never enables it again */
		if (ioctl(p->steer[i].fd, PERF_EVENT_IOC_DISABLE, 0) < 0)
			continue;
		p->steer[i].muted = true;
		n++;
	}
	return n;
}

/* Calibration work: strided reads over a buffer the size of an L2 slice. */
static uint64_t calib_work(const volatile uint64_t *buf, size_t n)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i += 8)
		sum += buf[i];
	return sum;
}

/* The calibrating thread's CPU time: other tenants' time slices do not
 * count, the kernel's sampling work in its interrupts does (it is charged
 * to the thread it interrupts). */
static uint64_t thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#define CALIB_REPS 5
#define CALIB_CHUNKS 1000       /* of calib_work, per stretch (~1.5 ms here) */
#define CALIB_WORDS 8192        /* 64 KiB */
#define CALIB_PERIOD_NS 50000ULL /* task-clock: 20 kHz, to make the cost show */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One stretch of calibration work, in the thread's CPU ns. */
static uint64_t calib_stretch(struct perf_event_mmap_page *mp)
{
	static uint64_t buf[CALIB_WORDS];
	volatile uint64_t sink = 0;
	uint64_t t = thread_ns();

	for (int i = 0; i < CALIB_CHUNKS; i++) {
		sink += calib_work(buf, CALIB_WORDS);
		/* discard what was written: the ring never fills */
		if (mp)
			__atomic_store_n(&mp->data_tail,
					 __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE),
					 __ATOMIC_RELEASE);
	}
	(void)sink;
	return thread_ns() - t;
}

/* os_perf_sample_cost_ns, or with `dropped` os_perf_dropped_cost_ns: the
 * calibrating thread's samples then go to a BPF filter that drops them. */
static double sample_cost(const struct perf_event_attr *attr_in, unsigned buf_pages, bool dropped)
{
	struct perf_event_attr attr = *attr_in, side;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), size = (size_t)buf_pages * page;
	double cost[CALIB_REPS];
	int n = 0, fd;
	void *base;
	struct os_bpf_filter f;
	char why[128];

	split_sideband(attr_in, &side, &attr); /* the sampler alone */
	attr.inherit = 0;
	attr.disabled = 1;
	attr.enable_on_exec = 0;
	attr.watermark = 0;
	attr.wakeup_events = 0;
	attr.freq = 0;
	if (attr.type == PERF_TYPE_SOFTWARE && attr.config == PERF_COUNT_SW_TASK_CLOCK)
		attr.sample_period = CALIB_PERIOD_NS;
	fd = perf_event_open(&attr, 0, -1);
	if (fd < 0)
		return -1;
	os_bpf_filter_init(&f);
	if (dropped && (os_bpf_filter_open(&f, why, sizeof(why)) < 0 ||
			os_bpf_filter_attach(&f, fd) < 0 ||
			os_bpf_filter_add(&f, (uint32_t)syscall(SYS_gettid)) < 0)) {
		os_bpf_filter_close(&f);
		close(fd);
		return -1;
	}
	base = mmap(NULL, size + page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		os_bpf_filter_close(&f);
		close(fd);
		return -1;
	}
	/* each repetition: a stretch without sampling, one with; the cost of
	 * a sample is the difference over the samples taken; the median of
	 * the repetitions (a tenant's cache traffic moves single stretches) */
	for (int rep = 0; rep < CALIB_REPS; rep++) {
		uint64_t off = calib_stretch(NULL), on, count = 0;

		ioctl(fd, PERF_EVENT_IOC_RESET, 0);
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
		on = calib_stretch(base);
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		if (read(fd, &count, sizeof(count)) != (ssize_t)sizeof(count) ||
		    !attr.sample_period || count < attr.sample_period)
			continue;
		cost[n++] = ((double)on - (double)off) /
			    ((double)count / (double)attr.sample_period);
	}
	munmap(base, size + page);
	close(fd);
	os_bpf_filter_close(&f);
	if (!n)
		return -1;
	qsort(cost, (size_t)n, sizeof(cost[0]), cmp_double);
	return cost[n / 2] > 0 ? cost[n / 2] : 0;
}

double os_perf_sample_cost_ns(const struct perf_event_attr *attr, unsigned buf_pages)
{
	return sample_cost(attr, buf_pages, false);
}

double os_perf_dropped_cost_ns(const struct perf_event_attr *attr, unsigned buf_pages)
{
	return sample_cost(attr, buf_pages, true);
}

int os_perf_steer_fds(const struct os_perf *p)
{
	return (int)p->nsteer;
}

int os_perf_steer_fd(const struct os_perf *p, int i)
{
	return p->steer[i].fd;
}

int os_perf_nfds(const struct os_perf *p)
{
	return p->ncpu;
}

int os_perf_fd(const struct os_perf *p, int i)
{
	return p->cpus[i].fd;
}

uint64_t os_perf_bad_records(const struct os_perf *p)
{
	return p->bad;
}

void os_perf_close(struct os_perf *p)
{
	int i;

	if (!p)
		return;
	for (i = 0; p->cpus && i < p->ncpu; i++) {
		if (p->cpus[i].base)
			munmap(p->cpus[i].base, p->cpus[i].data_size + p->page);
		if (p->cpus[i].fd >= 0)
			close(p->cpus[i].fd);
	}
	for (i = 0; i < p->nextra; i++)
		close(p->extra[i]);
	free(p->extra);
	free(p->steer);
	free(p->cpus);
	free(p);
}

/* The events of thread tid on cpu. 0, 1 when the thread is gone, or -errno. */
static int open_thread_cpu(struct os_perf *p, struct perf_event_attr *attr, pid_t tid, int cpu,
			   unsigned buf_pages, char *err, size_t errlen)
{
	bool open_failed;
	int rc;

	p->opening = tid;
	rc = open_events(p, attr, tid, cpu, buf_pages, &open_failed, err, errlen);
	p->opening = 0;

	if (rc < 0 && open_failed) {
		if (rc == -ESRCH || rc == -ENODEV) {
			errno = -rc;
			return 1;
		}
		snprintf(err, errlen, "perf_event_open (thread %d, cpu %d): %s%s", (int)tid, cpu,
			 strerror(-rc), perf_hint(-rc));
	}
	return rc;
}

static bool tid_seen(const pid_t *tids, size_t n, pid_t tid)
{
	for (size_t i = 0; i < n; i++)
		if (tids[i] == tid)
			return true;
	return false;
}

int os_perf_open_threads(struct os_perf **out, pid_t pid, struct perf_event_attr *attr,
			 unsigned buf_pages, char *err, size_t errlen)
{
	struct os_perf *p;
	pid_t *tids = NULL;
	size_t ntids = 0, cap = 0;
	int rc = 0, added;
	char dir[64];

	*out = NULL;
	p = perf_alloc(attr);
	if (!p)
		return -ENOMEM;
	/* two events per thread and CPU (the sampler and its side-band): the
	 * soft limit on open files up to the hard one, as perf does */
	{
		struct rlimit rl;

		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	/* until a listing shows no thread we have not opened: a thread created
	 * by one whose events were open already is followed through inherit */
	do {
		DIR *d = opendir(dir);
		struct dirent *de;

		added = 0;
		if (!d) {
			rc = -ESRCH;
			snprintf(err, errlen, "process %d exited", (int)pid);
			goto out;
		}
		while ((de = readdir(d))) {
			pid_t tid = (pid_t)atoi(de->d_name), *nt;

			if (tid <= 0 || tid_seen(tids, ntids, tid))
				continue;
			nt = os_grow(tids, &cap, ntids + 1, sizeof(pid_t), 64);
			if (!nt) {
				rc = -ENOMEM;
				closedir(d);
				goto out;
			}
			tids = nt;
			tids[ntids++] = tid;
			added++;
			for (int cpu = 0; cpu < p->ncpu; cpu++) {
				rc = open_thread_cpu(p, attr, tid, cpu, buf_pages, err, errlen);
				if (rc < 0) {
					closedir(d);
					goto out;
				}
				if (rc == 1 && errno == ESRCH)
					break;
			}
			rc = 0;
		}
		closedir(d);
	} while (added);
	for (int i = 0; i < p->ncpu; i++)
		if (p->cpus[i].fd >= 0)
			goto done;
	rc = -ESRCH;
	snprintf(err, errlen, "process %d exited", (int)pid);
	goto out;
done:
	free(tids);
	p->steer_on = !attr->disabled;
	*out = p;
	return 0;
out:
	free(tids);
	os_perf_close(p);
	return rc;
}

/* Bounded reader over one record. */
struct rd {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t rd_u64(struct rd *r)
{
	uint64_t v = 0;

	if (r->end - r->p < 8) {
		r->bad = true;
		r->p = r->end;
		return 0;
	}
	memcpy(&v, r->p, 8);
	r->p += 8;
	return v;
}

static void rd_u32x2(struct rd *r, uint32_t *a, uint32_t *b)
{
	uint64_t v = rd_u64(r);

	*a = (uint32_t)v;
	*b = (uint32_t)(v >> 32);
}

static int parse_sample(struct os_perf *p, const void *rec, size_t len,
			struct os_perf_sample *s)
{
	struct rd r = { rec, (const uint8_t *)rec + len, false };
	uint64_t t = p->sample_type;
	uint32_t dummy;

	memset(s, 0, sizeof(*s));
	if (t & PERF_SAMPLE_IDENTIFIER)
		rd_u64(&r);
	if (t & PERF_SAMPLE_IP)
		s->ip = rd_u64(&r);
	if (t & PERF_SAMPLE_TID)
		rd_u32x2(&r, &s->pid, &s->tid);
	if (t & PERF_SAMPLE_TIME)
		s->time = rd_u64(&r);
	if (t & PERF_SAMPLE_ADDR) {
		s->addr = rd_u64(&r);
		s->has |= OS_PS_ADDR;
	}
	if (t & PERF_SAMPLE_ID)
		rd_u64(&r);
	if (t & PERF_SAMPLE_STREAM_ID)
		rd_u64(&r);
	if (t & PERF_SAMPLE_CPU) {
		rd_u32x2(&r, &s->cpu, &dummy);
		s->has |= OS_PS_CPU;
	}
	if (t & PERF_SAMPLE_PERIOD)
		s->period = rd_u64(&r);
	if (t & PERF_SAMPLE_READ)
		return -EPROTO; /* not used by objscope */
	if (t & PERF_SAMPLE_CALLCHAIN) {
		uint64_t nr = rd_u64(&r), i;
		bool user = true;

		if (nr > (uint64_t)(r.end - r.p) / 8)
			return -EPROTO;
		for (i = 0; i < nr; i++) {
			uint64_t ip = rd_u64(&r);

			if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
				user = ip == (uint64_t)PERF_CONTEXT_USER;
				continue;
			}
			if (user && s->nchain < MAX_CHAIN)
				p->chain[s->nchain++] = ip;
		}
		s->chain = p->chain;
	}
	if (t & PERF_SAMPLE_RAW) {
		uint32_t sz, pad;

		if (r.end - r.p < 4)
			return -EPROTO;
		memcpy(&sz, r.p, 4);
		(void)pad;
		if ((uint64_t)sz + 4 > (uint64_t)(r.end - r.p))
			return -EPROTO;
		r.p += 4 + sz;
	}
	if (t & PERF_SAMPLE_BRANCH_STACK)
		return -EPROTO; /* not used by objscope */
	if (t & PERF_SAMPLE_REGS_USER) {
		uint64_t abi = rd_u64(&r);

		if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
			for (int b = 0; b < 64; b++) {
				if (!(p->regs_mask & (1ULL << b)))
					continue;
				uint64_t v = rd_u64(&r);

				if (b < OS_REG_COUNT)
					s->regs[b] = v;
			}
			if (abi == PERF_SAMPLE_REGS_ABI_64)
				s->has |= OS_PS_REGS;
		}
	}
	if (t & PERF_SAMPLE_STACK_USER) {
		uint64_t sz = rd_u64(&r), dyn;
		const uint8_t *data = r.p;

		if (sz > (uint64_t)(r.end - r.p))
			return -EPROTO;
		r.p += sz;
		if (sz) {
			dyn = rd_u64(&r);
			s->stack = data;
			s->stack_len = dyn < sz ? dyn : sz;
		}
	}
	if (t & PERF_SAMPLE_WEIGHT_TYPE) {
		uint64_t w = rd_u64(&r);

		/* WEIGHT_STRUCT: the latency is its first 32 bits (var1_dw) */
		s->weight = t & PERF_SAMPLE_WEIGHT_STRUCT ? (uint32_t)w : w;
		s->has |= OS_PS_WEIGHT;
	}
	if (t & PERF_SAMPLE_DATA_SRC) {
		s->data_src = rd_u64(&r);
		s->has |= OS_PS_DATA_SRC;
	}
	if (t & PERF_SAMPLE_TRANSACTION)
		rd_u64(&r);
	if (t & PERF_SAMPLE_REGS_INTR)
		return -EPROTO; /* not used by objscope */
	if (t & PERF_SAMPLE_PHYS_ADDR) {
		s->phys_addr = rd_u64(&r);
		s->has |= OS_PS_PHYS;
	}
	return r.bad ? -EPROTO : 0;
}

int os_perf_parse_sample(const void *rec, size_t len, uint64_t sample_type, uint64_t regs_mask,
			 struct os_perf_sample *s)
{
	static struct os_perf p; /* only chain storage is used */

	p.sample_type = sample_type;
	p.regs_mask = regs_mask;
	return parse_sample(&p, rec, len, s);
}

/* The sample_id trailer of non-sample records: we need pid/tid and time. */
static void parse_id_trailer(const struct os_perf *p, const uint8_t *end, uint64_t *time)
{
	uint64_t t = p->sample_type;
	int n = 0, time_at = -1;

	if (t & PERF_SAMPLE_TID)
		n++;
	if (t & PERF_SAMPLE_TIME)
		time_at = n++;
	if (t & PERF_SAMPLE_ID)
		n++;
	if (t & PERF_SAMPLE_STREAM_ID)
		n++;
	if (t & PERF_SAMPLE_CPU)
		n++;
	if (t & PERF_SAMPLE_IDENTIFIER)
		n++;
	*time = 0;
	if (time_at >= 0)
		memcpy(time, end - 8 * (n - time_at), 8);
}

static size_t trailer_size(const struct os_perf *p)
{
	uint64_t t = p->sample_type;

	return 8 * (!!(t & PERF_SAMPLE_TID) + !!(t & PERF_SAMPLE_TIME) + !!(t & PERF_SAMPLE_ID) +
		    !!(t & PERF_SAMPLE_STREAM_ID) + !!(t & PERF_SAMPLE_CPU) +
		    !!(t & PERF_SAMPLE_IDENTIFIER));
}

static void dispatch(struct os_perf *p, const struct perf_event_header *h,
		     const struct os_perf_cb *cb, void *arg)
{
	const uint8_t *body = (const uint8_t *)(h + 1);
	size_t blen = h->size - sizeof(*h);
	const uint8_t *end = body + blen;
	size_t tsz = trailer_size(p);
	uint64_t time = 0;

	if (h->type != PERF_RECORD_SAMPLE) {
		if (blen < tsz) {
			p->bad++;
			return;
		}
		parse_id_trailer(p, end, &time);
	}
	switch (h->type) {
	case PERF_RECORD_SAMPLE: {
		struct os_perf_sample s;

		if (parse_sample(p, body, blen, &s) < 0) {
			p->bad++;
			return;
		}
		if (p->hold && s.stack && (const uint8_t *)h != p->scratch)
			s.has |= OS_PS_IN_RING;
		if (cb->sample)
			cb->sample(arg, &s);
		break;
	}
	case PERF_RECORD_COMM: {
		uint32_t v[2];
		char comm[64];
		size_t n = blen - tsz;

		if (n < 9) {
			p->bad++;
			return;
		}
		memcpy(v, body, 8);
		n -= 8;
		if (n > sizeof(comm) - 1)
			n = sizeof(comm) - 1;
		memcpy(comm, body + 8, n);
		comm[n] = 0;
		if (cb->comm)
			cb->comm(arg, v[0], v[1], comm, h->misc & PERF_RECORD_MISC_COMM_EXEC, time);
		break;
	}
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT: {
		uint32_t v[4];

		if (blen - tsz < 24) {
			p->bad++;
			return;
		}
		memcpy(v, body, 16);
		if (h->type == PERF_RECORD_FORK && cb->fork)
			cb->fork(arg, v[0], v[1], v[2], v[3], time);
		if (h->type == PERF_RECORD_EXIT && cb->exit)
			cb->exit(arg, v[0], v[1], v[2], v[3], time);
		break;
	}
	case PERF_RECORD_MMAP2: {
		struct {
			uint32_t pid, tid;
			uint64_t addr, len, pgoff;
			uint8_t id[24];
			uint32_t prot, flags;
		} m;
		char file[4096];
		size_t n;

		if (blen < sizeof(m) + tsz) {
			p->bad++;
			return;
		}
		memcpy(&m, body, sizeof(m));
		n = blen - tsz - sizeof(m);
		if (n > sizeof(file) - 1)
			n = sizeof(file) - 1;
		memcpy(file, body + sizeof(m), n);
		file[n] = 0;
		if (cb->mmap) {
			struct os_file_id id = { 0 };

			/* without PERF_RECORD_MISC_MMAP_BUILD_ID the id bytes are
			 * maj, min, ino, ino_generation */
			if (!(h->misc & (1 << 14))) {
				memcpy(&id.maj, m.id, 4);
				memcpy(&id.min, m.id + 4, 4);
				memcpy(&id.ino, m.id + 8, 8);
			}
			cb->mmap(arg, m.pid, m.tid, m.addr, m.len, m.pgoff, m.prot, m.flags, file,
				 &id, time);
		}
		break;
	}
	case PERF_RECORD_LOST: {
		uint64_t v[2];

		if (blen < 16) {
			p->bad++;
			return;
		}
		memcpy(v, body, 16);
		if (cb->lost)
			cb->lost(arg, v[1]);
		break;
	}
	case PERF_RECORD_LOST_SAMPLES: {
		uint64_t v;

		if (blen < 8) {
			p->bad++;
			return;
		}
		memcpy(&v, body, 8);
		if (cb->lost)
			cb->lost(arg, v);
		break;
	}
	default:
		break; /* THROTTLE etc.: nothing to do */
	}
}

uint64_t os_perf_read(struct os_perf *p, const struct os_perf_cb *cb, void *arg)
{
	uint64_t n = 0;

	for (int i = 0; i < p->ncpu; i++) {
		struct perf_cpu *c = &p->cpus[i];
		struct perf_event_mmap_page *mp = c->base;
		uint8_t *data;
		uint64_t head, tail, mask;

		if (!mp)
			continue;
		data = (uint8_t *)c->base + p->page;
		mask = c->data_size - 1;
		head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
		tail = c->has_held ? c->held : mp->data_tail;
		while (tail < head) {
			struct perf_event_header hdr;
			uint64_t off = tail & mask;
			const struct perf_event_header *h;

			if (c->data_size - off >= sizeof(hdr)) {
				memcpy(&hdr, data + off, sizeof(hdr));
			} else {
				size_t first = c->data_size - off;

				memcpy(&hdr, data + off, first);
				memcpy((uint8_t *)&hdr + first, data, sizeof(hdr) - first);
			}
			if (hdr.size < sizeof(hdr) || hdr.size > head - tail) {
				p->bad++;
				tail = head;
				break;
			}
			if (off + hdr.size <= c->data_size) {
				h = (const void *)(data + off);
				if ((uintptr_t)h % 8) { /* keep 8-byte alignment for parsing */
					memcpy(p->scratch, h, hdr.size);
					h = (const void *)p->scratch;
				}
			} else {
				size_t first = c->data_size - off;

				memcpy(p->scratch, data + off, first);
				memcpy(p->scratch + first, data, hdr.size - first);
				h = (const void *)p->scratch;
			}
			dispatch(p, h, cb, arg);
			n++;
			tail += hdr.size;
		}
		if (p->hold) {
			c->held = tail;
			c->has_held = true;
		} else {
			__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
			c->has_held = false;
		}
	}
	return n;
}

void os_perf_hold(struct os_perf *p, bool on)
{
	if (!on)
		os_perf_release(p);
	p->hold = on;
}

void os_perf_release(struct os_perf *p)
{
	for (int i = 0; i < p->ncpu; i++) {
		struct perf_cpu *c = &p->cpus[i];

		if (!c->base || !c->has_held)
			continue;
		__atomic_store_n(&((struct perf_event_mmap_page *)c->base)->data_tail, c->held,
				 __ATOMIC_RELEASE);
		c->has_held = false;
	}
}
