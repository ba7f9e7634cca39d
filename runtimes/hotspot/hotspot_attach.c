/* hotspot_attach.c - how objscope starts profiling a JVM, collector side:
 * `objscope record` passes the Java options to the in-target side through
 * the environment (the registry's launch_env); for `objscope attach`
 * (runtime.h ops attached, detached) what the in-target attach reported
 * (common/attach_abi.h) goes into the adapter's state (os_hotspot_attached),
 * and after the detach the JVM is asked for its perf map through its
 * attach socket (Compiler.perfmap, jattach.h), which names JIT code.
 */
#include "runtimes/hotspot/hotspot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attacher/cli/options.h"
#include "attacher/core/collector.h"
#include "common/attach_abi.h"
#include "common/log.h"
#include "runtimes/hotspot/hotspot_abi.h"
#include "runtimes/hotspot/jattach.h"

#define JATTACH_MS 5000       /* for the JVM's answer to Compiler.perfmap */
#define JATTACH_LATE_MS 10000 /* ... and then for the map itself (late_perf_map) */

void os_hotspot_launch_env(const struct os_opts *o)
{
	char tlab[24];

	setenv(OS_JAVA_MODE_ENV, o->java_objects, 1);
	snprintf(tlab, sizeof(tlab), "%llu", (unsigned long long)o->java_tlab);
	setenv(OS_JAVA_TLAB_ENV, tlab, 1);
	if (o->java_fp)
		setenv(OS_JAVA_FP_ENV, "1", 1);
}

bool os_hotspot_wanted(const struct os_opts *o)
{
	return os_runtime_selected(o, "hotspot");
}

void os_hs_attached(struct os_runtime *rt, uint32_t pid, const struct os_rt_plan *plan)
{
	os_hotspot_attached(rt, pid, NULL, false, (int)(int32_t)plan->stacks, (int)plan->active);
}

/* A JVM too slow to answer Compiler.perfmap (a safepoint it cannot reach
 * yet; under ASan) still runs the command and writes the map: waits up to
 * JATTACH_LATE_MS for it to appear and stop growing, so that it is used and
 * then removed rather than left behind. 0 when it is there; -ENOENT when
 * it is not (or stays empty); another -errno with err set when what is
 * there is refused. */
static int late_perf_map(pid_t pid, char *err, size_t errlen)
{
	off_t last = -1;
	struct stat st;
	int rc = -ENOENT;

	/* in the JVM's /tmp, resolved inside its root; a regular file of its
	 * uid, never followed (os_jattach_map_stat) */
	for (int waited = 0; waited < JATTACH_LATE_MS; waited += 50) {
		rc = os_jattach_map_stat(pid, &st, err, errlen);
		if (rc == 0) {
			if (st.st_size > 0 && st.st_size == last)
				return 0;
			last = st.st_size;
		} else if (rc != -ENOENT) {
			return rc; /* refused: err says why */
		}
		usleep(50 * 1000);
	}
	rc = os_jattach_map_stat(pid, &st, err, errlen);
	return rc == 0 && st.st_size == 0 ? -ENOENT : rc;
}

/* JIT names: the JVM writes its perf map on request (HotSpot attach
 * socket, Compiler.perfmap), after the detach so that it covers the code
 * compiled meanwhile and costs nothing to the detach itself. */
void os_hs_detached(struct os_runtime *rt, uint32_t upid, const struct os_rt_plan *plan,
		    char *note, size_t len)
{
	char path[128], err[512] = "", late[256] = "";
	uint64_t t0 = os_now_ns();
	pid_t pid = (pid_t)upid;
	int existed = 0, rc;

	note[0] = 0;
	rc = os_jattach_perf_map(pid, JATTACH_MS, path, sizeof(path), &existed, err, sizeof(err));
	if (rc == -ETIMEDOUT && !existed && path[0]) {
		int late_rc = late_perf_map(pid, late, sizeof(late));

		if (late_rc == 0)
			rc = 0;
		else if (late_rc != -ENOENT)
			snprintf(err, sizeof(err), "%s", late);
	}
	if (rc < 0) {
		snprintf(note, len, "no perf map from the JVM (process %d): %s", (int)pid, err);
		os_warn("attach: no perf map from the JVM (process %d): %s — JIT frames stay "
			"unnamed%s%s", (int)pid, err,
			rc == -ETIMEDOUT && !existed ? "; the JVM may still write " : "",
			rc == -ETIMEDOUT && !existed ? path : "");
		path[0] = 0;
	} else {
		os_debug("attach: perf map %s written by the JVM in %.1f ms", path,
			 (os_now_ns() - t0) / 1e6);
	}
	os_hotspot_attached(rt, upid, path[0] ? path : NULL, !existed, (int)(int32_t)plan->stacks,
			    (int)plan->active);
}
