build-fp/obj/attacher/analyses/replica.o: attacher/analyses/replica.c \
 attacher/analyses/replica.h attacher/watch/watch.h common/profile.h \
 attacher/core/decode.h common/grow.h common/hashmap.h common/shm.h
attacher/analyses/replica.h:
attacher/watch/watch.h:
common/profile.h:
attacher/core/decode.h:
common/grow.h:
common/hashmap.h:
common/shm.h:
