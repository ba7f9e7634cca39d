build-fp/obj/preload/replica.o: preload/replica.c common/clock.h \
 preload/preload.h common/shm.h
common/clock.h:
preload/preload.h:
common/shm.h:
