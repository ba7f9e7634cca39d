build-fp/obj/preload/thread.o: preload/thread.c preload/preload.h \
 common/shm.h
preload/preload.h:
common/shm.h:
