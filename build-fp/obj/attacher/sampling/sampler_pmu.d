build-fp/obj/attacher/sampling/sampler_pmu.o: \
 attacher/sampling/sampler_pmu.c attacher/sampling/pmu_event.h \
 attacher/sampling/sampler.h attacher/core/decode.h \
 attacher/cli/options.h attacher/sampling/perf.h
attacher/sampling/pmu_event.h:
attacher/sampling/sampler.h:
attacher/core/decode.h:
attacher/cli/options.h:
attacher/sampling/perf.h:
