#include "symbolizer/perfmap.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pm_ent {
	uint64_t start;
	uint64_t size;
	char *name;
	size_t seq;   /* line order, to let later lines win */
};

struct os_perfmap {
	struct pm_ent *ents;
	size_t n;
};

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

void os_perfmap_free(struct os_perfmap *pm)
{
	size_t i;

	if (!pm)
		return;
	for (i = 0; i < pm->n; i++)
		free(pm->ents[i].name);
	free(pm->ents);
	free(pm);
}

int os_perfmap_load(const char *path, struct os_perfmap **out)
{
	struct os_perfmap *pm = NULL;
	char *line = NULL;
	size_t lcap = 0, cap = 0, i, j;
	FILE *f;
	int ret = 0;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	pm = calloc(1, sizeof(*pm));
	if (!pm) {
		ret = -ENOMEM;
		goto out;
	}
	while (getline(&line, &lcap, f) > 0) {
		uint64_t start, size;
		char *name;

		if (os_perfmap_parse_line(line, &start, &size, &name) || !size)
			continue;
		if (pm->n == cap) {
			size_t ncap = cap ? cap * 2 : 256;
			struct pm_ent *n = realloc(pm->ents, ncap * sizeof(*n));

			if (!n) {
				ret = -ENOMEM;
				goto out;
			}
			pm->ents = n;
			cap = ncap;
		}
		pm->ents[pm->n].name = strdup(name);
		if (!pm->ents[pm->n].name) {
			ret = -ENOMEM;
			goto out;
		}
		pm->ents[pm->n].start = start;
		pm->ents[pm->n].size = size;
		pm->ents[pm->n].seq = pm->n;
		pm->n++;
	}
	if (ferror(f)) {
		ret = -EIO;
		goto out;
	}
	if (pm->n)
		qsort(pm->ents, pm->n, sizeof(*pm->ents), cmp_ent);
	/* One entry per start address: the last line written. */
	for (i = 0, j = 0; i < pm->n; i++) {
		if (j && pm->ents[j - 1].start == pm->ents[i].start) {
			free(pm->ents[j - 1].name);
			pm->ents[j - 1] = pm->ents[i];
			continue;
		}
		pm->ents[j++] = pm->ents[i];
	}
	pm->n = j;
	*out = pm;
	pm = NULL;
out:
	os_perfmap_free(pm);
	free(line);
	fclose(f);
	return ret;
}

int os_perfmap_find(const struct os_perfmap *pm, uint64_t addr, struct os_perfmap_sym *sym)
{
	size_t lo = 0, hi;

	if (!pm)
		return -ENOENT;
	hi = pm->n;
	while (lo < hi) {   /* first entry starting after addr */
		size_t mid = lo + (hi - lo) / 2;

		if (pm->ents[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr - pm->ents[lo - 1].start >= pm->ents[lo - 1].size)
		return -ENOENT;
	sym->start = pm->ents[lo - 1].start;
	sym->size = pm->ents[lo - 1].size;
	sym->name = pm->ents[lo - 1].name;
	return 0;
}
