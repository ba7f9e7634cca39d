build-fp/obj/report/filter.o: report/filter.c report/filter.h \
 common/profile.h
report/filter.h:
common/profile.h:
