/* replica.h - the replica analysis (--replicas, OJXPerf's method;
 * docs/REPLICAS.md).
 *
 * Watchpoint part (OJXPerf): an access sample on object O1 of context C at
 * offset off with value V (read at the access width) leaves <off, V> in C's
 * short list of references. A later sample on another object O2 of C, on
 * thread T, offers the comparison "O2 + off against V" for T; the thread's
 * debug registers take offered comparisons by reservoir sampling (the i-th
 * offer since the thread's registers were last all free is armed with
 * probability WATCH_SLOTS / i, replacing a uniformly chosen armed one), so
 * old and new offers are equally likely to be compared. When T next touches
 * O2 + off the value there is compared with V: equal -> equivalent, else
 * different.
 *
 * Checks of the method (beyond OJXPerf):
 *  - alpha, measured: on some compared pairs (at most one per context per
 *    cfg.full_check_interval_ns) the whole contents of O1 and O2 are read
 *    and compared: full_checks / full_differ / full_differ_match.
 *  - exact figure: the whole content of sampled objects is hashed (at most
 *    cfg.exact_per_ctx objects per context and GC epoch, reservoir beyond),
 *    and objects with an identical twin in the same epoch are counted.
 * Header words that are not data are excluded: the mark word (first 8
 * bytes) of Java objects; the klass word and array length are compared.
 *
 * Time order: samples and object events are given in time order (the
 * collector's window); hits are queued and taken in time order between them
 * (os_rep_flush), so a hit after the free/move of its object is never
 * compared: a free of, or a GC in, the watched object's space disarms and
 * forgets its comparison (GC: every comparison on a Java object of that
 * address space; objects move, and are compared again once sampled anew).
 *
 * The watchpoints and the target's memory are reached through a backend
 * (struct os_rep_backend): the real one wraps attacher/watch/watch.h and
 * process_vm_readv (os_rep_watch_backend); unit tests give synthetic ones.
 * One thread only (the collector's main loop: ptrace requires it).
 * Return convention: 0 / -errno; NULL on out of memory.
 */
#ifndef OBJSCOPE_REPLICA_H
#define OBJSCOPE_REPLICA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "attacher/watch/watch.h"
#include "common/profile.h"

struct os_rep_backend {
	void *arg;
	/* watch_arm semantics (0, -ENOSPC, -ESRCH, -errno) */
	int (*arm)(void *arg, pid_t pid, pid_t tid, uint64_t addr, unsigned len, uint64_t cookie,
		   uint64_t max_age_ns);
	int (*disarm)(void *arg, uint64_t cookie);
	/* up to max hits (>= 0) or -errno */
	int (*poll)(void *arg, struct watch_hit *hits, int max);
	/* bytes read (short/-1 on failure) */
	ssize_t (*read)(void *arg, pid_t pid, uint64_t addr, void *buf, size_t len);
	/* optional: object [lo, hi) of context ctx is still live in asid */
	bool (*alive)(void *alive_arg, uint32_t asid, uint64_t lo, uint64_t hi, uint32_t ctx);
	void *alive_arg;
	/* optional, for Java objects read late (whole-content checks, the exact
	 * figure): a token of the target's collections, 0 while one runs or
	 * while one has begun that the engine has not been told of
	 * (os_rep_gc_seen) yet. Content read between two equal non-zero tokens
	 * was not moved or overwritten by a collection the engine did not see. */
	uint64_t (*gc_token)(void *gc_arg);
	void *gc_arg;
};

struct os_rep_cfg {
	unsigned refs_per_ctx;          /* <off, V> remembered per context (default 4) */
	unsigned slots_per_thread;      /* debug registers used per thread (<= WATCH_SLOTS) */
	uint64_t max_age_ns;            /* watchpoint lifetime without a hit (default 500 ms) */
	uint64_t full_check_interval_ns;/* min. time between full checks per context (2 ms) */
	unsigned exact_per_ctx;         /* objects hashed per context and GC epoch (256) */
	uint64_t max_object_bytes;      /* larger objects are not read whole (1 MiB) */
	uint64_t seed;                  /* random generator (reservoirs) */
};

void os_rep_cfg_default(struct os_rep_cfg *cfg);

/* One attributed access sample. */
struct os_rep_sample {
	uint64_t time;          /* sample time (CLOCK_MONOTONIC ns) */
	pid_t pid, tid;
	uint32_t asid;
	uint32_t ctx;           /* context index (collector's attribution) */
	uint64_t lo, hi;        /* the object [lo, hi) */
	uint64_t addr;          /* data address */
	unsigned width;         /* access width in bytes, 0 if unknown */
	bool value_ok;          /* word8 holds the 8 bytes at addr & ~7 read at sample time */
	uint64_t word8;
	bool java;              /* a Java object: its first 8 bytes are the mark word */
	bool dead;              /* the object was freed since (a free drained, not applied):
				 * its content is not hashed */
	bool frees_unknown;     /* the collector did not follow frees since the sample: not
				 * hashed either; os_rep_exact_wanted() then says so */
};

/* Everything counted on the way (notes of the report). */
struct os_rep_stats {
	uint64_t samples;          /* attributed samples seen */
	uint64_t no_value;         /* sample value not read (unreadable, odd width) */
	uint64_t refs;             /* <off, V> remembered */
	uint64_t no_ref;           /* no reference of another object in the context yet */
	uint64_t offers;           /* comparisons offered to a thread */
	uint64_t armed;            /* ... armed */
	uint64_t not_chosen;       /* ... not taken by the reservoir */
	uint64_t replaced;         /* armed ones disarmed for a newer offer (reservoir) */
	uint64_t enospc;           /* arm refused: no debug register free */
	uint64_t thread_gone;      /* arm refused: thread exited (-ESRCH) */
	uint64_t arm_errors;       /* other arm failures */
	uint64_t gc_window;        /* sample skipped: a GC began after it (content unknown) */
	uint64_t hits;             /* hits taken */
	uint64_t compared;         /* hits compared (equivalent + different) */
	uint64_t hit_unknown;      /* hit of a comparison already forgotten (freed/moved) */
	uint64_t hit_no_value;     /* hit without a value read */
	uint64_t width_differs;    /* hit access width differs from the armed one (compared) */
	uint64_t invalidated;      /* comparisons forgotten: object freed / GC */
	uint64_t expired;          /* comparisons whose watchpoint expired (no hit) */
	uint64_t full_rate_skipped;/* full checks skipped by the rate bound */
	uint64_t full_skipped_gone;/* full checks skipped: O1 no longer valid */
	uint64_t full_read_fail;   /* full checks failed: unreadable / too large */
	uint64_t gc_unsettled;     /* Java objects not read late, or their content discarded:
				    * a collection ran, or had begun undrained (gc_token) */
	uint64_t exact_hashed;     /* objects hashed */
	uint64_t exact_replaced;   /* reservoir: hashed objects dropped for later ones */
	uint64_t exact_not_chosen; /* reservoir: objects not hashed */
	uint64_t exact_read_fail;  /* unreadable or larger than max_object_bytes */
	uint64_t poll_errors;
	uint64_t stopped;          /* comparisons disarmed unhit by os_rep_stop */
	uint64_t after_stop;       /* offers after os_rep_stop, not armed */
	uint64_t exact_dead;       /* sampled objects not hashed: freed by then */
	uint64_t exact_by_target;  /* sampled objects not hashed: their context's objects are
				    * hashed in the target (os_rep_exact_content) */
	uint64_t compared_target;  /* in-target comparisons (os_rep_compared) */
	uint64_t exact_unfollowed; /* sampled objects not hashed: frees not followed then */
	uint64_t own_futile;       /* offers not made: the context is compared in the target and
				    * its own comparisons were forgotten OWN_LOST_MAX times in a
				    * row (replica.c; one probe per second goes through) */
};

struct os_rep;

struct os_rep *os_rep_new(const struct os_rep_cfg *cfg, const struct os_rep_backend *be);
void os_rep_free(struct os_rep *r);

/* In time order with os_rep_event. */
void os_rep_sample(struct os_rep *r, const struct os_rep_sample *s);
/* An object event applied at `time`: [lo, hi) of asid freed, moved away or
 * unmapped (gc = false), or a collection began in asid (gc = true, lo/hi
 * ignored: every Java comparison of asid is forgotten and the exact epoch
 * of its contexts closes). */
void os_rep_event(struct os_rep *r, uint64_t time, uint32_t asid, uint64_t lo, uint64_t hi,
		  bool gc);
/* A collection began in asid at `time` (seen when the target's events are
 * drained, before it is applied): content read for anything older is no
 * longer trusted (samples and hits before it are skipped, counted). */
void os_rep_gc_seen(struct os_rep *r, uint32_t asid, uint64_t time);
/* The object starting at lo (ending at hi) was freed at `time` (free,
 * realloc): cheaper than os_rep_event for the frequent case. */
void os_rep_free_object(struct os_rep *r, uint64_t time, uint32_t asid, uint64_t lo, uint64_t hi);
/* Polls the backend for hits (queued, not yet taken). */
void os_rep_poll(struct os_rep *r);
/* Queues one hit (what os_rep_poll does per hit; for tests). */
void os_rep_hit(struct os_rep *r, const struct watch_hit *h);
/* Takes the queued hits up to `time` (UINT64_MAX: all). */
void os_rep_flush(struct os_rep *r, uint64_t time);
/* The collection stops (before `attach` detaches from the target): every
 * watchpoint not hit yet is disarmed (counted in `stopped`) and no more are
 * armed (offers counted in `after_stop`), so that no thread of the target is
 * left seized by the ptrace route nor watched by the perf route. Samples
 * and hits already taken are still applied. */
void os_rep_stop(struct os_rep *r);
/* End of the collection: takes every hit, disarms what is left, closes the
 * exact epochs. */
void os_rep_finish(struct os_rep *r);

/* At sample time (the target as it is): the access width of the
 * instruction [insn, ip) (decoded, cached; 0 if unknown) and the 8 bytes at
 * addr & ~7. Returns whether the bytes were read. */
bool os_rep_read_access(struct os_rep *r, pid_t pid, uint32_t asid, uint64_t insn, uint64_t ip,
			uint64_t addr, uint8_t *width, uint64_t *word8);

/* In-target comparisons (record mode, replica_target.c): */
/* Debug registers per thread for the collector's own watchpoints from now
 * on (the target arms the others itself). */
void os_rep_set_slots(struct os_rep *r, unsigned n);
uint32_t os_rep_nctx(const struct os_rep *r);
/* A reference <off, width, V> of ctx, uniformly among those remembered;
 * false when it has none (or after os_rep_stop). *java: Java objects. */
bool os_rep_ref_pick(struct os_rep *r, uint32_t ctx, uint32_t *off, unsigned *width,
		     uint64_t *v, bool *java);
/* A comparison of ctx made in the target: the value seen against v. */
void os_rep_compared(struct os_rep *r, uint32_t ctx, uint64_t value, uint64_t v, unsigned width);
/* The whole content (header rule applied) of a new object of ctx at lo,
 * read while it was alive and in use: into the exact figure's reservoir. */
void os_rep_exact_content(struct os_rep *r, uint32_t ctx, uint32_t asid, uint64_t lo,
			  const void *buf, size_t n);
/* The same, from the hash of that content (os_rep_content_hash), taken by
 * the target's free hook when the object died before it was read. */
void os_rep_exact_hashed(struct os_rep *r, uint32_t ctx, uint32_t asid, uint64_t lo,
			 uint64_t hash);

/* Raw counts of context ctx (zero when none). */
void os_rep_counts(const struct os_rep *r, uint32_t ctx, struct os_replica *out);
void os_rep_get_stats(const struct os_rep *r, struct os_rep_stats *out);
/* Whether a sample given since the last call would have been hashed for the
 * exact figure had its liveness been known (the caller follows frees while
 * this keeps saying yes: os_rep_sample's dead / frees_unknown). Clears it. */
bool os_rep_exact_wanted(struct os_rep *r);
/* Comparisons armed now. */
size_t os_rep_armed(const struct os_rep *r);

/* The real backend: watchpoints through attacher/watch/watch.h (one watch_set per
 * target process, opened on first use with `route`), memory through
 * process_vm_readv. NULL on out of memory. */
struct os_rep_watch;
struct os_rep_watch *os_rep_watch_new(enum watch_route route);
void os_rep_watch_backend(struct os_rep_watch *w, struct os_rep_backend *be);
/* Summed watch statistics of every process; the first open error (if any). */
void os_rep_watch_stats(const struct os_rep_watch *w, struct watch_stats *out, const char **err);
void os_rep_watch_free(struct os_rep_watch *w);

/* In-target comparisons (record mode; replica_target.c, preload/replica.c,
 * common/shm.h struct os_rep_entry): the collector publishes what to
 * watch on the next object of a context's allocation site; the target arms
 * and reports. What could not be compared is counted here. */
struct os_rep_tgt_stats {
	uint64_t published;    /* entries published */
	uint64_t after_alloc;  /* ... of them for a context whose allocations were just drained */
	uint64_t hits;         /* ... hit and compared */
	uint64_t withdrawn;    /* no object of the site allocated in time (1 s) */
	uint64_t expired;      /* armed, no access at the offset within max_age_ns */
	uint64_t dead;         /* armed object freed / collection began before a hit */
	uint64_t enospc;       /* arm failed: no free debug register in the thread */
	uint64_t failed;       /* arm failed otherwise (last_err: its errno) */
	uint64_t table_full;   /* rounds in which a context waited: every entry in flight */
	uint64_t calibrated;   /* hits that gave a reference value (first at their offset) */
	uint64_t rate_bound;   /* rounds in which a context waited for the per-second bound */
	uint64_t left_in_flight; /* still being armed / hit when the collection stopped */
	uint64_t exact_hashed; /* hit objects hashed for the exact figure */
	uint64_t exact_dead;   /* ... not: freed (or moved) before the read ended */
	uint64_t exact_at_free; /* ... hashed by the target's free hook instead (freed before the read) */
	uint64_t exact_fail;   /* ... not: unreadable, or larger than 1 MiB */
	int last_err;
};
struct os_rep_tgt;
struct os_shm_header;
struct os_rep_tgt *os_rep_tgt_new(struct os_shm_header *h, uint64_t max_age_ns);
void os_rep_tgt_free(struct os_rep_tgt *t);
/* An allocation of context ctx (asid, process pid) had this path, as the
 * target wrote it: the site key the target computes for it. */
void os_rep_tgt_site(struct os_rep_tgt *t, uint32_t ctx, uint32_t asid, uint32_t pid,
		     const uint64_t *frames, uint32_t n);
/* Takes the results, publishes new entries (each round). */
void os_rep_tgt_poll(struct os_rep_tgt *t, struct os_rep *r);
/* The collection stops: entries withdrawn / expired, none published. */
void os_rep_tgt_stop(struct os_rep_tgt *t, struct os_rep *r);
void os_rep_tgt_get_stats(const struct os_rep_tgt *t, struct os_rep_tgt_stats *out);

/* The replica observer of the collection loop (replica_collector.c,
 * attacher/core/observer.h): enabled by --replicas (attacher/analyses/analyses.c). */
struct os_observer_ops;
extern const struct os_observer_ops os_replica_observer;

#endif
