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
 *      with dlopen called through ptrace (attacher/inject.c), then
 *      objscope_attach(shm) arms it and patches the GOT (preload/attach.c);
 *   3. per-thread inherited perf events sample every thread, existing and
 *      new; the collection loop is the one of `record`;
 *   4. after -d seconds, Ctrl-C/SIGTERM or the target's exit: sampling
 *      stops, objscope_detach() restores the GOT and releases the rings in
 *      the target, the profile is written.
 * Runtime adapters (HotSpot) add their own steps between 2 and 3 (issue 3).
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
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "attacher/collector.h"
#include "attacher/commands.h"
#include "attacher/session.h"
#include "attacher/inject.h"
#include "attacher/pidns.h"
#include "common/log.h"

#define INJECT_SAFE_MS 2000   /* to find a thread that may call dlopen */
#define INJECT_CALL_MS 10000  /* for dlopen / objscope_attach to return */
#define MAX_ARGS 64

static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
	stop_requested = sig;
}

struct attach_ctx {
	pid_t pid;
	char lib[PATH_MAX];        /* libobjscope.so here */
	char lib_target[PATH_MAX]; /* its path inside the target's root */
	char shm_host[128];        /* the rings' file, seen from here */
	char shm_target[48];       /* ... and from the target */
	char cmdline[4096];
	char *argv[MAX_ARGS];
	int argc;
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

static int copy_file(const char *from, const char *to, uid_t uid, gid_t gid)
{
	struct stat st;
	char tmp[PATH_MAX * 2 + 16];
	int in = -1, out = -1, rc = 0;
	off_t off = 0;

	snprintf(tmp, sizeof(tmp), "%s.%d", to, (int)getpid());
	in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0 || fstat(in, &st) != 0) {
		rc = -errno;
		goto out;
	}
	out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (out < 0) {
		rc = -errno;
		goto out;
	}
	while (off < st.st_size)
		if (sendfile(out, in, &off, (size_t)(st.st_size - off)) <= 0) {
			rc = -errno;
			goto out;
		}
	if (fchown(out, uid, gid) != 0 && errno != EPERM) {
		rc = -errno;
		goto out;
	}
	rc = rename(tmp, to) == 0 ? 0 : -errno; /* never rewrite a mapped file */
out:
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	if (rc < 0)
		unlink(tmp);
	return rc;
}

/* Makes the library reachable inside the target's root: the same file when
 * the target shares our mount namespace, else a copy in its /tmp (kept, so
 * that the next attach dlopens the same path and the loaded copy is reused;
 * replaced only when ours changed). */
static int place_library(struct attach_ctx *a, const struct stat *target)
{
	char dir[PATH_MAX], dst[PATH_MAX * 2];
	struct stat ours, theirs;
	int rc;

	if (same_ns(a->pid, "mnt")) {
		snprintf(a->lib_target, sizeof(a->lib_target), "%s", a->lib);
		return 0;
	}
	if (stat(a->lib, &ours) != 0)
		return -errno;
	snprintf(a->lib_target, sizeof(a->lib_target), "/tmp/objscope-%u-%lx/libobjscope.so",
		 (unsigned)target->st_uid, (unsigned long)ours.st_mtime);
	snprintf(dir, sizeof(dir), "/proc/%d/root/tmp/objscope-%u-%lx", (int)a->pid,
		 (unsigned)target->st_uid, (unsigned long)ours.st_mtime);
	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return -errno;
	if (chown(dir, target->st_uid, target->st_gid) != 0 && errno != EPERM)
		return -errno;
	snprintf(dst, sizeof(dst), "/proc/%d/root%s", (int)a->pid, a->lib_target);
	if (stat(dst, &theirs) == 0 && theirs.st_size == ours.st_size)
		return 0;
	rc = copy_file(a->lib, dst, target->st_uid, target->st_gid);
	return rc;
}

/* Moves the collector's rings into a file of the target's /dev/shm (else
 * /tmp) that the target's user may open. */
static int place_shm(struct os_collector *c, struct attach_ctx *a, const struct stat *target)
{
	static const char *const dirs[] = { "/dev/shm", "/tmp" };
	struct os_shm_host *h = &c->shm;
	void *map = MAP_FAILED;
	int fd = -1, rc = -ENOENT;

	for (size_t i = 0; i < sizeof(dirs) / sizeof(*dirs) && fd < 0; i++) {
		snprintf(a->shm_target, sizeof(a->shm_target), "%s/objscope-%d-%d.rings", dirs[i],
			 (int)getpid(), (int)a->pid);
		snprintf(a->shm_host, sizeof(a->shm_host), "/proc/%d/root%s", (int)a->pid,
			 a->shm_target);
		unlink(a->shm_host);
		fd = open(a->shm_host, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0)
			rc = -errno;
	}
	if (fd < 0) {
		a->shm_host[0] = 0;
		return rc;
	}
	if (fchown(fd, target->st_uid, target->st_gid) != 0 && errno != EPERM) {
		rc = -errno;
		goto out;
	}
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
	unlink(a->shm_host);
	a->shm_host[0] = 0;
	return rc;
}

static void drop_shm_file(struct attach_ctx *a)
{
	if (a->shm_host[0])
		unlink(a->shm_host);
	a->shm_host[0] = 0;
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
	char scope[16] = "?";
	int fd = open("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		ssize_t n = read(fd, scope, sizeof(scope) - 1);

		scope[n > 0 ? n : 0] = 0;
		scope[strcspn(scope, "\n")] = 0;
		close(fd);
	}
	os_err("attach: not allowed to ptrace process %d (kernel.yama.ptrace_scope = %s) — run "
	       "objscope as root or as the target's user with CAP_SYS_PTRACE, or set "
	       "kernel.yama.ptrace_scope to 0; a process already traced (gdb, strace) cannot be "
	       "attached", (int)pid, scope);
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
	rc = os_inject_begin(&in, a->pid, INJECT_SAFE_MS, err, sizeof(err));
	if (rc < 0)
		goto fail;
	rc = os_inject_call(&in, fn, a->lib_target, (uint64_t)flags, 0, INJECT_CALL_MS, &ret, err,
			    sizeof(err));
	if (rc < 0)
		goto fail;
	if (!ret) {
		uint64_t dlerr = 0, s = 0;

		snprintf(err, sizeof(err), "dlopen(%.300s) failed in the target", a->lib_target);
		if (os_inject_symbol(a->pid, "/libc.so.6", "dlerror", &dlerr) == 0 &&
		    os_inject_call(&in, dlerr, NULL, 0, 0, INJECT_CALL_MS, &s, msg,
				   sizeof(msg)) == 0 && s &&
		    os_inject_read_str(a->pid, s, msg, sizeof(msg)) == 0)
			snprintf(err, sizeof(err), "dlopen failed in the target: %.400s", msg);
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

/* objscope_detach() in the target; 0 when done or nothing to do. */
static int disarm_target(struct attach_ctx *a)
{
	struct os_inject in;
	char err[512] = "";
	uint64_t fn, ret;
	int rc;

	rc = os_inject_symbol(a->pid, a->lib_target, "objscope_detach", &fn);
	if (rc < 0)
		return rc;
	rc = os_inject_begin(&in, a->pid, INJECT_SAFE_MS, err, sizeof(err));
	if (rc == 0)
		rc = os_inject_call(&in, fn, NULL, 0, 0, INJECT_CALL_MS, &ret, err, sizeof(err));
	os_inject_end(&in);
	if (rc < 0 && rc != -ESRCH)
		os_warn("attach: could not detach cleanly from process %d: %s — its hooks stay "
			"disarmed (pass-through)", (int)a->pid, err);
	return rc;
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
	struct sigaction sa;
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
	if (idx != argc - 1 || parse_pid(argv[idx], &a->pid) < 0) {
		os_err("attach: expected one process id — usage: objscope attach [options] "
		       "[-d SECONDS] [-o FILE] PID");
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
	rc = os_collector_init(&c, &o, err, sizeof(err));
	inited = true;
	if (rc < 0) {
		os_err("attach: %s", err);
		goto out;
	}
	/* a target in another PID namespace writes its own ids into the rings */
	if (os_pidns_init(&pidns, a->pid) == 0) {
		have_ns = true;
		c.pidns = &pidns;
	}
	rc = place_library(a, &tst);
	if (rc < 0) {
		os_err("attach: cannot make libobjscope.so reachable inside process %d's root: %s",
		       (int)a->pid, strerror(-rc));
		goto out;
	}
	rc = place_shm(&c, a, &tst);
	if (rc < 0) {
		os_err("attach: cannot create the shared rings in process %d's /dev/shm or /tmp: "
		       "%s", (int)a->pid, strerror(-rc));
		goto out;
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

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
	name_threads(&c, a->pid);

	while (!stop_requested) {
		struct pollfd pfd[65];
		int nfd = os_perf_nfds(c.perf) < 64 ? os_perf_nfds(c.perf) : 64;

		for (int i = 0; i < nfd; i++) {
			pfd[i].fd = os_perf_fd(c.perf, i);
			pfd[i].events = POLLIN;
		}
		pfd[nfd].fd = pidfd;
		pfd[nfd].events = POLLIN;
		pfd[nfd].revents = 0;
		poll(pfd, (nfds_t)nfd + 1, 20);
		os_collector_round(&c, false);
		os_collector_status(&c, false);
		if (!t_first && c.samples_total)
			t_first = os_now_ns();
		if (pfd[nfd].revents) {
			gone = true;
			break;
		}
		if (o.duration > 0 && os_now_ns() - t_armed >= (uint64_t)(o.duration * 1e9))
			break;
	}
	t_req = os_now_ns();
	os_collector_stop(&c);
	if (!gone && disarm_target(a) == -ESRCH)
		gone = true;
	t_detached = os_now_ns();
	os_collector_round(&c, true);
	os_collector_round(&c, true);
	os_collector_status(&c, true);
	if (gone)
		os_warn("attach: process %d exited; saving what was collected", (int)a->pid);
	os_debug("attach: first sample read %.1f ms after start, detached %.1f ms after the "
		 "request", t_first ? (t_first - t_start) / 1e6 : -1.0,
		 (t_detached - t_req) / 1e6);
	ret = os_session_write_profile(&c, &o, "attach", a->argc, a->argv) < 0 ? OS_EXIT_FAIL : 0;
out:
	if (a->shm_host[0])
		drop_shm_file(a);
	if (inited)
		os_collector_destroy(&c);
	if (have_ns)
		os_pidns_destroy(&pidns);
	if (pidfd >= 0)
		close(pidfd);
	free(a);
	return ret;
}
