build-fp/obj/report/fmt_json.o: report/fmt_json.c common/lifetime_math.h \
 common/profile.h common/replica_math.h common/reuse_math.h \
 report/fmt_json.h report/formats.h report/filter.h report/view.h \
 report/json_writer.h
common/lifetime_math.h:
common/profile.h:
common/replica_math.h:
common/reuse_math.h:
report/fmt_json.h:
report/formats.h:
report/filter.h:
report/view.h:
report/json_writer.h:
