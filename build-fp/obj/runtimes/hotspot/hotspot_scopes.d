build-fp/obj/runtimes/hotspot/hotspot_scopes.o: \
 runtimes/hotspot/hotspot_scopes.c runtimes/hotspot/hotspot_scopes.h \
 runtimes/hotspot/hotspot_vm.h runtimes/hotspot/hotspot_abi.h \
 common/unaligned.h
runtimes/hotspot/hotspot_scopes.h:
runtimes/hotspot/hotspot_vm.h:
runtimes/hotspot/hotspot_abi.h:
common/unaligned.h:
