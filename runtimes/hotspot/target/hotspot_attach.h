/* hotspot_attach.h - the HotSpot adapter's steps when the library is
 * injected into a JVM that is already running (`objscope attach`; called
 * from preload/attach.c on the thread the collector hijacked, never from a
 * hook). Implemented in hotspot.c next to the launch-mode installation.
 * Protocol with the collector: common/attach_abi.h. */
#ifndef OBJSCOPE_PRELOAD_HOTSPOT_ATTACH_H
#define OBJSCOPE_PRELOAD_HOTSPOT_ATTACH_H

#include "common/attach_abi.h"

/* Finds libjvm (already loaded), reads vmStructs from the running JVM
 * (heap reservation, GC, code ranges: the heap's mmap happened before the
 * attach), announces it (OS_EV_JVM), turns move logging on, and prepares
 * (does not write) the detours of the allocation and GC entry points.
 * Fills *plan; returns 1 when a JVM was announced, 0 when there is none. */
int osp_hs_attach_prepare(struct os_jvm_plan *plan);

/* Writes the prepared detours; the caller guarantees that no other thread
 * runs (see common/attach_abi.h). No allocation, no lock. Returns the
 * number written, or -errno when the first one failed. */
int osp_hs_attach_commit(void);

#endif
