build-fp/obj/attacher/inject/pidns.o: attacher/inject/pidns.c \
 attacher/inject/pidns.h common/grow.h
attacher/inject/pidns.h:
common/grow.h:
