build-fp/obj/runtimes/zero/zero_notes.o: runtimes/zero/zero_notes.c \
 common/profile.h runtimes/hotspot/hotspot_abi.h runtimes/zero/zero.h \
 runtimes/runtime.h runtimes/zero/zero_int.h common/hashmap.h \
 runtimes/zero/zero_abi.h
common/profile.h:
runtimes/hotspot/hotspot_abi.h:
runtimes/zero/zero.h:
runtimes/runtime.h:
runtimes/zero/zero_int.h:
common/hashmap.h:
runtimes/zero/zero_abi.h:
