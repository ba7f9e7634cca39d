build-fp/obj/report/fmt_collapsed.o: report/fmt_collapsed.c \
 report/formats.h report/filter.h common/profile.h report/view.h \
 common/grow.h
report/formats.h:
report/filter.h:
common/profile.h:
report/view.h:
common/grow.h:
