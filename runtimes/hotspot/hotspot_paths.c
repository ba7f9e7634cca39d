/* hotspot_paths.c - estimated allocation paths (docs/JAVA.md
 * "Samples on objects not seen at allocation").
 *
 * A Java-heap sample on an object that was not seen at its allocation
 * (smaller than --min-size, not sampled by hybrid mode's TLABs, born before
 * an attach) has its class, read from the object's header at the sample,
 * and is held by the class-only context of that class (hotspot_samples.c).
 * When the profile is built, those samples are shared out to the class's
 * sites, the contexts (allocation path, class) whose objects were seen
 * allocated, each sample once:
 *
 * - per site k, the evidence of the objects seen there: H_k, the
 *   Horvitz-Thompson estimate of the samples that its objects NOT seen got
 *   (est_samples - samples: each seen object of weight w stands for w - 1
 *   unseen ones), and B_k, the estimated bytes of its unseen objects;
 * - class shares q_k = r H_k / sum H + (1 - r) B_k / sum B, r = m / (m + 2)
 *   with m the samples on the class's weighted seen objects: the access
 *   heat of the sites where there is such evidence, their allocation
 *   volume where there is little (m / (m + HS_PRIOR));
 * - per access path a of a held sample: q_k|a, the same mix of the sites'
 *   H_k,a on that path (weight m_a / (m_a + HS_PRIOR)) and q_k: the code that
 *   reads an object tells much about where it came from;
 * - launch mode: every held sample is shared out (all untracked objects
 *   come from sites that allocate during the run); attach mode: at most
 *   sum H of them (what the seen objects say their unseen siblings got),
 *   the rest stays with the class ("allocated before attach").
 *
 * A site's figure is then its exact samples plus its estimated share
 * (os_ctx.path_est); a class-only context keeps what it could not give.
 *
 * m counts as the samples its weights are worth (os_evidence_n): a single
 * sample on an object of weight 1,000 is one sample of evidence, not a
 * thousand, so it cannot decide the split alone. Each figure carries its
 * variance (os_ctx.path_var): its exact samples' (time weights), and its
 * share's (os_share_var: the held samples' count and the split's own
 * uncertainty, a Dirichlet of weight m + HS_PRIOR around q). With no
 * evidence (m = 0) the split is the allocation volume's and its interval
 * nearly [0, 1] of the held samples: os_ctx.evidence says so. */
#include "runtimes/hotspot/hotspot_int.h"
#include <inttypes.h>
#include <math.h>
#include "common/clock.h"

#define HS_ACC_MIN 0.05 /* smaller shares of an access path: context level only */
#define HS_PRIOR 2.0    /* the allocation shares weigh as much as this many samples */
/* Focus (hs_focus_pick, docs/JAVA.md "Focus"): a class whose split has
 * less evidence than HS_FOCUS_START samples, mostly estimated, with at
 * least HS_FOCUS_HOT of the Java samples (the top answer, not any class
 * of a program of many: smaller TLABs cost every allocation's refills),
 * is focused until its evidence reaches HS_FOCUS_DONE or HS_FOCUS_MAX_NS
 * have passed; no focus begins after 4 x HS_FOCUS_MAX_NS. */
#define HS_FOCUS_START 20.0
#define HS_FOCUS_DONE 60.0
#define HS_FOCUS_HOT 0.3
#define HS_FOCUS_MAX_NS 30000000000ULL

struct pe_grp {
	uint32_t asid;
	uint64_t klass;
	uint32_t nsites, off;
	uint32_t holder[2];  /* launch (HS_WORD_SMALL), attach (HS_WORD_BEFORE); OS_NONE */
};

struct pe_state {
	struct hotspot *h;
	struct os_attrib *a;
	struct pe_grp *g;
	uint32_t ng, gcap;
	uint32_t *sites;      /* context indices, by group */
	uint32_t *acc_head;   /* per context: first access entry + 1 */
	uint32_t *acc_next;   /* per access entry: next of its context + 1 */
	double *q, *h_a, *dist;
	double alpha;         /* the class's evidence plus HS_PRIOR (os_share_var) */
	uint64_t cand_k;      /* the class a focus would help most (hs_focus_pick) */
	uint32_t cand_asid;
	double cand_fig;
	bool changed;
};

static double unseen_samples(const struct os_ctx *x)
{
	double d = x->est_samples - x->tsamples;

	return d > 0 ? d : 0;
}

static double unseen_bytes(const struct os_ctx *x)
{
	double f;

	if (x->est_allocations <= 0 || (double)x->seen >= x->est_allocations)
		return 0;
	f = 1.0 - (double)x->seen / x->est_allocations;
	return x->est_bytes * f;
}

/* 0: a site; 1 + index into pe_grp.holder: a class-only context. */
static int holder_kind(const struct os_attrib *a, uint32_t node)
{
	uint64_t fr[3];
	uint32_t asid, n = os_attrib_unpath(a, node, fr, 3, &asid);

	if (n == 2 && fr[1] == HS_WORD_SMALL)
		return 1;
	if (n == 2 && fr[1] == HS_WORD_BEFORE)
		return 2;
	return 0;
}

/* Groups the contexts of the JVMs with lookups by (asid, class). */
static int pe_group(struct pe_state *st, uint32_t *grp_of)
{
	struct hotspot *h = st->h;
	struct os_attrib *a = st->a;
	struct os_hmap gm;
	uint32_t *fill;

	os_hmap_init(&gm);
	for (uint32_t i = 0; i < a->nctx; i++) {
		struct os_ctx *x = &a->ctx[i];
		struct hs_jvm *j = hs_jvm_find(h, x->asid);
		uint64_t k, gi, key;
		int kind;

		grp_of[i] = OS_NONE;
		if (!hs_lookups_on(h, j) || !os_hmap_get(&h->node2klass, x->node, &k))
			continue;
		key = (k & OS_HS_WORD_MASK) ^ (uint64_t)x->asid << 48;
		if (!os_hmap_get(&gm, key, &gi)) {
			struct pe_grp *n = os_grow32(st->g, &st->gcap, (size_t)st->ng + 1,
						     sizeof(*n), 64, UINT32_MAX);

			if (!n || os_hmap_put(&gm, key, st->ng) < 0) {
				os_hmap_destroy(&gm);
				return -ENOMEM;
			}
			st->g = n;
			gi = st->ng++;
			st->g[gi] = (struct pe_grp){ .asid = x->asid, .klass = k,
						     .holder = { OS_NONE, OS_NONE } };
		}
		if (st->g[gi].asid != x->asid) /* a key collision: left as it is */
			continue;
		kind = holder_kind(a, x->node);
		if (kind) {
			st->g[gi].holder[kind - 1] = i;
			continue;
		}
		grp_of[i] = (uint32_t)gi;
		st->g[gi].nsites++;
	}
	os_hmap_destroy(&gm);
	st->sites = malloc(((size_t)a->nctx + 1) * sizeof(*st->sites));
	fill = calloc((size_t)st->ng + 1, sizeof(*fill));
	if (!st->sites || !fill) {
		free(fill);
		return -ENOMEM;
	}
	for (uint32_t gi = 0, off = 0; gi < st->ng; gi++) {
		st->g[gi].off = off;
		off += st->g[gi].nsites;
	}
	for (uint32_t i = 0; i < a->nctx; i++)
		if (grp_of[i] != OS_NONE)
			st->sites[st->g[grp_of[i]].off + fill[grp_of[i]]++] = i;
	free(fill);
	return 0;
}

/* Gives share `amt` of held access path `node` to site ci. */
static void give_acc(struct pe_state *st, uint32_t ci, uint32_t node, double amt)
{
	uint64_t key = (uint64_t)ci << 32 | node, idx;
	uint32_t ai;

	if (os_hmap_get(&st->a->acc_map, key, &idx))
		ai = (uint32_t)idx;
	else if (amt < HS_ACC_MIN || (ai = os_attrib_acc(st->a, ci, node)) == OS_NONE)
		return; /* counted at the context level only */
	st->a->acc[ai].path_est += amt;
}

/* Shares the samples of class-only context hd (attach: at most cap). */
static void pe_share(struct pe_state *st, const struct pe_grp *g, uint32_t hd, double cap)
{
	struct os_attrib *a = st->a;
	struct hs_jvm *j = hs_jvm_find(st->h, g->asid);
	const uint32_t *S = st->sites + g->off;
	double U = a->ctx[hd].tsamples, D = U < cap ? U : cap, f, with_path = 0;

	if (U <= 0 || D <= 0)
		return;
	f = D / U;
	memset(st->dist, 0, g->nsites * sizeof(*st->dist));
	for (uint32_t ai = st->acc_head[hd]; ai; ai = st->acc_next[ai - 1]) {
		/* give_acc may move a->acc: no pointer into it is kept */
		uint32_t node = a->acc[ai - 1].node;
		double s = a->acc[ai - 1].tsamples, sum = 0, m = 0, r;
		uint64_t idx;

		with_path += s;
		for (uint32_t k = 0; k < g->nsites; k++) {
			st->h_a[k] = 0;
			if (os_hmap_get(&a->acc_map, (uint64_t)S[k] << 32 | node, &idx)) {
				const struct os_acc *y = &a->acc[idx];
				double u = y->est_samples - y->tsamples;

				if (u > 0) {
					st->h_a[k] = u;
					sum += u;
					m += (double)y->samples;
				}
			}
		}
		r = sum > 0 ? m / (m + HS_PRIOR) : 0;
		for (uint32_t k = 0; k < g->nsites; k++) {
			double qk = (sum > 0 ? r * st->h_a[k] / sum : 0) + (1 - r) * st->q[k];
			double amt = s * f * qk;

			if (amt <= 0)
				continue;
			st->dist[k] += amt;
			give_acc(st, S[k], node, amt);
		}
		a->acc[ai - 1].path_est = -s * f;
	}
	for (uint32_t k = 0; k < g->nsites; k++) {
		double amt = st->dist[k] + (U - with_path) * f * st->q[k];

		a->ctx[S[k]].path_est += amt;
		a->ctx[S[k]].path_var +=
			os_share_var(D, f * a->ctx[hd].tw_sq, amt / D, st->alpha);
	}
	a->ctx[hd].path_est = -D;
	a->ctx[hd].path_var = (1 - f) * a->ctx[hd].tw_sq;
	st->changed = true;
	if (j) {
		j->pe_shared += D;
		j->pe_classes_shared++;
	}
}

/* Whether class g (evidence m, held samples held) is where a focus would
 * help: a hybrid JVM whose TLABs are larger than OS_HS_FOCUS_TLAB, sites
 * that cannot be told apart for want of evidence, most samples estimated,
 * a hot class. The hottest such class is the candidate. */
static void pe_focus_candidate(struct pe_state *st, const struct pe_grp *g,
			       const struct hs_jvm *j, double m, double held)
{
	const struct os_attrib *a = st->a;
	double exact = 0, fig;

	if (g->klass == st->h->focus.klass && g->asid == st->h->focus.asid)
		st->h->focus.ev = m;
	if (!j || !j->have_info || j->info.mode != OS_JVM_MODE_HYBRID ||
	    !(j->info.flags & OS_JVM_F_TLAB_DITHER) || j->info.tlab_bytes <= OS_HS_FOCUS_TLAB ||
	    g->nsites < 2 || m >= HS_FOCUS_START)
		return;
	for (uint32_t k = 0; k < g->nsites; k++)
		exact += a->ctx[st->sites[g->off + k]].tsamples;
	fig = exact + held;
	if (held <= exact || fig < HS_FOCUS_HOT * a->tw_java_attributed || fig <= st->cand_fig)
		return;
	st->cand_fig = fig;
	st->cand_k = g->klass & OS_HS_WORD_MASK;
	st->cand_asid = g->asid;
}

/* One class: the shares q of its sites, then its held samples shared. */
static void pe_class(struct pe_state *st, const struct pe_grp *g)
{
	struct os_attrib *a = st->a;
	const uint32_t *S = st->sites + g->off;
	double sh = 0, sb = 0, m = 0, r, held = 0, ev = 0, ev_sq = 0;
	uint64_t seen = 0;
	uint32_t nseen = 0;
	struct hs_jvm *j = hs_jvm_find(st->h, g->asid);

	for (uint32_t k = 0; k < g->nsites; k++) {
		const struct os_ctx *x = &a->ctx[S[k]];
		double u = unseen_samples(x);

		sh += u;
		sb += unseen_bytes(x);
		if (u > 0) {
			m += (double)x->samples;
			ev += x->est_samples;
			ev_sq += x->est_sq;
		}
		seen += x->seen;
		nseen += x->seen > 0;
	}
	for (int i = 0; i < 2; i++)
		if (g->holder[i] != OS_NONE) {
			held += a->ctx[g->holder[i]].tsamples;
			if (!g->nsites) { /* no site seen: its path is not known */
				a->ctx[g->holder[i]].path_kind = OS_PATH_CLASS;
				a->ctx[g->holder[i]].path_var = a->ctx[g->holder[i]].tw_sq;
			}
		}
	if (j && held > 0) {
		j->pe_held += held;
		j->pe_classes++;
	}
	if (!g->nsites)
		return;
	/* a JVM without weighted objects keeps plain counts where nothing is held */
	if ((held <= 0 || (sh <= 0 && sb <= 0)) && !(j && j->small))
		return;
	m = sh > 0 ? os_evidence_n(m, ev, ev_sq) : 0;
	r = m / (m + HS_PRIOR);
	st->alpha = m + HS_PRIOR;
	pe_focus_candidate(st, g, j, m, held);
	for (uint32_t k = 0; k < g->nsites; k++) {
		const struct os_ctx *x = &a->ctx[S[k]];

		st->q[k] = (sh > 0 ? r * unseen_samples(x) / sh : 0) +
			   (sb > 0 ? (1 - r) * unseen_bytes(x) / sb
				   : (sh > 0 ? (1 - r) * unseen_samples(x) / sh : 0));
	}
	for (uint32_t k = 0; k < g->nsites; k++) {
		struct os_ctx *x = &a->ctx[S[k]];

		x->path_kind = OS_PATH_SITE;
		x->class_seen = seen;
		x->class_sites = nseen;
		x->path_var = x->tw_sq;
		x->evidence = m;
	}
	for (int i = 0; i < 2; i++) {
		uint32_t hd = g->holder[i];

		if (hd == OS_NONE)
			continue;
		a->ctx[hd].path_kind = OS_PATH_CLASS;
		a->ctx[hd].class_seen = seen;
		a->ctx[hd].class_sites = nseen;
		a->ctx[hd].path_var = a->ctx[hd].tw_sq;
		a->ctx[hd].evidence = m;
		if (sh > 0 || sb > 0)
			pe_share(st, g, hd, i == 0 ? INFINITY : sh);
	}
	st->changed = true;
}

void hs_paths_estimate(struct hotspot *h)
{
	struct os_attrib *a = h->a;
	struct pe_state st = { .h = h, .a = a };
	uint32_t *grp_of = NULL, maxs = 0;
	double est = 0;

	if (!a) /* an adapter made without attribution (unit tests) */
		return;

	for (uint32_t i = 0; i < a->nctx; i++) { /* again from the start */
		a->ctx[i].path_kind = OS_PATH_NONE;
		a->ctx[i].path_est = 0;
		a->ctx[i].path_var = 0;
		a->ctx[i].evidence = 0;
		a->ctx[i].class_seen = 0;
		a->ctx[i].class_sites = 0;
	}
	for (uint32_t i = 0; i < a->nacc; i++)
		a->acc[i].path_est = 0;
	h->focus_cand = 0;
	for (uint32_t i = 0; i < h->njvms; i++) {
		h->jvms[i]->pe_held = h->jvms[i]->pe_shared = 0;
		h->jvms[i]->pe_classes = h->jvms[i]->pe_classes_shared = 0;
	}
	grp_of = malloc(((size_t)a->nctx + 1) * sizeof(*grp_of));
	st.acc_head = calloc((size_t)a->nctx + 1, sizeof(*st.acc_head));
	st.acc_next = calloc((size_t)a->nacc + 1, sizeof(*st.acc_next));
	if (!grp_of || !st.acc_head || !st.acc_next || pe_group(&st, grp_of) < 0)
		goto out;
	for (uint32_t i = a->nacc; i-- > 0;) {
		st.acc_next[i] = st.acc_head[a->acc[i].ctx];
		st.acc_head[a->acc[i].ctx] = i + 1;
	}
	for (uint32_t gi = 0; gi < st.ng; gi++)
		if (st.g[gi].nsites > maxs)
			maxs = st.g[gi].nsites;
	st.q = calloc((size_t)maxs + 1, sizeof(*st.q));
	st.h_a = calloc((size_t)maxs + 1, sizeof(*st.h_a));
	st.dist = calloc((size_t)maxs + 1, sizeof(*st.dist));
	if (!st.q || !st.h_a || !st.dist)
		goto out;
	/* new access entries go past the lists built above: not held ones */
	for (uint32_t gi = 0; gi < st.ng; gi++)
		pe_class(&st, &st.g[gi]);
	h->focus_cand = st.cand_k;
	h->focus_cand_asid = st.cand_asid;
	if (!st.changed)
		goto out;
	/* each sample counts once: the profile's estimates are the figures' sum */
	for (uint32_t i = 0; i < a->nctx; i++)
		est += a->ctx[i].path_kind == OS_PATH_NONE ? a->ctx[i].est_samples
							   : a->ctx[i].tsamples + a->ctx[i].path_est;
	a->est_attributed = est;
	a->est_java_attributed =
		est - (a->tw_attributed - a->tw_java_attributed); /* less the native samples */
	a->weighted = true;
out:
	free(grp_of);
	free(st.acc_head);
	free(st.acc_next);
	free(st.g);
	free(st.sites);
	free(st.q);
	free(st.h_a);
	free(st.dist);
}

uint64_t hs_focus_pick(struct hotspot *h, uint64_t now)
{
	struct hs_focus *f = &h->focus;

	if (!f->start)
		f->start = now;
	if (f->klass && (f->ev >= HS_FOCUS_DONE || now - f->since >= HS_FOCUS_MAX_NS)) {
		f->ns += now - f->since;
		f->klass = 0;
	}
	if (!f->klass && h->focus_cand && now - f->start < 4 * HS_FOCUS_MAX_NS) {
		f->klass = h->focus_cand;
		f->asid = h->focus_cand_asid;
		f->since = now;
		f->ev0 = f->ev = 0;
		if (!f->times++) {
			f->first = now;
			f->first_klass = f->klass;
			f->first_asid = f->asid;
		}
	}
	return f->klass;
}

void hs_focus_note(struct hotspot *h, struct os_profile *p)
{
	struct hs_focus *f = &h->focus;
	struct hs_jvm *j = hs_jvm_find(h, f->first_asid);
	const char *name = j ? hs_klass_name(h, j, f->first_klass) : NULL;
	uint64_t ns = f->ns + (f->klass ? os_now_ns() - f->since : 0);
	char note[512];

	if (!f->times)
		return;
	snprintf(note, sizeof(note),
		 "focus: the sites of %s could not be told apart (its samples mostly estimated, "
		 "little evidence): hybrid TLABs of %u bytes instead of %" PRIu64 " for %.1f s "
		 "from %.1f s (%" PRIu32 " time%s), and its objects not thinned, so that more "
		 "were seen at allocation: %" PRIu64 " of %" PRIu64 " objects seen at TLAB "
		 "refills came from focused TLABs (their cost is in the hooks' time); evidence "
		 "at the end %.1f samples",
		 name ? name : "a class", OS_HS_FOCUS_TLAB, j ? j->info.tlab_bytes : 0,
		 (double)ns / 1e9, (double)(f->first - f->start) / 1e9, f->times,
		 f->times == 1 ? "" : "s", f->seen, f->seen_all, f->ev);
	os_profile_add_note(p, note);
}
