build-fp/obj/preload/hooks_mem.o: preload/hooks_mem.c preload/adapter.h \
 preload/preload.h common/shm.h
preload/adapter.h:
preload/preload.h:
common/shm.h:
