build-fp/obj/common/cct.o: common/cct.c common/cct.h common/hashmap.h \
 common/grow.h
common/cct.h:
common/hashmap.h:
common/grow.h:
