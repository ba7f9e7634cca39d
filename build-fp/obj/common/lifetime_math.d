build-fp/obj/common/lifetime_math.o: common/lifetime_math.c \
 common/lifetime_math.h common/profile.h
common/lifetime_math.h:
common/profile.h:
