build-fp/obj/attacher/sampling/perf.o: attacher/sampling/perf.c \
 attacher/sampling/perf.h attacher/core/decode.h common/grow.h
attacher/sampling/perf.h:
attacher/core/decode.h:
common/grow.h:
