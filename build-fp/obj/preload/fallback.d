build-fp/obj/preload/fallback.o: preload/fallback.c preload/preload.h \
 common/shm.h
preload/preload.h:
common/shm.h:
