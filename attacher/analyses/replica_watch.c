/* replica_watch.c - the replica engine's real backend: attacher/watch/watch.h
 * watchpoints (one watch_set per target process) and process_vm_readv. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "attacher/analyses/replica.h"
#include "attacher/core/remote.h"

#define MAX_PROCS 16

struct os_rep_watch {
	enum watch_route route;
	struct {
		pid_t pid;
		struct watch_set *w;   /* NULL: open failed (err kept) */
	} p[MAX_PROCS];
	unsigned np;
	char err[256];
	unsigned rr;                   /* round robin of polls */
};

static struct watch_set *set_of(struct os_rep_watch *w, pid_t pid)
{
	char err[256] = "";

	for (unsigned i = 0; i < w->np; i++)
		if (w->p[i].pid == pid)
			return w->p[i].w;
	if (w->np == MAX_PROCS)
		return NULL;
	w->p[w->np].pid = pid;
	w->p[w->np].w = watch_open(pid, w->route, err, sizeof(err));
	if (!w->p[w->np].w && !w->err[0])
		snprintf(w->err, sizeof(w->err), "%s", err);
	return w->p[w->np++].w;
}

static int be_arm(void *arg, pid_t pid, pid_t tid, uint64_t addr, unsigned len, uint64_t cookie,
		  uint64_t max_age_ns)
{
	struct watch_set *s = set_of(arg, pid);

	if (!s)
		return -ENODEV;
	return watch_arm(s, tid, addr, len, cookie, max_age_ns);
}

/* Cookies are unique over every set: ask each (few processes). */
static int be_disarm(void *arg, uint64_t cookie)
{
	struct os_rep_watch *w = arg;

	for (unsigned i = 0; i < w->np; i++)
		if (w->p[i].w && watch_disarm(w->p[i].w, cookie) == 0)
			return 0;
	return -ENOENT;
}

static int be_poll(void *arg, struct watch_hit *hits, int max)
{
	struct os_rep_watch *w = arg;
	int got = 0;

	for (unsigned k = 0; k < w->np && got < max; k++) {
		unsigned i = (w->rr + k) % w->np;
		int n;

		if (!w->p[i].w)
			continue;
		n = watch_poll(w->p[i].w, hits + got, max - got);
		if (n < 0)
			return got ? got : n;
		got += n;
	}
	w->rr++;
	return got;
}

static ssize_t be_read(void *arg, pid_t pid, uint64_t addr, void *buf, size_t len)
{
	(void)arg;
	return os_remote_read(pid, addr, buf, len);
}

struct os_rep_watch *os_rep_watch_new(enum watch_route route)
{
	struct os_rep_watch *w = calloc(1, sizeof(*w));

	if (w)
		w->route = route;
	return w;
}

void os_rep_watch_backend(struct os_rep_watch *w, struct os_rep_backend *be)
{
	be->arg = w;
	be->arm = be_arm;
	be->disarm = be_disarm;
	be->poll = be_poll;
	be->read = be_read;
}

void os_rep_watch_stats(const struct os_rep_watch *w, struct watch_stats *out, const char **err)
{
	memset(out, 0, sizeof(*out));
	*err = w->err[0] ? w->err : NULL;
	for (unsigned i = 0; i < w->np; i++) {
		struct watch_stats s;

		if (!w->p[i].w)
			continue;
		watch_get_stats(w->p[i].w, &s);
		out->armed += s.armed;
		out->hits += s.hits;
		out->enospc += s.enospc;
		out->thread_gone += s.thread_gone;
		out->disarmed += s.disarmed;
		out->expired += s.expired;
		out->sigtraps_consumed += s.sigtraps_consumed;
		out->signals_passed += s.signals_passed;
		out->errors += s.errors;
	}
}

void os_rep_watch_free(struct os_rep_watch *w)
{
	if (!w)
		return;
	for (unsigned i = 0; i < w->np; i++)
		watch_close(w->p[i].w);
	free(w);
}
