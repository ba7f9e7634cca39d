build-fp/obj/preload/hooks_thread.o: preload/hooks_thread.c \
 preload/preload.h common/shm.h
preload/preload.h:
common/shm.h:
