build-fp/obj/attacher/core/insn_len.o: attacher/core/insn_len.c \
 attacher/core/insn_len.h
attacher/core/insn_len.h:
