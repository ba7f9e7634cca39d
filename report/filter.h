/* filter.h - `objscope report` filters: samples of some threads (--tid,
 * --comm), of a time window (--time), of the paths whose frames match
 * (--include / --exclude REGEX). The profile is rewritten in place before
 * the view is built: sample counts (contexts, accesses, threads, the
 * attributed counters, estimates) are those that remain, so that every
 * share is of what remains. */
#ifndef OBJSCOPE_REPORT_FILTER_H
#define OBJSCOPE_REPORT_FILTER_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/profile.h"

struct report_filter {
	uint32_t ntids;
	uint32_t tids[64];     /* --tid TID[,TID...] */
	const char *comm;      /* --comm NAME: threads of that name */
	bool time;             /* --time FROM,TO: seconds from the start */
	double from, to;
	bool include, exclude; /* --include / --exclude REGEX (extended) */
	regex_t include_re, exclude_re;
	char desc[512];        /* the options given, for the report's header */
};

/* Option parsers: 0, or -EINVAL with `err` saying why in one line. */
int report_filter_tids(struct report_filter *f, const char *arg, char *err, size_t len);
int report_filter_time(struct report_filter *f, const char *arg, char *err, size_t len);
int report_filter_regex(struct report_filter *f, bool include, const char *arg, char *err,
			size_t len);
void report_filter_comm(struct report_filter *f, const char *name);

/* Any filter set. */
bool report_filter_active(const struct report_filter *f);
/* Thread or time filters need the profile's slices (OS_AN_SLICES): without
 * them -ENOTSUP and `err` says so; -ENOMEM. Contexts whose allocation path
 * an --exclude matches, or whose samples all fall to --include / --exclude,
 * are removed; those left with no samples by a thread or time filter stay
 * (their allocations happened; reports leave 0-sample objects out). Metrics
 * (latency, L1, remote) cannot be split by thread, time or path: a filtered
 * profile reports them as not measured. */
int report_filter_apply(struct os_profile *p, const struct report_filter *f, char *err,
			size_t len);
void report_filter_free(struct report_filter *f);
/* A filtered profile with no attributed sample left: which filter kept
 * none (--tid naming no thread of the run, --comm no thread's name, --time
 * past the run's end, a pattern matching no sampled path), one line. */
void report_filter_why_none(const struct os_profile *p, const struct report_filter *f,
			    char *buf, size_t len);

#endif
