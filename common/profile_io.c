/* profile_io.c - writing and reading the profile file (version 1).
 * The layout is documented field by field in docs/PROFILE-FORMAT.md. */
#include "common/profile.h"
#include "common/grow.h"
#include "common/safefs.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define HEADER_SIZE 24      /* magic, version, flags, file size */
#define SECHDR_SIZE 16      /* type, flags, length */
#define END_SIZE (SECHDR_SIZE + 4)
/* Record sizes written by version 1; readers accept larger records (and
 * FRAMES records of the first writers, FRAME_REC_V1). */
#define FRAME_REC_V1 28 /* kind, name, module, file, line, addr */
#define FRAME_REC_V2 44 /* ... near_sym, build_id, near_off */
#define FRAME_REC 48    /* ... column */
#define CONTEXT_REC (4 + 4 + 8 + 8 + 8 + 8 * OS_M_COUNT)
#define ACCESS_REC (4 + 4 + 8 + 8 * OS_M_COUNT)
#define THREAD_REC (4 + 4 + 4 + 4 + 8)
#define NREPLICA (sizeof(struct os_replica) / sizeof(uint64_t))
#define REPLICA_REC (4 + 8 * NREPLICA)
#define REPLICA_REC_MIN (4 + 8 * 7) /* the first 7 counts are always there */
_Static_assert(sizeof(struct os_replica) % sizeof(uint64_t) == 0,
	       "struct os_replica must hold only uint64_t counts");
#define NMEMSRC (sizeof(struct os_memsrc) / sizeof(uint64_t))
#define MEMSRC_REC (4 + 8 * NMEMSRC)
_Static_assert(sizeof(struct os_memsrc) % sizeof(uint64_t) == 0,
	       "struct os_memsrc must hold only uint64_t counts");
#define NCOUNTERS (sizeof(struct os_counters) / sizeof(uint64_t))
#define SLICE_REC (4 + 4 + 4 + 4 + 8) /* SLICES records */
#define EST_REC (4 + 8)     /* ESTIMATES records: index, f64 estimate */
#define EST_VAR_REC (EST_REC + 8) /* version 3, contexts: ... f64 variance */
#define PATHEST_REC (4 + 4 + 4 + 8 + 8 + 8) /* PATHEST: ctx, kind, class_sites, path_est,
					     * seen, class_seen */
#define PATHEST_REC_V3 (PATHEST_REC + 8)    /* ... f64 evidence */
/* LIFETIMES records: context, kind, flags, pad, 4 tables of bins, promoted,
 * promoted bytes, peak bytes, peak time */
#define LT_REC(bins) (16 + 4 * 8 * (uint64_t)(bins) + 32)

_Static_assert(sizeof(struct os_counters) % sizeof(uint64_t) == 0,
	       "os_counters must hold only uint64_t");

static void set_err(char *err, size_t errlen, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void set_err(char *err, size_t errlen, const char *name, const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (!err || !errlen)
		return;
	if (name)
		n = snprintf(err, errlen, "%s: ", name);
	if (n < 0 || (size_t)n >= errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
}

/* ---- writer ---- */

struct wbuf {
	uint8_t *d;
	size_t len, cap;
	bool oom;
};

static void put(struct wbuf *b, const void *src, size_t n)
{
	uint8_t *nd;

	if (b->oom)
		return;
	nd = os_grow(b->d, &b->cap, b->len + n, 1, 4096);
	if (!nd) {
		b->oom = true;
		return;
	}
	b->d = nd;
	memcpy(b->d + b->len, src, n);
	b->len += n;
}

static void put_u32(struct wbuf *b, uint32_t v)
{
	uint8_t x[4] = { v, v >> 8, v >> 16, v >> 24 };

	put(b, x, sizeof(x));
}

static void put_u64(struct wbuf *b, uint64_t v)
{
	put_u32(b, (uint32_t)v);
	put_u32(b, (uint32_t)(v >> 32));
}

static void put_f64(struct wbuf *b, double d)
{
	uint64_t v;

	memcpy(&v, &d, sizeof(v));
	put_u64(b, v);
}

static void patch_u64(struct wbuf *b, size_t off, uint64_t v)
{
	int i;

	if (b->oom)
		return;
	for (i = 0; i < 8; i++)
		b->d[off + i] = (uint8_t)(v >> (8 * i));
}

static size_t sec_begin(struct wbuf *b, uint32_t type)
{
	size_t off = b->len;

	put_u32(b, type);
	put_u32(b, 0);
	put_u64(b, 0);
	return off;
}

static void sec_end(struct wbuf *b, size_t off)
{
	patch_u64(b, off + 8, b->len - off - SECHDR_SIZE);
}

static void put_ids(struct wbuf *b, uint32_t n, const uint32_t *ids)
{
	uint32_t i;

	put_u32(b, n);
	for (i = 0; i < n; i++)
		put_u32(b, ids[i]);
}

static void put_metrics(struct wbuf *b, const uint64_t *m)
{
	int i;

	for (i = 0; i < OS_M_COUNT; i++)
		put_u64(b, m[i]);
}

static bool replica_nonzero(const struct os_replica *r)
{
	const uint64_t *v = (const uint64_t *)r;

	for (size_t i = 0; i < NREPLICA; i++)
		if (v[i])
			return true;
	return false;
}
/* The nonzero estimates (the double at byte `off`) of n records `stride`
 * bytes apart from `recs`: count, record size, then (index, estimate). */
static bool ru_any(const struct os_reuse *r)
{
	for (unsigned k = 0; k < OS_REUSE_NBINS; k++)
		if (r->bins[k] != 0)
			return true;
	return false;
}

static double est_at(const void *recs, size_t i, size_t stride, size_t off)
{
	double v;

	memcpy(&v, (const uint8_t *)recs + i * stride + off, sizeof(v));
	return v;
}

/* var_off: SIZE_MAX, or the offset of each estimate's variance (records
 * EST_VAR_REC; a variance not known is written 0). */
static void put_est_list(struct wbuf *b, const void *recs, size_t n, size_t stride, size_t off,
			 size_t var_off)
{
	uint32_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += est_at(recs, i, stride, off) != 0;
	put_u32(b, k);
	put_u32(b, var_off == SIZE_MAX ? EST_REC : EST_VAR_REC);
	for (size_t i = 0; i < n; i++) {
		double v = est_at(recs, i, stride, off);

		if (v == 0)
			continue;
		put_u32(b, (uint32_t)i);
		put_f64(b, v);
		if (var_off != SIZE_MAX) {
			double d = est_at(recs, i, stride, var_off);

			put_f64(b, isfinite(d) && d > 0 ? d : 0);
		}
	}
}


/* Serializes the whole file into b. */
static void serialize(const struct os_profile *p, struct wbuf *b)
{
	const uint64_t *counters = (const uint64_t *)&p->c;
	size_t off;
	uint32_t i, j, crc;

	put(b, OS_PROFILE_MAGIC, 8);
	put_u32(b, OS_PROFILE_VERSION);
	put_u32(b, 0);
	put_u64(b, 0); /* file size, patched below */

	off = sec_begin(b, OS_SEC_STRINGS);
	put_u32(b, p->nstrings);
	for (i = 0; i < p->nstrings; i++) {
		size_t n = strlen(p->strings[i]);

		put_u32(b, (uint32_t)n);
		put(b, p->strings[i], n);
	}
	sec_end(b, off);

	off = sec_begin(b, OS_SEC_FRAMES);
	put_u32(b, p->nframes);
	put_u32(b, FRAME_REC);
	for (i = 0; i < p->nframes; i++) {
		const struct os_frame *f = &p->frames[i];

		put_u32(b, f->kind);
		put_u32(b, f->name);
		put_u32(b, f->module);
		put_u32(b, f->file);
		put_u32(b, f->line);
		put_u64(b, f->addr);
		put_u32(b, f->near_sym);
		put_u32(b, f->build_id);
		put_u64(b, f->near_off);
		put_u32(b, f->column);
	}
	sec_end(b, off);

	off = sec_begin(b, OS_SEC_STACKS);
	put_u32(b, p->nstacks);
	for (i = 0; i < p->nstacks; i++)
		put_ids(b, p->stacks[i].nframes, p->stacks[i].frames);
	sec_end(b, off);

	off = sec_begin(b, OS_SEC_META);
	put_ids(b, p->meta.argc, p->meta.argv);
	put_ids(b, p->meta.npids, p->meta.pids);
	put_f64(b, p->meta.duration_s);
	put_u32(b, p->meta.sampler);
	put_u32(b, p->meta.event);
	put_u64(b, p->meta.period);
	put_u64(b, p->meta.freq);
	put_u64(b, p->meta.min_size);
	put_u32(b, p->meta.mode);
	put_u32(b, p->meta.hostname);
	put_u64(b, p->meta.start_time);
	put_ids(b, p->meta.nnotes, p->meta.notes);
	sec_end(b, off);

	off = sec_begin(b, OS_SEC_COUNTERS);
	put_u32(b, NCOUNTERS);
	for (i = 0; i < NCOUNTERS; i++)
		put_u64(b, counters[i]);
	sec_end(b, off);

	off = sec_begin(b, OS_SEC_CONTEXTS);
	put_u32(b, p->ncontexts);
	put_u32(b, CONTEXT_REC);
	for (i = 0; i < p->ncontexts; i++) {
		const struct os_context *c = &p->contexts[i];

		put_u32(b, c->type);
		put_u32(b, c->stack);
		put_u64(b, c->allocations);
		put_u64(b, c->bytes);
		put_u64(b, c->samples);
		put_metrics(b, c->metrics);
	}
	sec_end(b, off);

	off = sec_begin(b, OS_SEC_ACCESSES);
	put_u32(b, p->naccesses);
	put_u32(b, ACCESS_REC);
	for (i = 0; i < p->naccesses; i++) {
		const struct os_access *a = &p->accesses[i];

		put_u32(b, a->context);
		put_u32(b, a->stack);
		put_u64(b, a->samples);
		put_metrics(b, a->metrics);
	}
	sec_end(b, off);

	off = sec_begin(b, OS_SEC_THREADS);
	put_u32(b, p->nthreads);
	put_u32(b, THREAD_REC);
	for (j = 0; j < p->nthreads; j++) {
		const struct os_thread *t = &p->threads[j];

		put_u32(b, t->kind);
		put_u32(b, t->name);
		put_u32(b, t->pid);
		put_u32(b, t->tid);
		put_u64(b, t->samples);
	}
	sec_end(b, off);

	/* REPLICAS: only when the analysis ran, only contexts with counts */
	if (p->analyses & OS_AN_REPLICAS) {
		uint32_t n = 0;

		for (i = 0; i < p->ncontexts; i++)
			n += replica_nonzero(&p->contexts[i].replica);
		off = sec_begin(b, OS_SEC_REPLICAS);
		put_u32(b, n);
		put_u32(b, REPLICA_REC);
		for (i = 0; i < p->ncontexts; i++) {
			const uint64_t *v = (const uint64_t *)&p->contexts[i].replica;

			if (!replica_nonzero(&p->contexts[i].replica))
				continue;
			put_u32(b, i);
			for (j = 0; j < NREPLICA; j++)
				put_u64(b, v[j]);
		}
		sec_end(b, off);
	}

	/* MEMSRC: PMU data sources / --numa; only contexts with counts */
	if (p->analyses & (OS_AN_MEMSRC | OS_AN_NUMA)) {
		static const struct os_memsrc zero;
		uint32_t n = 0;

		for (i = 0; i < p->ncontexts; i++)
			n += !!memcmp(&p->contexts[i].mem, &zero, sizeof(zero));
		off = sec_begin(b, OS_SEC_MEMSRC);
		put_u32(b, p->analyses & (OS_AN_MEMSRC | OS_AN_NUMA));
		put_u32(b, p->numa_nodes);
		put_u32(b, n);
		put_u32(b, MEMSRC_REC);
		for (i = 0; i < p->ncontexts; i++) {
			const uint64_t *v = (const uint64_t *)&p->contexts[i].mem;

			if (!memcmp(&p->contexts[i].mem, &zero, sizeof(zero)))
				continue;
			put_u32(b, i);
			for (j = 0; j < NMEMSRC; j++)
				put_u64(b, v[j]);
		}
		sec_end(b, off);
	}

	/* ESTIMATES: only with weighted objects, only entries with samples */
	if (p->analyses & OS_AN_ESTIMATES) {
		off = sec_begin(b, OS_SEC_ESTIMATES);
		put_f64(b, p->est.samples_attributed);
		put_f64(b, p->est.samples_java_attributed);
		put_est_list(b, p->contexts, p->ncontexts, sizeof(*p->contexts),
			     offsetof(struct os_context, samples_est),
			     p->analyses & OS_AN_EST_VAR ? offsetof(struct os_context, samples_var)
							 : SIZE_MAX);
		put_est_list(b, p->accesses, p->naccesses, sizeof(*p->accesses),
			     offsetof(struct os_access, samples_est), SIZE_MAX);
		sec_end(b, off);
	}

	/* PATHEST: estimated allocation paths, contexts of a kind; then the
	 * accesses' estimated parts (EST_REC records, any sign) */
	if (p->analyses & OS_AN_PATHEST) {
		uint32_t n = 0;

		for (i = 0; i < p->ncontexts; i++)
			n += p->contexts[i].pe.kind != OS_PATH_NONE;
		off = sec_begin(b, OS_SEC_PATHEST);
		put_u32(b, n);
		put_u32(b, PATHEST_REC_V3);
		for (i = 0; i < p->ncontexts; i++) {
			const struct os_pathest *e = &p->contexts[i].pe;

			if (e->kind == OS_PATH_NONE)
				continue;
			put_u32(b, i);
			put_u32(b, e->kind);
			put_u32(b, e->class_sites);
			put_f64(b, e->path_est);
			put_u64(b, e->seen);
			put_u64(b, e->class_seen);
			put_f64(b, isfinite(e->evidence) && e->evidence > 0 ? e->evidence : 0);
		}
		put_est_list(b, p->accesses, p->naccesses, sizeof(*p->accesses),
			     offsetof(struct os_access, path_est), SIZE_MAX);
		sec_end(b, off);
	}

	/* SLICES: samples by thread and time bucket */
	if (p->analyses & OS_AN_SLICES) {
		off = sec_begin(b, OS_SEC_SLICES);
		put_u32(b, p->slice_ms);
		put_u32(b, p->nslices);
		put_u32(b, SLICE_REC);
		for (i = 0; i < p->nslices; i++) {
			const struct os_slice *sl = &p->slices[i];

			put_u32(b, sl->context);
			put_u32(b, sl->access);
			put_u32(b, sl->thread);
			put_u32(b, sl->bucket);
			put_u64(b, sl->samples);
		}
		sec_end(b, off);
	}

	/* OVERHEAD: the number of figures, the figures, the flags */
	if (p->analyses & OS_AN_OVERHEAD) {
		const double *f = &p->ovh.max_pct;

		off = sec_begin(b, OS_SEC_OVERHEAD);
		put_u32(b, OS_OVERHEAD_NF);
		for (j = 0; j < OS_OVERHEAD_NF; j++)
			put_f64(b, f[j]);
		put_u32(b, p->ovh.calibrated);
		put_u32(b, p->ovh.steered);
		sec_end(b, off);
	}

	/* LIFETIMES: only contexts with something measured */
	if (p->analyses & OS_AN_LIFETIMES) {
		uint32_t n = 0;

		for (i = 0; i < p->lt.nctx && i < p->ncontexts; i++)
			n += p->lt.ctx[i].kind != OS_LT_NONE;
		off = sec_begin(b, OS_SEC_LIFETIMES);
		put_u32(b, p->lt.flags);
		put_u32(b, OS_LT_BINS);
		put_f64(b, p->lt.peak_bytes);
		put_u64(b, p->lt.peak_ns);
		put_u64(b, p->lt.collections);
		put_u64(b, p->lt.collections_unjudged);
		put_u64(b, p->lt.unaged);
		for (j = 0; j < OS_LT_BINS; j++)
			put_f64(b, p->lt.survivor_bytes[j]);
		put_u32(b, n);
		put_u32(b, (uint32_t)LT_REC(OS_LT_BINS));
		for (i = 0; i < p->lt.nctx && i < p->ncontexts; i++) {
			const struct os_lifetime *l = &p->lt.ctx[i];

			if (l->kind == OS_LT_NONE)
				continue;
			put_u32(b, i);
			put_u32(b, l->kind);
			put_u32(b, l->flags);
			put_u32(b, 0);
			for (j = 0; j < OS_LT_BINS; j++)
				put_f64(b, l->ended[j]);
			for (j = 0; j < OS_LT_BINS; j++)
				put_f64(b, l->ended_bytes[j]);
			for (j = 0; j < OS_LT_BINS; j++)
				put_f64(b, l->live[j]);
			for (j = 0; j < OS_LT_BINS; j++)
				put_f64(b, l->live_bytes[j]);
			put_f64(b, l->promoted);
			put_f64(b, l->promoted_bytes);
			put_f64(b, l->peak_bytes);
			put_u64(b, l->peak_ns);
		}
		sec_end(b, off);
	}

	/* REUSE: the model's figures, then only contexts with something measured */
	if (p->analyses & OS_AN_REUSE) {
		uint32_t n = 0;

		for (i = 0; i < p->ru.nctx && i < p->ncontexts; i++)
			n += ru_any(&p->ru.ctx[i]);
		off = sec_begin(b, OS_SEC_REUSE);
		put_u32(b, OS_REUSE_NBINS);
		put_u32(b, p->ru.rate_source); /* 0 in files before it: calibrated */
		for (j = 0; j < 3; j++)
			put_u64(b, p->ru.cache[j]);
		put_f64(b, p->ru.bytes_per_ns);
		put_f64(b, p->ru.insn_per_ns);
		put_f64(b, p->ru.mem_share);
		put_f64(b, p->ru.width);
		put_f64(b, p->ru.trap_ns);
		put_u64(b, p->ru.pairs);
		put_u64(b, p->ru.censored);
		put_u64(b, p->ru.max_age_ns);
		put_u32(b, n);
		for (i = 0; i < p->ru.nctx && i < p->ncontexts; i++) {
			if (!ru_any(&p->ru.ctx[i]))
				continue;
			put_u32(b, i);
			for (j = 0; j < OS_REUSE_NBINS; j++)
				put_f64(b, p->ru.ctx[i].bins[j]);
		}
		sec_end(b, off);
	}

	/* NOTE_COUNTERS: runtime notes kept as counters (rendered by the report) */
	if (p->nnote_counters) {
		off = sec_begin(b, OS_SEC_NOTE_COUNTERS);
		put_u32(b, p->nnote_counters);
		for (i = 0; i < p->nnote_counters; i++) {
			const struct os_note_counters *g = &p->note_counters[i];

			put_u32(b, g->kind);
			put_u32(b, g->at);
			put_u32(b, g->nvals);
			for (uint32_t k = 0; k < g->nvals; k++) {
				put_u32(b, g->vals[k].key);
				put_u32(b, g->vals[k].type);
				put_u64(b, g->vals[k].v);
			}
		}
		sec_end(b, off);
	}

	/* END: its header, then the CRC of everything before that header. */
	patch_u64(b, 16, b->len + END_SIZE);
	off = b->len;
	put_u32(b, OS_SEC_END);
	put_u32(b, 0);
	put_u64(b, 4);
	if (b->oom)
		return;
	crc = (uint32_t)crc32_z(crc32(0L, NULL, 0), b->d, off);
	put_u32(b, crc);
}

static int write_all(int fd, const uint8_t *d, size_t n)
{
	while (n) {
		ssize_t w = write(fd, d, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (w == 0)
			return -EIO;
		d += w;
		n -= (size_t)w;
	}
	return 0;
}

int os_profile_check_output(const char *path, char *err, size_t errlen)
{
	return os_out_check(path, err, errlen);
}

int os_profile_write(const struct os_profile *p, const char *path, char *err, size_t errlen)
{
	struct os_outfile o;
	struct wbuf b = { 0 };
	int ret;

	serialize(p, &b);
	if (b.oom) {
		ret = -ENOMEM;
		set_err(err, errlen, path, "cannot write profile: %s", strerror(-ret));
		goto out;
	}
	/* 0600 as perf.data: the profile holds the target's command line,
	 * its function names and paths (safefs.h: how the file is made). */
	ret = os_out_open(&o, path, 0600, err, errlen);
	if (ret)
		goto out;
	ret = write_all(o.fd, b.d, b.len);
	if (ret) {
		set_err(err, errlen, path, "cannot write profile: %s", strerror(-ret));
		os_out_abort(&o);
		goto out;
	}
	ret = os_out_commit(&o, true, err, errlen);
	if (!ret && o.old_errno && err && errlen) /* written; only FILE.old is missing */
		set_err(err, errlen, path, "the previous profile could not be kept as %s.old: %s",
			path, strerror(o.old_errno));
out:
	free(b.d);
	return ret;
}

/* ---- reader ---- */

struct cur {
	const uint8_t *p;
	uint64_t len, off;
	bool bad;
};

static uint64_t left(const struct cur *c)
{
	return c->len - c->off;
}

static const uint8_t *take(struct cur *c, uint64_t n)
{
	const uint8_t *r;

	if (c->bad || n > left(c)) {
		c->bad = true;
		return NULL;
	}
	r = c->p + c->off;
	c->off += n;
	return r;
}

static uint32_t le32(const uint8_t *x)
{
	return (uint32_t)x[0] | (uint32_t)x[1] << 8 | (uint32_t)x[2] << 16 | (uint32_t)x[3] << 24;
}

static uint64_t le64(const uint8_t *x)
{
	return (uint64_t)le32(x) | (uint64_t)le32(x + 4) << 32;
}

static uint32_t get_u32(struct cur *c)
{
	const uint8_t *x = take(c, 4);

	return x ? le32(x) : 0;
}

static uint64_t get_u64(struct cur *c)
{
	const uint8_t *x = take(c, 8);

	return x ? le64(x) : 0;
}

static double get_f64(struct cur *c)
{
	uint64_t v = get_u64(c);
	double d;

	memcpy(&d, &v, sizeof(d));
	return d;
}

/* Reads a count of items that take at least `min` bytes each; a count that
 * cannot fit in what is left marks the cursor bad (no unbounded alloc). */
static uint32_t get_count(struct cur *c, uint64_t min)
{
	uint32_t n = get_u32(c);

	if (!c->bad && (uint64_t)n * min > left(c))
		c->bad = true;
	return c->bad ? 0 : n;
}

static uint32_t *get_ids(struct cur *c, uint32_t *n, int *ret)
{
	uint32_t *ids, i;

	*n = get_count(c, 4);
	if (c->bad || !*n)
		return NULL;
	ids = malloc((size_t)*n * sizeof(*ids));
	if (!ids) {
		*ret = -ENOMEM;
		return NULL;
	}
	for (i = 0; i < *n; i++)
		ids[i] = get_u32(c);
	return ids;
}

static const char *const section_names[] = {
	[OS_SEC_META] = "META",	      [OS_SEC_COUNTERS] = "COUNTERS", [OS_SEC_STRINGS] = "STRINGS",
	[OS_SEC_FRAMES] = "FRAMES",   [OS_SEC_STACKS] = "STACKS",     [OS_SEC_CONTEXTS] = "CONTEXTS",
	[OS_SEC_ACCESSES] = "ACCESSES", [OS_SEC_THREADS] = "THREADS",
	[OS_SEC_REPLICAS] = "REPLICAS", [OS_SEC_ESTIMATES] = "ESTIMATES",
	[OS_SEC_SLICES] = "SLICES", [OS_SEC_NOTE_COUNTERS] = "NOTE_COUNTERS",
	[OS_SEC_LIFETIMES] = "LIFETIMES",
	[OS_SEC_REUSE] = "REUSE",
	[OS_SEC_MEMSRC] = "MEMSRC",
	[OS_SEC_OVERHEAD] = "OVERHEAD",
	[OS_SEC_PATHEST] = "PATHEST",
};
#define NSECTIONS (sizeof(section_names) / sizeof(section_names[0]))

struct span {
	uint64_t off, len;
	bool present;
};

static int read_strings(struct cur *c, struct os_profile *p)
{
	uint32_t n = get_count(c, 4), i;

	if (c->bad)
		return 0;
	p->strings = calloc(n ? n : 1, sizeof(*p->strings));
	if (!p->strings)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		uint32_t len = get_u32(c);
		const uint8_t *s = take(c, len);

		if (!s)
			return 0;
		if (memchr(s, 0, len)) {
			c->bad = true;
			return 0;
		}
		p->strings[i] = strndup((const char *)s, len);
		if (!p->strings[i])
			return -ENOMEM;
		p->nstrings = i + 1;
	}
	return 0;
}

static int read_frames(struct cur *c, struct os_profile *p)
{
	uint32_t n = get_u32(c), rec = get_u32(c), i;

	if (c->bad || rec < FRAME_REC_V1 || (uint64_t)n * rec > left(c)) {
		c->bad = true;
		return 0;
	}
	p->frames = calloc(n ? n : 1, sizeof(*p->frames));
	if (!p->frames)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct cur r = { take(c, rec), rec, 0, false };
		struct os_frame *f = &p->frames[i];

		f->kind = get_u32(&r);
		f->name = get_u32(&r);
		f->module = get_u32(&r);
		f->file = get_u32(&r);
		f->line = get_u32(&r);
		f->addr = get_u64(&r);
		f->near_sym = f->build_id = OS_NONE;
		if (rec >= FRAME_REC_V2) { /* absent from files of earlier writers */
			f->near_sym = get_u32(&r);
			f->build_id = get_u32(&r);
			f->near_off = get_u64(&r);
		}
		if (rec >= FRAME_REC)
			f->column = get_u32(&r);
		else if (f->name != OS_NONE && f->kind == OS_FRAME_NATIVE)
			f->column = OS_COLUMN_LINE_ONLY; /* merged by line, as its writer did */
	}
	p->nframes = n;
	return 0;
}

static int read_stacks(struct cur *c, struct os_profile *p)
{
	uint32_t n = get_count(c, 4), i;
	int ret = 0;

	if (c->bad)
		return 0;
	p->stacks = calloc(n ? n : 1, sizeof(*p->stacks));
	if (!p->stacks)
		return -ENOMEM;
	for (i = 0; i < n && !c->bad && !ret; i++) {
		p->stacks[i].frames = get_ids(c, &p->stacks[i].nframes, &ret);
		p->nstacks = i + 1;
	}
	return ret;
}

static int read_meta(struct cur *c, struct os_profile *p)
{
	struct os_meta *m = &p->meta;
	int ret = 0;

	m->argv = get_ids(c, &m->argc, &ret);
	if (ret || c->bad)
		return ret;
	m->pids = get_ids(c, &m->npids, &ret);
	if (ret || c->bad)
		return ret;
	m->duration_s = get_f64(c);
	m->sampler = get_u32(c);
	m->event = get_u32(c);
	m->period = get_u64(c);
	m->freq = get_u64(c);
	m->min_size = get_u64(c);
	m->mode = get_u32(c);
	m->hostname = get_u32(c);
	m->start_time = get_u64(c);
	m->notes = get_ids(c, &m->nnotes, &ret);
	if (!c->bad && !(isfinite(m->duration_s) && m->duration_s >= 0))
		c->bad = true;
	return ret;
}

static int read_counters(struct cur *c, struct os_profile *p)
{
	uint64_t *counters = (uint64_t *)&p->c;
	uint32_t n = get_count(c, 8), i;

	/* Counters a later version added are skipped; missing ones stay 0. */
	for (i = 0; i < n && !c->bad; i++) {
		uint64_t v = get_u64(c);

		if (i < NCOUNTERS)
			counters[i] = v;
	}
	return 0;
}

static void get_metrics(struct cur *r, uint64_t *m)
{
	int i;

	for (i = 0; i < OS_M_COUNT; i++)
		m[i] = get_u64(r);
}

static int read_contexts(struct cur *c, struct os_profile *p)
{
	uint32_t n = get_u32(c), rec = get_u32(c), i;

	if (c->bad || rec < CONTEXT_REC || (uint64_t)n * rec > left(c)) {
		c->bad = true;
		return 0;
	}
	p->contexts = calloc(n ? n : 1, sizeof(*p->contexts));
	if (!p->contexts)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct cur r = { take(c, rec), rec, 0, false };
		struct os_context *x = &p->contexts[i];

		x->type = get_u32(&r);
		x->stack = get_u32(&r);
		x->allocations = get_u64(&r);
		x->bytes = get_u64(&r);
		x->samples = get_u64(&r);
		get_metrics(&r, x->metrics);
	}
	p->ncontexts = n;
	return 0;
}

static int read_accesses(struct cur *c, struct os_profile *p)
{
	uint32_t n = get_u32(c), rec = get_u32(c), i;

	if (c->bad || rec < ACCESS_REC || (uint64_t)n * rec > left(c)) {
		c->bad = true;
		return 0;
	}
	p->accesses = calloc(n ? n : 1, sizeof(*p->accesses));
	if (!p->accesses)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct cur r = { take(c, rec), rec, 0, false };
		struct os_access *a = &p->accesses[i];

		a->context = get_u32(&r);
		a->stack = get_u32(&r);
		a->samples = get_u64(&r);
		get_metrics(&r, a->metrics);
	}
	p->naccesses = n;
	return 0;
}

static int read_threads(struct cur *c, struct os_profile *p)
{
	uint32_t n = get_u32(c), rec = get_u32(c), i;

	if (c->bad || rec < THREAD_REC || (uint64_t)n * rec > left(c)) {
		c->bad = true;
		return 0;
	}
	p->threads = calloc(n ? n : 1, sizeof(*p->threads));
	if (!p->threads)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct cur r = { take(c, rec), rec, 0, false };
		struct os_thread *t = &p->threads[i];

		t->kind = get_u32(&r);
		t->name = get_u32(&r);
		t->pid = get_u32(&r);
		t->tid = get_u32(&r);
		t->samples = get_u64(&r);
	}
	p->nthreads = n;
	return 0;
}

/* n records of rec bytes: a context index, then up to nv u64 counts into
 * the struct at byte off of that context (later fields skipped, missing
 * ones stay 0). */
static void read_ctx_counts(struct cur *c, struct os_profile *p, uint32_t n, uint32_t rec,
			    size_t off, size_t nv)
{
	for (uint32_t i = 0; i < n; i++) {
		struct cur r = { take(c, rec), rec, 0, false };
		uint32_t ctx = get_u32(&r);
		uint64_t *v;

		if (ctx >= p->ncontexts) {
			c->bad = true;
			return;
		}
		v = (uint64_t *)((char *)&p->contexts[ctx] + off);
		for (size_t j = 0; j < nv && 4 + 8 * (j + 1) <= rec; j++)
			v[j] = get_u64(&r);
	}
}

/* After CONTEXTS: counts of the contexts named (later fields skipped). */
static int read_replicas(struct cur *c, struct os_profile *p)
{
	uint32_t n = get_u32(c), rec = get_u32(c);

	/* counts a later version added are skipped, missing ones stay 0 */
	if (c->bad || rec < REPLICA_REC_MIN || (uint64_t)n * rec > left(c)) {
		c->bad = true;
		return 0;
	}
	read_ctx_counts(c, p, n, rec, offsetof(struct os_context, replica), NREPLICA);
	if (!c->bad)
		p->analyses |= OS_AN_REPLICAS;
	return 0;
}

/* After CONTEXTS: which of MEMSRC / NUMA ran, and the figures of the
 * contexts named (counts a later version added are skipped). */
static int read_memsrc(struct cur *c, struct os_profile *p)
{
	uint32_t an = get_u32(c), nodes = get_u32(c), n = get_u32(c), rec = get_u32(c);

	if (c->bad || rec < 4 + 8 || (uint64_t)n * rec > left(c) ||
	    (an & ~(uint32_t)(OS_AN_MEMSRC | OS_AN_NUMA))) {
		c->bad = true;
		return 0;
	}
	read_ctx_counts(c, p, n, rec, offsetof(struct os_context, mem), NMEMSRC);
	if (!c->bad) {
		p->analyses |= an;
		p->numa_nodes = nodes;
	}
	return 0;
}

/* An estimate: finite and not negative. */
static bool est_ok(double d)
{
	return isfinite(d) && d >= 0;
}

/* One table of ESTIMATES: (index, estimate) records; index below n.
 * var_off (SIZE_MAX: none): where each record's variance goes, when the
 * records carry one (EST_VAR_REC, version 3); returns whether they did. */
static bool read_est_table(struct cur *c, uint32_t nidx, void *base, size_t stride, size_t off,
			   size_t var_off)
{
	uint32_t n = get_u32(c), rec = get_u32(c), i;
	bool vars = var_off != SIZE_MAX && rec >= EST_VAR_REC;

	if (c->bad || rec < EST_REC || (uint64_t)n * rec > left(c)) {
		c->bad = true;
		return false;
	}
	for (i = 0; i < n; i++) {
		struct cur r = { take(c, rec), rec, 0, false };
		uint32_t idx = get_u32(&r);
		double d = get_f64(&r), v = vars ? get_f64(&r) : 0;

		if (idx >= nidx || !est_ok(d) || !est_ok(v)) {
			c->bad = true;
			return false;
		}
		memcpy((char *)base + (size_t)idx * stride + off, &d, sizeof(d));
		if (vars)
			memcpy((char *)base + (size_t)idx * stride + var_off, &v, sizeof(v));
	}
	return vars;
}

/* After CONTEXTS and ACCESSES: their sample estimates. */
static int read_estimates(struct cur *c, struct os_profile *p)
{
	bool vars;

	p->est.samples_attributed = get_f64(c);
	p->est.samples_java_attributed = get_f64(c);
	if (c->bad || !est_ok(p->est.samples_attributed) ||
	    !est_ok(p->est.samples_java_attributed)) {
		c->bad = true;
		return 0;
	}
	vars = read_est_table(c, p->ncontexts, p->contexts, sizeof(*p->contexts),
			      offsetof(struct os_context, samples_est),
			      offsetof(struct os_context, samples_var));
	read_est_table(c, p->naccesses, p->accesses, sizeof(*p->accesses),
		       offsetof(struct os_access, samples_est), SIZE_MAX);
	if (!c->bad)
		p->analyses |= OS_AN_ESTIMATES | (vars ? OS_AN_EST_VAR : 0);
	return 0;
}

/* After CONTEXTS and ACCESSES: estimated allocation paths (later fields
 * of a record skipped). */
static int read_pathest(struct cur *c, struct os_profile *p)
{
	uint32_t n = get_u32(c), rec = get_u32(c), i;

	if (c->bad || rec < PATHEST_REC || (uint64_t)n * rec > left(c)) {
		c->bad = true;
		return 0;
	}
	for (i = 0; i < n; i++) {
		struct cur r = { take(c, rec), rec, 0, false };
		uint32_t ctx = get_u32(&r);
		struct os_pathest e;

		e.kind = get_u32(&r);
		e.class_sites = get_u32(&r);
		e.path_est = get_f64(&r);
		e.seen = get_u64(&r);
		e.class_seen = get_u64(&r);
		e.evidence = rec >= PATHEST_REC_V3 ? get_f64(&r) : NAN;
		if (ctx >= p->ncontexts || e.kind > OS_PATH_CLASS || !isfinite(e.path_est) ||
		    (rec >= PATHEST_REC_V3 && !est_ok(e.evidence))) {
			c->bad = true;
			return 0;
		}
		p->contexts[ctx].pe = e;
	}
	n = get_u32(c);
	rec = get_u32(c);
	if (c->bad || rec < EST_REC || (uint64_t)n * rec > left(c)) {
		c->bad = true;
		return 0;
	}
	for (i = 0; i < n; i++) {
		struct cur r = { take(c, rec), rec, 0, false };
		uint32_t idx = get_u32(&r);
		double d = get_f64(&r);

		if (idx >= p->naccesses || !isfinite(d)) {
			c->bad = true;
			return 0;
		}
		p->accesses[idx].path_est = d;
	}
	if (!c->bad)
		p->analyses |= OS_AN_PATHEST;
	return 0;
}

/* After CONTEXTS, ACCESSES and THREADS (checked in validate()). */
static int read_slices(struct cur *c, struct os_profile *p)
{
	uint32_t ms = get_u32(c), n = get_u32(c), rec = get_u32(c), i;

	if (c->bad || ms == 0 || rec < SLICE_REC || (uint64_t)n * rec > left(c)) {
		c->bad = true;
		return 0;
	}
	p->slices = calloc(n ? n : 1, sizeof(*p->slices));
	if (!p->slices)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct cur r = { take(c, rec), rec, 0, false };
		struct os_slice *sl = &p->slices[i];

		sl->context = get_u32(&r);
		sl->access = get_u32(&r);
		sl->thread = get_u32(&r);
		sl->bucket = get_u32(&r);
		sl->samples = get_u64(&r);
	}
	p->nslices = n;
	p->slice_ms = ms;
	p->analyses |= OS_AN_SLICES;
	return 0;
}

/* One table of a LIFETIMES record: `bins` figures, those past OS_LT_BINS
 * added to the last bin; false when one is not a finite count. */
static bool read_lt_bins(struct cur *r, uint32_t bins, double *out)
{
	for (uint32_t k = 0; k < bins; k++) {
		double d = get_f64(r);

		if (!est_ok(d))
			return false;
		out[k < OS_LT_BINS ? k : OS_LT_BINS - 1] += d;
	}
	return true;
}

/* After CONTEXTS: lifetimes of the contexts named. */
/* OVERHEAD: nf figures (those past the ones known skipped, those a
 * shorter record lacks NaN), then the flags. */
static int read_overhead(struct cur *c, struct os_profile *p)
{
	uint32_t nf = get_u32(c);
	double *f = &p->ovh.max_pct;

	if (c->bad || (uint64_t)nf * 8 + 8 > left(c)) {
		c->bad = true;
		return 0;
	}
	for (uint32_t i = 0; i < nf; i++) {
		double d = get_f64(c);

		if (i < OS_OVERHEAD_NF)
			f[i] = d;
	}
	for (uint32_t i = nf; i < OS_OVERHEAD_NF; i++)
		f[i] = NAN;
	p->ovh.calibrated = get_u32(c) != 0;
	p->ovh.steered = get_u32(c) != 0;
	if (!c->bad)
		p->analyses |= OS_AN_OVERHEAD;
	return 0;
}

static int read_lifetimes(struct cur *c, struct os_profile *p)
{
	uint32_t flags = get_u32(c), bins = get_u32(c), n, rec;
	struct os_lifetimes lt = { .flags = flags };

	lt.peak_bytes = get_f64(c);
	lt.peak_ns = get_u64(c);
	lt.collections = get_u64(c);
	lt.collections_unjudged = get_u64(c);
	lt.unaged = get_u64(c);
	if (!c->bad && bins <= 4096 && (uint64_t)bins * 8 <= left(c)) {
		struct cur r = { take(c, (uint64_t)bins * 8), (uint64_t)bins * 8, 0, false };

		if (!read_lt_bins(&r, bins, lt.survivor_bytes))
			c->bad = true;
	} else {
		c->bad = true;
	}
	n = get_u32(c);
	rec = get_u32(c);
	if (c->bad || !bins || bins > 4096 || !est_ok(lt.peak_bytes) || rec < LT_REC(bins) ||
	    (uint64_t)n * rec > left(c)) {
		c->bad = true;
		return 0;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct cur r = { take(c, rec), rec, 0, false };
		uint32_t ctx = get_u32(&r), kind = get_u32(&r), lflags = get_u32(&r);
		struct os_lifetime *l;

		get_u32(&r);
		if (c->bad || ctx >= p->ncontexts || kind > OS_LT_NATIVE) {
			c->bad = true;
			return 0;
		}
		l = os_profile_lifetime(p, ctx);
		if (!l)
			return -ENOMEM;
		l->kind = kind;
		l->flags = lflags;
		if (!read_lt_bins(&r, bins, l->ended) || !read_lt_bins(&r, bins, l->ended_bytes) ||
		    !read_lt_bins(&r, bins, l->live) || !read_lt_bins(&r, bins, l->live_bytes)) {
			c->bad = true;
			return 0;
		}
		l->promoted = get_f64(&r);
		l->promoted_bytes = get_f64(&r);
		l->peak_bytes = get_f64(&r);
		l->peak_ns = get_u64(&r);
		if (!est_ok(l->promoted) || !est_ok(l->promoted_bytes) || !est_ok(l->peak_bytes)) {
			c->bad = true;
			return 0;
		}
	}
	lt.nctx = p->lt.nctx;
	lt.ctx = p->lt.ctx;
	p->lt = lt;
	p->analyses |= OS_AN_LIFETIMES;
	return 0;
}

/* After CONTEXTS: reuse signatures of the contexts named (bins past
 * OS_REUSE_NBINS but the last are added to the last finite bin; the last
 * is always the no-reuse bin). */
static int read_reuse(struct cur *c, struct os_profile *p)
{
	uint32_t bins = get_u32(c), n;
	struct os_reuses ru = { 0 };

	ru.rate_source = get_u32(c);
	if (ru.rate_source > OS_RU_RATE_OBJECTS)
		ru.rate_source = OS_RU_RATE_CALIBRATED;
	for (int k = 0; k < 3; k++)
		ru.cache[k] = get_u64(c);
	ru.bytes_per_ns = get_f64(c);
	ru.insn_per_ns = get_f64(c);
	ru.mem_share = get_f64(c);
	ru.width = get_f64(c);
	ru.trap_ns = get_f64(c);
	ru.pairs = get_u64(c);
	ru.censored = get_u64(c);
	ru.max_age_ns = get_u64(c);
	n = get_u32(c);
	if (c->bad || bins < 2 || bins > 4096 || !est_ok(ru.bytes_per_ns) ||
	    !est_ok(ru.insn_per_ns) || !est_ok(ru.mem_share) || !est_ok(ru.width) ||
	    !est_ok(ru.trap_ns) || (uint64_t)n * (4 + (uint64_t)bins * 8) > left(c)) {
		c->bad = true;
		return 0;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t ctx = get_u32(c);
		struct os_reuse *r;

		if (c->bad || ctx >= p->ncontexts) {
			c->bad = true;
			return 0;
		}
		r = os_profile_reuse(p, ctx);
		if (!r)
			return -ENOMEM;
		for (uint32_t k = 0; k < bins; k++) {
			double d = get_f64(c);
			uint32_t to = k == bins - 1 ? OS_REUSE_NBINS - 1
				    : k < OS_REUSE_NBINS - 1 ? k : OS_REUSE_NBINS - 2;

			if (!est_ok(d)) {
				c->bad = true;
				return 0;
			}
			r->bins[to] += d;
		}
	}
	ru.nctx = p->ru.nctx;
	ru.ctx = p->ru.ctx;
	p->ru = ru;
	p->analyses |= OS_AN_REUSE;
	return 0;
}

/* After META: notes kept as counters (groups of figures). */
static int read_note_counters(struct cur *c, struct os_profile *p)
{
	uint32_t n = get_count(c, 12), i;

	if (c->bad)
		return 0;
	p->note_counters = calloc(n ? n : 1, sizeof(*p->note_counters));
	if (!p->note_counters)
		return -ENOMEM;
	for (i = 0; i < n && !c->bad; i++) {
		struct os_note_counters *g = &p->note_counters[i];

		g->kind = get_u32(c);
		g->at = get_u32(c);
		g->nvals = get_count(c, 16);
		if (c->bad)
			break;
		p->nnote_counters = i + 1;
		g->vals = calloc(g->nvals ? g->nvals : 1, sizeof(*g->vals));
		if (!g->vals) {
			g->nvals = 0;
			return -ENOMEM;
		}
		for (uint32_t k = 0; k < g->nvals; k++) {
			g->vals[k].key = get_u32(c);
			g->vals[k].type = get_u32(c);
			g->vals[k].v = get_u64(c);
		}
	}
	return 0;
}

typedef int (*section_reader)(struct cur *c, struct os_profile *p);

/* In dependency order: tables before what refers to them. */
static const struct {
	uint32_t type;
	section_reader read;
} readers[] = {
	{ OS_SEC_STRINGS, read_strings },   { OS_SEC_FRAMES, read_frames },
	{ OS_SEC_STACKS, read_stacks },	    { OS_SEC_META, read_meta },
	{ OS_SEC_COUNTERS, read_counters }, { OS_SEC_CONTEXTS, read_contexts },
	{ OS_SEC_ACCESSES, read_accesses }, { OS_SEC_THREADS, read_threads },
	{ OS_SEC_REPLICAS, read_replicas }, { OS_SEC_ESTIMATES, read_estimates },
	{ OS_SEC_SLICES, read_slices },	    { OS_SEC_NOTE_COUNTERS, read_note_counters },
	{ OS_SEC_LIFETIMES, read_lifetimes }, { OS_SEC_REUSE, read_reuse },
	{ OS_SEC_MEMSRC, read_memsrc },
	{ OS_SEC_OVERHEAD, read_overhead },
	{ OS_SEC_PATHEST, read_pathest },
};

static bool str_ok(const struct os_profile *p, uint32_t id, bool none_ok)
{
	return id < p->nstrings || (none_ok && id == OS_NONE);
}

static bool stack_ok(const struct os_profile *p, uint32_t id)
{
	return id < p->nstacks || id == OS_NONE;
}

/* Checks that every id refers to an existing entry; returns 0, or non-zero
 * with the first bad reference described in `what`. */
static int validate(const struct os_profile *p, char *what, size_t len)
{
	const struct os_meta *m = &p->meta;
	uint32_t i, j;

	for (i = 0; i < p->nframes; i++) {
		const struct os_frame *f = &p->frames[i];

		if (!str_ok(p, f->name, true) || !str_ok(p, f->module, true) ||
		    !str_ok(p, f->file, true) || !str_ok(p, f->near_sym, true) ||
		    !str_ok(p, f->build_id, true))
			return snprintf(what, len, "frame %" PRIu32 " refers to a missing string", i);
	}
	for (i = 0; i < p->nstacks; i++)
		for (j = 0; j < p->stacks[i].nframes; j++)
			if (p->stacks[i].frames[j] >= p->nframes)
				return snprintf(what, len,
						"stack %" PRIu32 " refers to missing frame %" PRIu32,
						i, p->stacks[i].frames[j]);
	for (i = 0; i < p->ncontexts; i++)
		if (!str_ok(p, p->contexts[i].type, true) || !stack_ok(p, p->contexts[i].stack))
			return snprintf(what, len,
					"context %" PRIu32 " refers to a missing type or stack", i);
	for (i = 0; i < p->naccesses; i++)
		if (p->accesses[i].context >= p->ncontexts || !stack_ok(p, p->accesses[i].stack))
			return snprintf(what, len,
					"access %" PRIu32 " refers to a missing context or stack", i);
	for (i = 0; i < p->nthreads; i++)
		if (!str_ok(p, p->threads[i].name, true))
			return snprintf(what, len, "thread %" PRIu32 " refers to a missing string", i);
	for (i = 0; i < p->nslices; i++) {
		const struct os_slice *sl = &p->slices[i];

		if (sl->context >= p->ncontexts || sl->thread >= p->nthreads ||
		    (sl->access != OS_NONE && (sl->access >= p->naccesses ||
					       p->accesses[sl->access].context != sl->context)))
			return snprintf(what, len,
					"slice %" PRIu32 " refers to a missing context, access or"
					" thread", i);
	}
	for (i = 0; i < m->argc; i++)
		if (!str_ok(p, m->argv[i], false))
			return snprintf(what, len, "command argument %" PRIu32 " is missing", i);
	for (i = 0; i < m->nnotes; i++)
		if (!str_ok(p, m->notes[i], false))
			return snprintf(what, len, "note %" PRIu32 " is missing", i);
	for (i = 0; i < p->nnote_counters; i++) {
		const struct os_note_counters *g = &p->note_counters[i];

		if (!str_ok(p, g->kind, false) || g->at > m->nnotes)
			return snprintf(what, len, "note counters %" PRIu32 " refer to a missing "
					"string or note", i);
		for (j = 0; j < g->nvals; j++)
			if (!str_ok(p, g->vals[j].key, false) ||
			    (g->vals[j].type == OS_NV_STR && !str_ok(p, (uint32_t)g->vals[j].v,
									  false)) ||
			    (g->vals[j].type == OS_NV_STR && g->vals[j].v >= OS_NONE))
				return snprintf(what, len, "note counters %" PRIu32 " refer to a "
						"missing string", i);
	}
	if (!str_ok(p, m->sampler, true) || !str_ok(p, m->event, true) ||
	    !str_ok(p, m->mode, true) || !str_ok(p, m->hostname, true))
		return snprintf(what, len, "meta data refers to a missing string");
	return 0;
}

static struct os_profile *empty_profile(void)
{
	struct os_profile *p = calloc(1, sizeof(*p));

	if (p) {
		p->meta.sampler = OS_NONE;
		p->meta.event = OS_NONE;
		p->meta.mode = OS_NONE;
		p->meta.hostname = OS_NONE;
	}
	return p;
}

/* Parses and validates buf; `name` prefixes error messages (may be NULL). */
static int parse(const uint8_t *buf, size_t len, const char *name, struct os_profile **out,
		 char *err, size_t errlen)
{
	struct span spans[NSECTIONS] = { { 0 } };
	struct os_profile *p = NULL;
	uint64_t size, off, end;
	uint32_t version, crc;
	char what[160];
	size_t i;
	int ret;

	*out = NULL;
	if (len == 0) {
		set_err(err, errlen, name, "not an objscope profile (empty file)");
		return -EINVAL;
	}
	if (memcmp(buf, OS_PROFILE_MAGIC, len < 8 ? len : 8) != 0) {
		set_err(err, errlen, name, "not an objscope profile");
		return -EINVAL;
	}
	if (len < 12) {
		set_err(err, errlen, name,
			"truncated profile (expected at least %d bytes, got %zu)", HEADER_SIZE, len);
		return -EPROTO;
	}
	version = le32(buf + 8);
	if (version < OS_PROFILE_VERSION_MIN || version > OS_PROFILE_VERSION) {
		set_err(err, errlen, name,
			"unsupported profile version %" PRIu32 " (this objscope reads versions %d"
			" to %d)", version, OS_PROFILE_VERSION_MIN, OS_PROFILE_VERSION);
		return -ENOTSUP;
	}
	if (len < HEADER_SIZE) {
		set_err(err, errlen, name,
			"truncated profile (expected at least %d bytes, got %zu)", HEADER_SIZE, len);
		return -EPROTO;
	}
	size = le64(buf + 16);
	if (size < HEADER_SIZE + END_SIZE) {
		set_err(err, errlen, name, "corrupt profile: bad file size %" PRIu64, size);
		return -EPROTO;
	}
	if (len < size) {
		set_err(err, errlen, name, "truncated profile (expected %" PRIu64 " bytes, got %zu)",
			size, len);
		return -EPROTO;
	}
	if (len > size) {
		set_err(err, errlen, name, "corrupt profile: %" PRIu64 " unexpected bytes after the end",
			(uint64_t)len - size);
		return -EPROTO;
	}
	end = size - END_SIZE;
	/* The END header is not covered by the checksum: all of it is fixed. */
	if (le32(buf + end) != OS_SEC_END || le32(buf + end + 4) != 0 ||
	    le64(buf + end + 8) != 4) {
		set_err(err, errlen, name, "corrupt profile: END section missing");
		return -EPROTO;
	}
	crc = (uint32_t)crc32_z(crc32(0L, NULL, 0), buf, end);
	if (crc != le32(buf + end + SECHDR_SIZE)) {
		set_err(err, errlen, name, "corrupt profile: checksum mismatch");
		return -EPROTO;
	}

	/* Section directory; unknown types are skipped. */
	for (off = HEADER_SIZE; off < end;) {
		uint32_t type;
		uint64_t slen;

		if (end - off < SECHDR_SIZE) {
			set_err(err, errlen, name, "corrupt profile: section header at %" PRIu64
				" overruns the file", off);
			return -EPROTO;
		}
		type = le32(buf + off);
		slen = le64(buf + off + 8);
		if (slen > end - off - SECHDR_SIZE) {
			set_err(err, errlen, name, "corrupt profile: section at %" PRIu64
				" is longer than the file", off);
			return -EPROTO;
		}
		if (type == OS_SEC_END) {
			set_err(err, errlen, name, "corrupt profile: END section before the end");
			return -EPROTO;
		}
		if (type < NSECTIONS && section_names[type]) {
			if (spans[type].present) {
				set_err(err, errlen, name, "corrupt profile: duplicate %s section",
					section_names[type]);
				return -EPROTO;
			}
			spans[type] = (struct span){ off + SECHDR_SIZE, slen, true };
		}
		off += SECHDR_SIZE + slen;
	}

	p = empty_profile();
	if (!p) {
		ret = -ENOMEM;
		goto nomem;
	}
	for (i = 0; i < sizeof(readers) / sizeof(readers[0]); i++) {
		const struct span *s = &spans[readers[i].type];
		struct cur c = { buf + s->off, s->len, 0, false };

		if (!s->present)
			continue;
		ret = readers[i].read(&c, p);
		if (ret)
			goto nomem;
		if (c.bad) {
			set_err(err, errlen, name,
				"corrupt profile: %s section is malformed (a count or length"
				" overruns it)", section_names[readers[i].type]);
			ret = -EPROTO;
			goto fail;
		}
	}
	if (validate(p, what, sizeof(what))) {
		set_err(err, errlen, name, "corrupt profile: %s", what);
		ret = -EPROTO;
		goto fail;
	}
	*out = p;
	return 0;
nomem:
	set_err(err, errlen, name, "cannot load profile: %s", strerror(ENOMEM));
fail:
	os_profile_free(p);
	return ret;
}

int os_profile_read_mem(const void *buf, size_t len, struct os_profile **out, char *err,
			size_t errlen)
{
	return parse(buf, len, NULL, out, err, errlen);
}

int os_profile_read(const char *path, struct os_profile **out, char *err, size_t errlen)
{
	uint8_t *buf = NULL;
	struct stat st;
	size_t got = 0;
	int fd, ret;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		set_err(err, errlen, path, "cannot open profile: %s", strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		set_err(err, errlen, path, "cannot read profile: %s", strerror(-ret));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		set_err(err, errlen, path, "not an objscope profile (not a regular file)");
		goto out;
	}
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!buf) {
		ret = -ENOMEM;
		set_err(err, errlen, path, "cannot read profile: %s", strerror(-ret));
		goto out;
	}
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			ret = -errno;
			set_err(err, errlen, path, "cannot read profile: %s", strerror(-ret));
			goto out;
		}
		if (r == 0)
			break; /* shrank while reading: parse reports the truncation */
		got += (size_t)r;
	}
	ret = parse(buf, got, path, out, err, errlen);
out:
	free(buf);
	close(fd);
	return ret;
}
