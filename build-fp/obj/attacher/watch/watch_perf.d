build-fp/obj/attacher/watch/watch_perf.o: attacher/watch/watch_perf.c \
 attacher/watch/watch_int.h attacher/watch/watch.h common/clock.h
attacher/watch/watch_int.h:
attacher/watch/watch.h:
common/clock.h:
