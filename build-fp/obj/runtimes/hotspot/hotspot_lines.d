build-fp/obj/runtimes/hotspot/hotspot_lines.o: \
 runtimes/hotspot/hotspot_lines.c runtimes/hotspot/hotspot_lines.h \
 runtimes/hotspot/hotspot_scopes.h runtimes/hotspot/hotspot_vm.h \
 runtimes/hotspot/hotspot_abi.h common/unaligned.h
runtimes/hotspot/hotspot_lines.h:
runtimes/hotspot/hotspot_scopes.h:
runtimes/hotspot/hotspot_vm.h:
runtimes/hotspot/hotspot_abi.h:
common/unaligned.h:
