/* formats.h - the output formats of `objscope report`, one file each
 * (fmt_<name>.c). A renderer writes the whole report to `out` and returns
 * 0, or -errno when it could not build the output (write errors are
 * detected by the caller on the stream). */
#ifndef OBJSCOPE_REPORT_FORMATS_H
#define OBJSCOPE_REPORT_FORMATS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "report/filter.h"
#include "report/view.h"

struct report_opts {
	const char *format;   /* "text" by default */
	const char *output;   /* NULL: stdout */
	uint32_t top;         /* objects shown; 0 = all */
	bool top_set;         /* --top given (json shows all objects otherwise) */
	bool no_lines;        /* --no-lines: frames without source lines, contexts merged */
	bool verbose;         /* -v: text shows every header line, note and object */
	const char *debug_dir; /* --debug-dir / --symfs DIR: unnamed frames named from there */
	/* report/filter.h: --tid, --comm, --time, --include, --exclude; the
	 * header says them (filter.desc) */
	struct report_filter filter;
	const char *sort;     /* --sort samples|bytes|allocations; NULL: samples */
	bool per_thread;      /* --per-thread: each object's samples by thread */
	bool tables;          /* --tables (json; html always): frames and stacks once, in
	                         tables; objects without samples left out unless -v */
};

typedef int (*report_render_fn)(const struct report_view *v, const struct report_opts *o,
				FILE *out);

int report_render_text(const struct report_view *v, const struct report_opts *o, FILE *out);
int report_render_json(const struct report_view *v, const struct report_opts *o, FILE *out);
/* One self-contained page (libraries inlined, no network fetches). */
int report_render_html(const struct report_view *v, const struct report_opts *o, FILE *out);
/* Folded stacks "alloc;...;[access];...;leaf COUNT", one line per path. */
int report_render_collapsed(const struct report_view *v, const struct report_opts *o, FILE *out);
/* gzip-compressed pprof profile.proto. */
int report_render_pprof(const struct report_view *v, const struct report_opts *o, FILE *out);

#endif
