build-fp/obj/runtimes/hotspot/target/hotspot_elf.o: \
 runtimes/hotspot/target/hotspot_elf.c \
 runtimes/hotspot/target/hotspot_elf.h
runtimes/hotspot/target/hotspot_elf.h:
