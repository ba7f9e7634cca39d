build-fp/obj/attacher/cli/main.o: attacher/cli/main.c \
 attacher/cli/commands.h common/log.h report/report.h
attacher/cli/commands.h:
common/log.h:
report/report.h:
