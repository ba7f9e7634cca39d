/* cmd_attach.c - `objscope attach [options] [-d SECONDS] [-o FILE] PID`.
 *
 * Profiles a process that was started without objscope, then leaves it as
 * it was:
 *   1. the shared rings are created as a file inside the target's root
 *      (/dev/shm, else /tmp, seen through /proc/PID/root) owned by the
 *      target's user, so that a target in other mount/PID namespaces or of
 *      another user can open it; it is unlinked once both sides mapped it;
 *   2. libobjscope.so is made reachable inside the target's root (a copy in
 *      its /tmp when the target is in another mount namespace) and loaded
 *      with dlopen called through ptrace (attacher/inject/inject.c), then
 *      objscope_attach(shm) arms it and patches the GOT (preload/attach.c);
 *   3. per-thread inherited perf events sample every thread, existing and
 *      new; the collection loop is the one of `record`;
 *   4. after -d seconds, Ctrl-C/SIGTERM or the target's exit: sampling
 *      stops, objscope_detach() restores the GOT and releases the rings in
 *      the target, the profile is written.
 * Runtime adapters add their own steps between 2 and 3 (common/attach_abi.h:
 * the in-target side prepares, objscope writes its detours with the
 * threads held) and after 4 (runtime.h ops attached, detached).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attacher/inject/attach_fs.h"
#include "attacher/core/collector.h"
#include "attacher/cli/commands.h"
#include "attacher/cli/run_loop.h"
#include "attacher/cli/session.h"
#include "attacher/cli/status_line.h"
#include "attacher/inject/inject.h"
#include "attacher/inject/pidns.h"
#include "attacher/inject/ptrace_refusal.h"
#include "common/attach_abi.h"
#include "common/attach_orphan.h"
#include "common/log.h"
#include "common/profile.h"
#include "common/safefs.h"
#include "runtimes/runtime.h"

#define INJECT_SAFE_MS 2000   /* to find a thread that may call dlopen */
#define INJECT_CALL_MS 10000  /* for dlopen / objscope_attach to return */
#define RT_STOP_MS 300        /* to hold every thread of a runtime while detours are written */
#define RT_STOP_TRIES 5
#define MAX_ARGS 64
#define FATE_WAIT_MS 500      /* for the exit status of a target that ended */

/* PIDFD_GET_INFO (linux/pidfd.h of Linux >= 6.13; the exit status since 6.15,
 * once the process was reaped), declared here for older headers. */
struct os_pidfd_info {
	uint64_t mask, cgroupid;
	uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
	int32_t exit_code;
};
_Static_assert(sizeof(struct os_pidfd_info) == 64, "PIDFD_INFO_SIZE_VER0");
#define OS_PIDFD_GET_INFO _IOWR(0xFF, 11, struct os_pidfd_info)
#define OS_PIDFD_INFO_EXIT (1ULL << 3)

struct attach_ctx {
	pid_t pid;
	char lib[PATH_MAX];        /* libobjscope.so here */
	char lib_target[PATH_MAX]; /* its path inside the target's root */
	struct os_tfs tfs;         /* the target's ids and root (attacher/inject/attach_fs.h) */
	struct os_tfs_file shm;    /* the rings' file, made inside its root */
	char shm_target[64];       /* ... its path as the target sees it */
	char cmdline[4096];
	char *argv[MAX_ARGS];
	int argc;
	struct os_rt_plan plan;    /* the runtime's steps (common/attach_abi.h) */
	struct os_attach_orphan orphan; /* left by an attach that never detached */
	char fate[192];            /* how the target ended, when it did */
	char orphan_note[320];
	char rt_note[640];         /* the runtime's note after the detach (runtime.h detached) */
	uint32_t bp_closed;        /* in-target replica breakpoints the detach closed */
	char bp_note[160];
};

/* The preload library: $OBJSCOPE_LIB, else next to this executable, else
 * ../lib/objscope/ relative to it (the layout `record` uses). */
static bool same_ns(pid_t pid, const char *ns)
{
	char a[64], b[64];
	struct stat sa, sb;

	snprintf(a, sizeof(a), "/proc/self/ns/%s", ns);
	snprintf(b, sizeof(b), "/proc/%d/ns/%s", (int)pid, ns);
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_ino == sb.st_ino &&
	       sa.st_dev == sb.st_dev;
}

/* Makes the library reachable inside the target's root: the same file when
 * the target shares our mount namespace, else a copy in its /tmp (kept, so
 * that the next attach dlopens the same path and the loaded copy is reused;
 * replaced only when ours changed), made as the target's user
 * (os_tfs_place_library). */
static int place_library(struct attach_ctx *a, char *err, size_t errlen)
{
	if (same_ns(a->pid, "mnt")) {
		snprintf(a->lib_target, sizeof(a->lib_target), "%s", a->lib);
		return 0;
	}
	return os_tfs_place_library(&a->tfs, a->lib, a->lib_target, sizeof(a->lib_target), err,
				    errlen);
}

/* Moves the collector's rings into a file of the target's /dev/shm (else
 * /tmp) that the target's user may open: created as that user, exclusively,
 * mode 0600 (os_tfs_create). Files of this target left by a killed objscope
 * are removed first (os_tfs_drop_stale_rings: older than any injection
 * lasts). */
static int place_shm(struct os_collector *c, struct attach_ctx *a)
{
	static const char *const dirs[] = { "/dev/shm", "/tmp" };
	struct os_shm_host *h = &c->shm;
	char name[48];
	void *map = MAP_FAILED;
	int fd = -1, rc = -ENOENT;

	os_tfs_rings_name(name, sizeof(name), getpid(), a->pid);
	for (size_t i = 0; i < sizeof(dirs) / sizeof(*dirs); i++) {
		int n = os_tfs_drop_stale_rings(&a->tfs, dirs[i], 60);

		if (n > 0)
			os_debug("attach: removed %d rings file(s) of process %d from its %s, left "
				 "by a killed objscope", n, (int)a->pid, dirs[i]);
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(*dirs) && fd < 0; i++) {
		snprintf(a->shm_target, sizeof(a->shm_target), "%s/%s", dirs[i], name);
		fd = os_tfs_create(&a->tfs, dirs[i], name, 0600, &a->shm);
		if (fd < 0)
			rc = fd;
	}
	if (fd < 0)
		return rc;
	if (ftruncate(fd, (off_t)h->size) != 0) {
		rc = -errno;
		goto out;
	}
	map = mmap(NULL, h->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		rc = -errno;
		goto out;
	}
	/* nothing was written to the rings yet: the header is all there is */
	memcpy(map, h->hdr, OS_SHM_HDR);
	munmap(h->hdr, h->size);
	close(h->fd);
	h->hdr = map;
	h->fd = fd;
	snprintf(h->path, sizeof(h->path), "%s", a->shm_target);
	return 0;
out:
	close(fd);
	os_tfs_remove(&a->tfs, &a->shm);
	return rc;
}

static void drop_shm_file(struct attach_ctx *a)
{
	os_tfs_remove(&a->tfs, &a->shm);
}

/* The target's command line, for the profile's metadata. */
static void read_cmdline(struct attach_ctx *a)
{
	char p[64];
	ssize_t n = 0;
	int fd;

	snprintf(p, sizeof(p), "/proc/%d/cmdline", (int)a->pid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, a->cmdline, sizeof(a->cmdline) - 1);
		close(fd);
	}
	if (n < 0)
		n = 0;
	a->cmdline[n] = 0;
	a->argc = 0;
	for (ssize_t i = 0; i < n && a->argc < MAX_ARGS; i += (ssize_t)strlen(a->cmdline + i) + 1)
		a->argv[a->argc++] = a->cmdline + i;
	if (a->argc == 0) {
		snprintf(a->cmdline, sizeof(a->cmdline), "pid %d", (int)a->pid);
		a->argv[a->argc++] = a->cmdline;
	}
}

/* Names of the threads that exist now (perf only reports new ones). */
static void name_threads(struct os_collector *c, pid_t pid)
{
	char p[96], name[32];
	struct dirent *de;
	DIR *d;

	snprintf(p, sizeof(p), "/proc/%d/task", (int)pid);
	d = opendir(p);
	if (!d)
		return;
	while ((de = readdir(d))) {
		int tid = atoi(de->d_name), fd;
		ssize_t n;

		if (tid <= 0)
			continue;
		snprintf(p, sizeof(p), "/proc/%d/task/%d/comm", (int)pid, tid);
		fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, name, sizeof(name) - 1);
		close(fd);
		if (n <= 0)
			continue;
		name[n] = 0;
		name[strcspn(name, "\n")] = 0;
		os_tasks_thread(&c->tasks, (uint32_t)pid, (uint32_t)tid, name);
	}
	closedir(d);
}

static void explain_ptrace_refusal(pid_t pid)
{
	struct os_ptrace_facts f;
	char why[512];

	os_ptrace_facts(pid, &f);
	os_ptrace_refusal(pid, &f, why, sizeof(why));
	os_err("attach: %s", why);
}

/* A runtime in the target (a running JVM): the detours objscope_attach
 * prepared are written while
 * every other thread is held (ptrace-stopped, bounded), and only when no
 * thread's instruction pointer lies inside the bytes a jump overwrites
 * (common/attach_abi.h). Failing that, retried a few times, then given up:
 * the runtime is then profiled without allocation events (said in the report).
 * The injected thread `in` stays seized throughout. Returns the number of
 * detours active, or -errno. */
static int arm_runtime(struct attach_ctx *a, struct os_inject *in, char *err, size_t errlen)
{
	struct os_rt_plan *p = &a->plan;
	struct os_inject_group g = { 0 };
	uint64_t fn, addr = 0, ret = 0;
	int rc, tries;

	memset(p, 0, sizeof(*p));
	rc = os_inject_symbol(a->pid, a->lib_target, "objscope_rt_plan", &fn);
	if (rc < 0)
		return 0; /* an older library: no runtime steps */
	rc = os_inject_call(in, fn, NULL, 0, 0, INJECT_CALL_MS, &addr, err, errlen);
	if (rc < 0)
		return rc;
	if (!addr || os_inject_read(a->pid, addr, p, sizeof(*p)) < 0 || !p->found) {
		p->found = 0;
		return 0;
	}
	p->runtime[sizeof(p->runtime) - 1] = 0;
	p->what[sizeof(p->what) - 1] = 0;
	if (p->pending > OS_RT_PLAN_MAX)
		p->pending = OS_RT_PLAN_MAX;
	if (!p->pending)
		return (int)p->active;
	rc = os_inject_symbol(a->pid, a->lib_target, "objscope_rt_commit", &fn);
	if (rc < 0)
		return rc;
	for (tries = 0; tries < RT_STOP_TRIES; tries++) {
		bool clear = true;
		uint64_t t0 = os_now_ns();
		size_t held;

		if (tries)
			usleep(2000);
		rc = os_inject_stop_others(&g, a->pid, in->tid, RT_STOP_MS);
		if (rc == -ETIMEDOUT)
			continue;
		if (rc < 0)
			break;
		for (size_t i = 0; i <= g.n && clear; i++) {
			uint64_t ip = i < g.n ? g.rip[i] : in->saved.rip;

			for (uint32_t k = 0; k < p->pending; k++)
				if (ip >= p->lo[k] && ip < p->hi[k])
					clear = false;
		}
		if (clear)
			rc = os_inject_call(in, fn, NULL, 0, 0, INJECT_CALL_MS, &ret, err, errlen);
		held = g.n + 1;
		os_inject_resume_others(&g);
		os_debug("attach: %zu threads held %.2f ms (try %d%s)", held,
			 (os_now_ns() - t0) / 1e6, tries + 1, clear ? "" : ", a thread was inside "
			 "a prologue");
		if (!clear)
			continue;
		if (rc < 0)
			break;
		if ((int)(int32_t)ret < 0) {
			rc = (int)(int32_t)ret;
			snprintf(err, errlen, "writing the %s's detours failed: %s", p->what,
				 strerror(-rc));
			break;
		}
		p->active += (uint32_t)ret;
		p->pending = 0;
		rc = (int)p->active;
		break;
	}
	os_inject_group_free(&g);
	if (tries == RT_STOP_TRIES) {
		snprintf(err, errlen, "could not hold the %s's threads outside the hooked "
			 "functions' first bytes", p->what);
		rc = -EBUSY;
	}
	return rc;
}

/* What objscope_attach found left armed by a previous attach whose
 * objscope was killed (common/attach_orphan.h): said now and kept as a
 * note of the profile. An older library without objscope_orphan: nothing. */
static void read_orphan(struct attach_ctx *a, struct os_inject *in)
{
	char err[256];
	uint64_t fn, addr = 0;

	memset(&a->orphan, 0, sizeof(a->orphan));
	a->orphan_note[0] = 0;
	if (os_inject_symbol(a->pid, a->lib_target, "objscope_orphan", &fn) < 0 ||
	    os_inject_call(in, fn, NULL, 0, 0, INJECT_CALL_MS, &addr, err, sizeof(err)) < 0 ||
	    !addr || os_inject_read(a->pid, addr, &a->orphan, sizeof(a->orphan)) < 0 ||
	    !a->orphan.found) {
		memset(&a->orphan, 0, sizeof(a->orphan));
		return;
	}
	snprintf(a->orphan_note, sizeof(a->orphan_note),
		 "%llu events dropped while no collector was attached (previous objscope, pid "
		 "%u, killed without detaching): %llu by its full rings, %llu written but never "
		 "read; its rings were released by this attach",
		 (unsigned long long)(a->orphan.dropped + a->orphan.unread),
		 a->orphan.collector_pid, (unsigned long long)a->orphan.dropped,
		 (unsigned long long)a->orphan.unread);
	os_warn("attach: process %d: %s", (int)a->pid, a->orphan_note);
}

/* Loads the library and arms it: dlopen(lib), objscope_attach(shm). Returns
 * the number of GOT entries patched, or -errno after printing one line. */
static int inject_and_arm(struct os_collector *c, struct attach_ctx *a, bool *perf_open)
{
	struct os_inject in;
	char err[512] = "", msg[512];
	uint64_t fn, ret = 0;
	int rc, flags = RTLD_NOW;

	rc = os_inject_symbol(a->pid, "/libc.so.6", "dlopen", &fn);
	if (rc == -ENOENT) {
		rc = os_inject_symbol(a->pid, "/libc.so.6", "__libc_dlopen_mode", &fn);
		flags |= 0x80000000; /* __RTLD_DLOPEN */
	}
	if (rc < 0) {
		if (rc == -ESRCH)
			os_err("attach: process %d exited during injection — nothing to profile",
			       (int)a->pid);
		else
			os_err("attach: no dlopen in process %d (%s) — a statically linked program "
			       "cannot be attached; run it under 'objscope record' instead",
			       (int)a->pid, strerror(-rc));
		return rc;
	}
	/* -EAGAIN: the chosen thread's own fault arrived before the call ran; it
	 * was handed back to the target and nothing was run — choose again */
	for (int tries = 0;; tries++) {
		rc = os_inject_begin(&in, a->pid, INJECT_SAFE_MS, err, sizeof(err));
		if (rc < 0)
			goto fail;
		rc = os_inject_call(&in, fn, a->lib_target, (uint64_t)flags, 0, INJECT_CALL_MS,
				    &ret, err, sizeof(err));
		if (rc != -EAGAIN || tries == 4)
			break;
		os_debug("attach: %s — trying again", err);
		os_inject_end(&in);
	}
	if (rc < 0)
		goto fail;
	if (!ret) {
		uint64_t dlerr = 0, s = 0;

		snprintf(err, sizeof(err), "dlopen(%.300s) failed in the target", a->lib_target);
		if (os_inject_symbol(a->pid, "/libc.so.6", "dlerror", &dlerr) == 0 &&
		    os_inject_call(&in, dlerr, NULL, 0, 0, INJECT_CALL_MS, &s, msg,
				   sizeof(msg)) == 0 && s &&
		    os_inject_read_str(a->pid, s, msg, sizeof(msg)) == 0)
			snprintf(err, sizeof(err), "dlopen failed in the target: %.400s",
				 os_untrusted_text(msg));
		rc = -ENOEXEC;
		goto fail;
	}
	rc = os_inject_symbol(a->pid, a->lib_target, "objscope_attach", &fn);
	if (rc < 0) {
		snprintf(err, sizeof(err), "objscope_attach not found in %.300s: %s", a->lib_target,
			 strerror(-rc));
		goto fail;
	}
	/* sampling starts before the hooks, so the first objects are sampled */
	rc = os_collector_open_attach(c, a->pid, err, sizeof(err));
	if (rc < 0)
		goto fail;
	*perf_open = true;
	rc = os_inject_call(&in, fn, a->shm_target, 0, 0, INJECT_CALL_MS, &ret, err, sizeof(err));
	if (rc < 0)
		goto fail;
	if ((int)(int32_t)ret >= 0) {
		int jrc;

		read_orphan(a, &in);
		jrc = arm_runtime(a, &in, err, sizeof(err));

		if (jrc == -ESRCH) {
			rc = jrc;
			goto fail;
		}
		if (jrc < 0)
			os_warn("attach: %s allocation hooks not installed in process %d: %s — "
				"only samples and GC moves are collected", a->plan.what,
				(int)a->pid, err);
		else if (jrc == 0 && a->plan.found)
			os_warn("attach: no %s allocation hook could be prepared in process %d "
				"(%u refused: the runtime's symbols or prologues not usable) — only "
				"samples and GC moves are collected", a->plan.what, (int)a->pid,
				a->plan.refused);
	}
	os_inject_end(&in);
	rc = (int)(int32_t)ret;
	if (rc < 0)
		os_err("attach: the library could not arm itself in process %d: %s%s", (int)a->pid,
		       strerror(-rc),
		       rc == -EBUSY ? " — it runs under 'objscope record' already"
		       : rc == -E2BIG ? " — attach again with the --threads/--ring-kb of the "
					"first attach"
				      : "");
	return rc;
fail:
	os_inject_end(&in);
	if (rc == -ESRCH)
		os_err("attach: process %d exited during injection — nothing to profile",
		       (int)a->pid);
	else if (rc == -EPERM)
		explain_ptrace_refusal(a->pid);
	else
		os_err("attach: cannot inject into process %d: %s", (int)a->pid, err);
	return rc;
}

/* objscope_detach() in the target; 0 when done or nothing to do. The
 * in-target replica breakpoints it closed: in a->bp_closed. */
static int disarm_target(struct attach_ctx *a)
{
	struct os_inject in;
	char err[512] = "";
	uint64_t fn, ret = 0;
	int rc;

	rc = os_inject_symbol(a->pid, a->lib_target, "objscope_detach", &fn);
	if (rc < 0)
		return rc;
	rc = os_inject_begin(&in, a->pid, INJECT_SAFE_MS, err, sizeof(err));
	if (rc == 0)
		rc = os_inject_call(&in, fn, NULL, 0, 0, INJECT_CALL_MS, &ret, err, sizeof(err));
	os_inject_end(&in);
	if (rc == 0 && (int)ret > 0)
		a->bp_closed = (uint32_t)(int)ret;
	if (rc < 0 && rc != -ESRCH)
		os_warn("attach: could not detach cleanly from process %d: %s — its hooks stay "
			"disarmed (pass-through)", (int)a->pid, err);
	return rc;
}

/* The runtime's steps after the detach (runtime.h op detached: a JVM is
 * asked for its perf map now, so that it covers the code compiled
 * meanwhile and costs nothing to the detach itself). */
static void runtime_detached(struct os_collector *c, struct attach_ctx *a)
{
	struct os_runtime *r = os_runtime_find(c->attrib.rt, a->plan.runtime);

	a->rt_note[0] = 0;
	if (r && r->ops->detached)
		r->ops->detached(r, (uint32_t)a->pid, &a->plan, a->rt_note, sizeof(a->rt_note));
}

/* exit_code (field 52 of /proc/PID/stat, a wait status) of process pid
 * while it is a zombie. 0 and *status; -EAGAIN while it is not a zombie yet;
 * -ESRCH when it is gone (reaped) or pidfd no longer names it. */
static int zombie_status(pid_t pid, int pidfd, int *status)
{
	char path[64], buf[1024], *s;
	long long v = 0;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ESRCH;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -ESRCH;
	buf[n] = 0;
	/* the PID is ours only while the pidfd still reaches it (a zombie
	 * accepts signal 0; a reaped process and its reused PID do not) */
	if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) != 0)
		return -ESRCH;
	s = strrchr(buf, ')'); /* the name may hold spaces and ')' */
	if (!s || s[1] != ' ')
		return -ESRCH;
	s += 2;
	if (*s != 'Z')
		return -EAGAIN;
	for (field = 3; field < 52 && s; field++) {
		s = strchr(s, ' ');
		if (s)
			s++;
	}
	if (!s || sscanf(s, "%lld", &v) != 1)
		return -ESRCH; /* a kernel older than 3.5: no exit_code field */
	*status = (int)v;
	return 0;
}

/* How the target ended, as a wait status: from the pidfd once its parent
 * reaped it (PIDFD_INFO_EXIT, Linux >= 6.15), else from /proc/PID/stat while
 * it is a zombie. A non-parent cannot wait for it, so both are tried for up to
 * FATE_WAIT_MS. Returns 0 and *status, or -ENODATA when it cannot be known. */
static int target_fate(pid_t pid, int pidfd, int *status)
{
	bool ioctl_ok = pidfd >= 0;

	for (int i = 0; i * 2 < FATE_WAIT_MS; i++) {
		struct os_pidfd_info info = { .mask = OS_PIDFD_INFO_EXIT };
		int rc = -ESRCH;

		if (ioctl_ok) {
			int r = ioctl(pidfd, OS_PIDFD_GET_INFO, &info);

			if (r == 0 && (info.mask & OS_PIDFD_INFO_EXIT)) {
				*status = info.exit_code;
				os_debug("attach: exit status of process %d read from its pidfd",
					 (int)pid);
				return 0;
			}
			/* errno only means something when the call failed */
			if (r < 0 && (errno == ENOTTY || errno == EINVAL))
				ioctl_ok = false; /* kernel without PIDFD_GET_INFO */
		}
		if (pidfd >= 0)
			rc = zombie_status(pid, pidfd, status);
		if (rc == 0) {
			os_debug("attach: exit status of process %d read from /proc (zombie)",
				 (int)pid);
			return 0;
		}
		if (rc == -ESRCH && !ioctl_ok)
			break; /* reaped, and nothing else to ask */
		usleep(2000);
	}
	return -ENODATA;
}

/* One line saying how the target ended ("exited with status 3", "exited: killed
 * by signal 9 (SIGKILL, Killed)", or "exited (status unknown)"), also kept
 * as a note of the profile. */
static void describe_fate(pid_t pid, int pidfd, char *out, size_t len)
{
	const char *abbrev;
	int status;

	if (target_fate(pid, pidfd, &status) < 0) {
		snprintf(out, len, "process %d exited (status unknown)", (int)pid);
	} else if (WIFSIGNALED(status)) {
		abbrev = sigabbrev_np(WTERMSIG(status));
		snprintf(out, len, "process %d exited: killed by signal %d (SIG%s, %s)%s", (int)pid,
			 WTERMSIG(status), abbrev ? abbrev : "?", strsignal(WTERMSIG(status)),
			 WCOREDUMP(status) ? ", core dumped" : "");
	} else {
		snprintf(out, len, "process %d exited with status %d", (int)pid,
			 WEXITSTATUS(status));
	}
}

static int parse_pid(const char *s, pid_t *pid)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0 || v > INT32_MAX)
		return -EINVAL;
	*pid = (pid_t)v;
	return 0;
}

int cmd_attach(int argc, char **argv)
{
	struct os_opts o;
	struct os_collector c;
	struct os_pidns pidns;
	struct attach_ctx *a;
	struct stat tst;
	char err[512] = "", proc[64];
	uint64_t t_start = os_now_ns(), t_armed = 0, t_first = 0, t_req = 0, t_detached = 0;
	int idx, rc, pidfd = -1, ret = OS_EXIT_FAIL;
	bool inited = false, perf_open = false, gone = false, have_ns = false;

	idx = os_opts_parse(&o, "attach", argc, argv);
	if (idx == -2)
		return 0;
	if (idx < 0)
		return OS_EXIT_USAGE;
	a = calloc(1, sizeof(*a));
	if (!a)
		return OS_EXIT_FAIL;
	a->tfs.root = -1;
	a->shm.dir = -1;
	if (idx != argc - 1 || parse_pid(argv[idx], &a->pid) < 0) {
		os_err("attach: expected one process id — usage: objscope attach [options] "
		       "[-d SECONDS] [-o FILE] PID [options]");
		ret = OS_EXIT_USAGE;
		goto out;
	}
	snprintf(proc, sizeof(proc), "/proc/%d", (int)a->pid);
	if (stat(proc, &tst) != 0) {
		os_err("attach: no process with PID %d — check the PID (ps -p %d)", (int)a->pid,
		       (int)a->pid);
		goto out;
	}
	/* opening its memory needs exactly the ptrace permission: ask before
	 * touching anything */
	snprintf(proc, sizeof(proc), "/proc/%d/mem", (int)a->pid);
	rc = open(proc, O_RDONLY | O_CLOEXEC);
	if (rc < 0 && (errno == EACCES || errno == EPERM)) {
		explain_ptrace_refusal(a->pid);
		goto out;
	}
	if (rc >= 0)
		close(rc);
	if (a->pid == getpid()) {
		os_err("attach: process %d is objscope itself", (int)a->pid);
		goto out;
	}
	/* before the attach begins: a profile that cannot be written is an
	 * attach (and the target's disturbance) wasted */
	if (os_profile_check_output(o.output, err, sizeof(err)) < 0) {
		os_err("attach: %s", err);
		goto out;
	}
	if (os_session_find_preload(a->lib, sizeof(a->lib)) < 0) {
		os_err("attach: cannot find libobjscope.so next to the objscope binary — set "
		       "OBJSCOPE_LIB to its path");
		goto out;
	}
	pidfd = (int)syscall(SYS_pidfd_open, a->pid, 0);
	if (pidfd < 0) {
		os_err("attach: no process with PID %d — check the PID (ps -p %d)", (int)a->pid,
		       (int)a->pid);
		goto out;
	}
	read_cmdline(a);
	/* everything made inside its root is made as its user, resolved there */
	rc = os_tfs_open(&a->tfs, a->pid, err, sizeof(err));
	if (rc < 0) {
		os_err("attach: %s", err);
		goto out;
	}
	rc = os_collector_init(&c, &o, err, sizeof(err));
	inited = true;
	if (rc < 0) {
		os_err("attach: %s", err);
		goto out;
	}
	/* blocks of every size born before the attach were never seen: a heap
	 * sample outside the seen blocks is no evidence of a small one, and is
	 * not held for the small blocks' estimated paths (docs/NATIVE.md);
	 * blocks sampled by bytes after the attach keep their exact paths;
	 * such samples go to a row of their own, born before the attach */
	c.attrib.small_hold = false;
	c.attrib.before_attach = true;
	/* a target in another PID namespace writes its own ids into the rings */
	if (os_pidns_init(&pidns, a->pid) == 0) {
		have_ns = true;
		c.pidns = &pidns;
	}
	rc = place_library(a, err, sizeof(err));
	if (rc < 0) {
		os_err("attach: cannot make libobjscope.so reachable inside process %d's root: %s",
		       (int)a->pid, err[0] ? err : strerror(-rc));
		goto out;
	}
	rc = place_shm(&c, a);
	if (rc < 0) {
		os_err("attach: cannot create the shared rings in process %d's /dev/shm or /tmp: "
		       "%s", (int)a->pid, strerror(-rc));
		goto out;
	}

	/* before objscope_attach reads the flags; the detach closes the
	 * in-target breakpoints still armed */
	os_session_replicas_in_target(&c, &o);

	os_run_catch_signals();

	rc = inject_and_arm(&c, a, &perf_open);
	drop_shm_file(a);
	if (rc < 0) {
		if (rc > -4096 && perf_open && kill(a->pid, 0) == 0)
			disarm_target(a);
		goto out;
	}
	t_armed = os_now_ns();
	if (rc == 0)
		os_warn("attach: no GOT entry of the malloc/mmap family found in process %d: "
			"objects will not be seen, only samples", (int)a->pid);
	os_debug("attach: armed in %.1f ms, %d GOT entries patched", (t_armed - t_start) / 1e6,
		 rc);
	if (a->plan.found) {
		struct os_runtime *r = os_runtime_find(c.attrib.rt, a->plan.runtime);

		os_debug("attach: %s (%s): %u detours active, %u refused, %u GOT entries of the "
			 "runtime's library, managed stacks %d", a->plan.what, a->plan.runtime,
			 a->plan.active, a->plan.refused, a->plan.got_runtime,
			 (int)(int32_t)a->plan.stacks);
		if (r && r->ops->attached)
			r->ops->attached(r, (uint32_t)a->pid, &a->plan);
	}
	name_threads(&c, a->pid);
	os_run_arm_duration(&o);

	while (!os_run_stop_signal()) {
		if (os_run_wait(&c, true, pidfd, OS_RUN_POLL_MS)) {
			/* at once: its parent may reap it any moment */
			describe_fate(a->pid, pidfd, a->fate, sizeof(a->fate));
			gone = true;
		}
		os_collector_round(&c, false);
		os_status_line(&c, false);
		os_ckpt_poll(&c, &o, "attach", a->argc, a->argv); /* checkpoint.h */
		if (!t_first && c.samples_total)
			t_first = os_now_ns();
		if (gone)
			break;
		if (os_run_duration_over(&o, t_armed))
			break;
	}
	os_run_disarm_duration();
	t_req = os_now_ns();
	os_collector_stop(&c);
	if (!gone && disarm_target(a) == -ESRCH) {
		describe_fate(a->pid, pidfd, a->fate, sizeof(a->fate));
		gone = true;
	}
	t_detached = os_now_ns();
	if (a->plan.found && !gone)
		runtime_detached(&c, a);
	os_collector_round(&c, true);
	os_collector_round(&c, true);
	os_status_line(&c, true);
	if (gone)
		os_warn("attach: %s; saving what was collected", a->fate);
	os_debug("attach: first sample read %.1f ms after start, detached %.1f ms after the "
		 "request", t_first ? (t_first - t_start) / 1e6 : -1.0,
		 (t_detached - t_req) / 1e6);
	{
		char fate_note[256];
		const char *notes[] = { a->orphan_note, fate_note, a->rt_note, a->bp_note };

		snprintf(fate_note, sizeof(fate_note), "%s%s", a->fate,
			 gone ? " during the attach" : "");
		/* docs/REPLICAS.md "Routes": breakpoints armed by the target
		 * itself and unhit when it detached */
		if ((c.shm.hdr->flags & OS_SHM_F_REPLICAS) && !gone)
			snprintf(a->bp_note, sizeof(a->bp_note),
				 "detach: %u in-target replica breakpoint(s) still armed, closed by "
				 "the detach", a->bp_closed);
		ret = os_session_write_profile_notes(&c, &o, "attach", a->argc, a->argv, notes,
						     4) < 0 ? OS_EXIT_FAIL : 0;
	}
out:
	os_run_release();
	drop_shm_file(a);
	os_tfs_close(&a->tfs);
	if (inited)
		os_collector_destroy(&c);
	if (have_ns)
		os_pidns_destroy(&pidns);
	if (pidfd >= 0)
		close(pidfd);
	free(a);
	return ret;
}
