build-fp/obj/common/profile.o: common/profile.c common/profile.h \
 common/grow.h common/hashmap.h
common/profile.h:
common/grow.h:
common/hashmap.h:
