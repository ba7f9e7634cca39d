build-fp/obj/attacher/cli/options.o: attacher/cli/options.c \
 attacher/cli/options.h attacher/sampling/sampler.h \
 attacher/core/decode.h attacher/sampling/perf.h \
 attacher/sampling/pmu_event.h attacher/watch/watch.h common/log.h \
 common/shm.h attacher/core/budget.h runtimes/runtime.h
attacher/cli/options.h:
attacher/sampling/sampler.h:
attacher/core/decode.h:
attacher/sampling/perf.h:
attacher/sampling/pmu_event.h:
attacher/watch/watch.h:
common/log.h:
common/shm.h:
attacher/core/budget.h:
runtimes/runtime.h:
