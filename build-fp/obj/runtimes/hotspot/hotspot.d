build-fp/obj/runtimes/hotspot/hotspot.o: runtimes/hotspot/hotspot.c \
 runtimes/hotspot/hotspot_int.h runtimes/hotspot/hotspot.h \
 attacher/core/attrib.h runtimes/runtime.h attacher/core/tasks.h \
 common/hashmap.h common/ivindex.h symbolizer/symbolizer.h common/cct.h \
 common/hashmap.h common/profile.h common/shm.h \
 runtimes/hotspot/hotspot_vm.h runtimes/hotspot/hotspot_abi.h \
 attacher/core/collector.h attacher/core/observer.h \
 attacher/core/overhead.h attacher/core/budget.h attacher/cli/options.h \
 attacher/sampling/perf.h attacher/core/decode.h attacher/inject/pidns.h \
 attacher/sampling/sampler.h attacher/sampling/pmu_event.h \
 attacher/core/shm_host.h common/ring.h common/shm.h \
 attacher/core/unwind.h common/clock.h runtimes/hotspot/hotspot_gc.h \
 runtimes/hotspot/hotspot_lines.h runtimes/hotspot/hotspot_scopes.h \
 runtimes/hotspot/hotspot_scan.h common/grow.h \
 runtimes/hotspot/hs_frames.h common/log.h common/safefs.h
runtimes/hotspot/hotspot_int.h:
runtimes/hotspot/hotspot.h:
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
runtimes/hotspot/hotspot_vm.h:
runtimes/hotspot/hotspot_abi.h:
attacher/core/collector.h:
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
runtimes/hotspot/hotspot_gc.h:
runtimes/hotspot/hotspot_lines.h:
runtimes/hotspot/hotspot_scopes.h:
runtimes/hotspot/hotspot_scan.h:
common/grow.h:
runtimes/hotspot/hs_frames.h:
common/log.h:
common/safefs.h:
