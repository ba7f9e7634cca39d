build-fp/obj/common/hashmap.o: common/hashmap.c common/hashmap.h
common/hashmap.h:
