build-fp/obj/preload/attach.o: preload/attach.c common/attach_abi.h \
 common/attach_orphan.h common/ring.h common/shm.h preload/adapter.h \
 preload/got.h preload/preload.h common/shm.h
common/attach_abi.h:
common/attach_orphan.h:
common/ring.h:
common/shm.h:
preload/adapter.h:
preload/got.h:
preload/preload.h:
common/shm.h:
