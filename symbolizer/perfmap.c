#include "symbolizer/perfmap.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
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

/* ---- parsing without root's rights ----
 * The map is the target's writing; when objscope runs as root it is parsed
 * in a child that first gives up root (uid and gid nobody, no groups, no
 * new privileges; it has only the descriptor it inherited) and hands back
 * the result as flat arrays, checked here before use. */
#define PM_NOBODY 65534

struct pm_wire {
	int32_t rc;
	uint32_t pad;
	uint64_t n, names_len, bad, long_lines;
};

static int pm_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

static void pm_child(int fd, int out)
{
	struct os_perfmap *pm = NULL;
	struct pm_wire h = { 0 };

	int in2 = fcntl(fd, F_DUPFD, 10), out2 = fcntl(out, F_DUPFD, 10);

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* nothing of objscope's but the map and the pipe back (perf events,
	 * the profile being written and the target's files stay out of reach) */
	if (in2 < 0 || out2 < 0 || dup2(in2, 3) != 3 || dup2(out2, 4) != 4)
		_exit(1);
	fd = 3;
	out = 4;
	close_range(5, ~0U, 0);
	if (setgroups(0, NULL) != 0 || setresgid(PM_NOBODY, PM_NOBODY, PM_NOBODY) != 0 ||
	    setresuid(PM_NOBODY, PM_NOBODY, PM_NOBODY) != 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		h.rc = -EPERM; /* could not give root up: the caller parses itself */
		pm_write_all(out, &h, sizeof(h));
		_exit(0);
	}
	h.rc = os_perfmap_load_fd(fd, &pm);
	if (!h.rc) {
		h.n = pm->n;
		h.names_len = pm->names_len;
		h.bad = pm->bad;
		h.long_lines = pm->long_lines;
	}
	if (pm_write_all(out, &h, sizeof(h)) == 0 && !h.rc)
		if (pm_write_all(out, pm->ents, pm->n * sizeof(*pm->ents)) == 0)
			pm_write_all(out, pm->names, pm->names_len);
	_exit(0);
}

/* Reads len bytes from the child; -EINTR when objscope is asked to stop
 * meanwhile, -EPROTO when the child ended short. */
static int pm_read_all(int fd, void *buf, size_t len, int gen)
{
	char *p = buf;

	while (len) {
		ssize_t r = read(fd, p, len);

		if (r < 0 && errno == EINTR) {
			if (os_fs_stop_gen() != gen)
				return -EINTR;
			continue;
		}
		if (r <= 0)
			return -EPROTO;
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

/* What the child sent, checked: within the caps, every name inside the
 * arena and ended, entries non-empty and sorted by distinct starts (the
 * lookup's order). */
static int pm_receive(int in, struct os_perfmap **out, int gen)
{
	struct pm_wire h;
	struct os_perfmap *pm;
	int rc = pm_read_all(in, &h, sizeof(h), gen);

	if (rc)
		return rc;
	if (h.rc)
		return h.rc > 0 || h.rc < -4095 ? -EPROTO : h.rc;
	if (h.n > OS_PERFMAP_MAX_ENTRIES || h.names_len > OS_PERFMAP_MAX_NAMES ||
	    (h.n && !h.names_len))
		return -EPROTO;
	pm = calloc(1, sizeof(*pm));
	if (!pm)
		return -ENOMEM;
	pm->ents = malloc(h.n ? h.n * sizeof(*pm->ents) : 1);
	pm->names = malloc(h.names_len ? h.names_len : 1);
	if (!pm->ents || !pm->names)
		rc = -ENOMEM;
	if (!rc)
		rc = pm_read_all(in, pm->ents, h.n * sizeof(*pm->ents), gen);
	if (!rc)
		rc = pm_read_all(in, pm->names, h.names_len, gen);
	if (!rc && h.names_len && pm->names[h.names_len - 1])
		rc = -EPROTO;
	for (size_t i = 0; !rc && i < h.n; i++)
		if (pm->ents[i].name >= h.names_len || !pm->ents[i].size ||
		    (i && pm->ents[i].start <= pm->ents[i - 1].start))
			rc = -EPROTO;
	if (rc) {
		os_perfmap_free(pm);
		return rc;
	}
	pm->n = h.n;
	pm->names_len = h.names_len;
	pm->bad = h.bad;
	pm->long_lines = h.long_lines;
	*out = pm;
	return 0;
}

int os_perfmap_load_fd_unprivileged(int fd, struct os_perfmap **out)
{
	int pipefd[2], rc, st, gen = os_fs_stop_gen();
	pid_t pid;

	if (geteuid() != 0)
		return os_perfmap_load_fd(fd, out);
	if (pipe2(pipefd, O_CLOEXEC) != 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		rc = -errno;
		close(pipefd[0]);
		close(pipefd[1]);
		return rc;
	}
	if (pid == 0) {
		close(pipefd[0]);
		pm_child(fd, pipefd[1]);
	}
	close(pipefd[1]);
	rc = pm_receive(pipefd[0], out, gen);
	close(pipefd[0]);
	if (rc == -EINTR || rc == -EPROTO)
		kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (rc == -EPERM) /* root could not be given up here */
		return os_perfmap_load_fd(fd, out);
	return rc;
}

int os_perfmap_load(const char *path, struct os_perfmap **out)
{
	int fd = os_open_untrusted(AT_FDCWD, path, OS_ANY_OWNER, NULL), ret;

	if (fd < 0)
		return fd;
	ret = os_perfmap_load_fd_unprivileged(fd, out);
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
