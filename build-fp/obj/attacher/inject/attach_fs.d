build-fp/obj/attacher/inject/attach_fs.o: attacher/inject/attach_fs.c \
 attacher/inject/attach_fs.h common/safefs.h
attacher/inject/attach_fs.h:
common/safefs.h:
