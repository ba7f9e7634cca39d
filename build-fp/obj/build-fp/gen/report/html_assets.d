build-fp/obj/build-fp/gen/report/html_assets.o: \
 build-fp/gen/report/html_assets.c report/html/assets.h
report/html/assets.h:
