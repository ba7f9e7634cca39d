build-fp/obj/attacher/analyses/analyses.o: attacher/analyses/analyses.c \
 attacher/cli/options.h attacher/core/observer.h common/profile.h \
 attacher/core/slices.h common/hashmap.h attacher/analyses/memsrc.h \
 attacher/analyses/replica.h attacher/watch/watch.h \
 attacher/analyses/lifetime.h attacher/core/attrib.h runtimes/runtime.h \
 attacher/core/tasks.h common/ivindex.h symbolizer/symbolizer.h \
 common/cct.h common/hashmap.h common/shm.h attacher/analyses/reuse.h
attacher/cli/options.h:
attacher/core/observer.h:
common/profile.h:
attacher/core/slices.h:
common/hashmap.h:
attacher/analyses/memsrc.h:
attacher/analyses/replica.h:
attacher/watch/watch.h:
attacher/analyses/lifetime.h:
attacher/core/attrib.h:
runtimes/runtime.h:
attacher/core/tasks.h:
common/ivindex.h:
symbolizer/symbolizer.h:
common/cct.h:
common/hashmap.h:
common/shm.h:
attacher/analyses/reuse.h:
