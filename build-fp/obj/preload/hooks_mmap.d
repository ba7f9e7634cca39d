build-fp/obj/preload/hooks_mmap.o: preload/hooks_mmap.c preload/preload.h \
 common/shm.h
preload/preload.h:
common/shm.h:
