build-fp/obj/attacher/core/tasks.o: attacher/core/tasks.c \
 attacher/core/tasks.h common/hashmap.h common/ivindex.h \
 symbolizer/symbolizer.h common/grow.h common/procmaps.h
attacher/core/tasks.h:
common/hashmap.h:
common/ivindex.h:
symbolizer/symbolizer.h:
common/grow.h:
common/procmaps.h:
