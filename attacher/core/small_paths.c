/* small_paths.c - estimated allocation paths of native blocks below
 * --min-size (docs/NATIVE.md "Small blocks").
 *
 * The malloc hooks sample blocks below --min-size by bytes: a block of s
 * bytes is seen, with its allocation path, with probability
 * p = 1 - exp(-s / mean), and stands for 1 / p blocks of its site
 * (attrib.c born). A heap sample that no tracked block holds is held by the
 * holder context of its address space (path OS_SMALL_WORD); here it is
 * shared out to the sites of the sampled small blocks, as the Java
 * estimator shares a class's samples (runtimes/hotspot/hotspot_paths.c):
 *
 * - per site k: H_k = est_samples - samples, the Horvitz-Thompson estimate
 *   of the samples that its blocks NOT seen got (a sampled block hit by a
 *   sample of weight w stands for w - 1 unseen siblings' hits), and B_k =
 *   est_bytes - bytes, the estimated bytes of its unseen blocks;
 * - shares q_k = r H_k / sum H + (1 - r) B_k / sum B, r = m / (m + 2) with
 *   m the samples on sampled small blocks: access heat where there is
 *   evidence of it, allocation volume where there is little;
 * - per access path a of a held sample: the same mix of the sites' H_k,a
 *   on that path and q_k (the code that reads a block tells where it came
 *   from).
 *
 * Before that, a held sample votes at once (while the blocks are alive)
 * for the sites of the nearest live sampled small blocks below and above
 * its address, within --small-sample bytes, by inverse distance: blocks
 * that one site allocates one after the other lie side by side in the
 * heap, so a neighbour's site is the likely site of the block sampled.
 * Votes are given as they are; only the samples without a neighbour are
 * shared by the q mix above.
 *
 * A site's figure is its exact samples plus its estimated share
 * (os_ctx.path_est, OS_PATH_SITE); the holder keeps what could not be
 * given (no sampled small block in its address space: OS_PATH_CLASS).
 *
 * Variances (os_ctx.path_var), as the Java estimator's: the exact samples'
 * time weights; the votes a site got, a thinned stream of the held
 * samples (the neighbour rule taken as right); the rest's share
 * (os_share_var, m counted as the samples its weights are worth). */
#include "attacher/core/attrib.h"
#include "common/grow.h"

#include <stdlib.h>
#include <string.h>

#define SP_PRIOR 2.0    /* the allocation shares weigh as much as this many samples */
#define SP_ACC_MIN 0.05 /* smaller shares of an access path: context level only */

uint32_t os_small_holder(struct os_attrib *a, uint32_t asid)
{
	uint64_t w = OS_SMALL_WORD;
	uint32_t node = os_attrib_path(a, asid, &w, 1);

	return node == OS_CCT_NONE ? OS_NONE : os_attrib_context(a, asid, node);
}

struct nb {
	struct os_attrib *a;
	uint64_t addr;
	uint64_t below_end, above_start;
	uint32_t below, above;
};

static void nb_visit(uint64_t start, uint64_t end, uint64_t val, void *arg)
{
	struct nb *n = arg;
	uint32_t ci = os_val_ctx(val);

	if (ci >= n->a->nctx || !n->a->ctx[ci].small_seen || os_val_wq(val) == OS_W_ONE)
		return; /* not a sampled small block */
	if (n->a->ctx[ci].quiet)
		return; /* a JIT compiler thread's: no recipient (os_small_estimate) */
	if (end <= n->addr && (n->below == OS_NONE || end > n->below_end)) {
		n->below = ci;
		n->below_end = end;
	} else if (start > n->addr && (n->above == OS_NONE || start < n->above_start)) {
		n->above = ci;
		n->above_start = start;
	}
}

static void add_vote(struct os_attrib *a, uint32_t site, uint32_t node, double v)
{
	uint64_t key = (uint64_t)site << 32 | node, *slot;

	if (v <= 0)
		return;
	slot = os_hmap_ref(&a->small_vote_map, key, UINT64_MAX);
	if (!slot)
		return;
	if (*slot == UINT64_MAX) {
		struct os_small_vote *g = os_grow32(a->small_votes, &a->small_votes_cap,
						    (size_t)a->nsmall_votes + 1, sizeof(*g), 64,
						    UINT32_MAX);

		if (!g) {
			os_hmap_del(&a->small_vote_map, key);
			return;
		}
		a->small_votes = g;
		a->small_votes[a->nsmall_votes] =
			(struct os_small_vote){ .site = site, .node = node, .v = 0 };
		*slot = a->nsmall_votes++;
	}
	a->small_votes[*slot].v += v;
	a->small_voted += v;
}

void os_small_vote(struct os_attrib *a, struct os_aspace *as, uint64_t addr, uint32_t node)
{
	uint64_t w = a->small_sample, lo = addr > w ? addr - w : 0;
	struct nb n = { .a = a, .addr = addr, .below = OS_NONE, .above = OS_NONE };
	double db, da, t = os_attrib_tw(a); /* the sample's time weight */

	if (!as->objects)
		return;
	os_iv_foreach(as->objects, lo, addr + w, nb_visit, &n);
	if (n.below == OS_NONE && n.above == OS_NONE)
		return;
	if (n.above == OS_NONE || n.below == n.above) {
		add_vote(a, n.below == OS_NONE ? n.above : n.below, node, t);
		return;
	}
	if (n.below == OS_NONE) {
		add_vote(a, n.above, node, t);
		return;
	}
	db = (double)(addr - n.below_end) + 1;
	da = (double)(n.above_start - addr) + 1;
	add_vote(a, n.below, node, t * da / (da + db));
	add_vote(a, n.above, node, t * db / (da + db));
}

static bool is_holder(const struct os_attrib *a, const struct os_ctx *x)
{
	uint64_t fr[2];
	uint32_t asid;

	return os_attrib_unpath(a, x->node, fr, 2, &asid) == 1 && fr[0] == OS_SMALL_WORD;
}

static double pos(double d)
{
	return d > 0 ? d : 0;
}

/* Gives share `amt` of held access path `node` to site ci. */
static void give_acc(struct os_attrib *a, uint32_t ci, uint32_t node, double amt)
{
	uint64_t idx;
	uint32_t ai;

	if (os_hmap_get(&a->acc_map, (uint64_t)ci << 32 | node, &idx))
		ai = (uint32_t)idx;
	else if (amt < SP_ACC_MIN || (ai = os_attrib_acc(a, ci, node)) == OS_NONE)
		return;
	a->acc[ai].path_est += amt;
}

/* Votes of held samples of address space asid at access node (OS_NONE:
 * every node), and of site ci there (OS_NONE: every site). */
static double votes(const struct os_attrib *a, uint32_t asid, uint32_t site, uint32_t node)
{
	double v = 0;

	for (uint32_t i = 0; i < a->nsmall_votes; i++) {
		const struct os_small_vote *x = &a->small_votes[i];

		if (a->ctx[x->site].asid == asid && (site == OS_NONE || x->site == site) &&
		    (node == OS_NONE || x->node == node))
			v += x->v;
	}
	return v;
}

/* One holder: its sites S[0..n), their shares q, its samples shared. */
static void share(struct os_attrib *a, uint32_t hd, const uint32_t *S, uint32_t n, double *q,
		  double *h)
{
	double sh = 0, sb = 0, m = 0, r, U = a->ctx[hd].tsamples, with_path = 0;
	double V = 0, VN, rest, ev = 0, ev_sq = 0, Qh = a->ctx[hd].tw_sq, Q1, alpha;
	uint32_t asid = a->ctx[hd].asid;
	uint64_t seen = 0;
	double *dist = h + n;

	for (uint32_t k = 0; k < n; k++) {
		const struct os_ctx *x = &a->ctx[S[k]];

		sh += pos(x->est_samples - x->tsamples);
		sb += pos(x->est_bytes - (double)x->bytes);
		m += (double)x->samples;
		ev += x->est_samples;
		ev_sq += x->est_sq;
		seen += x->small_seen;
	}
	m = os_evidence_n(m, ev, ev_sq);
	for (uint32_t k = 0; k < n; k++) {
		struct os_ctx *x = &a->ctx[S[k]];

		x->path_kind = OS_PATH_SITE;
		x->class_seen = seen;
		x->class_sites = n;
		x->path_var = x->tw_sq;
		x->evidence = sh > 0 ? m : 0;
	}
	a->ctx[hd].path_kind = OS_PATH_CLASS;
	a->ctx[hd].class_seen = seen;
	a->ctx[hd].class_sites = n;
	a->ctx[hd].path_var = Qh;
	a->ctx[hd].evidence = sh > 0 ? m : 0;
	if (U <= 0)
		return;
	if (!n || (sh <= 0 && sb <= 0)) {
		a->small_no_evidence += U;
		return;
	}
	r = sh > 0 ? m / (m + SP_PRIOR) : 0;
	alpha = (sh > 0 ? m : 0) + SP_PRIOR;
	for (uint32_t k = 0; k < n; k++) {
		const struct os_ctx *x = &a->ctx[S[k]];
		double hk = pos(x->est_samples - x->tsamples);
		double bk = pos(x->est_bytes - (double)x->bytes);

		q[k] = (sh > 0 ? r * hk / sh : 0) +
		       (sb > 0 ? (1 - r) * bk / sb : (sh > 0 ? (1 - r) * hk / sh : 0));
		dist[k] = votes(a, asid, S[k], OS_NONE); /* votes, every node */
		V += dist[k];
	}
	VN = votes(a, asid, OS_NONE, OS_CCT_NONE);
	for (uint32_t ai = 0; ai < a->nacc; ai++) {
		uint32_t node;
		double s, sum = 0, ma = 0, ra, va;
		uint64_t idx;

		if (a->acc[ai].ctx != hd)
			continue;
		node = a->acc[ai].node;
		s = a->acc[ai].tsamples;
		with_path += s;
		va = votes(a, asid, OS_NONE, node);
		rest = pos(s - va);
		for (uint32_t k = 0; k < n; k++) {
			h[k] = 0;
			if (os_hmap_get(&a->acc_map, (uint64_t)S[k] << 32 | node, &idx)) {
				const struct os_acc *y = &a->acc[idx];
				double u = y->est_samples - y->tsamples;

				if (u > 0) {
					h[k] = u;
					sum += u;
					ma += (double)y->samples;
				}
			}
		}
		ra = sum > 0 ? ma / (ma + SP_PRIOR) : 0;
		for (uint32_t k = 0; k < n; k++) {
			double amt = rest * ((sum > 0 ? ra * h[k] / sum : 0) + (1 - ra) * q[k]);

			dist[k] += amt;
			amt += votes(a, asid, S[k], node);
			if (amt > 0)
				give_acc(a, S[k], node, amt); /* may move a->acc */
		}
		a->acc[ai].path_est = -s;
	}
	rest = pos(U - with_path - VN);
	Q1 = Qh / U; /* a held sample's mean squared time weight */
	for (uint32_t k = 0; k < n; k++) {
		double vk = votes(a, asid, S[k], OS_NONE), mixed = dist[k] - vk + rest * q[k];

		a->ctx[S[k]].path_est += dist[k] + rest * q[k];
		a->ctx[S[k]].path_var += Q1 * vk;
		if (U - V > 0)
			a->ctx[S[k]].path_var +=
				os_share_var(U - V, Q1 * (U - V), mixed / (U - V), alpha);
	}
	a->ctx[hd].path_est = -U;
	a->ctx[hd].path_var = 0;
	a->small_given += U;
}

void os_small_estimate(struct os_attrib *a)
{
	uint32_t *S = NULL, nh = 0;
	double *q = NULL, *h = NULL, est = 0;
	bool any = false;

	if (!a->small_sample)
		return;
	a->small_given = a->small_no_evidence = 0;
	for (uint32_t i = 0; i < a->nctx; i++)
		if (a->ctx[i].small_seen || is_holder(a, &a->ctx[i])) {
			a->ctx[i].path_kind = OS_PATH_NONE;
			a->ctx[i].path_est = 0;
			a->ctx[i].path_var = 0;
			a->ctx[i].evidence = 0;
			any = true;
		}
	if (!any)
		return;
	for (uint32_t i = 0; i < a->nacc; i++)
		if (a->ctx[a->acc[i].ctx].small_seen || is_holder(a, &a->ctx[a->acc[i].ctx]))
			a->acc[i].path_est = 0;
	S = malloc(((size_t)a->nctx + 1) * sizeof(*S));
	q = malloc(((size_t)a->nctx + 1) * sizeof(*q));
	h = malloc(((size_t)a->nctx + 1) * 2 * sizeof(*h));
	if (!S || !q || !h)
		goto out;
	for (uint32_t hd = 0; hd < a->nctx; hd++) {
		uint32_t n = 0;

		if (!is_holder(a, &a->ctx[hd]))
			continue;
		nh++;
		/* the JIT compiler threads' blocks (os_ctx.quiet) take no held
		 * sample: those are other threads' (the compilers' own are not
		 * attributed), and the compilers' memory is read by them */
		for (uint32_t i = 0; i < a->nctx; i++)
			if (a->ctx[i].small_seen && !a->ctx[i].quiet &&
			    a->ctx[i].asid == a->ctx[hd].asid)
				S[n++] = i;
		share(a, hd, S, n, q, h);
	}
	/* sites of address spaces where nothing was held: exact samples */
	for (uint32_t i = 0; i < a->nctx; i++)
		if (a->ctx[i].small_seen && a->ctx[i].path_kind == OS_PATH_NONE) {
			a->ctx[i].path_kind = OS_PATH_SITE;
			a->ctx[i].path_var = a->ctx[i].tw_sq;
		}
	/* each sample counts once: the estimates are the figures' sum */
	for (uint32_t i = 0; i < a->nctx; i++)
		est += a->ctx[i].path_kind == OS_PATH_NONE ? a->ctx[i].est_samples
							   : a->ctx[i].tsamples + a->ctx[i].path_est;
	a->est_attributed = est;
	/* no Java sample: exactly 0, not a rounding error below it (a profile
	 * with a negative estimate is refused as corrupt) */
	est -= a->tw_attributed - a->tw_java_attributed; /* the native samples */
	a->est_java_attributed = a->c.samples_java_attributed && est > 0 ? est : 0;
	a->weighted = true;
	(void)nh;
out:
	free(S);
	free(q);
	free(h);
}
