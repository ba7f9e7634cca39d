build-fp/obj/common/profile_merge.o: common/profile_merge.c \
 common/profile.h common/hashmap.h
common/profile.h:
common/hashmap.h:
