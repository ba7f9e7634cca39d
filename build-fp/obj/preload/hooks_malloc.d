build-fp/obj/preload/hooks_malloc.o: preload/hooks_malloc.c \
 preload/preload.h common/shm.h
preload/preload.h:
common/shm.h:
