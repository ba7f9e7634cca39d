build-fp/obj/preload/detour.o: preload/detour.c preload/detour.h
preload/detour.h:
