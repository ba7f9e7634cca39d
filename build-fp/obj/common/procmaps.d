build-fp/obj/common/procmaps.o: common/procmaps.c common/procmaps.h
common/procmaps.h:
