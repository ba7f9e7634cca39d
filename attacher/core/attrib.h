/* attrib.h - object-centric attribution: allocation contexts, the live
 * objects of each address space, and access samples charged to them.
 *
 * Allocation and access paths are interned in one calling-context tree;
 * every path ends (outermost) in a marker frame naming its address space,
 * so equal addresses of different process images never mix.
 * Return convention: 0 / -errno.
 */
#ifndef OBJSCOPE_ATTRIB_H
#define OBJSCOPE_ATTRIB_H

#include <stdbool.h>
#include <stdint.h>

#include "runtimes/runtime.h"
#include "attacher/core/tasks.h"
#include "common/cct.h"
#include "common/hashmap.h"
#include "common/profile.h"
#include "common/shm.h"

#define OS_ASID_MARK 0xfffe000000000000ULL /* marker frame: OS_ASID_MARK | asid */

/* The value of an object in an aspace's interval index: its context index
 * in the low 32 bits, its weight above (Horvitz-Thompson: 1 / the
 * probability that the object was seen at all) as fixed point with
 * OS_W_FRAC fraction bits; 0 there means 1.0, so objects of weight 1 (all
 * native objects, exact mode) have val == ci. Whoever moves an object
 * (GC moves, mremap) carries the whole value; whoever needs the context
 * masks with os_val_ctx(). */
#define OS_W_FRAC 12
#define OS_W_ONE (1ULL << OS_W_FRAC)
#define OS_W_MAX 0xffffffffULL /* largest weight: ~1.05e6 */

static inline uint32_t os_val_ctx(uint64_t val)
{
	return (uint32_t)val;
}

/* Weight of val as fixed point (OS_W_ONE == 1.0). */
static inline uint64_t os_val_wq(uint64_t val)
{
	return (val >> 32) ? (val >> 32) : OS_W_ONE;
}

static inline double os_val_weight(uint64_t val)
{
	return (double)os_val_wq(val) / (double)OS_W_ONE;
}

/* wq: fixed point weight, 0 or OS_W_ONE for 1.0, capped at OS_W_MAX. */
static inline uint64_t os_val_make(uint32_t ci, uint64_t wq)
{
	if (wq == OS_W_ONE || !wq)
		return ci;
	return (uint64_t)ci | (wq > OS_W_MAX ? OS_W_MAX : wq) << 32;
}

/* What a collection of a managed heap did to the tracked objects, which the
 * index alone does not tell: where each survivor went (the index then holds
 * it at `to`) and in which generation of the heap it is. Runtime adapters
 * report it through os_attrib_collected once the collection is applied
 * (moves, objects found dead removed); the collector hands it to the
 * analyses (attacher/core/observer.h `collected`). */
enum os_gen {
	OS_GEN_UNKNOWN = 0,
	OS_GEN_YOUNG = 1,
	OS_GEN_OLD = 2,
	OS_GEN_FREE = 3,          /* free heap: what was there died (gen_of only) */
	OS_GEN_OLD_DIRECT = 4,    /* old heap where objects are allocated directly or
				   * arrive by a move (gen_of only): an object first
				   * found there unmoved was born there, not promoted */
};

struct os_obj_move {
	uint64_t from, to;
	uint32_t gen;             /* enum os_gen of `to` */
};

struct os_gc_report {
	uint32_t asid;
	bool no_ages;             /* survivors are not all seen moving (concurrent
				   * collectors: copies by application threads) */
	bool moves_lost;          /* some moves of this collection were not delivered */
	bool gens_known;          /* gen of moves and os_attrib.gen_of are meaningful */
	size_t nmoves;
	const struct os_obj_move *moves;
	/* enum os_gen of an address of the heap now (gens_known), else NULL */
	uint32_t (*gen_of)(const void *arg, uint64_t addr);
	const void *gen_arg;
};

struct os_ctx {
	uint32_t asid;
	uint32_t node;            /* allocation path in the CCT */
	uint64_t allocations, bytes, samples;
	uint64_t metrics[OS_M_COUNT];
	double tsamples;          /* samples, each of its time weight (os_attrib.tw) */
	double tw_sq;             /* the sum of those weights' squares (os_attrib_top_se) */
	/* Estimates (sums of weights; equal to the counts for objects of
	 * weight 1): allocations and bytes (runtime adapters with weighted
	 * objects keep allocations/bytes = these rounded), samples. */
	double est_allocations, est_bytes, est_samples;
	/* The sum over the samples of (object weight x time weight)^2: the
	 * variance of est_samples, each sample a mark of a Poisson stream
	 * (the objects' sampling and the budget's time weights together). */
	double est_sq;
	/* Estimated allocation paths (docs/JAVA.md "Samples on
	 * objects not seen at allocation"): a runtime adapter that knows the
	 * class of objects it did not see allocated gives their samples, held
	 * by a class-only context, to the sites of that class. path_kind
	 * OS_PATH_NONE: samples_est is est_samples (Horvitz-Thompson); else it
	 * is samples + path_est (path_est < 0 for the class-only context: the
	 * part given away). seen: objects seen at allocation; class_seen,
	 * class_sites: the evidence of its class (sampled allocations, sites). */
	uint32_t path_kind;
	double path_est;
	/* The variance of tsamples + path_est (path_kind != OS_PATH_NONE),
	 * set by the estimator (os_ctx_var). evidence: the samples of access
	 * evidence the split of its class rests on (os_evidence_n; 0: the
	 * allocation volume alone). */
	double path_var, evidence;
	uint64_t seen, class_seen;
	uint32_t class_sites;
	/* Native blocks below --min-size sampled by bytes (docs/NATIVE.md):
	 * how many were seen here (each of weight 1 / (1 - exp(-size / mean))) */
	uint64_t small_seen;
	/* the blocks of JIT compiler threads sent without a path (shm.h
	 * os_slot.quiet): never charged a managed-heap sample */
	bool quiet;
};

struct os_acc {
	uint32_t ctx;
	uint32_t node;            /* access path in the CCT */
	uint64_t samples;
	uint64_t metrics[OS_M_COUNT];
	double tsamples;          /* samples, each of its time weight */
	double est_samples;       /* sum of the weights of the objects sampled */
	double path_est;          /* as os_ctx.path_est (its context's path_kind) */
};

struct os_attrib {
	struct os_tasks *tasks;
	struct os_cct cct;
	struct os_hmap node2ctx;   /* alloc path node -> ctx index */
	struct os_ctx *ctx;
	uint32_t nctx, ctxcap;
	struct os_hmap acc_map;    /* ctx << 32 | access node -> acc index */
	struct os_acc *acc;
	uint32_t nacc, acccap;
	struct os_counters c;
	uint64_t quiet_blocks;     /* blocks of JIT compiler threads tracked without a path */
	/* of those, mappings made inside a range another path mapped (a
	 * runtime's reservation: code cache, metaspace), charged to that
	 * range's object instead (attrib.c quiet_commit) */
	uint64_t quiet_commits;
	/* Sample estimates (sums of object weights) of c.samples_attributed /
	 * c.samples_java_attributed; weighted: some object had weight != 1. */
	double est_attributed, est_java_attributed;
	bool weighted;
	/* Time weights (the overhead budget): the sample being
	 * charged stands for tw samples (1 / the sampled share of the interval
	 * it was taken in; 0 is read as 1), so that stretches sampled less
	 * are not under-represented. Every estimate (tsamples, est_samples,
	 * est_*attributed) carries it; the counts stay raw. tw_attributed:
	 * the sum over the attributed samples; time_weighted: some tw != 1
	 * (then os_attrib_time_normalize scales the sums so that they add up
	 * to the attributed samples, and the profile has estimates; tw_scale:
	 * the factor applied so far, which later samples' weights carry too,
	 * so a profile built again is of one scale). */
	double tw, tw_attributed, tw_java_attributed, tw_scale;
	double tw_sq_attributed;   /* sum of the squares of the time weights in tw_attributed */
	bool time_weighted;
	struct os_runtime *rt;     /* runtime adapters (runtime.h os_runtimes_new), NULL: native only */
	uint64_t min_size;         /* --min-size: smaller objects are not tracked */
	uint64_t small_sample;     /* --small-sample: mean bytes (0: off) */
	bool small_hold;           /* hold heap samples outside seen blocks (launch mode) */
	/* Attach mode, a process no runtime adapter knows (native): a heap
	 * sample outside every seen block lies in memory born before the
	 * attach (or a block not seen): charged to the context
	 * of path OS_BEFORE_WORD of its address space, whose bytes are the
	 * sizes of the anonymous mappings that held such samples (each once:
	 * before_maps, asid << 48 ^ mapping start; before_nmaps of them). */
	bool before_attach;
	struct os_hmap before_maps;
	uint64_t before_nmaps, before_samples;
	uint64_t small_seen;       /* byte-sampled small blocks seen, all contexts */
	/* Samples in a native heap that no tracked block holds, with
	 * --small-sample on: held by the holder context of their address
	 * space (path OS_SMALL_WORD) and shared out to the sites of sampled
	 * small blocks by os_small_estimate; what it could give, and what it
	 * could not for want of evidence (no sampled small block there). */
	uint64_t small_held;
	double small_given, small_no_evidence;
	/* Neighbour votes: a held sample goes to the sites of the nearest live
	 * sampled small blocks below and above it (within small_sample bytes),
	 * by inverse distance: allocations of one site lie side by side.
	 * (site << 32 | access node) -> index into small_votes. */
	struct os_hmap small_vote_map;
	struct os_small_vote {
		uint32_t site, node;  /* node: access path, OS_CCT_NONE if none */
		double v;
	} *small_votes;
	uint32_t nsmall_votes, small_votes_cap;
	double small_voted;       /* held samples given by votes (sum of the votes) */
	/* A sample in a managed heap that no tracked object holds: the adapter
	 * may find the object (reading the target) and add it to as->objects
	 * (weight 1); returns its context, or OS_NONE. NULL: not tried. */
	uint32_t (*heap_miss)(void *arg, struct os_aspace *as, uint64_t addr);
	void *heap_miss_arg;
	/* Collections reported by runtime adapters (os_attrib_collected); NULL:
	 * nobody listens. */
	void (*collected)(void *arg, const struct os_gc_report *r);
	void *collected_arg;
};

/* A runtime adapter reports a collection it applied (see os_gc_report). */
static inline void os_attrib_collected(struct os_attrib *a, const struct os_gc_report *r)
{
	if (a->collected)
		a->collected(a->collected_arg, r);
}

/* The time weight of the sample being charged, on the scale of the sums
 * (tw, 0 read as 1, times tw_scale). */
static inline double os_attrib_tw(const struct os_attrib *a)
{
	return (a->tw > 0 ? a->tw : 1) * (a->tw_scale > 0 ? a->tw_scale : 1);
}

/* Scales the time-weighted sums to the count of attributed samples (a
 * sample's weight is then relative: what a stretch sampled in full would
 * have given, at the run's mean rate). Repeatable; before the estimators
 * (os_small_estimate, the runtimes' notes) and the profile's build. */
void os_attrib_time_normalize(struct os_attrib *a);

/* How settled the answer is: the largest standard error of a share among
 * the k contexts with the largest figures (os_ctx_var's figure: the
 * estimates, with estimated paths where the estimators ran), each share
 * the context's figure over their sum, a ratio of sums (linearised: var =
 * (V_i (1 - 2 p_i) + p_i^2 V) / W^2, V the variances, os_ctx_var): so
 * stretches sampled less (time weights above 1), objects seen with a
 * small chance (Horvitz-Thompson weights) and splits of a class's samples
 * that little evidence supports count as the fewer samples they are.
 * With samples of weight 1 it is p (1 - p) / n. *top: the largest share
 * (may be NULL). *apart (may be NULL): the 90% intervals of the first
 * apart_k + 1 figures do not overlap, each with the next (the ranking of
 * the top apart_k is told apart). NaN before any sample was attributed. */
double os_attrib_top_settle(const struct os_attrib *a, unsigned k, unsigned apart_k,
			    double *top, bool *apart);
/* The same without the ranking's check. */
double os_attrib_top_se(const struct os_attrib *a, unsigned k, double *top);

/* The variance of a context's figure (os_ctx_var: est_samples, or
 * tsamples + path_est with estimated paths): est_sq, or the estimator's
 * path_var. On the scale of the sums (os_attrib_time_normalize). */
static inline double os_ctx_var(const struct os_ctx *x)
{
	return x->path_kind == OS_PATH_NONE ? x->est_sq : x->path_var;
}

/* The samples the evidence of a split is worth (Kish's effective sample
 * size, sum^2 / sum of squares, at most n): one sample of a heavy weight
 * among light ones counts as about one, not as its weight. */
double os_evidence_n(double n, double sum, double sum_sq);

/* The variance of the share q D of D held samples (sum of the squares of
 * their time weights Q) given to a site, q the mean of a Dirichlet of
 * weight alpha (the evidence's samples plus the prior), about the rate
 * the run samples: D a Poisson count (q^2 Q), and q itself uncertain
 * ((D^2 + Q) var q, var q = q (1 - q) / (alpha + 1)). With no evidence
 * (alpha the prior alone) the share is nearly as wide as [0, 1]: the
 * split is the allocation volume's guess. */
double os_share_var(double D, double Q, double q, double alpha);

/* A 90% interval: +- OS_Z90 standard errors (normal approximation). */
#define OS_Z90 1.6448536269514722

/* Runs the estimators of allocation paths (the runtimes' estimate op, then
 * os_small_estimate) at time now (os_now_ns): while recording, so that the
 * settled rule sees the figures and variances the profile will have.
 * Returns the class word a runtime asks to focus on (common/shm.h
 * hs_focus_klass), 0: none. */
uint64_t os_attrib_estimate(struct os_attrib *a, uint64_t now);

/* The path word of the holder context of native heap samples outside any
 * tracked block (blocks below --min-size not sampled): user addresses
 * never have these bits, nor do runtime words (bits 62-63 of 0xfffd are
 * not 0xfffe, the address-space marker). */
#define OS_SMALL_WORD 0xfffd000000000000ULL
/* The path word of the context of attach mode's heap samples outside any
 * block seen allocated (os_attrib.before_attach). */
#define OS_BEFORE_WORD 0xfffb000000000000ULL

/* The holder context of address space asid (created on first use);
 * OS_NONE on out of memory. */
uint32_t os_small_holder(struct os_attrib *a, uint32_t asid);
/* A held sample at addr (access path node): its votes for the sites of
 * the nearest sampled small blocks (see os_attrib.small_votes). */
void os_small_vote(struct os_attrib *a, struct os_aspace *as, uint64_t addr, uint32_t node);
/* Estimated allocation paths of native small blocks (docs/NATIVE.md):
 * each holder's samples shared out to the sites of the byte-sampled small
 * blocks of its address space (os_ctx.path_kind/path_est, as the Java
 * estimator does per class); sets est_attributed. Idempotent. */
void os_small_estimate(struct os_attrib *a);

/* Weight of a byte-sampled small block of `size` bytes (sampled with
 * probability 1 - exp(-size / mean)), fixed point (OS_W_ONE == 1.0). */
uint64_t os_small_weight_q(uint64_t size, uint64_t mean);

int os_attrib_init(struct os_attrib *a, struct os_tasks *tasks);
void os_attrib_destroy(struct os_attrib *a);

/* Interns a path of address space asid (leaf first). */
uint32_t os_attrib_path(struct os_attrib *a, uint32_t asid, const uint64_t *frames, uint32_t n);
/* Recovers a path: returns its depth (marker excluded) and the asid. */
uint32_t os_attrib_unpath(const struct os_attrib *a, uint32_t node, uint64_t *frames,
			  uint32_t max, uint32_t *asid);

/* The context of allocation path `node` (created on first use); OS_NONE
 * on out of memory. */
uint32_t os_attrib_context(struct os_attrib *a, uint32_t asid, uint32_t node);

/* An object event reduced to what ordering needs: its path is interned
 * when it is drained from the ring, and it is applied later in time order. */
struct os_obj_event {
	uint64_t addr, size, aux;     /* OS_EV_JALLOC: aux = weight, fixed point (OS_W_ONE);
				       * OS_EV_ALLOC: OS_SMALL_TAG | mean for a byte-sampled
				       * small block (shm.h), else 0 */
	uint32_t asid;
	uint32_t node;            /* allocation path, OS_CCT_NONE if none */
	uint16_t type;            /* enum os_ev_type */
};

/* An object event of these fields (node OS_CCT_NONE: no path). */
static inline struct os_obj_event os_obj_ev(uint16_t type, uint64_t addr, uint64_t size,
					    uint64_t aux, uint32_t asid, uint32_t node)
{
	return (struct os_obj_event){ .addr = addr, .size = size, .aux = aux, .asid = asid,
				      .node = node, .type = type };
}

/* Reduces a ring event of the current image of ev->pid; returns false for
 * events that need no ordering (thread names: applied at once). Event
 * types the generic code does not know go to the runtime adapter. */
bool os_attrib_prepare(struct os_attrib *a, const struct os_event *ev, struct os_obj_event *oe);
/* Applies an object event (alloc/free/mmap/...) in time order. */
void os_attrib_event(struct os_attrib *a, const struct os_obj_event *ev);
/* Charges an addressed sample: addr in asid's image, sp of the thread (to
 * tell its stack from the heap), access path node. The sample counts 1 in
 * the samples counts and the object's weight in the estimates. */
void os_attrib_sample(struct os_attrib *a, uint32_t asid, uint64_t addr, uint64_t sp,
		      uint32_t access_node);
/* The access entry (index of a->acc) of context ci and access path node,
 * created empty on first use; OS_NONE on out of memory. */
uint32_t os_attrib_acc(struct os_attrib *a, uint32_t ci, uint32_t access_node);
/* Same; returns the context charged (OS_NONE: not attributed) and puts the
 * access entry (index of a->acc) in *acc, OS_NONE when the sample has no
 * access path (or no memory for its entry). */
uint32_t os_attrib_charge(struct os_attrib *a, uint32_t asid, uint64_t addr, uint64_t sp,
			  uint32_t access_node, uint32_t *acc);

#endif
