build-fp/obj/attacher/core/budget.o: attacher/core/budget.c \
 attacher/core/budget.h
attacher/core/budget.h:
