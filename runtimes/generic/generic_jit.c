/* generic_jit.c - JIT code of an unknown VM named from its perf map (op
 * before_symbolize): /tmp/perf-PID.map, in the format perf defines, which
 * VMs write when asked (HotSpot: -XX:+UnlockDiagnosticVMOptions
 * -XX:+DumpPerfMapAtExit or `jcmd PID Compiler.perfmap`; OpenJ9:
 * -Xjit:perfTool). Asking is the user's: the generic adapter knows no VM's
 * options. The file lies in a world-writable directory: it is opened
 * without following a link, only as a regular file of the VM's user (or
 * root), read with caps (symbolizer/perfmap.h), and never removed (it is
 * not objscope's). */
#include "runtimes/generic/generic_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/safefs.h"
#include "symbolizer/symbolizer.h"

static void load_map(struct generic *g, struct gen_vm *v)
{
	char name[40];
	size_t long_lines = 0;
	struct stat st;
	int dirfd, fd, rc;

	snprintf(name, sizeof(name), "perf-%u.map", v->pid);
	dirfd = open("/tmp", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return;
	fd = os_open_untrusted(dirfd, name, v->uid, &st);
	close(dirfd);
	if (fd == -ENOENT)
		return; /* GEN_MAP_NONE: the note says how to ask for one */
	if (fd < 0) {
		v->map = GEN_MAP_REFUSED;
		v->map_err = -fd;
		os_warn("generic: /tmp/%s not read: %s", name,
			fd == -ELOOP ? "a symbolic link" :
			fd == -EFTYPE_OS ? "not a regular file" :
			fd == -EPERM ? "owned by another user than the process's" : strerror(-fd));
		return;
	}
	rc = os_sym_load_perf_map_fd(g->sym, v->asid, fd, &long_lines);
	close(fd);
	if (rc < 0) {
		v->map = GEN_MAP_REFUSED;
		v->map_err = -rc;
		os_warn("generic: /tmp/%s not read: %s", name,
			rc == -EFBIG ? "larger than objscope reads" : strerror(-rc));
		return;
	}
	v->map = GEN_MAP_READ;
	if (long_lines)
		os_debug("generic: /tmp/%s: %zu lines over 64 KiB skipped", name, long_lines);
}

void gen_before_symbolize(struct os_runtime *rt)
{
	struct generic *g = gen_of(rt);

	if (!g->sym)
		return;
	for (size_t i = 0; i < g->nvms; i++)
		if (g->vms[i]->vm && !g->vms[i]->forgotten)
			load_map(g, g->vms[i]);
}
