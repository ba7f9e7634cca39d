build-fp/obj/build-fp/gen/report/proto/profile.pb-c.o: \
 build-fp/gen/report/proto/profile.pb-c.c \
 build-fp/gen/report/proto/profile.pb-c.h
build-fp/gen/report/proto/profile.pb-c.h:
