build-fp/obj/attacher/inject/inject.o: attacher/inject/inject.c \
 attacher/inject/inject.h attacher/core/remote.h common/clock.h \
 common/grow.h common/procmaps.h symbolizer/elf_module.h
attacher/inject/inject.h:
attacher/core/remote.h:
common/clock.h:
common/grow.h:
common/procmaps.h:
symbolizer/elf_module.h:
