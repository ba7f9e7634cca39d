build-fp/obj/common/ivindex.o: common/ivindex.c common/ivindex.h
common/ivindex.h:
