build-fp/obj/runtimes/hotspot/hotspot_vm.o: runtimes/hotspot/hotspot_vm.c \
 runtimes/hotspot/hotspot_vm.h runtimes/hotspot/hotspot_abi.h
runtimes/hotspot/hotspot_vm.h:
runtimes/hotspot/hotspot_abi.h:
