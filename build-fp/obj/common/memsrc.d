build-fp/obj/common/memsrc.o: common/memsrc.c common/profile.h
common/profile.h:
