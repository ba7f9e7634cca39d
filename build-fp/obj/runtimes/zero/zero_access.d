build-fp/obj/runtimes/zero/zero_access.o: runtimes/zero/zero_access.c \
 attacher/core/decode.h attacher/core/remote.h common/shm.h \
 runtimes/hotspot/hotspot.h attacher/core/attrib.h runtimes/runtime.h \
 attacher/core/tasks.h common/hashmap.h common/ivindex.h \
 symbolizer/symbolizer.h common/cct.h common/hashmap.h common/profile.h \
 runtimes/hotspot/hotspot_vm.h runtimes/hotspot/hotspot_abi.h \
 runtimes/zero/zero_frames.h runtimes/zero/zero_int.h \
 runtimes/zero/zero_abi.h
attacher/core/decode.h:
attacher/core/remote.h:
common/shm.h:
runtimes/hotspot/hotspot.h:
attacher/core/attrib.h:
runtimes/runtime.h:
attacher/core/tasks.h:
common/hashmap.h:
common/ivindex.h:
symbolizer/symbolizer.h:
common/cct.h:
common/hashmap.h:
common/profile.h:
runtimes/hotspot/hotspot_vm.h:
runtimes/hotspot/hotspot_abi.h:
runtimes/zero/zero_frames.h:
runtimes/zero/zero_int.h:
runtimes/zero/zero_abi.h:
