build-fp/obj/attacher/core/unwind.o: attacher/core/unwind.c \
 attacher/core/unwind.h attacher/core/decode.h symbolizer/symbolizer.h \
 common/hashmap.h
attacher/core/unwind.h:
attacher/core/decode.h:
symbolizer/symbolizer.h:
common/hashmap.h:
