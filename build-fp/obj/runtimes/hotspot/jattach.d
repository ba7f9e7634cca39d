build-fp/obj/runtimes/hotspot/jattach.o: runtimes/hotspot/jattach.c \
 runtimes/hotspot/jattach.h common/safefs.h
runtimes/hotspot/jattach.h:
common/safefs.h:
