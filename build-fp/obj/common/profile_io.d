build-fp/obj/common/profile_io.o: common/profile_io.c common/profile.h \
 common/grow.h common/safefs.h
common/profile.h:
common/grow.h:
common/safefs.h:
