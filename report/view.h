/* view.h - what every report format shows, computed once from a profile:
 * objects (allocation contexts) ranked by samples (by the sample estimates
 * when the profile has them: Java hybrid / sampled modes, where a raw
 * sample count favours the objects that are always seen), their access
 * paths ranked likewise, the type-level view and the threads.
 * Return convention: 0 on success, -ENOMEM. */
#ifndef OBJSCOPE_REPORT_VIEW_H
#define OBJSCOPE_REPORT_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/profile.h"

struct report_object {
	uint32_t context;      /* index in p->contexts */
	uint32_t first_access; /* range in report_view.accesses */
	uint32_t naccesses;
	uint32_t first_thread; /* range in report_view.by_thread (profiles with slices) */
	uint32_t nthreads;
};

/* An object's samples taken on one thread (from the profile's slices). */
struct report_by_thread {
	uint32_t thread;       /* index in p->threads */
	uint64_t samples;
};

/* Object order: --sort samples (default), bytes or allocations. */
enum report_sort { REPORT_SORT_SAMPLES = 0, REPORT_SORT_BYTES, REPORT_SORT_ALLOCATIONS };

struct report_type {
	uint32_t type;         /* string id or OS_NONE */
	uint64_t samples;
	double samples_est;    /* sum of the contexts' estimates (with estimates) */
};

struct report_view {
	const struct os_profile *p;
	uint32_t nobjects;
	struct report_object *objects; /* most samples first, then most bytes */
	uint32_t *accesses;            /* access indices, per object most samples first */
	uint32_t ntypes;
	struct report_type *types;     /* most samples (estimated, when the profile has
	                                  estimates) first, then by name */
	uint32_t nthreads;
	uint32_t *threads;             /* thread indices, most samples first */
	uint32_t nby_thread;
	struct report_by_thread *by_thread; /* per object, most samples first */
	enum report_sort sort;
	uint32_t *maker;               /* per context: the index in its allocation
	                                  stack of the frame that names it, the
	                                  first outside the allocator and its
	                                  wrappers (report/maker.h); 0: the leaf */
};

int report_view_build(struct report_view *v, const struct os_profile *p);
/* Same, objects in the order `sort` says (ties: samples, bytes, allocations). */
int report_view_build_sorted(struct report_view *v, const struct os_profile *p,
			     enum report_sort sort);
/* "samples", "bytes", "allocations"; -EINVAL for another name. */
int report_sort_parse(const char *name, enum report_sort *out);
void report_view_free(struct report_view *v);

/* The frame id that names context ci (report/maker.h), OS_NONE without an
 * allocation path. */
uint32_t report_maker_frame(const struct report_view *v, uint32_t ci);
/* "" for OS_NONE. */
const char *report_str(const struct os_profile *p, uint32_t id);
/* "java", "gc", "jit", "vm" or "native" (docs/INTERFACE.md thread kinds). */
const char *report_thread_kind(uint32_t kind);
/* part / whole, 0 when whole is 0. */
double report_ratio(uint64_t part, uint64_t whole);
/* The profile has Horvitz-Thompson sample estimates (OS_AN_ESTIMATES). */
bool report_has_est(const struct os_profile *p);
/* An object's share of the attributed samples: of the estimates when the
 * profile has them, else of the counts; 0 when there are none. */
double report_share(const struct os_profile *p, const struct os_context *c);
/* Context ci has neither a sample nor an estimated share of one (a site
 * whose blocks were sampled at allocation but whose samples are all
 * estimated has the latter only): the views leave it out unless -v. */
bool report_context_unsampled(const struct os_profile *p, uint32_t ci);
/* Intervals of the estimates (OS_AN_EST_VAR): a 90% interval is the
 * estimate +- REPORT_Z90 standard errors (normal approximation). */
#define REPORT_Z90 1.6448536269514722
/* The profile states the estimates' variances. */
bool report_has_var(const struct os_profile *p);
/* The standard error of an object's samples_est; NaN when not stated. */
double report_est_se(const struct os_profile *p, const struct os_context *c);
/* ... of its share (report_share); NaN when not stated. */
double report_share_se(const struct os_profile *p, const struct os_context *c);
/* Whether the 90% intervals of the objects at ranks r and r + 1 of v
 * overlap (the two cannot be told apart); false when not stated. */
bool report_rank_overlaps(const struct report_view *v, uint32_t r);
/* The split of the object's class's samples between its sites rests on
 * allocation volume alone (no sample of access evidence: estimated
 * paths of a site whose samples are mostly estimated). */
bool report_split_by_volume(const struct os_profile *p, const struct os_context *c);
/* What the formats say of such a split. */
#define REPORT_VOLUME_NOTE                                                                 \
	"the split between this class's allocation sites rests on allocation volume "      \
	"alone (no sample on an object of the class seen at allocation): the sites "       \
	"cannot be told apart; --java-objects exact, or a longer run, would settle it"

/* The note every format shows when the ranking uses the estimates. */
#define REPORT_EST_NOTE                                                                    \
	"objects and access paths are ranked by Horvitz-Thompson sample estimates "          \
	"(samples_estimated, est.: each sample counts its object's weight, 1 / the "          \
	"probability that the object was seen); share is samples_estimated / "              \
	"samples_attributed_estimated; samples stays the raw count"

/* ... and with estimated allocation paths (OS_AN_PATHEST: Java, native small blocks). */
#define REPORT_PATHEST_NOTE                                                                \
	"estimated allocation paths: a Java object's figure (samples_estimated, est.) is "    \
	"its exact samples (objects seen at allocation) plus its estimated share of the "     \
	"samples on objects of its class not seen at allocation (path: exact and estimated "  \
	"parts, and the evidence: objects of the class seen allocated, at how many sites); "   \
	"a native site's likewise, from its blocks below --min-size sampled by bytes "       \
	"(docs/NATIVE.md); each sample counts once"
/* The kind of estimates the header names. */
#define REPORT_EST_KIND(p)                                                                 \
	(((p)->analyses & OS_AN_PATHEST) ? "exact plus estimated paths" : "Horvitz-Thompson")

/* Why no sample was attributed to an object, from the counters (one line,
 * no trailing period). */
void report_why_empty(const struct os_profile *p, char *buf, size_t len);

#endif
