/* generic_attach.h - the generic adapter's in-target side (internal to
 * libobjscope.so): its attach, which runtimes/target/registry.c lists, and
 * its move filter. */
#ifndef OBJSCOPE_GENERIC_ATTACH_H
#define OBJSCOPE_GENERIC_ATTACH_H

#include "preload/adapter.h"

extern const struct osp_runtime_attach osp_gen_attach;

/* Launch mode: the copies of threads named as GC threads become OS_EV_MOVE
 * events (generic_moves.c). */
void osp_gen_moves_install(void);

#endif
