build-fp/obj/common/replica_math.o: common/replica_math.c \
 common/replica_math.h common/profile.h
common/replica_math.h:
common/profile.h:
