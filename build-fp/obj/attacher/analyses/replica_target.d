build-fp/obj/attacher/analyses/replica_target.o: \
 attacher/analyses/replica_target.c attacher/analyses/replica.h \
 attacher/watch/watch.h common/profile.h common/shm.h \
 attacher/core/remote.h common/clock.h common/grow.h
attacher/analyses/replica.h:
attacher/watch/watch.h:
common/profile.h:
common/shm.h:
attacher/core/remote.h:
common/clock.h:
common/grow.h:
