/* fmt_collapsed.c - `report --format collapsed`: folded stacks, the input of
 * flamegraph.pl, speedscope, Pyroscope and inferno. One line per (object,
 * access path):
 *
 *   [alloc] main;[alloc] alloc_random_block (t.c:60);[alloc] malloc;run;random_phase (t.c:98) 812
 *
 * root first: the allocation path of the object (frames marked "[alloc] "),
 * then the access path above it, then the access samples. Samples of an
 * object whose access path is unknown end in "[unknown access path]"; every
 * attributed sample appears exactly once, so the counts add up to the JSON
 * report's samples_attributed. An empty profile gives no lines.
 *
 * Each line is assembled in memory and written with one fwrite; an object's
 * allocation path is formatted once and reused for each of its lines, and
 * each frame's cleaned name is formatted once and kept (up to CACHE_CAP
 * bytes; beyond, names are formatted each time). */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/formats.h"
#include "report/text_escape.h"
#include "common/grow.h"

#define MAX_FRAME 1024
#define ALLOC_MARK "[alloc] "
#define NO_ALLOC_PATH "[unknown allocation path]"
#define NO_ACCESS_PATH "[unknown access path]"
#define CACHE_CAP (32u << 20)

/* A growable byte buffer; `failed` once an allocation failed. */
struct cbuf {
	char *s;
	size_t len, cap;
	bool failed;
};

static bool cbuf_room(struct cbuf *b, size_t more)
{
	char *s;

	if (b->failed)
		return false;
	s = os_grow(b->s, &b->cap, b->len + more, 1, 4096);
	if (!s) {
		b->failed = true;
		return false;
	}
	b->s = s;
	return true;
}

static void cbuf_put(struct cbuf *b, const char *s, size_t n)
{
	if (!cbuf_room(b, n))
		return;
	memcpy(b->s + b->len, s, n);
	b->len += n;
}

static void cbuf_put_cb(void *b, const char *s, size_t n)
{
	cbuf_put(b, s, n);
}

/* One frame name, escaped (report/text_escape.h: a control byte, '\n'
 * included, becomes \xNN); ';' separates frames, so it is replaced. */
static void put_frame(struct cbuf *b, const char *prefix, const char *name)
{
	size_t start;

	cbuf_put(b, prefix, strlen(prefix));
	start = b->len;
	report_escape(name, cbuf_put_cb, b);
	if (b->failed)
		return;
	for (size_t i = start; i < b->len; i++)
		if (b->s[i] == ';')
			b->s[i] = ':';
}

/* Cleaned frame names by frame id: bytes [off[id] - 1, + len[id]) of
 * `names`; off[id] == 0 until formatted. */
struct name_cache {
	const struct os_profile *p;
	uint64_t *off;
	uint32_t *len;
	struct cbuf names;
};

/* Frame `id` with `prefix`, from the cache when it is there. */
static void put_frame_id(struct cbuf *b, struct name_cache *nc, uint32_t id, const char *prefix)
{
	char buf[MAX_FRAME];
	size_t start;

	if (id < nc->p->nframes && nc->off[id]) {
		cbuf_put(b, prefix, strlen(prefix));
		cbuf_put(b, nc->names.s + nc->off[id] - 1, nc->len[id]);
		return;
	}
	os_profile_frame_str(nc->p, id, buf, sizeof(buf));
	start = b->len + strlen(prefix);
	put_frame(b, prefix, buf);
	if (b->failed || id >= nc->p->nframes || nc->names.len + (b->len - start) > CACHE_CAP)
		return;
	nc->off[id] = nc->names.len + 1;
	nc->len[id] = (uint32_t)(b->len - start);
	cbuf_put(&nc->names, b->s + start, b->len - start);
	if (nc->names.failed)
		nc->off[id] = 0; /* cache full of memory: format it each time */
	nc->names.failed = false;
}

/* Frames of `stack` root first (stacks are stored leaf first). */
static void put_stack(struct cbuf *b, struct name_cache *nc, uint32_t stack, const char *prefix,
		      const char *none)
{
	const struct os_profile *p = nc->p;
	uint32_t i, n;

	if (stack == OS_NONE || !p->stacks[stack].nframes) {
		put_frame(b, "", none);
		return;
	}
	n = p->stacks[stack].nframes;
	for (i = n; i-- > 0;) {
		put_frame_id(b, nc, p->stacks[stack].frames[i], prefix);
		if (i)
			cbuf_put(b, ";", 1);
	}
}

/* Ends the line with its sample count and writes it out whole. */
static void put_line(struct cbuf *line, uint64_t samples, FILE *out)
{
	char num[32];
	int n = snprintf(num, sizeof(num), " %" PRIu64 "\n", samples);

	cbuf_put(line, num, (size_t)n);
	if (!line->failed)
		fwrite(line->s, 1, line->len, out);
}

int report_render_collapsed(const struct report_view *v, const struct report_opts *o, FILE *out)
{
	const struct os_profile *p = v->p;
	struct name_cache nc = { .p = p };
	struct cbuf line = { 0 };
	uint32_t r, i;
	int rc = 0;

	(void)o;
	nc.off = calloc((size_t)p->nframes + 1, sizeof(*nc.off));
	nc.len = calloc((size_t)p->nframes + 1, sizeof(*nc.len));
	if (!nc.off || !nc.len)
		line.failed = true;
	for (r = 0; r < v->nobjects && !line.failed; r++) {
		const struct report_object *ro = &v->objects[r];
		const struct os_context *c = &p->contexts[ro->context];
		uint64_t rest = c->samples;
		size_t alloc_len;

		line.len = 0;
		/* a row without a path ("[not seen at allocation ...]") has its
		 * class at the root, so that it is not one of many alike */
		if (*report_str(p, c->type) && (c->stack == OS_NONE || !p->stacks[c->stack].nframes ||
		    (p->stacks[c->stack].frames[0] < p->nframes &&
		     p->frames[p->stacks[c->stack].frames[0]].kind == OS_FRAME_SYNTHETIC))) {
			put_frame(&line, ALLOC_MARK, report_str(p, c->type));
			cbuf_put(&line, ";", 1);
		}
		put_stack(&line, &nc, c->stack, ALLOC_MARK, NO_ALLOC_PATH);
		cbuf_put(&line, ";", 1);
		alloc_len = line.len; /* kept for every line of this object */
		for (i = 0; i < ro->naccesses; i++) {
			const struct os_access *a = &p->accesses[v->accesses[ro->first_access + i]];

			if (!a->samples)
				continue;
			line.len = alloc_len;
			put_stack(&line, &nc, a->stack, "", NO_ACCESS_PATH);
			put_line(&line, a->samples, out);
			rest -= a->samples < rest ? a->samples : rest;
		}
		if (rest) {
			line.len = alloc_len;
			put_frame(&line, "", NO_ACCESS_PATH);
			put_line(&line, rest, out);
		}
	}
	if (line.failed)
		rc = -ENOMEM;
	free(line.s);
	free(nc.names.s);
	free(nc.off);
	free(nc.len);
	return rc;
}
