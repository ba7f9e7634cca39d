build-fp/obj/attacher/sampling/sampler.o: attacher/sampling/sampler.c \
 attacher/sampling/sampler.h attacher/core/decode.h \
 attacher/cli/options.h attacher/sampling/perf.h \
 attacher/sampling/pmu_event.h
attacher/sampling/sampler.h:
attacher/core/decode.h:
attacher/cli/options.h:
attacher/sampling/perf.h:
attacher/sampling/pmu_event.h:
