build-fp/obj/report/fmt_html.o: report/fmt_html.c report/fmt_json.h \
 report/formats.h report/filter.h common/profile.h report/view.h \
 report/html/assets.h
report/fmt_json.h:
report/formats.h:
report/filter.h:
common/profile.h:
report/view.h:
report/html/assets.h:
