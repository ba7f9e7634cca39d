build-fp/obj/runtimes/hotspot/hotspot_scan.o: \
 runtimes/hotspot/hotspot_scan.c runtimes/hotspot/hotspot_scan.h \
 runtimes/hotspot/hotspot_vm.h runtimes/hotspot/hotspot_abi.h \
 common/hashmap.h
runtimes/hotspot/hotspot_scan.h:
runtimes/hotspot/hotspot_vm.h:
runtimes/hotspot/hotspot_abi.h:
common/hashmap.h:
