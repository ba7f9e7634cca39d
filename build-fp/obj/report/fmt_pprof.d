build-fp/obj/report/fmt_pprof.o: report/fmt_pprof.c common/hashmap.h \
 common/lifetime_math.h common/profile.h common/grow.h report/formats.h \
 report/filter.h report/view.h build-fp/gen/report/proto/profile.pb-c.h
common/hashmap.h:
common/lifetime_math.h:
common/profile.h:
common/grow.h:
report/formats.h:
report/filter.h:
report/view.h:
build-fp/gen/report/proto/profile.pb-c.h:
