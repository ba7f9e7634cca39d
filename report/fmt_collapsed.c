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
 * report's samples_attributed. An empty profile gives no lines. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>

#include "report/formats.h"

#define MAX_FRAME 1024
#define ALLOC_MARK "[alloc] "
#define NO_ALLOC_PATH "[unknown allocation path]"
#define NO_ACCESS_PATH "[unknown access path]"

/* One frame name; ';' separates frames and '\n' lines, so both are replaced. */
static void put_frame(FILE *out, const char *prefix, const char *name)
{
	const char *s;

	fputs(prefix, out);
	for (s = name; *s; s++)
		fputc(*s == ';' ? ':' : (*s == '\n' || *s == '\r') ? ' ' : *s, out);
}

/* Frames of `stack` root first (stacks are stored leaf first). */
static void put_stack(FILE *out, const struct os_profile *p, uint32_t stack, const char *prefix,
		      const char *none)
{
	char buf[MAX_FRAME];
	uint32_t i, n;

	if (stack == OS_NONE || !p->stacks[stack].nframes) {
		put_frame(out, "", none);
		return;
	}
	n = p->stacks[stack].nframes;
	for (i = n; i-- > 0;) {
		os_profile_frame_str(p, p->stacks[stack].frames[i], buf, sizeof(buf));
		put_frame(out, prefix, buf);
		if (i)
			fputc(';', out);
	}
}

int report_render_collapsed(const struct report_view *v, const struct report_opts *o, FILE *out)
{
	const struct os_profile *p = v->p;
	uint32_t r, i;

	(void)o;
	for (r = 0; r < v->nobjects; r++) {
		const struct report_object *ro = &v->objects[r];
		const struct os_context *c = &p->contexts[ro->context];
		uint64_t rest = c->samples;

		for (i = 0; i < ro->naccesses; i++) {
			const struct os_access *a = &p->accesses[v->accesses[ro->first_access + i]];

			if (!a->samples)
				continue;
			put_stack(out, p, c->stack, ALLOC_MARK, NO_ALLOC_PATH);
			fputc(';', out);
			put_stack(out, p, a->stack, "", NO_ACCESS_PATH);
			fprintf(out, " %" PRIu64 "\n", a->samples);
			rest -= a->samples < rest ? a->samples : rest;
		}
		if (rest) {
			put_stack(out, p, c->stack, ALLOC_MARK, NO_ALLOC_PATH);
			fprintf(out, ";" NO_ACCESS_PATH " %" PRIu64 "\n", rest);
		}
	}
	return 0;
}
