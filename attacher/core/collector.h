/* collector.h - the one collection loop behind `record` (and `attach`).
 *
 * Sources: the perf events of the sampler (samples + side-band records that
 * follow processes, threads and mappings) and the target's rings (object
 * events). Side-band records are applied as they are read; object events
 * and addressed samples are queued and applied in timestamp order behind a
 * short window, so that a sample lands on the object that was live at that
 * instant even when the address was freed and reused soon after.
 * Return convention: 0 / -errno; err receives one line.
 */
#ifndef OBJSCOPE_COLLECTOR_H
#define OBJSCOPE_COLLECTOR_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "attacher/core/attrib.h"
#include "attacher/core/checkpoint.h"
#include "attacher/core/observer.h"
#include "attacher/core/overhead.h"
#include "attacher/cli/options.h"
#include "attacher/sampling/perf.h"
#include "attacher/inject/pidns.h"
#include "attacher/sampling/sampler.h"
#include "attacher/core/shm_host.h"
#include "attacher/core/tasks.h"
#include "attacher/core/unwind.h"
#include "common/clock.h" /* os_now_ns(): callers of the collector use it */
#include "common/profile.h"
#include "attacher/sampling/bpf_filter.h"
#include "symbolizer/symbolizer.h"

struct os_qitem;

struct os_collector {
	const struct os_opts *opts;
	struct os_shm_host shm;
	struct os_perf *perf;
	struct os_sampler sampler;
	struct os_symbolizer *sym;
	struct os_tasks tasks;
	struct os_attrib attrib;
	struct os_code_access ca;
	struct os_unwinder *unw;    /* NULL: frame-pointer access paths only */
	struct os_pidns *pidns;     /* attach to another PID namespace: ring ids -> ours */
	struct os_qitem *q;         /* the queue: items [qh, qn) of q[0, qcap) */
	size_t qh, qn, qcap;
	uint32_t seq;
	uint64_t start_ns, end_ns;
	uint64_t samples_total, samples_addressed;
	uint64_t samples_jit;       /* of JIT compiler threads: counted only (--jit-threads) */
	uint64_t samples_self;      /* taken in objscope's code in the target (tasks.h) */
	uint64_t unaddr_nomem, unaddr_clobbered, unaddr_undecodable;
	uint64_t lost;
	uint64_t unwound_dwarf, unwound_fp; /* access paths by method */
	uint64_t unwound_java;     /* ... walked through JIT code (runtime java_walk) */
	uint64_t paths_full;       /* access paths that filled OS_MAX_FRAMES (cut at the root) */
	uint64_t last_status_ns;
	uint64_t shm_mean_max;     /* the largest byte-sampling mean the target was given */
	double steer_hooks_s;      /* hooks' time and the target's CPU at the mean's last */
	uint64_t steer_tgt_ns;     /* decision (overhead.c steer_mean), and the hooks' */
	uint64_t steer_calls;      /* calls then */
	bool status_line;          /* live status on stderr */
	bool shm_ready, perf_ready;
	/* analyses (attacher/core/observer.h), called in this order */
	struct os_obs obs[OS_OBS_MAX];
	unsigned nobs;
	unsigned obs_data;          /* sample_data bytes of all of them */
	bool obs_eager;             /* one of them wants every round applied */
	bool obs_started;           /* started (collector_open, once) */
	struct os_overhead_state ovh; /* the overhead budget (overhead.h) */
	/* JIT compiler threads' samples dropped in the kernel once the threads
	 * are known (bpf_filter.h); samples_jit_kernel: those counted there and
	 * taken back (threads that exited, and at the profile's build) */
	struct os_bpf_filter jitf;
	uint64_t samples_jit_kernel;
	char jitf_why[160];         /* why there is no filter ("" when there is) */
	/* attach (events of their own per thread): JIT compiler threads whose
	 * sampling events were switched off at their first sample, so the
	 * kernel takes none of theirs (os_perf_mute_thread) */
	uint32_t jit_muted;
	uint32_t jit_quiet;         /* JIT compiler threads asked for blocks without paths */
	struct os_ckpt ckpt;        /* profiles written while recording (checkpoint.h) */
	bool in_checkpoint;         /* this process is a checkpoint's child: what is shared
				     * with the parent or the target is left alone */
};

/* Shared memory + sampler; call before the target starts. */
int os_collector_init(struct os_collector *c, const struct os_opts *o, char *err, size_t errlen);
/* Opens the (inherited, per-CPU) perf events on pid. With enable_on_exec
 * they start counting when pid execs (record mode). */
/* record: the overhead budget's calibration, after the command was let go
 * (os_collector_open defers it when enable_on_exec). */
void os_collector_calibrate(struct os_collector *c);
int os_collector_open(struct os_collector *c, pid_t pid, bool enable_on_exec, char *err,
		      size_t errlen);
/* As os_collector_open, through another opener of os_perf_open's kind
 * (tests: os_perf_open_memory, a ring of synthetic records). */
int os_collector_open_with(struct os_collector *c, pid_t pid,
			   int (*open_fn)(struct os_perf **, pid_t, struct perf_event_attr *,
					  unsigned, char *, size_t),
			   char *err, size_t errlen);
/* Attach mode: opens the same events, enabled at once, on every thread of
 * the running process pid (threads they create are followed). */
int os_collector_open_attach(struct os_collector *c, pid_t pid, char *err, size_t errlen);
/* One round: read everything, apply what is older than the window. When
 * `final` is true, everything is applied. */
void os_collector_round(struct os_collector *c, bool final);
/* Stops sampling and tells the hooks to pass through. */
void os_collector_stop(struct os_collector *c);
/* Whether an analysis wants every round now (observer.h `eager`, `eager_now`):
 * the launcher's loop then runs its rounds every 5 ms, not every 20 ms. */
bool os_collector_eager(struct os_collector *c);
/* The JIT threads' samples dropped in the kernel so far into their counts
 * (samples_jit_kernel); before the profile is built. */
void os_collector_jit_filter_collect(struct os_collector *c);
/* The JIT threads' samples dropped in the kernel so far (bpf_filter.h):
 * those taken back and those still in the map. Each still cost the kernel
 * its interrupt: the budget charges them at their own calibrated cost
 * (os_perf_dropped_cost_ns, ~0.75 of a sample taken here). */
uint64_t os_collector_jit_dropped(struct os_collector *c);
/* Symbolizes and builds the profile. */
struct os_profile *os_collector_profile(struct os_collector *c, const char *mode, int argc,
					char *const argv[]);
void os_collector_destroy(struct os_collector *c);

#endif
