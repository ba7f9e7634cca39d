/* attach_orphan.h - what objscope_attach() (preload/attach.c) found left by
 * a previous `objscope attach` that never detached (objscope killed with
 * SIGKILL: the hooks stayed armed, writing into rings nobody drained).
 *
 * objscope_attach() releases those rings (the new ones are mapped over them)
 * after counting what they lost; objscope_orphan() (exported, no argument)
 * then returns the target address of this struct, which the collector reads
 * (attacher/cli/cmd_attach.c) and reports in the profile. Reset by every
 * objscope_attach(). Target-native (x86_64), little-endian.
 */
#ifndef OBJSCOPE_ATTACH_ORPHAN_H
#define OBJSCOPE_ATTACH_ORPHAN_H

#include <stdint.h>

struct os_attach_orphan {
	uint32_t found;          /* 1: the previous attach's rings were still armed */
	uint32_t collector_pid;  /* the previous collector, in its own PID namespace */
	uint64_t dropped;        /* events dropped: rings full, or no free slot */
	uint64_t unread;         /* events written into the rings but never read */
	uint64_t bad_bytes;      /* malformed ring bytes skipped while counting */
};

#endif
