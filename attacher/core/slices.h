/* slices.h - samples by (object, access path, thread, time bucket): the
 * SLICES section of the profile (report --tid/--comm/--time/--per-thread),
 * counted by an observer of the collection loop (attacher/core/observer.h)
 * from the attributed samples it is given.
 * Return convention: 0 / -errno.
 */
#ifndef OBJSCOPE_SLICES_H
#define OBJSCOPE_SLICES_H

#include <stdbool.h>
#include <stdint.h>

#include "attacher/core/observer.h"
#include "common/hashmap.h"

#define OS_SLICE_MS 100u       /* width of a time bucket as recorded */
#define OS_SLICE_CTX (1u << 31)
#define OS_SLICE_BUCKETS (1u << 20)
#define OS_SLICE_CAP (1u << 21) /* slices the collector holds (about 80 MiB with maps) */

struct os_slice_count {
	uint32_t entry, tb;
	uint64_t samples;
};

/* tb_map interns pid << 42 | tid << 20 | bucket into tb[]; slice_map maps
 * entry << 32 | tb index into slices[] (entry: os_attrib acc index, or ctx
 * index | OS_SLICE_CTX for a sample without an access entry). */
struct os_slices {
	struct os_hmap tb_map, slice_map;
	uint64_t *tb;
	uint32_t ntb, tbcap;
	struct os_slice_count *slices;
	uint32_t nslices, slicecap;
	uint64_t lost;             /* samples not kept in a slice (out of memory) */
	bool off;                  /* too many even so: none kept (a note says it) */
	uint32_t k;                /* bucket width is k x OS_SLICE_MS (0 read as 1):
				    * doubled when OS_SLICE_CAP slices are held */
};

void os_slices_init(struct os_slices *s);
void os_slices_destroy(struct os_slices *s);
/* One sample attributed to context ctx (access entry acc, or OS_NONE) on
 * thread tid of pid, since_ns from the start of the run. */
void os_slices_count(struct os_slices *s, uint32_t ctx, uint32_t acc, uint32_t pid, uint32_t tid,
		     uint64_t since_ns);
/* OS_SEC_SLICES of the profile b->p (or a note why there is none). */
int os_slices_build(const struct os_slices *s, const struct os_obs_build *b);

/* The observer: always enabled (attacher/analyses/analyses.c). */
extern const struct os_observer_ops os_slices_observer;

#endif
