/* view.h - what every report format shows, computed once from a profile:
 * objects (allocation contexts) ranked by samples, their access paths
 * ranked, the type-level view and the threads.
 * Return convention: 0 on success, -ENOMEM. */
#ifndef OBJSCOPE_REPORT_VIEW_H
#define OBJSCOPE_REPORT_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "common/profile.h"

struct report_object {
	uint32_t context;      /* index in p->contexts */
	uint32_t first_access; /* range in report_view.accesses */
	uint32_t naccesses;
};

struct report_type {
	uint32_t type;         /* string id or OS_NONE */
	uint64_t samples;
};

struct report_view {
	const struct os_profile *p;
	uint32_t nobjects;
	struct report_object *objects; /* most samples first, then most bytes */
	uint32_t *accesses;            /* access indices, per object most samples first */
	uint32_t ntypes;
	struct report_type *types;     /* most samples first, then by name */
	uint32_t nthreads;
	uint32_t *threads;             /* thread indices, most samples first */
};

int report_view_build(struct report_view *v, const struct os_profile *p);
void report_view_free(struct report_view *v);

/* "" for OS_NONE. */
const char *report_str(const struct os_profile *p, uint32_t id);
/* "java", "gc", "jit", "vm" or "native" (INTERFACE.md thread kinds). */
const char *report_thread_kind(uint32_t kind);
/* part / whole, 0 when whole is 0. */
double report_ratio(uint64_t part, uint64_t whole);
/* Why no sample was attributed to an object, from the counters (one line,
 * no trailing period). */
void report_why_empty(const struct os_profile *p, char *buf, size_t len);

#endif
