/* profile.c - the in-memory profile: builder, interning, frame strings.
 * File I/O is in profile_io.c, merging in profile_merge.c. */
#include "common/profile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/hashmap.h"

/* Interning tables, created on first use (also for profiles read from a
 * file). Each map goes from a 64-bit content hash to an id; on a collision
 * with different content the next key of a fixed probe sequence is tried. */
struct os_profile_index {
	struct os_hmap strings;
	struct os_hmap frames;
	struct os_hmap stacks;
	uint32_t cap_strings, cap_frames, cap_stacks;
	uint32_t cap_contexts, cap_accesses, cap_threads, cap_slices;
};

typedef bool (*eq_fn)(const struct os_profile *p, uint32_t id, const void *key);

static uint64_t probe_key(uint64_t k)
{
	return k == UINT64_MAX ? k - 1 : k; /* UINT64_MAX is reserved by os_hmap */
}

static uint64_t probe_next(uint64_t k)
{
	return probe_key(os_hash64(k + 0x9e3779b97f4a7c15ULL));
}

/* Returns the id whose content equals `key`, or OS_NONE with *slot set to the
 * map key where a new id must be stored. */
static uint32_t probe(const struct os_hmap *m, uint64_t h, eq_fn eq, const struct os_profile *p,
		      const void *key, uint64_t *slot)
{
	uint64_t k = probe_key(h), v;

	*slot = k;
	while (os_hmap_get(m, k, &v)) {
		if (eq(p, (uint32_t)v, key))
			return (uint32_t)v;
		k = probe_next(k);
	}
	*slot = k;
	return OS_NONE;
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return os_hash64(h);
}

static uint64_t hash_frame(const struct os_frame *f)
{
	uint64_t h = os_hash64(((uint64_t)f->kind << 32) | f->name);

	h = os_hash64(h ^ (((uint64_t)f->module << 32) | f->file));
	h = os_hash64(h ^ ((uint64_t)f->column << 32 | f->line));
	return os_hash64(h ^ f->addr);
}

struct stack_key {
	const uint32_t *frames;
	uint32_t n;
};

static uint64_t hash_stack(const uint32_t *frames, uint32_t n)
{
	uint64_t h = os_hash64(n + 1);
	uint32_t i;

	for (i = 0; i < n; i++)
		h = os_hash64(h ^ frames[i]);
	return h;
}

static bool eq_string(const struct os_profile *p, uint32_t id, const void *key)
{
	return strcmp(p->strings[id], key) == 0;
}

static bool eq_frame(const struct os_profile *p, uint32_t id, const void *key)
{
	const struct os_frame *a = &p->frames[id], *b = key;

	return a->kind == b->kind && a->name == b->name && a->module == b->module &&
	       a->file == b->file && a->line == b->line && a->column == b->column &&
	       a->addr == b->addr &&
	       a->near_sym == b->near_sym && a->near_off == b->near_off &&
	       a->build_id == b->build_id;
}

static bool eq_stack(const struct os_profile *p, uint32_t id, const void *key)
{
	const struct os_stack *s = &p->stacks[id];
	const struct stack_key *k = key;

	return s->nframes == k->n &&
	       (k->n == 0 || memcmp(s->frames, k->frames, k->n * sizeof(*k->frames)) == 0);
}

/* Makes sure the interning tables exist and cover every entry. */
static struct os_profile_index *index_get(struct os_profile *p)
{
	struct os_profile_index *ix = p->priv;
	uint64_t slot;
	uint32_t i;

	if (ix)
		return ix;
	ix = calloc(1, sizeof(*ix));
	if (!ix)
		return NULL;
	os_hmap_init(&ix->strings);
	os_hmap_init(&ix->frames);
	os_hmap_init(&ix->stacks);
	ix->cap_strings = p->nstrings;
	ix->cap_frames = p->nframes;
	ix->cap_stacks = p->nstacks;
	ix->cap_contexts = p->ncontexts;
	ix->cap_accesses = p->naccesses;
	ix->cap_threads = p->nthreads;
	ix->cap_slices = p->nslices;
	/* Duplicates in a file keep their ids; the first one is the one found. */
	for (i = 0; i < p->nstrings; i++)
		if (probe(&ix->strings, hash_str(p->strings[i]), eq_string, p, p->strings[i],
			  &slot) == OS_NONE &&
		    os_hmap_put(&ix->strings, slot, i))
			goto fail;
	for (i = 0; i < p->nframes; i++)
		if (probe(&ix->frames, hash_frame(&p->frames[i]), eq_frame, p, &p->frames[i],
			  &slot) == OS_NONE &&
		    os_hmap_put(&ix->frames, slot, i))
			goto fail;
	for (i = 0; i < p->nstacks; i++) {
		struct stack_key k = { p->stacks[i].frames, p->stacks[i].nframes };

		if (probe(&ix->stacks, hash_stack(k.frames, k.n), eq_stack, p, &k, &slot) ==
			    OS_NONE &&
		    os_hmap_put(&ix->stacks, slot, i))
			goto fail;
	}
	p->priv = ix;
	return ix;
fail:
	os_hmap_destroy(&ix->strings);
	os_hmap_destroy(&ix->frames);
	os_hmap_destroy(&ix->stacks);
	free(ix);
	return NULL;
}

/* Makes room for one more element in *arr (count n, capacity *cap). */
static int grow(void **arr, uint32_t n, uint32_t *cap, size_t elem)
{
	void *na;

	if (n < *cap)
		return 0;
	if (n >= OS_NONE - 1)
		return -ENOMEM;
	na = os_grow32(*arr, cap, (size_t)n + 1, elem, 16, OS_NONE - 1);
	if (!na)
		return -ENOMEM;
	*arr = na;
	return 0;
}

struct os_profile *os_profile_new(void)
{
	struct os_profile *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->meta.sampler = OS_NONE;
	p->meta.event = OS_NONE;
	p->meta.mode = OS_NONE;
	p->meta.hostname = OS_NONE;
	if (!index_get(p)) {
		free(p);
		return NULL;
	}
	return p;
}

void os_profile_free(struct os_profile *p)
{
	struct os_profile_index *ix;
	uint32_t i;

	if (!p)
		return;
	ix = p->priv;
	if (ix) {
		os_hmap_destroy(&ix->strings);
		os_hmap_destroy(&ix->frames);
		os_hmap_destroy(&ix->stacks);
		free(ix);
	}
	for (i = 0; i < p->nstrings; i++)
		free(p->strings[i]);
	free(p->strings);
	free(p->frames);
	for (i = 0; i < p->nstacks; i++)
		free(p->stacks[i].frames);
	free(p->stacks);
	free(p->contexts);
	free(p->accesses);
	free(p->threads);
	free(p->slices);
	free(p->lt.ctx);
	free(p->ru.ctx);
	free(p->meta.argv);
	free(p->meta.pids);
	free(p->meta.notes);
	for (i = 0; i < p->nnote_counters; i++)
		free(p->note_counters[i].vals);
	free(p->note_counters);
	free(p);
}

uint32_t os_profile_string(struct os_profile *p, const char *s)
{
	struct os_profile_index *ix = index_get(p);
	uint64_t slot;
	uint32_t id;
	char *copy;

	if (!ix || !s)
		return OS_NONE;
	id = probe(&ix->strings, hash_str(s), eq_string, p, s, &slot);
	if (id != OS_NONE)
		return id;
	if (grow((void **)&p->strings, p->nstrings, &ix->cap_strings, sizeof(*p->strings)))
		return OS_NONE;
	copy = strdup(s);
	if (!copy)
		return OS_NONE;
	if (os_hmap_put(&ix->strings, slot, p->nstrings)) {
		free(copy);
		return OS_NONE;
	}
	p->strings[p->nstrings] = copy;
	return p->nstrings++;
}

uint32_t os_profile_frame(struct os_profile *p, const struct os_frame *f)
{
	struct os_profile_index *ix = index_get(p);
	uint64_t slot;
	uint32_t id;

	if (!ix)
		return OS_NONE;
	id = probe(&ix->frames, hash_frame(f), eq_frame, p, f, &slot);
	if (id != OS_NONE)
		return id;
	if (grow((void **)&p->frames, p->nframes, &ix->cap_frames, sizeof(*p->frames)) ||
	    os_hmap_put(&ix->frames, slot, p->nframes))
		return OS_NONE;
	p->frames[p->nframes] = *f;
	return p->nframes++;
}

uint32_t os_profile_stack(struct os_profile *p, const uint32_t *frames, uint32_t n)
{
	struct os_profile_index *ix = index_get(p);
	struct stack_key k = { frames, n };
	uint32_t *copy = NULL;
	uint64_t slot;
	uint32_t id;

	if (!ix || (n && !frames))
		return OS_NONE;
	id = probe(&ix->stacks, hash_stack(frames, n), eq_stack, p, &k, &slot);
	if (id != OS_NONE)
		return id;
	if (grow((void **)&p->stacks, p->nstacks, &ix->cap_stacks, sizeof(*p->stacks)))
		return OS_NONE;
	if (n) {
		copy = malloc((size_t)n * sizeof(*copy));
		if (!copy)
			return OS_NONE;
		memcpy(copy, frames, (size_t)n * sizeof(*copy));
	}
	if (os_hmap_put(&ix->stacks, slot, p->nstacks)) {
		free(copy);
		return OS_NONE;
	}
	p->stacks[p->nstacks].nframes = n;
	p->stacks[p->nstacks].frames = copy;
	return p->nstacks++;
}

uint32_t os_profile_add_context(struct os_profile *p, const struct os_context *c)
{
	struct os_profile_index *ix = index_get(p);

	if (!ix || grow((void **)&p->contexts, p->ncontexts, &ix->cap_contexts,
			sizeof(*p->contexts)))
		return OS_NONE;
	p->contexts[p->ncontexts] = *c;
	return p->ncontexts++;
}

uint32_t os_profile_add_access(struct os_profile *p, const struct os_access *a)
{
	struct os_profile_index *ix = index_get(p);

	if (!ix || grow((void **)&p->accesses, p->naccesses, &ix->cap_accesses,
			sizeof(*p->accesses)))
		return OS_NONE;
	p->accesses[p->naccesses] = *a;
	return p->naccesses++;
}

uint32_t os_profile_add_thread(struct os_profile *p, const struct os_thread *t)
{
	struct os_profile_index *ix = index_get(p);

	if (!ix || grow((void **)&p->threads, p->nthreads, &ix->cap_threads,
			sizeof(*p->threads)))
		return OS_NONE;
	p->threads[p->nthreads] = *t;
	return p->nthreads++;
}

/* Entry ctx of a per-context array of *n entries of `size` bytes, grown
 * (zeroed) to all the contexts there are at once: callers go through them.
 * NULL on out of memory or OS_NONE. */
static void *ctx_entry(void **arr, uint32_t *n, size_t size, uint32_t ctx, uint32_t ncontexts)
{
	if (ctx == OS_NONE)
		return NULL;
	if (ctx >= *n) {
		uint32_t m = ctx + 1 > ncontexts ? ctx + 1 : ncontexts;
		char *a = realloc(*arr, (size_t)m * size);

		if (!a)
			return NULL;
		memset(a + (size_t)*n * size, 0, (size_t)(m - *n) * size);
		*arr = a;
		*n = m;
	}
	return (char *)*arr + (size_t)ctx * size;
}

struct os_lifetime *os_profile_lifetime(struct os_profile *p, uint32_t ctx)
{
	struct os_lifetime *l = ctx_entry((void **)&p->lt.ctx, &p->lt.nctx, sizeof(*l), ctx,
					  p->ncontexts);

	if (l)
		p->analyses |= OS_AN_LIFETIMES;
	return l;
}

struct os_reuse *os_profile_reuse(struct os_profile *p, uint32_t ctx)
{
	struct os_reuse *r = ctx_entry((void **)&p->ru.ctx, &p->ru.nctx, sizeof(*r), ctx,
				       p->ncontexts);

	if (r)
		p->analyses |= OS_AN_REUSE;
	return r;
}

void os_lifetime_add(struct os_lifetime *d, const struct os_lifetime *s)
{
	if (s->kind == OS_LT_NONE)
		return;
	if (d->kind == OS_LT_NONE) {
		d->kind = s->kind;
		d->flags = s->flags;
	} else {
		d->flags &= s->flags;
	}
	for (uint32_t k = 0; k < OS_LT_BINS; k++) {
		d->ended[k] += s->ended[k];
		d->ended_bytes[k] += s->ended_bytes[k];
		d->live[k] += s->live[k];
		d->live_bytes[k] += s->live_bytes[k];
	}
	d->promoted += s->promoted;
	d->promoted_bytes += s->promoted_bytes;
	if (s->peak_bytes > d->peak_bytes) {
		d->peak_bytes = s->peak_bytes;
		d->peak_ns = s->peak_ns;
	}
}

uint32_t os_profile_add_slice(struct os_profile *p, const struct os_slice *s)
{
	struct os_profile_index *ix = index_get(p);

	if (!ix || grow((void **)&p->slices, p->nslices, &ix->cap_slices, sizeof(*p->slices)))
		return OS_NONE;
	p->slices[p->nslices] = *s;
	p->analyses |= OS_AN_SLICES;
	return p->nslices++;
}

/* Appends v to a small array unless already present. */
static int add_unique(uint32_t **arr, uint32_t *n, uint32_t v)
{
	uint32_t *na;
	uint32_t i;

	for (i = 0; i < *n; i++)
		if ((*arr)[i] == v)
			return 0;
	if (*n >= OS_NONE - 1)
		return -ENOMEM;
	na = realloc(*arr, ((size_t)*n + 1) * sizeof(*na));
	if (!na)
		return -ENOMEM;
	na[(*n)++] = v;
	*arr = na;
	return 0;
}

int os_profile_add_pid(struct os_profile *p, uint32_t pid)
{
	return add_unique(&p->meta.pids, &p->meta.npids, pid);
}

int os_profile_add_note(struct os_profile *p, const char *note)
{
	uint32_t id = os_profile_string(p, note);

	if (id == OS_NONE)
		return -ENOMEM;
	return add_unique(&p->meta.notes, &p->meta.nnotes, id);
}

uint32_t os_profile_note_group(struct os_profile *p, const char *kind)
{
	struct os_note_counters *n;
	uint32_t id = os_profile_string(p, kind);

	if (id == OS_NONE || p->nnote_counters >= OS_NONE - 1)
		return OS_NONE;
	n = realloc(p->note_counters, ((size_t)p->nnote_counters + 1) * sizeof(*n));
	if (!n)
		return OS_NONE;
	p->note_counters = n;
	n[p->nnote_counters] = (struct os_note_counters){ id, p->meta.nnotes, 0, NULL };
	return p->nnote_counters++;
}

static int note_put(struct os_profile *p, uint32_t g, const char *key, uint32_t type, uint64_t v)
{
	struct os_note_counters *nc;
	struct os_note_val *nv;
	uint32_t id;

	if (g >= p->nnote_counters)
		return -EINVAL;
	id = os_profile_string(p, key);
	nc = &p->note_counters[g];
	if (id == OS_NONE || nc->nvals >= OS_NONE - 1)
		return -ENOMEM;
	nv = realloc(nc->vals, ((size_t)nc->nvals + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	nc->vals = nv;
	nv[nc->nvals++] = (struct os_note_val){ id, type, v };
	return 0;
}

int os_profile_note_u64(struct os_profile *p, uint32_t g, const char *key, uint64_t v)
{
	return note_put(p, g, key, OS_NV_U64, v);
}

int os_profile_note_f64(struct os_profile *p, uint32_t g, const char *key, double v)
{
	uint64_t bits;

	memcpy(&bits, &v, sizeof(bits));
	return note_put(p, g, key, OS_NV_F64, bits);
}

int os_profile_note_str(struct os_profile *p, uint32_t g, const char *key, const char *s)
{
	uint32_t id = os_profile_string(p, s ? s : "");

	return id == OS_NONE ? -ENOMEM : note_put(p, g, key, OS_NV_STR, id);
}

double os_profile_note_f64_of(uint64_t bits)
{
	double d;

	memcpy(&d, &bits, sizeof(d));
	return d;
}

bool os_profile_note_val(const struct os_profile *p, const struct os_note_counters *g,
			 const char *key, uint32_t type, uint64_t *v)
{
	for (uint32_t i = 0; i < g->nvals; i++) {
		const struct os_note_val *nv = &g->vals[i];
		const char *k = nv->key < p->nstrings ? p->strings[nv->key] : NULL;

		if (k && nv->type == type && strcmp(k, key) == 0) {
			*v = nv->v;
			return true;
		}
	}
	return false;
}

uint64_t os_profile_note_num(const struct os_profile *p, const struct os_note_counters *g,
			     const char *key)
{
	uint64_t v = 0;

	return os_profile_note_val(p, g, key, OS_NV_U64, &v) ? v : 0;
}

const char *os_profile_note_text(const struct os_profile *p, const struct os_note_counters *g,
				 const char *key)
{
	uint64_t v = 0;

	if (!os_profile_note_val(p, g, key, OS_NV_STR, &v) || v >= p->nstrings)
		return "";
	return p->strings[v];
}

/* The figures of g as "kind: key value, ..." (no renderer knows it). */
static size_t note_plain(const struct os_profile *p, const struct os_note_counters *g, char *buf,
			 size_t len)
{
	const char *kind = g->kind < p->nstrings ? p->strings[g->kind] : "?";
	size_t n = 0;
	int k;

	k = snprintf(buf, len, "%s:", kind);
	n = k > 0 ? (size_t)k : 0;
	for (uint32_t i = 0; i < g->nvals && n < len; i++) {
		const struct os_note_val *nv = &g->vals[i];
		const char *key = nv->key < p->nstrings ? p->strings[nv->key] : "?";

		if (nv->type == OS_NV_U64)
			k = snprintf(buf + n, len - n, "%s %s %" PRIu64, i ? "," : "", key, nv->v);
		else if (nv->type == OS_NV_F64)
			k = snprintf(buf + n, len - n, "%s %s %g", i ? "," : "", key,
				     os_profile_note_f64_of(nv->v));
		else if (nv->type == OS_NV_STR && nv->v < p->nstrings)
			k = snprintf(buf + n, len - n, "%s %s %s", i ? "," : "", key,
				     p->strings[nv->v]);
		else
			k = 0;
		n += k > 0 ? (size_t)k : 0;
	}
	return n < len ? n : len - 1;
}

int os_profile_render_notes(struct os_profile *p, os_note_render_fn render)
{
	char buf[4096];
	uint32_t added = 0;
	int ret = 0;

	for (uint32_t i = 0; i < p->nnote_counters && !ret; i++) {
		const struct os_note_counters *g = &p->note_counters[i];
		uint32_t id, n0 = p->meta.nnotes, at;
		size_t len = render ? render(p, g, buf, sizeof(buf)) : 0;

		if (!len)
			len = note_plain(p, g, buf, sizeof(buf));
		buf[len < sizeof(buf) ? len : sizeof(buf) - 1] = 0;
		id = os_profile_string(p, buf);
		if (id == OS_NONE) {
			ret = -ENOMEM;
			break;
		}
		ret = add_unique(&p->meta.notes, &p->meta.nnotes, id);
		if (ret || p->meta.nnotes == n0)
			continue; /* said already */
		/* from the end to where the group stood, after the notes
		 * rendered before it at the same place */
		at = g->at + added < n0 ? g->at + added : n0;
		memmove(&p->meta.notes[at + 1], &p->meta.notes[at],
			(size_t)(n0 - at) * sizeof(*p->meta.notes));
		p->meta.notes[at] = id;
		added++;
	}
	for (uint32_t i = 0; i < p->nnote_counters; i++)
		free(p->note_counters[i].vals);
	free(p->note_counters);
	p->note_counters = NULL;
	p->nnote_counters = 0;
	return ret;
}

int os_profile_set_argv(struct os_profile *p, int argc, char *const argv[])
{
	uint32_t *ids;
	int i;

	if (argc < 0)
		return -EINVAL;
	ids = malloc(((size_t)argc + 1) * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	for (i = 0; i < argc; i++) {
		ids[i] = os_profile_string(p, argv[i]);
		if (ids[i] == OS_NONE) {
			free(ids);
			return -ENOMEM;
		}
	}
	free(p->meta.argv);
	p->meta.argv = ids;
	p->meta.argc = (uint32_t)argc;
	return 0;
}

const char *os_profile_str(const struct os_profile *p, uint32_t id)
{
	if (id == OS_NONE || id >= p->nstrings)
		return NULL;
	return p->strings[id];
}

static const char *basename_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

void os_profile_frame_str(const struct os_profile *p, uint32_t id, char *buf, size_t len)
{
	const struct os_frame *f;
	const char *name, *module, *file;

	if (!len)
		return;
	if (id >= p->nframes) {
		snprintf(buf, len, "[invalid frame %" PRIu32 "]", id);
		return;
	}
	f = &p->frames[id];
	name = os_profile_str(p, f->name);
	module = os_profile_str(p, f->module);
	file = os_profile_str(p, f->file);
	if (name && !*name)
		name = NULL;

	switch (f->kind) {
	case OS_FRAME_UNKNOWN:
		break;
	case OS_FRAME_JAVA:
		if (!name)
			break;
		if (file && f->line)
			snprintf(buf, len, "%s(%s:%" PRIu32 ")", name, basename_of(file), f->line);
		else if (file)
			snprintf(buf, len, "%s(%s)", name, basename_of(file));
		else
			snprintf(buf, len, "%s", name);
		return;
	case OS_FRAME_SYNTHETIC:
		if (!name)
			break;
		snprintf(buf, len, "%s", name);
		return;
	case OS_FRAME_KERNEL:
		if (!name)
			break;
		snprintf(buf, len, "%s [kernel]", name);
		return;
	case OS_FRAME_NATIVE:
	default: /* kinds of later versions print like native frames */
		if (name && file && os_frame_column(f)) /* a call site: two on a line differ */
			snprintf(buf, len, "%s (%s:%" PRIu32 ":%" PRIu32 ")", name, basename_of(file),
				 f->line, f->column);
		else if (name && file && f->line)
			snprintf(buf, len, "%s (%s:%" PRIu32 ")", name, basename_of(file), f->line);
		else if (name)
			snprintf(buf, len, "%s", name);
		else if (module && *module && os_profile_str(p, f->near_sym))
			snprintf(buf, len, "%s+0x%" PRIx64 " (nearest export: %s+0x%" PRIx64 ")",
				 basename_of(module), f->addr, os_profile_str(p, f->near_sym),
				 f->near_off);
		else if (module && *module)
			snprintf(buf, len, "%s+0x%" PRIx64, basename_of(module), f->addr);
		else
			break;
		return;
	}
	snprintf(buf, len, "[unknown] 0x%" PRIx64, f->addr);
}
