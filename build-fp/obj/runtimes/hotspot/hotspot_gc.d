build-fp/obj/runtimes/hotspot/hotspot_gc.o: runtimes/hotspot/hotspot_gc.c \
 runtimes/hotspot/hotspot_gc.h runtimes/hotspot/hotspot_abi.h \
 runtimes/hotspot/hotspot_vm.h common/hashmap.h common/ivindex.h
runtimes/hotspot/hotspot_gc.h:
runtimes/hotspot/hotspot_abi.h:
runtimes/hotspot/hotspot_vm.h:
common/hashmap.h:
common/ivindex.h:
