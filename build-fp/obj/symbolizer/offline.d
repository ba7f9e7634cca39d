build-fp/obj/symbolizer/offline.o: symbolizer/offline.c \
 symbolizer/offline.h common/grow.h common/hashmap.h common/profile.h \
 symbolizer/elf_module.h
symbolizer/offline.h:
common/grow.h:
common/hashmap.h:
common/profile.h:
symbolizer/elf_module.h:
