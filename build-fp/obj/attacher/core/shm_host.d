build-fp/obj/attacher/core/shm_host.o: attacher/core/shm_host.c \
 attacher/core/shm_host.h common/ring.h common/shm.h common/log.h
attacher/core/shm_host.h:
common/ring.h:
common/shm.h:
common/log.h:
