/* shm_host.h - the collector's side of the shared memory (common/shm.h):
 * creates it (a memfd the target maps through /proc/COLLECTOR/fd/N, so
 * nothing is left behind in /dev/shm if the collector dies), drains the
 * per-thread rings and recycles the slots of threads that ended.
 * Return convention: 0 on success, -errno on failure. */
#ifndef OBJSCOPE_SHM_HOST_H
#define OBJSCOPE_SHM_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/ring.h"

/* The header and rings are shared with the target, whose user may write
 * anything there at any time: the geometry is kept here, as created, and
 * never read back from the mapping; each record is copied into `copy` once
 * before it is checked and handed out (common/ring.h). */
struct os_shm_host {
	int fd;
	struct os_shm_header *hdr;
	size_t size;                    /* of the mapping */
	uint32_t nslots;                /* as created (hdr->nslots may be anything) */
	uint64_t ring_bytes;            /* as created (hdr->ring_bytes may be anything) */
	char path[64];                  /* what goes into OBJSCOPE_SHM */
	struct os_slot_stats_total {    /* stats of recycled slots */
		uint64_t events, dropped, small_allocs, small_bytes, tracked_allocs,
			tracked_bytes, reentered, truncated, hook_ticks, hook_calls, hook_cpu_ns, hook_clipped,
			small_outside_tlab;
	} recycled;
	uint64_t bad_bytes;             /* malformed ring bytes skipped */
	bool no_punch;                  /* fallocate(PUNCH_HOLE) unsupported here */
	volatile int cut;               /* the file was truncated under the mapping: zero
					 * pages put there (SIGBUS handler, shm_host.c) */
	bool cut_said;
	struct os_ring_copy copy;       /* the record being handed out */
};

int os_shm_host_create(struct os_shm_host *h, uint32_t nslots, uint64_t ring_bytes,
		       uint64_t min_size, uint32_t flags);
void os_shm_host_destroy(struct os_shm_host *h);
/* Drains every ring below the header's slots_hwm (the slots ever claimed,
 * at most nslots); returns the number of events handed to fn, each a private
 * copy (common/ring.h: os_ring_drain_ex). */
uint64_t os_shm_host_drain(struct os_shm_host *h, os_ring_fn fn, void *arg);
/* Marks slots of thread `tid` (or every thread of pid when tid == 0) as
 * exited; they are drained and recycled by the next drain. */
void os_shm_host_thread_gone(struct os_shm_host *h, uint32_t pid, uint32_t tid);
/* Asks thread tid of pid (ids as the target sees them) to send its
 * tracked blocks without allocation paths (os_slot.quiet); 1 when its
 * slot was found. */
int os_shm_host_quiet_thread(struct os_shm_host *h, uint32_t pid, uint32_t tid);
/* Totals of every slot, live and recycled. */
void os_shm_host_totals(const struct os_shm_host *h, struct os_slot_stats_total *t);

#endif
