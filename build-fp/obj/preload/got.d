build-fp/obj/preload/got.o: preload/got.c preload/got.h
preload/got.h:
