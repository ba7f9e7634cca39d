build-fp/obj/runtimes/generic/generic_jit.o: \
 runtimes/generic/generic_jit.c runtimes/generic/generic_int.h \
 attacher/core/attrib.h runtimes/runtime.h attacher/core/tasks.h \
 common/hashmap.h common/ivindex.h symbolizer/symbolizer.h common/cct.h \
 common/hashmap.h common/profile.h common/shm.h \
 runtimes/generic/generic.h common/procmaps.h \
 runtimes/generic/generic_names.h common/log.h common/safefs.h
runtimes/generic/generic_int.h:
attacher/core/attrib.h:
runtimes/runtime.h:
attacher/core/tasks.h:
common/hashmap.h:
common/ivindex.h:
symbolizer/symbolizer.h:
common/cct.h:
common/hashmap.h:
common/profile.h:
common/shm.h:
runtimes/generic/generic.h:
common/procmaps.h:
runtimes/generic/generic_names.h:
common/log.h:
common/safefs.h:
