build-fp/obj/preload/init.o: preload/init.c preload/adapter.h \
 preload/preload.h common/shm.h
preload/adapter.h:
preload/preload.h:
common/shm.h:
