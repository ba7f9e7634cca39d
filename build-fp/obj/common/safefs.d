build-fp/obj/common/safefs.o: common/safefs.c common/safefs.h
common/safefs.h:
