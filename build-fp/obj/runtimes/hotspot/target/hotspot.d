build-fp/obj/runtimes/hotspot/target/hotspot.o: \
 runtimes/hotspot/target/hotspot.c runtimes/hotspot/hotspot_abi.h \
 common/ring.h common/shm.h preload/detour.h \
 runtimes/hotspot/target/hotspot.h runtimes/hotspot/hs_frames.h \
 preload/adapter.h preload/preload.h common/shm.h \
 runtimes/hotspot/target/hotspot_attach.h common/attach_abi.h \
 runtimes/hotspot/target/hotspot_elf.h \
 runtimes/hotspot/target/hotspot_vms.h
runtimes/hotspot/hotspot_abi.h:
common/ring.h:
common/shm.h:
preload/detour.h:
runtimes/hotspot/target/hotspot.h:
runtimes/hotspot/hs_frames.h:
preload/adapter.h:
preload/preload.h:
common/shm.h:
runtimes/hotspot/target/hotspot_attach.h:
common/attach_abi.h:
runtimes/hotspot/target/hotspot_elf.h:
runtimes/hotspot/target/hotspot_vms.h:
