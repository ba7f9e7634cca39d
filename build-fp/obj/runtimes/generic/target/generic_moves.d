build-fp/obj/runtimes/generic/target/generic_moves.o: \
 runtimes/generic/target/generic_moves.c preload/adapter.h \
 preload/preload.h common/shm.h runtimes/generic/generic_names.h \
 common/profile.h runtimes/generic/target/generic_attach.h
preload/adapter.h:
preload/preload.h:
common/shm.h:
runtimes/generic/generic_names.h:
common/profile.h:
runtimes/generic/target/generic_attach.h:
