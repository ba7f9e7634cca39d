build-fp/obj/preload/loaded.o: preload/loaded.c preload/adapter.h \
 preload/preload.h common/shm.h
preload/adapter.h:
preload/preload.h:
common/shm.h:
