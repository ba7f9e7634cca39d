build-fp/obj/runtimes/hotspot/hotspot_names.o: \
 runtimes/hotspot/hotspot_names.c runtimes/hotspot/hotspot.h \
 attacher/core/attrib.h runtimes/runtime.h attacher/core/tasks.h \
 common/hashmap.h common/ivindex.h symbolizer/symbolizer.h common/cct.h \
 common/hashmap.h common/profile.h common/shm.h \
 runtimes/hotspot/hotspot_vm.h runtimes/hotspot/hotspot_abi.h
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
common/shm.h:
runtimes/hotspot/hotspot_vm.h:
runtimes/hotspot/hotspot_abi.h:
