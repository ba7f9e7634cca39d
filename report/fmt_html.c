/* fmt_html.c - `report --format html`: one self-contained page.
 *
 * The page (report/html/page.html), its stylesheet and script and the npm
 * libraries it uses (d3, d3-flame-graph) are embedded into the binary at
 * build time (report/html/assets.h). This file fills the page's markers:
 * the style, the libraries and the script, each inlined, and the data: the
 * JSON report (fmt_json.c, every object; each frame carries its kind, by
 * which the flame graphs colour it) plus why nothing was attributed, as
 * {"report": ..., "why_empty": "...", "timeline": ...}: the timeline is
 * null when the profile has no slices (version 1 files).
 * Nothing in the page refers to another file or URL, and its
 * Content-Security-Policy forbids fetches. */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "report/fmt_json.h"
#include "report/formats.h"
#include "report/html/assets.h"

/* Writes inline script/style text so that it cannot end its element early:
 * "</" + tag becomes "<\/" + tag, "<!--" becomes "<\!--" (both mean the
 * same in JavaScript strings and regexps, where they can occur). */
static void put_inline(FILE *out, const char *s, size_t len, const char *tag)
{
	size_t i, tl = strlen(tag);

	for (i = 0; i < len; i++) {
		if (s[i] == '<' && i + 1 < len && s[i + 1] == '/' && i + 2 + tl <= len &&
		    strncasecmp(s + i + 2, tag, tl) == 0) {
			fputs("<\\/", out);
			i++;
			continue;
		}
		if (s[i] == '<' && i + 3 < len && memcmp(s + i, "<!--", 4) == 0) {
			fputs("<\\!", out);
			continue;
		}
		fputc(s[i], out);
	}
}

/* JSON inside <script type="application/json">: '<' only occurs inside
 * strings, where \u003c means the same. */
static void put_json(FILE *out, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (s[i] == '<')
			fputs("\\u003c", out);
		else
			fputc(s[i], out);
	}
}

/* Objects drawn in the timeline, and at most this many points per line:
 * longer runs sum neighbouring buckets, so the page stays small. */
#define TIMELINE_OBJECTS 10
#define TIMELINE_POINTS 600

/* "timeline": the samples per time bucket of the top objects (by the view's
 * order, with samples), from the slices summed over threads and access
 * paths: {"bucket_s": width, "objects": [{"id": rank + 1, "samples": [...]}]};
 * null without slices or without such objects. */
static int put_timeline(const struct report_view *v, FILE *out)
{
	const struct os_profile *p = v->p;
	uint32_t i, n = 0, *slot = NULL;
	uint64_t k, nb = 0, merge, npts; /* 64-bit: a bucket may be 2^32 - 1 */
	uint64_t *sum = NULL;

	if (!(p->analyses & OS_AN_SLICES) || !p->slice_ms) {
		fputs("null", out);
		return 0;
	}
	slot = malloc(((size_t)p->ncontexts + 1) * sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	for (i = 0; i < p->ncontexts; i++)
		slot[i] = UINT32_MAX;
	for (i = 0; i < v->nobjects && n < TIMELINE_OBJECTS; i++) {
		uint32_t c = v->objects[i].context;

		if (c < p->ncontexts && p->contexts[c].samples)
			slot[c] = n++;
	}
	for (i = 0; i < p->nslices; i++) {
		const struct os_slice *s = &p->slices[i];

		if (s->context < p->ncontexts && slot[s->context] != UINT32_MAX &&
		    s->bucket >= nb)
			nb = (uint64_t)s->bucket + 1;
	}
	if (!n || !nb) {
		free(slot);
		fputs("null", out);
		return 0;
	}
	merge = (nb + TIMELINE_POINTS - 1) / TIMELINE_POINTS;
	npts = (nb + merge - 1) / merge;
	sum = calloc((size_t)n * npts, sizeof(*sum));
	if (!sum) {
		free(slot);
		return -ENOMEM;
	}
	for (i = 0; i < p->nslices; i++) {
		const struct os_slice *s = &p->slices[i];

		if (s->context < p->ncontexts && slot[s->context] != UINT32_MAX &&
		    s->bucket / merge < npts)
			sum[(size_t)slot[s->context] * npts + s->bucket / merge] += s->samples;
	}
	fprintf(out, "{\"bucket_s\": %.6g, \"objects\": [", (double)p->slice_ms * merge / 1000.0);
	for (i = 0, n = 0; i < v->nobjects; i++) {
		uint32_t c = v->objects[i].context;

		if (c >= p->ncontexts || slot[c] == UINT32_MAX)
			continue;
		fprintf(out, "%s{\"id\": %u, \"samples\": [", n++ ? ", " : "", i + 1);
		for (k = 0; k < npts; k++)
			fprintf(out, "%s%llu", k ? "," : "",
				(unsigned long long)sum[(size_t)slot[c] * npts + k]);
		fputs("]}", out);
	}
	fputs("]}", out);
	free(sum);
	free(slot);
	return 0;
}

/* The data object: the JSON report (all objects) and why it may be empty.
 * The report is streamed (fmt_json.h, '<' escaped) straight into the page:
 * nothing the size of the report is held in memory. */
static int put_data(const struct report_view *v, const struct report_opts *o, FILE *out)
{
	struct report_opts all = *o;
	json_object *why = NULL;
	char reason[512];
	const char *s;
	int ret;

	if (!v->p->c.samples_attributed && report_filter_active(&o->filter))
		report_filter_why_none(v->p, &o->filter, reason, sizeof(reason));
	else
		report_why_empty(v->p, reason, sizeof(reason));
	why = json_object_new_string(reason);
	s = why ? json_object_to_json_string_ext(why, JSON_C_TO_STRING_NOSLASHESCAPE) : NULL;
	if (!s) {
		ret = -ENOMEM;
		goto out;
	}
	all.top_set = false;
	all.tables = true;
	fputs("{\"report\": ", out);
	ret = report_json_write(v, &all, out, true);
	if (ret)
		goto out;
	fputs(", \"why_empty\": ", out);
	put_json(out, s, strlen(s));
	fputs(", \"timeline\": ", out);
	ret = put_timeline(v, out);
	if (ret)
		goto out;
	fputs("}", out);
out:
	json_object_put(why);
	return ret;
}

int report_render_html(const struct report_view *v, const struct report_opts *o, FILE *out)
{
	static const struct {
		const char *marker;
		const unsigned char *text;
		const size_t *len;
		const char *tag;
	} parts[] = {
		{ "/*@STYLE@*/", os_html_style_css, &os_html_style_css_len, "style" },
		{ "/*@DATA@*/", NULL, NULL, "script" },
		{ "/*@LIB_D3@*/", os_html_d3_min_js, &os_html_d3_min_js_len, "script" },
		{ "/*@LIB_FLAMEGRAPH@*/", os_html_d3_flamegraph_umd_min_js,
		  &os_html_d3_flamegraph_umd_min_js_len, "script" },
		{ "/*@APP@*/", os_html_app_js, &os_html_app_js_len, "script" },
	};
	const char *page = (const char *)os_html_page_html, *at = page, *m;
	size_t i;
	int ret;

	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		m = strstr(at, parts[i].marker);
		if (!m)
			return -EINVAL; /* page.html lost a marker: a build defect */
		fwrite(at, 1, (size_t)(m - at), out);
		if (parts[i].text) {
			put_inline(out, (const char *)parts[i].text, *parts[i].len, parts[i].tag);
		} else if ((ret = put_data(v, o, out))) {
			return ret;
		}
		at = m + strlen(parts[i].marker);
	}
	fputs(at, out);
	return 0;
}
