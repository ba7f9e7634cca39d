build-fp/obj/runtimes/hotspot/target/hotspot_walk.o: \
 runtimes/hotspot/target/hotspot_walk.c runtimes/hotspot/target/hotspot.h \
 runtimes/hotspot/hotspot_abi.h runtimes/hotspot/hs_frames.h \
 preload/adapter.h preload/preload.h common/shm.h
runtimes/hotspot/target/hotspot.h:
runtimes/hotspot/hotspot_abi.h:
runtimes/hotspot/hs_frames.h:
preload/adapter.h:
preload/preload.h:
common/shm.h:
