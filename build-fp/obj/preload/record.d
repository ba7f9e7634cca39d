build-fp/obj/preload/record.o: preload/record.c common/clock.h \
 common/ring.h common/shm.h preload/adapter.h preload/preload.h \
 common/shm.h
common/clock.h:
common/ring.h:
common/shm.h:
preload/adapter.h:
preload/preload.h:
common/shm.h:
