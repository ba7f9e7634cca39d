/* data_src.c - decoding union perf_mem_data_src (data_src.h). Field
 * positions and values from <linux/perf_event.h>: mem_op at bit 0, mem_lvl
 * at 5, mem_dtlb at 26, mem_lvl_num at 33, mem_remote at 37. */
#include "attacher/sampling/data_src.h"

#include <linux/perf_event.h>

static uint64_t field(uint64_t v, unsigned shift, unsigned bits)
{
	return (v >> shift) & ((1ULL << bits) - 1);
}

/* The level from mem_lvl_num (newer kernels; remote said apart). */
static int level_num(uint64_t num, bool remote)
{
	switch (num) {
	case PERF_MEM_LVLNUM_L1:
		return OS_LVL_L1;
	case PERF_MEM_LVLNUM_LFB:
		return OS_LVL_LFB;
	case PERF_MEM_LVLNUM_L2:
		return remote ? OS_LVL_REMOTE_CACHE : OS_LVL_L2;
	case PERF_MEM_LVLNUM_L3:
		return remote ? OS_LVL_REMOTE_CACHE : OS_LVL_L3;
	case PERF_MEM_LVLNUM_ANY_CACHE:
		return remote ? OS_LVL_REMOTE_CACHE : OS_LVL_OTHER;
	case PERF_MEM_LVLNUM_RAM:
		return remote ? OS_LVL_REMOTE_RAM : OS_LVL_RAM;
	case PERF_MEM_LVLNUM_L4:
	case PERF_MEM_LVLNUM_CXL:
	case PERF_MEM_LVLNUM_IO:
	case PERF_MEM_LVLNUM_PMEM:
		return OS_LVL_OTHER;
	}
	return -1; /* 0 or NA: not given this way */
}

/* The level from the older mem_lvl bits (a hit at one of them). */
static int level_bits(uint64_t lvl)
{
	if (!(lvl & PERF_MEM_LVL_HIT))
		return -1;
	if (lvl & PERF_MEM_LVL_L1)
		return OS_LVL_L1;
	if (lvl & PERF_MEM_LVL_LFB)
		return OS_LVL_LFB;
	if (lvl & PERF_MEM_LVL_L2)
		return OS_LVL_L2;
	if (lvl & PERF_MEM_LVL_L3)
		return OS_LVL_L3;
	if (lvl & PERF_MEM_LVL_LOC_RAM)
		return OS_LVL_RAM;
	if (lvl & (PERF_MEM_LVL_REM_RAM1 | PERF_MEM_LVL_REM_RAM2))
		return OS_LVL_REMOTE_RAM;
	if (lvl & (PERF_MEM_LVL_REM_CCE1 | PERF_MEM_LVL_REM_CCE2))
		return OS_LVL_REMOTE_CACHE;
	if (lvl & (PERF_MEM_LVL_IO | PERF_MEM_LVL_UNC))
		return OS_LVL_OTHER;
	return -1;
}

void os_data_src_decode(uint64_t ds, struct os_mem_src *m)
{
	uint64_t op = field(ds, PERF_MEM_OP_SHIFT, 5), lvl = field(ds, PERF_MEM_LVL_SHIFT, 14);
	uint64_t tlb = field(ds, PERF_MEM_TLB_SHIFT, 7), num = field(ds, PERF_MEM_LVLNUM_SHIFT, 4);
	bool remote = field(ds, PERF_MEM_REMOTE_SHIFT, 1) ||
		      (lvl & (PERF_MEM_LVL_REM_RAM1 | PERF_MEM_LVL_REM_RAM2 |
			      PERF_MEM_LVL_REM_CCE1 | PERF_MEM_LVL_REM_CCE2));
	int level = -1;

	m->flags = 0;
	if (op & PERF_MEM_OP_STORE)
		m->flags |= OS_MS_STORE;
	if (!(lvl & PERF_MEM_LVL_NA) || num)
		level = level_num(num, remote);
	if (level < 0 && !(lvl & PERF_MEM_LVL_NA))
		level = level_bits(lvl);
	m->level = level < 0 ? OS_LVL_UNKNOWN : (uint8_t)level;
	if (m->level != OS_LVL_UNKNOWN) {
		m->flags |= OS_MS_L1_KNOWN;
		if (m->level != OS_LVL_L1)
			m->flags |= OS_MS_L1_MISS;
	} else if ((lvl & PERF_MEM_LVL_L1) && (lvl & (PERF_MEM_LVL_HIT | PERF_MEM_LVL_MISS))) {
		/* precise stores: only "L1 hit" or "L1 miss" */
		m->flags |= OS_MS_L1_KNOWN;
		if (lvl & PERF_MEM_LVL_MISS)
			m->flags |= OS_MS_L1_MISS;
	}
	if (remote && m->level != OS_LVL_UNKNOWN)
		m->flags |= OS_MS_REMOTE;
	if (!(tlb & PERF_MEM_TLB_NA) && (tlb & (PERF_MEM_TLB_HIT | PERF_MEM_TLB_MISS))) {
		m->flags |= OS_MS_TLB_KNOWN;
		if (tlb & PERF_MEM_TLB_MISS)
			m->flags |= OS_MS_TLB_MISS;
	}
}
