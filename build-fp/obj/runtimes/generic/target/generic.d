build-fp/obj/runtimes/generic/target/generic.o: \
 runtimes/generic/target/generic.c preload/adapter.h preload/preload.h \
 common/shm.h runtimes/generic/target/generic_attach.h
preload/adapter.h:
preload/preload.h:
common/shm.h:
runtimes/generic/target/generic_attach.h:
