build-fp/obj/attacher/analyses/numa.o: attacher/analyses/numa.c \
 attacher/analyses/memsrc.h attacher/core/observer.h common/profile.h \
 attacher/core/collector.h attacher/core/attrib.h runtimes/runtime.h \
 attacher/core/tasks.h common/hashmap.h common/ivindex.h \
 symbolizer/symbolizer.h common/cct.h common/hashmap.h common/shm.h \
 attacher/core/overhead.h attacher/core/budget.h attacher/cli/options.h \
 attacher/sampling/perf.h attacher/core/decode.h attacher/inject/pidns.h \
 attacher/sampling/sampler.h attacher/sampling/pmu_event.h \
 attacher/core/shm_host.h common/ring.h common/shm.h \
 attacher/core/unwind.h common/clock.h common/grow.h
attacher/analyses/memsrc.h:
attacher/core/observer.h:
common/profile.h:
attacher/core/collector.h:
attacher/core/attrib.h:
runtimes/runtime.h:
attacher/core/tasks.h:
common/hashmap.h:
common/ivindex.h:
symbolizer/symbolizer.h:
common/cct.h:
common/hashmap.h:
common/shm.h:
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
common/grow.h:
