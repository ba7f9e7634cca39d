build-fp/obj/runtimes/target/registry.o: runtimes/target/registry.c \
 preload/adapter.h runtimes/generic/target/generic_attach.h \
 runtimes/hotspot/target/hotspot_attach.h common/attach_abi.h \
 runtimes/zero/target/zero.h
preload/adapter.h:
runtimes/generic/target/generic_attach.h:
runtimes/hotspot/target/hotspot_attach.h:
common/attach_abi.h:
runtimes/zero/target/zero.h:
