build-fp/obj/runtimes/generic/generic_vm.o: runtimes/generic/generic_vm.c \
 runtimes/generic/generic.h common/procmaps.h \
 runtimes/generic/generic_names.h common/profile.h runtimes/runtime.h \
 common/grow.h
runtimes/generic/generic.h:
common/procmaps.h:
runtimes/generic/generic_names.h:
common/profile.h:
runtimes/runtime.h:
common/grow.h:
