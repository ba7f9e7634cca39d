build-fp/obj/runtimes/zero/target/zero.o: runtimes/zero/target/zero.c \
 preload/detour.h runtimes/hotspot/target/hotspot.h \
 runtimes/hotspot/hotspot_abi.h runtimes/hotspot/hs_frames.h \
 preload/adapter.h preload/preload.h common/shm.h \
 runtimes/hotspot/target/hotspot_attach.h common/attach_abi.h \
 runtimes/hotspot/target/hotspot_elf.h \
 runtimes/hotspot/target/hotspot_vms.h runtimes/zero/target/zero.h \
 runtimes/zero/zero_abi.h runtimes/zero/zero_frames.h
preload/detour.h:
runtimes/hotspot/target/hotspot.h:
runtimes/hotspot/hotspot_abi.h:
runtimes/hotspot/hs_frames.h:
preload/adapter.h:
preload/preload.h:
common/shm.h:
runtimes/hotspot/target/hotspot_attach.h:
common/attach_abi.h:
runtimes/hotspot/target/hotspot_elf.h:
runtimes/hotspot/target/hotspot_vms.h:
runtimes/zero/target/zero.h:
runtimes/zero/zero_abi.h:
runtimes/zero/zero_frames.h:
