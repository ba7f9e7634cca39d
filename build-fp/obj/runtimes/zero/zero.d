build-fp/obj/runtimes/zero/zero.o: runtimes/zero/zero.c \
 runtimes/zero/zero_int.h common/hashmap.h runtimes/runtime.h \
 runtimes/zero/zero_abi.h attacher/core/attrib.h attacher/core/tasks.h \
 common/ivindex.h symbolizer/symbolizer.h common/cct.h common/hashmap.h \
 common/profile.h common/shm.h common/grow.h runtimes/hotspot/hotspot.h \
 runtimes/hotspot/hotspot_vm.h runtimes/hotspot/hotspot_abi.h
runtimes/zero/zero_int.h:
common/hashmap.h:
runtimes/runtime.h:
runtimes/zero/zero_abi.h:
attacher/core/attrib.h:
attacher/core/tasks.h:
common/ivindex.h:
symbolizer/symbolizer.h:
common/cct.h:
common/hashmap.h:
common/profile.h:
common/shm.h:
common/grow.h:
runtimes/hotspot/hotspot.h:
runtimes/hotspot/hotspot_vm.h:
runtimes/hotspot/hotspot_abi.h:
