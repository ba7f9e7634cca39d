build-fp/obj/runtimes/hotspot/target/hotspot_g1gens.o: \
 runtimes/hotspot/target/hotspot_g1gens.c runtimes/hotspot/hotspot_abi.h \
 runtimes/hotspot/target/hotspot.h runtimes/hotspot/hs_frames.h \
 preload/adapter.h preload/preload.h common/shm.h \
 runtimes/hotspot/target/hotspot_vms.h
runtimes/hotspot/hotspot_abi.h:
runtimes/hotspot/target/hotspot.h:
runtimes/hotspot/hs_frames.h:
preload/adapter.h:
preload/preload.h:
common/shm.h:
runtimes/hotspot/target/hotspot_vms.h:
