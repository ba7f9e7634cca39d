build-fp/obj/runtimes/hotspot/target/hotspot_vms.o: \
 runtimes/hotspot/target/hotspot_vms.c \
 runtimes/hotspot/target/hotspot_vms.h runtimes/hotspot/hotspot_abi.h
runtimes/hotspot/target/hotspot_vms.h:
runtimes/hotspot/hotspot_abi.h:
