build-fp/obj/attacher/sampling/data_src.o: attacher/sampling/data_src.c \
 attacher/sampling/data_src.h common/profile.h
attacher/sampling/data_src.h:
common/profile.h:
