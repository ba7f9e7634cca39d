build-fp/obj/symbolizer/symbolizer.o: symbolizer/symbolizer.c \
 symbolizer/symbolizer.h common/grow.h common/hashmap.h common/log.h \
 common/procmaps.h common/search.h symbolizer/elf_module.h \
 symbolizer/perfmap.h
symbolizer/symbolizer.h:
common/grow.h:
common/hashmap.h:
common/log.h:
common/procmaps.h:
common/search.h:
symbolizer/elf_module.h:
symbolizer/perfmap.h:
