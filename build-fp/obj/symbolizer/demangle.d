build-fp/obj/symbolizer/demangle.o: symbolizer/demangle.c \
 symbolizer/symbolizer.h
symbolizer/symbolizer.h:
