/* generic_attach.h - the generic adapter's in-target attach (internal to
 * libobjscope.so; runtimes/target/registry.c lists it). */
#ifndef OBJSCOPE_GENERIC_ATTACH_H
#define OBJSCOPE_GENERIC_ATTACH_H

#include "preload/adapter.h"

extern const struct osp_runtime_attach osp_gen_attach;

#endif
