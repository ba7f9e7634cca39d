build-fp/obj/report/report.o: report/report.c report/report.h \
 common/log.h common/profile.h common/safefs.h report/formats.h \
 report/filter.h report/view.h report/debug_dir.h report/diff.h \
 runtimes/runtime.h
report/report.h:
common/log.h:
common/profile.h:
common/safefs.h:
report/formats.h:
report/filter.h:
report/view.h:
report/debug_dir.h:
report/diff.h:
runtimes/runtime.h:
