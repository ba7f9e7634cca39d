build-fp/obj/attacher/cli/cmd_attach.o: attacher/cli/cmd_attach.c \
 attacher/inject/attach_fs.h attacher/core/collector.h \
 attacher/core/attrib.h runtimes/runtime.h attacher/core/tasks.h \
 common/hashmap.h common/ivindex.h symbolizer/symbolizer.h common/cct.h \
 common/hashmap.h common/profile.h common/shm.h attacher/core/observer.h \
 attacher/core/overhead.h attacher/core/budget.h attacher/cli/options.h \
 attacher/sampling/perf.h attacher/core/decode.h attacher/inject/pidns.h \
 attacher/sampling/sampler.h attacher/sampling/pmu_event.h \
 attacher/core/shm_host.h common/ring.h common/shm.h \
 attacher/core/unwind.h common/clock.h attacher/cli/commands.h \
 attacher/cli/run_loop.h attacher/cli/session.h \
 attacher/cli/status_line.h attacher/inject/inject.h \
 attacher/inject/ptrace_refusal.h common/attach_abi.h \
 common/attach_orphan.h common/log.h common/safefs.h
attacher/inject/attach_fs.h:
attacher/core/collector.h:
attacher/core/attrib.h:
runtimes/runtime.h:
attacher/core/tasks.h:
common/hashmap.h:
common/ivindex.h:
symbolizer/symbolizer.h:
common/cct.h:
common/hashmap.h:
common/profile.h:
common/shm.h:
attacher/core/observer.h:
attacher/core/overhead.h:
attacher/core/budget.h:
attacher/cli/options.h:
attacher/sampling/perf.h:
attacher/core/decode.h:
attacher/inject/pidns.h:
attacher/sampling/sampler.h:
attacher/sampling/pmu_event.h:
attacher/core/shm_host.h:
common/ring.h:
common/shm.h:
attacher/core/unwind.h:
common/clock.h:
attacher/cli/commands.h:
attacher/cli/run_loop.h:
attacher/cli/session.h:
attacher/cli/status_line.h:
attacher/inject/inject.h:
attacher/inject/ptrace_refusal.h:
common/attach_abi.h:
common/attach_orphan.h:
common/log.h:
common/safefs.h:
