/* reuse_exact - exact reuse distances of a valgrind lackey trace
 * (common/reuse_exact.h; docs/REUSE.md "Checking against the exact engine").
 *
 *   valgrind --tool=lackey --trace-mem=yes --log-file=T prog ...
 *   reuse_exact [--range NAME:LO:HI]... [--ranges-file F] < T
 *
 * Every data access of the trace (L, S, M lines; M counts once) goes through
 * the engine; the reuses of accesses in [LO, HI) (hex or decimal) are
 * gathered per range. --ranges-file: more ranges, "NAME LO HI" per line,
 * read when the trace has ended (the traced program may write it while it
 * runs). Prints one line per range:
 *   range NAME accesses A reuses R cold C median M bins B0 B1 ... B39
 * (median in bytes over the finite reuses, -1 without any). Exit status 0,
 * 1 on bad input or memory (one line on stderr). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/reuse_exact.h"
#include "common/reuse_math.h"

#define MAX_RANGES 16

struct range {
	char name[64];
	uint64_t lo, hi;
	uint64_t accesses, cold;
	uint64_t *d;
	size_t n, cap;
	uint64_t bins[OS_REUSE_BINS];
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int parse_range(const char *s, struct range *r)
{
	const char *c1 = strchr(s, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	char *end;

	if (!c1 || !c2 || c1 == s || (size_t)(c1 - s) >= sizeof(r->name))
		return -1;
	memcpy(r->name, s, (size_t)(c1 - s));
	r->lo = strtoull(c1 + 1, &end, 0);
	if (end != c2)
		return -1;
	r->hi = strtoull(c2 + 1, &end, 0);
	return *end || r->hi <= r->lo ? -1 : 0;
}

static int note(struct range *r, uint64_t d)
{
	r->accesses++;
	if (d == UINT64_MAX) {
		r->cold++;
		r->bins[OS_REUSE_COLD]++;
		return 0;
	}
	r->bins[os_reuse_bin(d)]++;
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 4096;
		uint64_t *p = realloc(r->d, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		r->d = p;
		r->cap = cap;
	}
	r->d[r->n++] = d;
	return 0;
}

/* Every data access: its address and distance (UINT64_MAX: cold). */
struct trace {
	uint64_t *addr, *dist;
	size_t n, cap;
};

static int trace_add(struct trace *t, uint64_t addr, uint64_t dist)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1 << 20;
		uint64_t *a = realloc(t->addr, cap * sizeof(*a)), *d;

		if (!a)
			return -ENOMEM;
		t->addr = a;
		d = realloc(t->dist, cap * sizeof(*d));
		if (!d)
			return -ENOMEM;
		t->dist = d;
		t->cap = cap;
	}
	t->addr[t->n] = addr;
	t->dist[t->n++] = dist;
	return 0;
}

static int read_ranges_file(const char *path, struct range *rs, unsigned *nr)
{
	FILE *f = fopen(path, "r");
	char name[64], lo[32], hi[32], spec[160];

	if (!f)
		return -1;
	while (*nr < MAX_RANGES && fscanf(f, "%63s %31s %31s", name, lo, hi) == 3) {
		snprintf(spec, sizeof(spec), "%s:%s:%s", name, lo, hi);
		if (parse_range(spec, &rs[*nr])) {
			fclose(f);
			return -1;
		}
		(*nr)++;
	}
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	struct range *rs = calloc(MAX_RANGES, sizeof(*rs));
	const char *ranges_file = NULL;
	struct trace tr = { 0 };
	unsigned nr = 0;
	struct os_rx x;
	char line[256];
	uint64_t lines = 0;

	if (!rs)
		return 1;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--range") && i + 1 < argc && nr < MAX_RANGES &&
		    !parse_range(argv[i + 1], &rs[nr])) {
			nr++;
			i++;
			continue;
		}
		if (!strcmp(argv[i], "--ranges-file") && i + 1 < argc) {
			ranges_file = argv[++i];
			continue;
		}
		fprintf(stderr, "reuse_exact: bad argument '%s' (usage: reuse_exact "
			"[--range NAME:LO:HI]... [--ranges-file F] < lackey-trace)\n", argv[i]);
		return 1;
	}
	os_rx_init(&x);
	while (fgets(line, sizeof(line), stdin)) {
		char *p = line, *end;
		uint64_t addr, d = 0;
		unsigned long width;
		int cold;

		lines++;
		/* " L 1ffefffe58,8" / " S ..." / " M ..."; "I  ..." and "==" lines skipped */
		if (p[0] != ' ' || (p[1] != 'L' && p[1] != 'S' && p[1] != 'M') || p[2] != ' ')
			continue;
		addr = strtoull(p + 3, &end, 16);
		if (*end != ',')
			continue;
		width = strtoul(end + 1, &end, 10);
		if (!width || width > 64)
			continue;
		cold = os_rx_access(&x, addr, (unsigned)width, &d);
		if (cold < 0 || trace_add(&tr, addr, cold ? UINT64_MAX : d)) {
			fprintf(stderr, "reuse_exact: %s at trace line %llu\n",
				strerror(cold < 0 ? -cold : ENOMEM), (unsigned long long)lines);
			return 1;
		}
	}
	os_rx_destroy(&x);
	if (ranges_file && read_ranges_file(ranges_file, rs, &nr)) {
		fprintf(stderr, "reuse_exact: %s: unreadable or not \"NAME LO HI\" lines\n",
			ranges_file);
		return 1;
	}
	for (unsigned k = 0; k < nr; k++) {
		struct range *r = &rs[k];
		long long med = -1;

		for (size_t i = 0; i < tr.n; i++)
			if (tr.addr[i] >= r->lo && tr.addr[i] < r->hi && note(r, tr.dist[i])) {
				fprintf(stderr, "reuse_exact: out of memory\n");
				return 1;
			}
		if (r->n) {
			qsort(r->d, r->n, sizeof(*r->d), cmp_u64);
			med = (long long)r->d[r->n / 2];
		}
		printf("range %s accesses %llu reuses %zu cold %llu median %lld bins", r->name,
		       (unsigned long long)r->accesses, r->n, (unsigned long long)r->cold, med);
		for (unsigned b = 0; b < OS_REUSE_BINS; b++)
			printf(" %llu", (unsigned long long)r->bins[b]);
		printf("\n");
		free(r->d);
	}
	free(tr.addr);
	free(tr.dist);
	free(rs);
	return 0;
}
