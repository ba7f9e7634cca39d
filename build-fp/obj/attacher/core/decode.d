build-fp/obj/attacher/core/decode.o: attacher/core/decode.c \
 attacher/core/decode.h attacher/core/insn_len.h common/hashmap.h
attacher/core/decode.h:
attacher/core/insn_len.h:
common/hashmap.h:
