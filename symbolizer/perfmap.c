#include "symbolizer/perfmap.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/grow.h"
#include "common/safefs.h"
#include "common/search.h"

/* Memory stays a bounded multiple of what is kept, never of the file: the
 * names live in one arena (no allocation per line), and when the entries
 * or the arena are full they are compacted (one entry per start address,
 * the last line written; the arena keeps the live names only). A map whose
 * live entries still fill half of either after a compaction is refused as
 * too large (-EFBIG), as one over OS_PERFMAP_MAX_BYTES is. */
struct pm_ent {
	uint64_t start;
	uint64_t size;
	uint32_t name;  /* offset into names */
	uint32_t seq;   /* line order, to let later lines win */
};

struct os_perfmap {
	struct pm_ent *ents;
	size_t n;
	char *names;
	size_t names_len;
	size_t bad;        /* lines that do not parse (skipped) */
	size_t long_lines; /* lines over OS_PERFMAP_MAX_LINE (skipped) */
};

#define PM_CHUNK 65536

static int parse_hex(char **p, uint64_t *out)
{
	char *end;

	if (!isxdigit((unsigned char)**p))
		return -EINVAL;
	errno = 0;
	*out = strtoull(*p, &end, 16);   /* accepts an optional 0x */
	if (errno || end == *p || (*end != ' ' && *end != '\t'))
		return -EINVAL;
	*p = end;
	while (**p == ' ' || **p == '\t')
		(*p)++;
	return 0;
}

int os_perfmap_parse_line(char *line, uint64_t *start, uint64_t *size, char **name)
{
	char *p = line;
	size_t len;

	while (*p == ' ' || *p == '\t')
		p++;
	if (parse_hex(&p, start) || parse_hex(&p, size))
		return -EINVAL;
	len = strlen(p);
	while (len && (p[len - 1] == '\n' || p[len - 1] == '\r'))
		p[--len] = '\0';
	if (!len)
		return -EINVAL;
	*name = p;
	return 0;
}

static int cmp_ent(const void *a, const void *b)
{
	const struct pm_ent *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_name(const void *a, const void *b)
{
	const struct pm_ent *x = a, *y = b;

	return x->name < y->name ? -1 : x->name > y->name;
}

void os_perfmap_free(struct os_perfmap *pm)
{
	if (!pm)
		return;
	free(pm->ents);
	free(pm->names);
	free(pm);
}

/* Sorted by start, one entry per start (the last line); with `names`, the
 * arena then holds the live names only (moved down in offset order: never
 * over one not yet moved). */
static void pm_compact(struct os_perfmap *pm, bool names)
{
	size_t i, j, len = 0;

	if (pm->n)
		qsort(pm->ents, pm->n, sizeof(*pm->ents), cmp_ent);
	for (i = 0, j = 0; i < pm->n; i++) {
		if (j && pm->ents[j - 1].start == pm->ents[i].start) {
			pm->ents[j - 1] = pm->ents[i];
			continue;
		}
		pm->ents[j++] = pm->ents[i];
	}
	pm->n = j;
	if (!names)
		return;
	if (pm->n)
		qsort(pm->ents, pm->n, sizeof(*pm->ents), cmp_name);
	for (i = 0; i < pm->n; i++) {
		size_t l = strlen(pm->names + pm->ents[i].name) + 1;

		memmove(pm->names + len, pm->names + pm->ents[i].name, l);
		pm->ents[i].name = (uint32_t)len;
		len += l;
	}
	pm->names_len = len;
	if (pm->n)
		qsort(pm->ents, pm->n, sizeof(*pm->ents), cmp_ent);
}

/* The perf map is written by the target (hostile input): read in chunks,
 * lines longer than OS_PERFMAP_MAX_LINE skipped and counted, the whole
 * file at most OS_PERFMAP_MAX_BYTES. */
struct pm_reader {
	struct os_perfmap *pm;
	size_t cap;        /* of pm->ents */
	size_t names_cap;  /* of pm->names */
	uint32_t seq;      /* lines kept so far */
	char *line;        /* the line being assembled (OS_PERFMAP_MAX_LINE + 1) */
	size_t llen;
	bool skipping;     /* the current line is over-long: dropped to its end */
};

/* Room for one more entry and `len` more name bytes: grown up to the caps,
 * compacted there; -EFBIG when the live ones fill half a cap. */
static int pm_room(struct pm_reader *r, size_t len)
{
	struct os_perfmap *pm = r->pm;
	struct pm_ent *n;
	char *names;

	if (pm->names_len + len > OS_PERFMAP_MAX_NAMES) {
		pm_compact(pm, true);
		if (pm->names_len + len > OS_PERFMAP_MAX_NAMES / 2)
			return -EFBIG;
	}
	if (pm->n + 1 > OS_PERFMAP_MAX_ENTRIES) {
		pm_compact(pm, true);
		if (pm->n + 1 > OS_PERFMAP_MAX_ENTRIES / 2)
			return -EFBIG;
	}
	n = os_grow_max(pm->ents, &r->cap, pm->n + 1, sizeof(*n), 256, OS_PERFMAP_MAX_ENTRIES);
	if (!n)
		return -ENOMEM;
	pm->ents = n;
	names = os_grow_max(pm->names, &r->names_cap, pm->names_len + len, 1, 4096,
			    OS_PERFMAP_MAX_NAMES);
	if (!names)
		return -ENOMEM;
	pm->names = names;
	return 0;
}

static int pm_add(struct pm_reader *r)
{
	struct os_perfmap *pm = r->pm;
	uint64_t start, size;
	size_t len;
	char *name;
	int ret;

	r->line[r->llen] = 0;
	r->llen = 0;
	if (os_perfmap_parse_line(r->line, &start, &size, &name) || !size) {
		pm->bad++;
		return 0;
	}
	len = strlen(name) + 1;
	/* the same start as the line before (a method recompiled in place, or
	 * a flood of one line): the later line replaces it at once */
	if (pm->n && pm->ents[pm->n - 1].start == start &&
	    pm->ents[pm->n - 1].name + strlen(pm->names + pm->ents[pm->n - 1].name) + 1 ==
		    pm->names_len) {
		pm->names_len = pm->ents[pm->n - 1].name;
		pm->n--;
	}
	ret = pm_room(r, len);
	if (ret)
		return ret;
	memcpy(pm->names + pm->names_len, name, len);
	pm->ents[pm->n] = (struct pm_ent){ .start = start, .size = size,
					   .name = (uint32_t)pm->names_len, .seq = r->seq++ };
	pm->names_len += len;
	pm->n++;
	return 0;
}

static int pm_feed(struct pm_reader *r, const char *buf, size_t n)
{
	while (n) {
		const char *nl = memchr(buf, '\n', n);
		size_t take = nl ? (size_t)(nl - buf) : n;

		if (!r->skipping) {
			if (r->llen + take > OS_PERFMAP_MAX_LINE) {
				r->skipping = true;
				r->pm->long_lines++;
				r->llen = 0;
			} else {
				memcpy(r->line + r->llen, buf, take);
				r->llen += take;
			}
		}
		if (!nl)
			break;
		if (!r->skipping) {
			int ret = pm_add(r);

			if (ret)
				return ret;
		}
		r->skipping = false;
		r->llen = 0;
		buf = nl + 1;
		n -= take + 1;
	}
	return 0;
}

static int pm_begin(struct pm_reader *r)
{
	memset(r, 0, sizeof(*r));
	r->pm = calloc(1, sizeof(*r->pm));
	r->line = malloc(OS_PERFMAP_MAX_LINE + 1);
	if (!r->pm || !r->line) {
		free(r->line);
		free(r->pm);
		r->line = NULL;
		r->pm = NULL;
		return -ENOMEM;
	}
	return 0;
}

static int pm_end(struct pm_reader *r, int ret, struct os_perfmap **out)
{
	struct os_perfmap *pm = r->pm;

	if (!ret && !r->skipping && r->llen)   /* a last line without its newline */
		ret = pm_add(r);
	free(r->line);
	if (ret) {
		os_perfmap_free(pm);
		return ret;
	}
	pm_compact(pm, false);
	*out = pm;
	return 0;
}

int os_perfmap_load_mem(const char *buf, size_t len, struct os_perfmap **out)
{
	struct pm_reader r;
	int ret = pm_begin(&r);

	if (ret)
		return ret;
	if (len > OS_PERFMAP_MAX_BYTES)
		ret = -EFBIG;
	else
		ret = pm_feed(&r, buf, len);
	return pm_end(&r, ret, out);
}

int os_perfmap_load_fd(int fd, struct os_perfmap **out)
{
	struct pm_reader r;
	char *chunk = malloc(PM_CHUNK);
	uint64_t total = 0;
	int ret, gen = os_fs_stop_gen();

	if (!chunk)
		return -ENOMEM;
	ret = pm_begin(&r);
	while (!ret) {
		ssize_t n;

		if (os_fs_stop_gen() != gen) { /* a stop came: not one more chunk */
			ret = -EINTR;
			break;
		}
		n = read(fd, chunk, PM_CHUNK);
		if (n < 0 && errno == EINTR)
			continue; /* os_fs_stop is looked at first */
		if (n < 0) {
			ret = -errno;
			break;
		}
		if (n == 0)
			break;
		total += (uint64_t)n;
		if (total > OS_PERFMAP_MAX_BYTES) {
			ret = -EFBIG;
			break;
		}
		ret = pm_feed(&r, chunk, (size_t)n);
	}
	free(chunk);
	if (!r.pm) /* pm_begin failed */
		return ret;
	return pm_end(&r, ret, out);
}

int os_perfmap_load(const char *path, struct os_perfmap **out)
{
	int fd = os_open_untrusted(AT_FDCWD, path, OS_ANY_OWNER, NULL), ret;

	if (fd < 0)
		return fd;
	ret = os_perfmap_load_fd(fd, out);
	close(fd);
	return ret;
}

size_t os_perfmap_count(const struct os_perfmap *pm)
{
	return pm ? pm->n : 0;
}

size_t os_perfmap_long_lines(const struct os_perfmap *pm)
{
	return pm ? pm->long_lines : 0;
}

int os_perfmap_find(const struct os_perfmap *pm, uint64_t addr, struct os_perfmap_sym *sym)
{
	size_t lo;

	if (!pm)
		return -ENOENT;
	lo = os_lower_bound(pm->n, i, pm->ents[i].start <= addr); /* first entry starting after addr */
	if (!lo || addr - pm->ents[lo - 1].start >= pm->ents[lo - 1].size)
		return -ENOENT;
	sym->start = pm->ents[lo - 1].start;
	sym->size = pm->ents[lo - 1].size;
	sym->name = pm->names + pm->ents[lo - 1].name;
	return 0;
}
