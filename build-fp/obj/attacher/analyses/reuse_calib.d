build-fp/obj/attacher/analyses/reuse_calib.o: \
 attacher/analyses/reuse_calib.c attacher/analyses/reuse.h \
 attacher/watch/watch.h
attacher/analyses/reuse.h:
attacher/watch/watch.h:
