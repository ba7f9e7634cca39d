build-fp/obj/attacher/sampling/pmu_event.o: attacher/sampling/pmu_event.c \
 attacher/sampling/pmu_event.h
attacher/sampling/pmu_event.h:
