build-fp/obj/report/fmt_text.o: report/fmt_text.c common/lifetime_math.h \
 common/profile.h common/reuse_math.h common/replica_math.h \
 report/formats.h report/filter.h report/view.h
common/lifetime_math.h:
common/profile.h:
common/reuse_math.h:
common/replica_math.h:
report/formats.h:
report/filter.h:
report/view.h:
