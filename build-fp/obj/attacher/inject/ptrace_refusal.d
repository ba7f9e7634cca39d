build-fp/obj/attacher/inject/ptrace_refusal.o: \
 attacher/inject/ptrace_refusal.c attacher/inject/ptrace_refusal.h \
 common/safefs.h
attacher/inject/ptrace_refusal.h:
common/safefs.h:
