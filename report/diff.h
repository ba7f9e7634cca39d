/* diff.h - `objscope report --diff OLD NEW`: the objects whose share of the
 * attributed samples grew or shrank between two profiles.
 *
 * Objects (allocation contexts) are matched as os_profile_merge matches
 * them (same type and allocation frames: os_profile_merge_map), so an
 * object is the same on both sides exactly when a merge would fold it.
 * Sample counts of profiles taken at different periods of one event are
 * normalised to the smaller period, as the merge does; shares are ratios
 * within each profile and need no normalisation. The JSON shape is
 * docs/diff.schema.json (docs/INTERFACE.md, "report --diff"). */
#ifndef OBJSCOPE_REPORT_DIFF_H
#define OBJSCOPE_REPORT_DIFF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/profile.h"
#include "report/formats.h"
#include "report/view.h"

enum diff_status { DIFF_SAME = 0, DIFF_GREW, DIFF_SHRANK, DIFF_NEW, DIFF_GONE };

struct diff_row {
	uint32_t context;      /* index in report_diff.m (its type and allocation path) */
	enum diff_status status;
	bool in_old, in_new;
	double share_old, share_new; /* fractions of each side's attributed samples */
	double delta_pp;       /* (share_new - share_old) * 100 */
	double delta_se_pp;    /* its standard error (both sides' estimators'
				* variances, report_share_se); NaN: not stated */
	double samples_old, samples_new; /* normalised to report_diff.period when scaled */
	uint64_t bytes_old, bytes_new;
	uint64_t allocs_old, allocs_new;
};

struct report_diff {
	/* First member: report.c renders a diff through its report_render_fn
	 * path (report_diff_render gets &diff->view). Unused otherwise. */
	struct report_view view;
	const char *old_name, *new_name;
	const struct os_profile *old, *new; /* not owned */
	struct os_profile *m;  /* both merged: names of the matched objects */
	uint64_t period;       /* common period of the sample counts (0: unknown) */
	bool scaled;           /* the periods differed: counts normalised to `period` */
	bool raw;              /* they differed and could not be (other event / unknown) */
	uint32_t nrows;
	struct diff_row *rows; /* largest |delta_pp| first */
};

/* Matches the objects of `old` and `new` (which stay the caller's and must
 * outlive d). 0 or -ENOMEM. */
int report_diff_build(struct report_diff *d, const struct os_profile *old, const char *old_name,
		      const struct os_profile *new, const char *new_name);
void report_diff_free(struct report_diff *d);

/* "grew", "shrank", "same", "new", "gone". */
const char *report_diff_status(enum diff_status s);

/* Renders o->format (text, json or html) of the diff whose view is v. */
int report_diff_render(const struct report_view *v, const struct report_opts *o, FILE *out);
int report_diff_text(const struct report_diff *d, const struct report_opts *o, FILE *out);
int report_diff_json(const struct report_diff *d, const struct report_opts *o, FILE *out);
int report_diff_html(const struct report_diff *d, const struct report_opts *o, FILE *out);

#endif
