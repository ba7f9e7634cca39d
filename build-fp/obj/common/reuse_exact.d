build-fp/obj/common/reuse_exact.o: common/reuse_exact.c \
 common/reuse_exact.h common/hashmap.h
common/reuse_exact.h:
common/hashmap.h:
