build-fp/obj/attacher/watch/watch_ptrace.o: attacher/watch/watch_ptrace.c \
 attacher/watch/watch_int.h attacher/watch/watch.h common/clock.h
attacher/watch/watch_int.h:
attacher/watch/watch.h:
common/clock.h:
