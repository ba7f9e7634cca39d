/* hotspot_attach.h - the HotSpot adapter's steps when the library is
 * injected into a JVM that is already running (`objscope attach`; reached
 * from preload/attach.c through runtimes/target/registry.c, on the thread
 * the collector hijacked, never from a hook). Implemented in hotspot.c next
 * to the launch-mode installation. Protocol with the collector:
 * common/attach_abi.h. */
#ifndef OBJSCOPE_PRELOAD_HOTSPOT_ATTACH_H
#define OBJSCOPE_PRELOAD_HOTSPOT_ATTACH_H

#include "common/attach_abi.h"
#include "preload/adapter.h"

/* The in-target attach of HotSpot (preload/adapter.h): prepare finds
 * libjvm (already loaded), reads vmStructs from the running JVM (heap
 * reservation, GC, code ranges: the heap's mmap happened before the
 * attach), announces it (OS_EV_JVM), turns move logging on, and prepares
 * (does not write) the detours of the allocation and GC entry points;
 * commit writes them; memcpy/memmove are redirected in libjvm alone (GC
 * copies: young evacuation memcpy, full compaction memmove, hotspot_moves.c). */
extern const struct osp_runtime_attach osp_hs_attach;

/* Launch mode (preload/adapter.h osp_runtime_loads): the library that
 * defines JNI_CreateJavaVM and gHotSpotVMStructs gets the detours and the
 * JVM options (hotspot.c). */
extern const struct osp_runtime_load osp_hs_load;

#endif
