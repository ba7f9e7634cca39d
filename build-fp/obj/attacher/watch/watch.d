build-fp/obj/attacher/watch/watch.o: attacher/watch/watch.c \
 attacher/watch/watch_int.h attacher/watch/watch.h common/clock.h \
 attacher/core/decode.h attacher/core/remote.h common/grow.h
attacher/watch/watch_int.h:
attacher/watch/watch.h:
common/clock.h:
attacher/core/decode.h:
attacher/core/remote.h:
common/grow.h:
