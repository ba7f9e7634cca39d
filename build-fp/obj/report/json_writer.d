build-fp/obj/report/json_writer.o: report/json_writer.c \
 report/json_writer.h
report/json_writer.h:
