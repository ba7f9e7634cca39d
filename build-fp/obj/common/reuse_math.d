build-fp/obj/common/reuse_math.o: common/reuse_math.c common/reuse_math.h \
 common/profile.h
common/reuse_math.h:
common/profile.h:
