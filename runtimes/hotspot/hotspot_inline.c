/* hotspot_inline.c - compiled frames expanded into the Java methods
 * running there, inlined ones included, from their nmethods' debug info
 * (hotspot_scopes.h), with a cache of expansions by pc. */
#include "runtimes/hotspot/hotspot_int.h"

/* The nmethod of blob b (read, or cached and checked once per code epoch);
 * NULL when b is none or cannot be read. */
static const struct os_hs_nm *nm_get(struct hotspot *h, struct hs_jvm *j,
				     const struct os_hsf_blob *b)
{
	struct hs_rd r = { h, j };
	struct os_hs_nm *nm, *n;
	uint64_t idx;
	int rc;

	if (os_hmap_get(&j->nm_at, b->start, &idx)) {
		nm = &j->nms[idx];
		if (nm->epoch == j->code_epoch)
			return nm->method ? nm : NULL;
		if (nm->method && nm->code_begin == b->code_begin && os_hs_nm_same(nm, &j->scl, hs_nm_rd, &r)) {
			nm->epoch = j->code_epoch;
			return nm;
		}
		j->nm_stale += nm->method != 0;
		os_hs_nm_free(nm);
	} else {
		if (j->nnms >= HS_NMS_MAX) {
			j->nm_full++;
			return NULL;
		}
		n = os_grow(j->nms, &j->capnms, j->nnms + 1, sizeof(*n), 256);
		if (!n)
			return NULL;
		j->nms = n;
		idx = j->nnms;
		if (os_hmap_put(&j->nm_at, b->start, idx) < 0)
			return NULL;
		j->nnms++;
		nm = &j->nms[idx];
	}
	j->nm_reads++;
	rc = os_hs_nm_read(nm, &j->scl, hs_nm_rd, &r, b->start, b->code_begin);
	if (rc < 0) { /* none (a stub), or unreadable now: again next epoch */
		j->nm_failed += rc != -ENOENT;
		memset(nm, 0, sizeof(*nm));
	}
	nm->start = b->start;
	nm->epoch = j->code_epoch;
	return nm->method ? nm : NULL;
}

/* The cached expansion of pc in nm, or NULL. */
static const struct hs_jx *jx_get(const struct hs_jvm *j, const struct os_hs_nm *nm, uint64_t pc,
				  bool exact)
{
	uint64_t idx;
	const struct hs_jx *e;

	if (!os_hmap_get(&j->jx_at, pc << 1 | exact, &idx))
		return NULL;
	e = &j->jx[idx];
	if (e->nm_start != nm->start || e->compile_id != nm->compile_id || e->method != nm->method)
		return NULL;
	return e;
}

/* Keeps an expansion (best effort: out of memory just leaves it uncached):
 * its index into jx, UINT32_MAX when not kept. */
static uint32_t jx_put(struct hs_jvm *j, const struct os_hs_nm *nm, uint64_t pc, bool exact,
		       const uint64_t *w, uint32_t n, bool outer)
{
	uint64_t *slot, *w2;
	struct hs_jx *e, *x;

	if (j->njx >= HS_JX_MAX || j->njxw + n > (size_t)HS_JX_MAX * 4) {
		os_hmap_destroy(&j->jx_at);
		os_hmap_init(&j->jx_at);
		j->njx = j->njxw = 0;
		j->jx_gen++;
	}
	x = os_grow(j->jx, &j->capjx, j->njx + 1, sizeof(*j->jx), 1024);
	if (!x)
		return UINT32_MAX;
	j->jx = x;
	w2 = os_grow(j->jxw, &j->capjxw, j->njxw + n, sizeof(*j->jxw), 4096);
	if (!w2)
		return UINT32_MAX;
	j->jxw = w2;
	slot = os_hmap_ref(&j->jx_at, pc << 1 | exact, UINT64_MAX);
	if (!slot)
		return UINT32_MAX;
	if (*slot == UINT64_MAX)
		*slot = j->njx++;
	e = &j->jx[*slot];
	e->nm_start = nm->start;
	e->method = nm->method;
	e->compile_id = nm->compile_id;
	e->off = (uint32_t)j->njxw;
	e->n = n;
	e->outer = outer;
	memcpy(j->jxw + j->njxw, w, n * sizeof(*w));
	j->njxw += n;
	return (uint32_t)*slot;
}

/* A compiled frame at pc (in blob b) as the Java methods running there,
 * innermost first, as named Method* words into out: their count, 0 when
 * the frame keeps its pc (not an nmethod, no scope there, a method not
 * readable). exact: pc is a return address. */
static uint32_t jit_expand(struct hotspot *h, struct hs_jvm *j, const struct os_hsf_blob *b,
			   uint64_t pc, bool exact, uint64_t *out, uint32_t max, uint32_t *jxi)
{
	uint64_t m[OS_HS_SCOPE_DEPTH];
	int32_t bci[OS_HS_SCOPE_DEPTH];
	const struct os_hs_nm *nm;
	const struct hs_jx *e;
	bool outer = false;
	uint32_t n;

	if (!j->scl.ok || !j->vm_ok || !max)
		return 0;
	nm = nm_get(h, j, b);
	if (!nm)
		return 0;
	j->jit_frames++;
	/* a hit answers as the decoding below would: an expansion of n
	 * scopes is made for any max >= n (os_hs_nm_expand gives none when
	 * they do not fit), the compiled method alone is kept only when found
	 * with room for every scope */
	e = jx_get(j, nm, pc, exact);
	if (e && e->n <= max) {
		*jxi = (uint32_t)(e - j->jx);
		memcpy(out, j->jxw + e->off, e->n * sizeof(*out));
		j->jx_hits++;
		j->jit_outer += e->outer;
		j->jit_expanded++;
		j->jit_inlined += e->n - 1;
		return e->n;
	}
	/* an interrupted pc between safepoints: without -XX:+DebugNonSafepoints
	 * the nearest PcDesc may lie in another inlined method */
	if (exact || (j->info.flags & OS_JVM_F_NONSAFEPOINT_DEBUG))
		n = os_hs_nm_expand(nm, pc, exact, m, bci,
				    max < OS_HS_SCOPE_DEPTH ? max : OS_HS_SCOPE_DEPTH);
	else
		n = 0;
	if (!n) { /* the compiled method itself is certain */
		m[0] = nm->method;
		bci[0] = -2; /* where in it is not known */
		n = 1;
		outer = true;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint64_t base = OS_FRAME_METHOD | m[i];

		if ((m[i] & ~OS_HS_WORD_MASK) != 0)
			return 0;
		hs_name_method(h, j, base);
		if (!hs_name_known(j, base))
			return 0;
		out[i] = hs_line_word(h, j, m[i], bci[i]);
		hs_name_method(h, j, out[i]);
		if (!hs_name_known(j, out[i]))
			out[i] = base;
	}
	j->jit_outer += outer;
	j->jit_expanded++;
	j->jit_inlined += n - 1;
	if (!outer || max >= OS_HS_SCOPE_DEPTH)
		*jxi = jx_put(j, nm, pc, exact, out, n, outer);
	return n;
}

uint32_t hs_jit_expand(struct hotspot *h, struct hs_jvm *j, const struct os_hsf_blob *b,
		    uint64_t pc, bool exact, uint64_t *out, uint32_t max)
{
	uint32_t jxi;

	return jit_expand(h, j, b, pc, exact, out, max, &jxi);
}

/* The memo slot of raw frame word w (NULL: no memo, out of memory). */
static struct hs_fx *fx_slot(struct hs_jvm *j, uint64_t w)
{
	if (!j->fx && !(j->fx = calloc(HS_FX_SLOTS, sizeof(*j->fx))))
		return NULL;
	return &j->fx[os_hash64(w) & (HS_FX_SLOTS - 1)];
}

/* A method word of an allocation path as hs_canon_word makes it, through
 * the memo: kept once its canonical word is named (a name not readable yet
 * is tried again next time); a hit counts its line as the call would. */
static uint64_t fx_method(struct hotspot *h, struct hs_jvm *j, uint64_t w, bool *named)
{
	struct hs_fx *f = fx_slot(j, w);
	uint64_t lf = j->line_frames, ln = j->line_none, c;

	if (f && f->raw == w && f->kind == HS_FX_METHOD) {
		j->fx_hits++;
		j->line_frames += f->line == 1;
		j->line_none += f->line == 2;
		return f->val;
	}
	j->fx_misses++;
	c = hs_canon_word(h, j, w);
	if (!hs_name_known(j, c)) {
		*named = false;
		return c;
	}
	if (f && w) {
		f->raw = w;
		f->val = c;
		f->kind = HS_FX_METHOD;
		f->line = j->line_frames != lf ? 1 : j->line_none != ln ? 2 : 0;
	}
	return c;
}

/* A compiled pc (a return address) of an allocation path expanded, through
 * the memo: valid while the code epoch and the jx cache stay; a hit counts
 * as a hit of hs_jit_expand's own cache. */
static uint32_t fx_pc(struct hotspot *h, struct hs_jvm *j, struct hs_walk *w, uint64_t pc,
		      uint64_t *out, uint32_t max)
{
	struct hs_fx *f = fx_slot(j, pc);
	struct os_hsf_blob b;
	uint32_t e = 0, jxi = UINT32_MAX;

	if (f && f->raw == pc && f->kind == HS_FX_PC && f->epoch == j->code_epoch &&
	    f->gen == j->jx_gen && f->val < j->njx && j->jx[f->val].n <= max) {
		const struct hs_jx *x = &j->jx[f->val];

		memcpy(out, j->jxw + x->off, x->n * sizeof(*out));
		j->fx_hits++;
		j->jit_frames++;
		j->jx_hits++;
		j->jit_outer += x->outer;
		j->jit_expanded++;
		j->jit_inlined += x->n - 1;
		return x->n;
	}
	j->fx_misses++;
	if (hs_walk_find(w, pc, &b))
		e = jit_expand(h, j, &b, pc, true, out, max, &jxi);
	if (f && e && jxi != UINT32_MAX && pc) {
		f->raw = pc;
		f->val = jxi;
		f->kind = HS_FX_PC;
		f->epoch = j->code_epoch;
		f->gen = j->jx_gen;
	}
	return e;
}

/* An allocation path from the preload (its compiled frames' pcs are return
 * addresses) with compiled frames expanded, into out. Returns its length;
 * *named: every method word in out is named already. */
uint32_t hs_expand_path(struct hotspot *h, struct hs_jvm *j, const uint64_t *in, uint32_t n,
		     uint64_t *out, uint32_t max, bool *named)
{
	struct hs_walk w = { h, j };
	uint32_t k = 0;

	/* the words of compiled frames' expansions are named (hs_jit_expand) */
	*named = true;
	if (!j->frames.ok || !j->scl.ok || !j->vm_ok) {
		*named = false;
		n = n < max ? n : max;
		for (uint32_t i = 0; i < n; i++)
			out[i] = hs_canon_word(h, j, in[i]);
		return n;
	}
	hs_blobs_maybe_flush(j, os_now_ns());
	for (uint32_t i = 0; i < n && k < max; i++) {
		uint32_t e = 0;

		if (OS_FRAME_IS_METHOD(in[i])) {
			out[k++] = fx_method(h, j, in[i], named);
			continue;
		}
		if (os_hsf_in_code(&j->frames, in[i]) && !os_hsf_in_interp(&j->frames, in[i]))
			e = fx_pc(h, j, &w, in[i], out + k, max - k);
		if (e)
			k += e;
		else
			out[k++] = in[i];
	}
	return k;
}
