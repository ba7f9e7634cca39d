/* data_src.h - what a PMU sample's PERF_SAMPLE_DATA_SRC says about the
 * access: the memory level that served it, whether it missed L1 and the
 * data TLB, whether the data came from another NUMA node. The kernel fills
 * the same union perf_mem_data_src for PEBS (load latency, precise stores)
 * and AMD IBS op; a field the hardware did not report reads "not
 * available" and stays unknown here, never a hit or a miss. */
#ifndef OBJSCOPE_DATA_SRC_H
#define OBJSCOPE_DATA_SRC_H

#include <stdbool.h>
#include <stdint.h>

#include "common/profile.h" /* enum os_mem_level */

enum {
	OS_MS_L1_KNOWN = 1 << 0,  /* l1 hit or miss reported */
	OS_MS_L1_MISS = 1 << 1,
	OS_MS_REMOTE = 1 << 2,    /* served from another node */
	OS_MS_TLB_KNOWN = 1 << 3, /* data TLB hit or miss reported */
	OS_MS_TLB_MISS = 1 << 4,
	OS_MS_STORE = 1 << 5,     /* the access was a store */
};

struct os_mem_src {
	uint8_t level;  /* enum os_mem_level */
	uint8_t flags;  /* OS_MS_* */
};

void os_data_src_decode(uint64_t data_src, struct os_mem_src *m);

#endif
