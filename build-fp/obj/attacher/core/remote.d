build-fp/obj/attacher/core/remote.o: attacher/core/remote.c \
 attacher/core/remote.h common/hashmap.h symbolizer/symbolizer.h
attacher/core/remote.h:
common/hashmap.h:
symbolizer/symbolizer.h:
