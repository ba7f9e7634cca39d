/* fmt_json.h - the JSON report as a stream, for formats that embed it.
 *
 * report_json_write() writes the `report --format json` document (without
 * the final newline) to `out` as it is produced, in constant memory; with
 * `html_safe`, '<' is escaped as \u003c so that the text can sit inside a
 * <script> element (report/fmt_html.c embeds the report that way).
 * Returns 0, -ENOMEM, -EINVAL (a nesting defect) or the -errno of the first
 * failed write (nothing more is written after it). */
#ifndef OBJSCOPE_REPORT_FMT_JSON_H
#define OBJSCOPE_REPORT_FMT_JSON_H

#include <stdbool.h>
#include <stdio.h>

#include "report/formats.h"

int report_json_write(const struct report_view *v, const struct report_opts *o, FILE *out,
		      bool html_safe);

#endif
