build-fp/obj/runtimes/dispatch.o: runtimes/dispatch.c runtimes/runtime.h \
 attacher/cli/options.h attacher/core/attrib.h attacher/core/tasks.h \
 common/hashmap.h common/ivindex.h symbolizer/symbolizer.h common/cct.h \
 common/hashmap.h common/profile.h common/shm.h common/grow.h
runtimes/runtime.h:
attacher/cli/options.h:
attacher/core/attrib.h:
attacher/core/tasks.h:
common/hashmap.h:
common/ivindex.h:
symbolizer/symbolizer.h:
common/cct.h:
common/hashmap.h:
common/profile.h:
common/shm.h:
common/grow.h:
