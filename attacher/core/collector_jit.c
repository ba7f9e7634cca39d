/* collector_jit.c - the collector's policy for JIT compiler threads
 * (collector_jit.h): their kind, the BPF filter, muting, quiet blocks. */
#include "attacher/core/collector_jit.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "runtimes/runtime.h"

/* Whether th is a JIT compiler thread of a runtime, by its name. The
 * kernel's COMM record of the runtime naming the thread may be read after
 * the thread's first samples (another CPU's ring, or a later round), or be
 * lost, so the first decision reads the name from /proc (and keeps it as
 * the thread's name), and a newer name decides again. */
static bool jit_thread(struct os_collector *c, struct os_thread_info *th)
{
	struct os_runtime *rt = c->attrib.rt;
	char path[64], name[sizeof(th->name)];
	const char *nm = th->name;
	ssize_t n;
	int fd, kind;

	if (!rt || !rt->ops->thread_kind)
		return false;
	if (th->kind_done && th->kind_time == th->name_time)
		return th->jit;
	if (!th->kind_done) { /* once per thread */
		snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", th->pid, th->tid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		n = fd >= 0 ? read(fd, name, sizeof(name) - 1) : -1;
		if (fd >= 0)
			close(fd);
		if (n > 0) {
			name[n] = 0;
			name[strcspn(name, "\n")] = 0;
			/* the thread is listed (threads[]) under the name it was
			 * judged by, also when its COMM record was lost or comes
			 * later (a later record still replaces it) */
			if (name[0] && strcmp(name, th->name) != 0)
				snprintf(th->name, sizeof(th->name), "%s", name);
			nm = th->name;
		}
	}
	kind = rt->ops->thread_kind(rt, th->pid, nm);
	th->kind_done = true;
	th->kind_time = th->name_time;
	th->jit = kind == OS_THR_JIT;
	/* HotSpot's VM Thread runs the serial collections (and safepoint work) */
	th->gc = kind == OS_THR_GC || (kind == OS_THR_VM && !strncmp(nm, "VM Thread", 9));
	return th->jit;
}

/* A JIT compiler thread's tracked blocks from now on without allocation
 * paths (shm.h os_slot.quiet): the compiler's own memory, whose samples
 * are never attributed without --jit-threads; its hooks then walk no
 * stack and the collector expands no path. Ids as the target sees them. */
static void jit_quiet(struct os_collector *c, struct os_thread_info *th)
{
	uint32_t pid = th->pid, tid = th->tid;

	if (!c->shm_ready || c->opts->jit_threads)
		return;
	if (c->pidns && pid == c->pidns->host_pid) {
		pid = c->pidns->ns_pid;
		tid = os_pidns_ns_tid(c->pidns, tid);
	}
	/* no slot yet (no block of its own so far): its first tracked
	 * block asks again (ring_event) */
	if (tid && os_shm_host_quiet_thread(&c->shm, pid, tid)) {
		th->jit_quiet = true;
		c->jit_quiet++;
	}
}

/* Whether th's name now is a JIT compiler thread's, without deciding its
 * kind for good (jit_thread decides at its first sample: the runtime may
 * not know the process yet when the name comes). */
static bool named_jit(struct os_collector *c, const struct os_thread_info *th)
{
	struct os_runtime *rt = c->attrib.rt;

	if (!c->shm_ready || c->opts->jit_threads || !rt || !rt->ops->thread_kind)
		return false;
	if (th->kind_done && th->kind_time == th->name_time)
		return th->jit;
	return th->name[0] && rt->ops->thread_kind(rt, th->pid, th->name) == OS_THR_JIT;
}

void os_jit_named(struct os_collector *c, struct os_thread_info *th)
{
	if (!th->jit_quiet && named_jit(c, th))
		jit_quiet(c, th);
}

bool os_jit_sample(struct os_collector *c, struct os_thread_info *th)
{
	if (!jit_thread(c, th) || c->opts->jit_threads)
		return false;
	c->samples_jit++;
	if (!th->jit_quiet)
		jit_quiet(c, th);
	/* attach: its own sampling events switched off, no more of its
	 * samples taken at all; its later threads' copies too */
	if (!th->jit_muted && os_perf_mute_thread(c->perf, (pid_t)th->tid) > 0) {
		th->jit_muted = true;
		c->jit_muted++;
	}
	/* else (its events inherited, launch): its later samples dropped in
	 * the kernel, counted there */
	if (!th->jit_muted && !th->jit_filtered && os_bpf_filter_add(&c->jitf, th->tid) == 0)
		th->jit_filtered = true;
	return true;
}

void os_jit_block(struct os_collector *c, const struct os_event *ev)
{
	struct os_thread_info *th;

	if ((ev->type != OS_EV_ALLOC && ev->type != OS_EV_REALLOC) || !c->shm_ready ||
	    c->opts->jit_threads || os_quiet_path(ev->frames, ev->nframes))
		return;
	/* known threads only (named by the kernel or the preload) */
	th = os_tasks_find_thread(&c->tasks, ev->pid, ev->tid);
	if (th)
		os_jit_named(c, th);
}

void os_jit_filter_take(struct os_collector *c, uint32_t pid, uint32_t tid)
{
	uint64_t n;
	struct os_thread_info *th = os_tasks_find_thread(&c->tasks, pid, tid);

	if (!th || !th->jit_filtered)
		return;
	n = os_bpf_filter_take(&c->jitf, tid, true);
	th->jit_filtered = false;
	th->samples += n;
	c->samples_jit_kernel += n;
}

uint64_t os_collector_jit_dropped(struct os_collector *c)
{
	uint64_t n = c->samples_jit_kernel;

	if (!os_bpf_filter_on(&c->jitf))
		return n;
	for (uint32_t i = 0; i < c->tasks.nthreads; i++)
		if (c->tasks.threads[i].jit_filtered)
			n += os_bpf_filter_take(&c->jitf, c->tasks.threads[i].tid, false);
	return n;
}

void os_collector_jit_filter_collect(struct os_collector *c)
{
	for (uint32_t i = 0; i < c->tasks.nthreads; i++)
		if (c->tasks.threads[i].jit_filtered)
			os_jit_filter_take(c, c->tasks.threads[i].pid, c->tasks.threads[i].tid);
}

void os_jit_filter_open(struct os_collector *c)
{
	int n = os_perf_steer_fds(c->perf), rc = 0;
	const char *env = getenv("OBJSCOPE_BPF_FILTER");

	if (c->opts->jit_threads || !c->attrib.rt || !c->attrib.rt->ops->thread_kind || n <= 0)
		return;
	if (env && !strcmp(env, "0")) { /* a diagnostic switch (docs/JAVA.md) */
		snprintf(c->jitf_why, sizeof(c->jitf_why), "OBJSCOPE_BPF_FILTER=0");
		return;
	}
	if (os_bpf_filter_open(&c->jitf, c->jitf_why, sizeof(c->jitf_why)) < 0) {
		os_debug("JIT threads' samples counted in user space: %s", c->jitf_why);
		return;
	}
	for (int i = 0; i < n && rc == 0; i++)
		rc = os_bpf_filter_attach(&c->jitf, os_perf_steer_fd(c->perf, i));
	if (rc < 0) {
		/* some events with the program, some without: none then */
		snprintf(c->jitf_why, sizeof(c->jitf_why),
			 "the sampling event refused the BPF program: %s", strerror(-rc));
		os_debug("JIT threads' samples counted in user space: %s", c->jitf_why);
		os_bpf_filter_close(&c->jitf);
	}
}
