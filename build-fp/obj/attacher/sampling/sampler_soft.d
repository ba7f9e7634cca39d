build-fp/obj/attacher/sampling/sampler_soft.o: \
 attacher/sampling/sampler_soft.c attacher/sampling/sampler.h \
 attacher/core/decode.h attacher/cli/options.h attacher/sampling/perf.h \
 attacher/sampling/pmu_event.h common/grow.h common/hashmap.h \
 common/search.h
attacher/sampling/sampler.h:
attacher/core/decode.h:
attacher/cli/options.h:
attacher/sampling/perf.h:
attacher/sampling/pmu_event.h:
common/grow.h:
common/hashmap.h:
common/search.h:
