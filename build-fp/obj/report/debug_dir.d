build-fp/obj/report/debug_dir.o: report/debug_dir.c report/debug_dir.h \
 common/log.h symbolizer/offline.h
report/debug_dir.h:
common/log.h:
symbolizer/offline.h:
