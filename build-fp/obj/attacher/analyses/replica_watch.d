build-fp/obj/attacher/analyses/replica_watch.o: \
 attacher/analyses/replica_watch.c attacher/analyses/replica.h \
 attacher/watch/watch.h common/profile.h attacher/core/remote.h
attacher/analyses/replica.h:
attacher/watch/watch.h:
common/profile.h:
attacher/core/remote.h:
