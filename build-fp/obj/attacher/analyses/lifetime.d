build-fp/obj/attacher/analyses/lifetime.o: attacher/analyses/lifetime.c \
 attacher/analyses/lifetime.h attacher/core/attrib.h runtimes/runtime.h \
 attacher/core/tasks.h common/hashmap.h common/ivindex.h \
 symbolizer/symbolizer.h common/cct.h common/hashmap.h common/profile.h \
 common/shm.h attacher/core/observer.h common/grow.h
attacher/analyses/lifetime.h:
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
attacher/core/observer.h:
common/grow.h:
