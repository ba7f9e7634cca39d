build-fp/obj/report/view.o: report/view.c report/view.h common/profile.h \
 common/hashmap.h
report/view.h:
common/profile.h:
common/hashmap.h:
