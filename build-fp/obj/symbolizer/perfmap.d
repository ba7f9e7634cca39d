build-fp/obj/symbolizer/perfmap.o: symbolizer/perfmap.c \
 symbolizer/perfmap.h common/grow.h common/safefs.h common/search.h
symbolizer/perfmap.h:
common/grow.h:
common/safefs.h:
common/search.h:
