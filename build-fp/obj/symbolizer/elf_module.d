build-fp/obj/symbolizer/elf_module.o: symbolizer/elf_module.c \
 common/grow.h symbolizer/elf_module.h common/hashmap.h common/safefs.h \
 common/search.h symbolizer/symbolizer.h
common/grow.h:
symbolizer/elf_module.h:
common/hashmap.h:
common/safefs.h:
common/search.h:
symbolizer/symbolizer.h:
