/* diff.c - `objscope report --diff OLD NEW` (semantics in diff.h): the
 * matching of objects across the two profiles, and the text, JSON and HTML
 * renderings of the result. */
#include "report/diff.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "report/html/assets.h"
#include "report/json_writer.h"
#include "report/text_escape.h"

#define FRAME_MAX 1024
#define TEXT_FRAMES 3 /* frames of the allocation path shown per text row */

const char *report_diff_status(enum diff_status s)
{
	static const char *const names[] = { "same", "grew", "shrank", "new", "gone" };

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "same";
}

/* One side's contexts into rows: map[i] is the row of its context i. */
static void add_side(struct report_diff *d, const struct os_profile *p, const uint32_t *map,
		     bool is_new, double scale)
{
	for (uint32_t i = 0; i < p->ncontexts; i++) {
		const struct os_context *c = &p->contexts[i];
		struct diff_row *r = &d->rows[map[i]];
		/* the figure the share is of: the estimate where the side has
		 * estimates (a class-only row's raw samples are shared out) */
		double n = report_has_est(p) ? c->samples_est : (double)c->samples;

		double se = report_share_se(p, c);

		/* a side without estimates: Poisson counts, var = samples */
		if (!report_has_est(p) && p->c.samples_attributed)
			se = sqrt((double)c->samples) / (double)p->c.samples_attributed;
		r->delta_se_pp += isfinite(se) ? 1e4 * se * se : NAN; /* a variance until built */
		if (is_new) {
			r->in_new = true;
			r->share_new += report_share(p, c);
			r->samples_new += n * scale;
			r->bytes_new += c->bytes;
			r->allocs_new += c->allocations;
		} else {
			r->in_old = true;
			r->share_old += report_share(p, c);
			r->samples_old += n * scale;
			r->bytes_old += c->bytes;
			r->allocs_old += c->allocations;
		}
	}
}

static double max2(double a, double b)
{
	return a > b ? a : b;
}

/* Largest |delta| first, then the larger share, then bytes, then the order
 * of the merge (OLD's objects first): a total order, stable output. */
static int cmp_rows(const void *pa, const void *pb)
{
	const struct diff_row *a = pa, *b = pb;
	double da = fabs(a->delta_pp), db = fabs(b->delta_pp);
	double sa = max2(a->share_old, a->share_new), sb = max2(b->share_old, b->share_new);
	uint64_t ba = a->bytes_old > a->bytes_new ? a->bytes_old : a->bytes_new;
	uint64_t bb = b->bytes_old > b->bytes_new ? b->bytes_old : b->bytes_new;

	if (da != db)
		return da > db ? -1 : 1;
	if (sa != sb)
		return sa > sb ? -1 : 1;
	if (ba != bb)
		return ba > bb ? -1 : 1;
	return a->context < b->context ? -1 : a->context > b->context;
}

int report_diff_build(struct report_diff *d, const struct os_profile *old, const char *old_name,
		      const struct os_profile *new, const char *new_name)
{
	uint32_t *omap = NULL, *nmap = NULL, i;
	double os = 1, ns = 1;
	int ret = -ENOMEM;

	memset(d, 0, sizeof(*d));
	d->old = old;
	d->new = new;
	d->old_name = old_name;
	d->new_name = new_name;
	d->m = os_profile_new();
	omap = malloc(((size_t)old->ncontexts + 1) * sizeof(*omap));
	nmap = malloc(((size_t)new->ncontexts + 1) * sizeof(*nmap));
	if (!d->m || !omap || !nmap)
		goto out;
	/* the merge matches the objects and decides the common period */
	ret = os_profile_merge_map(d->m, old, omap);
	if (!ret)
		ret = os_profile_merge_map(d->m, new, nmap);
	if (ret)
		goto out;
	d->scaled = d->m->merge.scaled;
	d->raw = d->m->merge.raw;
	d->period = d->raw ? 0 : d->m->meta.period;
	if (d->scaled && d->period) {
		os = (double)old->meta.period / (double)d->period;
		ns = (double)new->meta.period / (double)d->period;
	}
	ret = -ENOMEM;
	d->nrows = d->m->ncontexts;
	d->rows = calloc((size_t)d->nrows + 1, sizeof(*d->rows));
	if (!d->rows)
		goto out;
	for (i = 0; i < d->nrows; i++)
		d->rows[i].context = i;
	add_side(d, old, omap, false, os);
	add_side(d, new, nmap, true, ns);
	for (i = 0; i < d->nrows; i++) {
		struct diff_row *r = &d->rows[i];

		r->delta_pp = (r->share_new - r->share_old) * 100.0;
		r->delta_se_pp = sqrt(r->delta_se_pp);
		if (!r->in_old)
			r->status = DIFF_NEW;
		else if (!r->in_new)
			r->status = DIFF_GONE;
		else if (r->delta_pp > 0)
			r->status = DIFF_GREW;
		else if (r->delta_pp < 0)
			r->status = DIFF_SHRANK;
		else
			r->status = DIFF_SAME;
	}
	qsort(d->rows, d->nrows, sizeof(*d->rows), cmp_rows);
	ret = 0;
out:
	free(omap);
	free(nmap);
	return ret;
}

void report_diff_free(struct report_diff *d)
{
	os_profile_free(d->m);
	free(d->rows);
	d->m = NULL;
	d->rows = NULL;
	d->nrows = 0;
}

int report_diff_render(const struct report_view *v, const struct report_opts *o, FILE *out)
{
	const struct report_diff *d = (const struct report_diff *)v; /* view is first */

	if (strcmp(o->format, "json") == 0)
		return report_diff_json(d, o, out);
	if (strcmp(o->format, "html") == 0)
		return report_diff_html(d, o, out);
	return report_diff_text(d, o, out);
}

/* Rows shown: --top N (0 = all); text by default 20 and, without -v, not
 * the objects that had no sample on either side. */
static bool row_shown(const struct diff_row *r, const struct report_opts *o, bool text)
{
	return !text || o->verbose || r->samples_old > 0 || r->samples_new > 0;
}

static uint32_t row_limit(const struct report_opts *o, bool default_all)
{
	return (default_all && !o->top_set) ? 0 : o->top;
}

/* ---- text ---- */

static void text_side(const char *label, const char *name, const struct os_profile *p, FILE *out)
{
	const struct os_meta *m = &p->meta;
	const char *ev = os_profile_str(p, m->event);

	fprintf(out, "# %s ", label);
	report_put_text(name, out);
	fputc(':', out);
	for (uint32_t i = 0; i < m->argc; i++) {
		fputc(' ', out);
		report_put_text(report_str(p, m->argv[i]), out);
	}
	if (!m->argc)
		fputs(" (no command)", out);
	fprintf(out, "\n#   %.2f s, sampler ", m->duration_s);
	report_put_text(m->sampler == OS_NONE ? "?" : report_str(p, m->sampler), out);
	if (ev) {
		fputs(" (", out);
		report_put_text(ev, out);
		fprintf(out, ", period %" PRIu64 ")", m->period);
	}
	fprintf(out, ", %" PRIu64 " samples attributed%s\n", p->c.samples_attributed,
		p->unfinished ? " (UNFINISHED: a checkpoint, the run's last seconds are missing)"
			      : "");
}

static void text_path(const struct os_profile *m, const struct os_context *c, FILE *out)
{
	char buf[FRAME_MAX];

	report_put_text(c->type == OS_NONE ? "(untyped)" : report_str(m, c->type), out);
	if (c->stack == OS_NONE || !m->stacks[c->stack].nframes) {
		fputs(" (no allocation path)", out);
		return;
	}
	for (uint32_t i = 0; i < m->stacks[c->stack].nframes && i < TEXT_FRAMES; i++) {
		os_profile_frame_str(m, m->stacks[c->stack].frames[i], buf, sizeof(buf));
		fputs(i ? " < " : " at ", out);
		report_put_text(buf, out);
	}
	if (m->stacks[c->stack].nframes > TEXT_FRAMES)
		fputs(" < ...", out);
}

int report_diff_text(const struct report_diff *d, const struct report_opts *o, FILE *out)
{
	uint32_t i, shown = 0, limit = row_limit(o, false), hidden = 0;

	text_side("OLD", d->old_name, d->old, out);
	text_side("NEW", d->new_name, d->new, out);
	if (d->scaled)
		fprintf(out, "# samples normalised to period %" PRIu64 " (the periods differ)\n",
			d->period);
	else if (d->raw)
		fputs("# samples not comparable (different events or an unknown period): counts"
		      " shown as recorded; shares still compare\n",
		      out);
	fprintf(out, "\n%8s %7s %7s %10s %10s %10s %10s  %-6s  %s\n", "delta", "old", "new",
		"samp.old", "samp.new", "bytes.old", "bytes.new", "status", "object");
	for (i = 0; i < d->nrows; i++) {
		const struct diff_row *r = &d->rows[i];

		if (!row_shown(r, o, true)) {
			hidden++;
			continue;
		}
		if (limit && shown >= limit) {
			hidden++;
			continue;
		}
		shown++;
		fprintf(out, "%+7.1fpp %6.1f%% %6.1f%% %10.0f %10.0f %10" PRIu64 " %10" PRIu64
			     "  %-6s  ",
			r->delta_pp, r->share_old * 100, r->share_new * 100, r->samples_old,
			r->samples_new, r->bytes_old, r->bytes_new, report_diff_status(r->status));
		text_path(d->m, &d->m->contexts[r->context], out);
		if (isfinite(r->delta_se_pp) && r->delta_se_pp > 0)
			fprintf(out, " (±%.1fpp at 90%%%s)", REPORT_Z90 * r->delta_se_pp,
				fabs(r->delta_pp) <= REPORT_Z90 * r->delta_se_pp
					? ": within the estimates' intervals"
					: "");
		fputc('\n', out);
	}
	if (!shown)
		fputs("(no object had a sample in either profile)\n", out);
	if (hidden)
		fprintf(out, "# %u more objects (--top 0 -v shows all)\n", hidden);
	return 0;
}

/* ---- JSON ---- */

static void json_side(struct json_writer *w, const char *key, const char *name,
		      const struct os_profile *p)
{
	const struct os_meta *m = &p->meta;

	jw_begin_object(w, key);
	jw_string(w, "file", name);
	jw_begin_array(w, "command");
	for (uint32_t i = 0; i < m->argc; i++)
		jw_string(w, NULL, report_str(p, m->argv[i]));
	jw_end_array(w);
	jw_double(w, "duration_s", m->duration_s);
	if (m->sampler == OS_NONE)
		jw_null(w, "sampler");
	else
		jw_string(w, "sampler", report_str(p, m->sampler));
	if (m->event == OS_NONE)
		jw_null(w, "event");
	else
		jw_string(w, "event", report_str(p, m->event));
	jw_u64(w, "period", m->period);
	jw_u64(w, "samples_attributed", p->c.samples_attributed);
	jw_end_object(w);
}

static void json_row(struct json_writer *w, const struct report_diff *d, const struct diff_row *r)
{
	const struct os_context *c = &d->m->contexts[r->context];
	char buf[FRAME_MAX];

	jw_begin_object(w, NULL);
	jw_string(w, "status", report_diff_status(r->status));
	if (c->type == OS_NONE)
		jw_null(w, "type");
	else
		jw_string(w, "type", report_str(d->m, c->type));
	jw_begin_array(w, "allocation_path");
	if (c->stack != OS_NONE)
		for (uint32_t i = 0; i < d->m->stacks[c->stack].nframes; i++) {
			os_profile_frame_str(d->m, d->m->stacks[c->stack].frames[i], buf,
					     sizeof(buf));
			jw_string(w, NULL, buf);
		}
	jw_end_array(w);
	jw_double(w, "share_old", r->share_old);
	jw_double(w, "share_new", r->share_new);
	jw_double(w, "delta_pp", r->delta_pp);
	if (isfinite(r->delta_se_pp))
		jw_double(w, "delta_pp_se", r->delta_se_pp);
	else
		jw_null(w, "delta_pp_se");
	jw_double(w, "samples_old", r->samples_old);
	jw_double(w, "samples_new", r->samples_new);
	jw_u64(w, "bytes_old", r->bytes_old);
	jw_u64(w, "bytes_new", r->bytes_new);
	jw_u64(w, "allocations_old", r->allocs_old);
	jw_u64(w, "allocations_new", r->allocs_new);
	jw_end_object(w);
}

static const char *normalisation(const struct report_diff *d)
{
	return d->raw ? "raw" : d->scaled ? "scaled" : "none";
}

static int json_doc(const struct report_diff *d, const struct report_opts *o, FILE *out,
		    bool html_safe)
{
	struct json_writer *w = malloc(sizeof(*w));
	uint32_t i, limit = row_limit(o, true);
	int ret;

	if (!w)
		return -ENOMEM;
	jw_init(w, out, html_safe);
	jw_begin_object(w, NULL);
	jw_string(w, "format", "objscope-diff");
	jw_u64(w, "version", 1);
	json_side(w, "old", d->old_name, d->old);
	json_side(w, "new", d->new_name, d->new);
	jw_string(w, "normalisation", normalisation(d));
	jw_u64(w, "period", d->period);
	jw_u64(w, "objects_total", d->nrows);
	jw_begin_array(w, "objects");
	for (i = 0; i < d->nrows && (!limit || i < limit); i++)
		json_row(w, d, &d->rows[i]);
	jw_end_array(w);
	jw_end_object(w);
	ret = jw_finish(w);
	free(w);
	return ret;
}

int report_diff_json(const struct report_diff *d, const struct report_opts *o, FILE *out)
{
	int ret = json_doc(d, o, out, false);

	if (!ret)
		fputc('\n', out);
	return ret;
}

/* ---- HTML ---- */

static void html_esc(const char *s, FILE *out)
{
	for (; *s; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '&':
			fputs("&amp;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		default:
			fputc(*s, out);
		}
	}
}

static void html_side(const char *label, const char *name, const struct os_profile *p, FILE *out)
{
	const struct os_meta *m = &p->meta;

	fprintf(out, "<p class=\"side\"><b>%s</b> ", label);
	html_esc(name, out);
	fputs(": <code>", out);
	for (uint32_t i = 0; i < m->argc; i++) {
		if (i)
			fputc(' ', out);
		html_esc(report_str(p, m->argv[i]), out);
	}
	fprintf(out, "</code>, %.2f s, sampler ", m->duration_s);
	html_esc(m->sampler == OS_NONE ? "?" : report_str(p, m->sampler), out);
	fprintf(out, " (period %" PRIu64 "), %" PRIu64 " samples attributed</p>\n", m->period,
		p->c.samples_attributed);
}

/* Sorting by a click on a column header: numbers by data-v, text as is. */
static const char sort_js[] =
	"document.querySelectorAll('table.sortable th').forEach(function(th,col){"
	"th.style.cursor='pointer';th.addEventListener('click',function(){"
	"var tb=th.closest('table').tBodies[0],rows=Array.from(tb.rows),"
	"dir=th.dataset.dir==='d'?1:-1;th.dataset.dir=dir<0?'d':'a';"
	"rows.sort(function(a,b){var x=a.cells[col],y=b.cells[col],"
	"p=x.dataset.v,q=y.dataset.v;if(p!==undefined)return dir*(parseFloat(p)-parseFloat(q));"
	"return dir*x.textContent.localeCompare(y.textContent);});"
	"rows.forEach(function(r){tb.appendChild(r);});});});";

int report_diff_html(const struct report_diff *d, const struct report_opts *o, FILE *out)
{
	uint32_t i, limit = row_limit(o, true);
	char buf[FRAME_MAX];

	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';"
	      " script-src 'unsafe-inline'; style-src 'unsafe-inline'\">\n"
	      "<title>objscope diff</title>\n<style>\n",
	      out);
	/* the stylesheet holds no "</style" (it is ours, report/html/style.css) */
	fwrite(os_html_style_css, 1, os_html_style_css_len, out);
	fputs("\ntable.diff{width:100%;border-collapse:collapse;table-layout:auto}"
	      "table.diff td,table.diff th{padding:2px 6px;text-align:right;vertical-align:top}"
	      "table.diff td.obj,table.diff th.obj{text-align:left;overflow-wrap:anywhere}"
	      ".side{margin:4px 0}"
	      ".grew,.new{color:#b3261e}.shrank,.gone{color:#1e6b2e}\n</style></head>\n<body>\n"
	      "<header><h1>objscope diff</h1></header>\n<main>\n<div class=\"card\">\n",
	      out);
	html_side("OLD", d->old_name, d->old, out);
	html_side("NEW", d->new_name, d->new, out);
	if (d->scaled)
		fprintf(out, "<p class=\"side\">samples normalised to period %" PRIu64
			     " (the periods differ)</p>\n",
			d->period);
	else if (d->raw)
		fputs("<p class=\"side warn\">samples not comparable (different events or an"
		      " unknown period): counts shown as recorded; shares still compare</p>\n",
		      out);
	fputs("</div>\n<div class=\"card\"><h2>Objects whose share changed</h2>\n"
	      "<table id=\"diff\" class=\"ranked diff sortable\"><thead><tr><th>delta (pp)</th>"
	      "<th>old share</th><th>new share</th><th>samples old</th><th>samples new</th>"
	      "<th>bytes old</th><th>bytes new</th><th>allocs old</th><th>allocs new</th>"
	      "<th>status</th><th class=\"obj\">object</th></tr></thead>\n<tbody>\n",
	      out);
	for (i = 0; i < d->nrows && (!limit || i < limit); i++) {
		const struct diff_row *r = &d->rows[i];
		const struct os_context *c = &d->m->contexts[r->context];
		const char *st = report_diff_status(r->status);
		char pm[32] = "";

		if (isfinite(r->delta_se_pp) && r->delta_se_pp > 0)
			snprintf(pm, sizeof(pm), " &plusmn;%.2f", REPORT_Z90 * r->delta_se_pp);
		fprintf(out,
			"<tr class=\"%s\"><td data-v=\"%.6f\">%+.2f%s</td>"
			"<td data-v=\"%.6f\">%.2f%%</td>"
			"<td data-v=\"%.6f\">%.2f%%</td><td data-v=\"%.0f\">%.0f</td>"
			"<td data-v=\"%.0f\">%.0f</td><td data-v=\"%" PRIu64 "\">%" PRIu64 "</td>"
			"<td data-v=\"%" PRIu64 "\">%" PRIu64 "</td><td data-v=\"%" PRIu64
			"\">%" PRIu64 "</td><td data-v=\"%" PRIu64 "\">%" PRIu64 "</td>"
			"<td>%s</td><td class=\"obj\"><b>",
			st, r->delta_pp, r->delta_pp, pm, r->share_old, r->share_old * 100,
			r->share_new, r->share_new * 100, r->samples_old, r->samples_old,
			r->samples_new, r->samples_new, r->bytes_old, r->bytes_old, r->bytes_new,
			r->bytes_new, r->allocs_old, r->allocs_old, r->allocs_new, r->allocs_new,
			st);
		html_esc(c->type == OS_NONE ? "(untyped)" : report_str(d->m, c->type), out);
		fputs("</b>", out);
		if (c->stack != OS_NONE)
			for (uint32_t k = 0; k < d->m->stacks[c->stack].nframes; k++) {
				os_profile_frame_str(d->m, d->m->stacks[c->stack].frames[k], buf,
						     sizeof(buf));
				fputs("<br>", out);
				html_esc(buf, out);
			}
		fputs("</td></tr>\n", out);
	}
	fputs("</tbody></table>\n", out);
	if (limit && d->nrows > limit)
		fprintf(out, "<p class=\"hint\">%u more objects (--top 0 shows all)</p>\n",
			d->nrows - limit);
	fprintf(out, "</div>\n</main>\n<script>%s</script>\n</body></html>\n", sort_js);
	return 0;
}
