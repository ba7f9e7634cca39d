build-fp/obj/runtimes/registry.o: runtimes/registry.c runtimes/runtime.h \
 runtimes/generic/generic.h common/procmaps.h \
 runtimes/generic/generic_names.h common/profile.h \
 runtimes/hotspot/hotspot.h attacher/core/attrib.h attacher/core/tasks.h \
 common/hashmap.h common/ivindex.h symbolizer/symbolizer.h common/cct.h \
 common/hashmap.h common/shm.h runtimes/hotspot/hotspot_vm.h \
 runtimes/hotspot/hotspot_abi.h runtimes/zero/zero.h
runtimes/runtime.h:
runtimes/generic/generic.h:
common/procmaps.h:
runtimes/generic/generic_names.h:
common/profile.h:
runtimes/hotspot/hotspot.h:
attacher/core/attrib.h:
attacher/core/tasks.h:
common/hashmap.h:
common/ivindex.h:
symbolizer/symbolizer.h:
common/cct.h:
common/hashmap.h:
common/shm.h:
runtimes/hotspot/hotspot_vm.h:
runtimes/hotspot/hotspot_abi.h:
runtimes/zero/zero.h:
