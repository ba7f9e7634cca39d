build-fp/obj/report/diff.o: report/diff.c report/diff.h common/profile.h \
 report/formats.h report/filter.h report/view.h report/html/assets.h \
 report/json_writer.h
report/diff.h:
common/profile.h:
report/formats.h:
report/filter.h:
report/view.h:
report/html/assets.h:
report/json_writer.h:
