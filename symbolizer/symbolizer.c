/* symbolizer.c - per-process address spaces and address resolution.
 * ELF reading is in elf_module.c, perf maps in perfmap.c. */
#include "symbolizer/symbolizer.h"

#include "common/grow.h"
#include "common/hashmap.h"
#include "common/log.h"
#include "common/procmaps.h"
#include "common/search.h"
#include "symbolizer/elf_module.h"
#include "symbolizer/perfmap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ANON_NAME "[anon]"
#define JIT_NAME "[jit]"

/* A mapped file, or a special region ("[vdso]", "[anon]"): one per name. */
struct sym_module {
	char *name;
	struct os_elfmod *elf;   /* NULL for special regions */
	struct sym_module *hnext;
	char *open_path;         /* set when the file must be read elsewhere */
	uint32_t hint_pid;       /* a process that maps it, for /proc/PID/root */
	uint64_t hint_start, hint_end; /* ... where: /proc/PID/map_files/START-END */
	bool have_id;            /* the maps entry's device and inode are known */
	uint32_t id_major, id_minor;
	uint64_t id_ino;
	bool separate_lines;     /* os_sym_set_separate_lines() when created */
};

struct sym_map {
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;
	struct sym_module *mod;
};

struct sym_proc {
	struct sym_map *maps;   /* sorted by start, not overlapping */
	size_t n, cap;
	struct os_perfmap *jit;
};

struct os_symbolizer {
	struct os_hmap procs;     /* pid -> struct sym_proc * */
	struct os_hmap modules;   /* name hash -> struct sym_module * (chained) */
	bool separate_lines;      /* lines from separate debug files too */
	size_t refused;           /* modules not read: not the file the target maps */
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return h == UINT64_MAX ? 0 : h;
}

/* Not a file to open: "", "[vdso]", "//anon", "anon_inode:...", ... */
static bool is_special(const char *path)
{
	return path[0] != '/' || !strncmp(path, "//anon", 6);
}

struct os_symbolizer *os_sym_new(void)
{
	struct os_symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	os_hmap_init(&s->procs);
	os_hmap_init(&s->modules);
	return s;
}

void os_sym_set_separate_lines(struct os_symbolizer *s, bool on)
{
	s->separate_lines = on;
}

static void proc_free(struct sym_proc *p)
{
	if (!p)
		return;
	os_perfmap_free(p->jit);
	free(p->maps);
	free(p);
}

void os_sym_free(struct os_symbolizer *s)
{
	uint64_t k, v;
	size_t it;

	if (!s)
		return;
	for (it = 0; os_hmap_next(&s->procs, &it, &k, &v);)
		proc_free((struct sym_proc *)(uintptr_t)v);
	for (it = 0; os_hmap_next(&s->modules, &it, &k, &v);) {
		struct sym_module *m = (struct sym_module *)(uintptr_t)v, *next;

		for (; m; m = next) {
			next = m->hnext;
			os_elfmod_free(m->elf);
			free(m->open_path);
			free(m->name);
			free(m);
		}
	}
	os_hmap_destroy(&s->procs);
	os_hmap_destroy(&s->modules);
	free(s);
}

static struct sym_proc *proc_get(struct os_symbolizer *s, uint32_t pid, bool create)
{
	struct sym_proc *p;
	uint64_t v;

	if (os_hmap_get(&s->procs, pid, &v))
		return (struct sym_proc *)(uintptr_t)v;
	if (!create)
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	if (os_hmap_put(&s->procs, pid, (uint64_t)(uintptr_t)p)) {
		free(p);
		return NULL;
	}
	return p;
}

static struct sym_module *module_get(struct os_symbolizer *s, const char *path, uint32_t pid)
{
	const char *name = path;
	struct sym_module *m, *head = NULL;
	uint64_t h, v;

	if (!*path || !strncmp(path, "//anon", 6))
		name = ANON_NAME;
	h = hash_str(name);
	if (os_hmap_get(&s->modules, h, &v))
		head = (struct sym_module *)(uintptr_t)v;
	for (m = head; m; m = m->hnext)
		if (!strcmp(m->name, name))
			return m;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->name = strdup(name);
	m->hint_pid = pid;
	if (!m->name)
		goto fail;
	m->separate_lines = s->separate_lines;
	if (!is_special(path)) {
		m->elf = os_elfmod_new(path);
		if (!m->elf)
			goto fail;
		os_elfmod_set_separate_lines(m->elf, m->separate_lines);
	}
	m->hnext = head;
	if (os_hmap_put(&s->modules, h, (uint64_t)(uintptr_t)m))
		goto fail;
	return m;
fail:
	os_elfmod_free(m->elf);
	free(m->name);
	free(m);
	return NULL;
}

static int proc_reserve(struct sym_proc *p, size_t extra)
{
	struct sym_map *n = os_grow(p->maps, &p->cap, p->n + extra, sizeof(*n), 64);

	if (!n)
		return -ENOMEM;
	p->maps = n;
	return 0;
}

/* Index of the first mapping whose end is above addr. */
static size_t map_lower_bound(const struct sym_proc *p, uint64_t addr)
{
	return os_lower_bound(p->n, i, p->maps[i].end <= addr);
}

/* Inserts nm, cutting away whatever it overlaps (a new mmap replaces the
 * old pages there). */
static int proc_insert(struct sym_proc *p, const struct sym_map *nm)
{
	size_t i, j;
	int ret;

	ret = proc_reserve(p, 2);
	if (ret)
		return ret;
	i = map_lower_bound(p, nm->start);
	/* An old mapping enclosing the new one on both sides is split. */
	if (i < p->n && p->maps[i].start < nm->start && p->maps[i].end > nm->end) {
		struct sym_map right = p->maps[i];

		right.pgoff += nm->end - right.start;
		right.start = nm->end;
		p->maps[i].end = nm->start;
		memmove(&p->maps[i + 2], &p->maps[i + 1], (p->n - i - 1) * sizeof(*p->maps));
		p->maps[i + 1] = right;
		p->n++;
	}
	if (i < p->n && p->maps[i].start < nm->start) {
		p->maps[i].end = nm->start;   /* keeps its left part */
		i++;
	}
	for (j = i; j < p->n && p->maps[j].end <= nm->end; j++)
		;   /* [i, j) lie inside the new mapping */
	if (j < p->n && p->maps[j].start < nm->end) {
		p->maps[j].pgoff += nm->end - p->maps[j].start;
		p->maps[j].start = nm->end;
	}
	if (j != i + 1)
		memmove(&p->maps[i + 1], &p->maps[j], (p->n - j) * sizeof(*p->maps));
	p->n = p->n - (j - i) + 1;
	p->maps[i] = *nm;
	return 0;
}

int os_sym_add_mapping_id(struct os_symbolizer *s, uint32_t pid, uint64_t start, uint64_t end,
			  uint64_t pgoff, const char *path, uint32_t dev_major,
			  uint32_t dev_minor, uint64_t ino)
{
	struct sym_proc *p;
	struct sym_map m;

	if (end <= start || !path)
		return -EINVAL;
	p = proc_get(s, pid, true);
	if (!p)
		return -ENOMEM;
	m = (struct sym_map){ start, end, pgoff, module_get(s, path, pid) };
	if (!m.mod)
		return -ENOMEM;
	if (!m.mod->hint_end && m.mod->hint_pid == pid) {
		m.mod->hint_start = start;
		m.mod->hint_end = end;
	}
	if (ino && m.mod->elf && !m.mod->have_id && !os_elfmod_loaded(m.mod->elf)) {
		m.mod->have_id = true;
		m.mod->id_major = dev_major;
		m.mod->id_minor = dev_minor;
		m.mod->id_ino = ino;
		os_elfmod_expect_id(m.mod->elf, dev_major, dev_minor, ino);
	}
	return proc_insert(p, &m);
}

int os_sym_add_mapping(struct os_symbolizer *s, uint32_t pid, uint64_t start, uint64_t end,
		       uint64_t pgoff, const char *path)
{
	return os_sym_add_mapping_id(s, pid, start, end, pgoff, path, 0, 0, 0);
}

size_t os_sym_modules_refused(const struct os_symbolizer *s)
{
	return s->refused;
}

struct load_ctx {
	struct os_symbolizer *s;
	uint32_t pid;
};

static int add_maps_entry(const struct os_maps_entry *e, void *arg)
{
	struct load_ctx *c = arg;
	struct sym_module *m;
	char name[4096];
	int ret;

	if (!os_maps_is_exec(e))
		return 0;
	if (!e->deleted)
		return os_sym_add_mapping_id(c->s, c->pid, e->start, e->end, e->offset, e->path,
					     e->dev_major, e->dev_minor, e->inode);
	/* A deleted file is only still readable through map_files while the
	 * process lives: remember where. */
	snprintf(name, sizeof(name), "%s (deleted)", e->path);
	ret = os_sym_add_mapping(c->s, c->pid, e->start, e->end, e->offset, name);
	if (ret)
		return ret;
	m = module_get(c->s, name, c->pid);
	if (m && m->elf && !m->open_path && !os_elfmod_loaded(m->elf)) {
		char mf[96];

		snprintf(mf, sizeof(mf), "/proc/%u/map_files/%llx-%llx", c->pid,
			 (unsigned long long)e->start, (unsigned long long)e->end);
		m->open_path = strdup(mf);
		if (m->open_path)
			os_elfmod_load(m->elf, m->open_path);
	}
	return 0;
}

int os_sym_load_maps(struct os_symbolizer *s, uint32_t pid)
{
	struct load_ctx c = { s, pid };

	if (!proc_get(s, pid, true))
		return -ENOMEM;
	return os_maps_foreach_pid((pid_t)pid, add_maps_entry, &c);
}

int os_sym_fork(struct os_symbolizer *s, uint32_t ppid, uint32_t pid)
{
	struct sym_proc *parent = proc_get(s, ppid, false), *child;
	int ret;

	if (!parent)
		return -ENOENT;
	child = proc_get(s, pid, true);
	if (!child)
		return -ENOMEM;
	child->n = 0;
	ret = proc_reserve(child, parent->n);
	if (ret)
		return ret;
	if (parent->n)
		memcpy(child->maps, parent->maps, parent->n * sizeof(*parent->maps));
	child->n = parent->n;
	return 0;
}

void os_sym_exec(struct os_symbolizer *s, uint32_t pid)
{
	struct sym_proc *p = proc_get(s, pid, false);

	if (!p)
		return;
	p->n = 0;
	os_perfmap_free(p->jit);
	p->jit = NULL;
}

static int set_perf_map(struct os_symbolizer *s, uint32_t pid, struct os_perfmap *pm,
			size_t *long_lines)
{
	struct sym_proc *p = proc_get(s, pid, true);

	if (!p) {
		os_perfmap_free(pm);
		return -ENOMEM;
	}
	if (long_lines)
		*long_lines = os_perfmap_long_lines(pm);
	os_perfmap_free(p->jit);
	p->jit = pm;
	return 0;
}

int os_sym_load_perf_map(struct os_symbolizer *s, uint32_t pid, const char *path)
{
	struct os_perfmap *pm;
	int ret = os_perfmap_load(path, &pm);

	return ret ? ret : set_perf_map(s, pid, pm, NULL);
}

int os_sym_load_perf_map_fd(struct os_symbolizer *s, uint32_t pid, int fd, size_t *long_lines)
{
	struct os_perfmap *pm;
	int ret = os_perfmap_load_fd_unprivileged(fd, &pm);

	return ret ? ret : set_perf_map(s, pid, pm, long_lines);
}

bool os_sym_has_process(struct os_symbolizer *s, uint32_t pid)
{
	return proc_get(s, pid, false) != NULL;
}

/* A fresh module object for `alt` (os_elfmod_load() only runs once), with
 * the same expected inode; replaces m->elf when it loads. */
static int module_try(struct sym_module *m, const char *alt)
{
	struct os_elfmod *e = os_elfmod_new(m->name);
	int ret;

	if (!e)
		return -ENOMEM;
	os_elfmod_set_separate_lines(e, m->separate_lines);
	if (m->have_id)
		os_elfmod_expect_id(e, m->id_major, m->id_minor, m->id_ino);
	ret = os_elfmod_load(e, alt);
	if (ret) {
		os_elfmod_free(e);
		return ret;
	}
	os_elfmod_free(m->elf);
	m->elf = e;
	return 0;
}

/* Opens the module's file on first use: its own path, else the same path
 * inside the root of a process that maps it (containers, resolved inside
 * that root), else that process's /proc/PID/map_files entry (the mapped
 * file itself, while it lives; needs privileges). A file that exists by
 * name but is not the inode the maps entry names is not read (its frames
 * stay [unknown]): counted. */
static struct os_elfmod *module_elf(struct os_symbolizer *s, struct sym_module *m)
{
	char alt[4200];
	int ret;

	if (!m->elf)
		return NULL;
	if (os_elfmod_loaded(m->elf))
		return m->elf;
	if (m->open_path) {
		os_elfmod_load(m->elf, m->open_path);
		return m->elf;
	}
	ret = os_elfmod_load(m->elf, NULL);
	if ((ret == -ENOENT || ret == -ESTALE) && m->hint_pid) {
		int r2;

		snprintf(alt, sizeof(alt), "/proc/%u/root%s", m->hint_pid, m->name);
		r2 = module_try(m, alt);
		if ((r2 == -ENOENT || r2 == -ESTALE) && m->hint_end) {
			snprintf(alt, sizeof(alt), "/proc/%u/map_files/%llx-%llx", m->hint_pid,
				 (unsigned long long)m->hint_start,
				 (unsigned long long)m->hint_end);
			if (!module_try(m, alt))
				r2 = 0;
		}
		if (r2 == -ESTALE)
			ret = r2;
		else if (!r2)
			ret = 0;
	}
	if (ret == -ESTALE) {
		s->refused++;
		os_debug("symbolizer: %s is not the file process %u maps (device/inode "
			 "differ): not read, its frames stay unnamed", m->name, m->hint_pid);
	}
	return m->elf;
}

/* The mapping of pid holding addr, when it is an ELF module's; else NULL. */
static struct sym_map *elf_map_at(struct os_symbolizer *s, uint32_t pid, uint64_t addr)
{
	struct sym_proc *p = proc_get(s, pid, false);
	size_t i;

	if (!p)
		return NULL;
	i = map_lower_bound(p, addr);
	if (i >= p->n || p->maps[i].start > addr || !p->maps[i].mod->elf)
		return NULL;
	return &p->maps[i];
}

int os_sym_module_at(struct os_symbolizer *s, uint32_t pid, uint64_t addr, const char **path,
		     uint64_t *bias, uint64_t *start, uint64_t *end)
{
	struct sym_map *map = elf_map_at(s, pid, addr);
	struct os_elfmod *elf;

	if (!map)
		return -ENOENT;
	elf = module_elf(s, map->mod);
	*path = os_elfmod_open_path(elf);
	if (!*path)
		return -ENOENT;
	*bias = addr - os_elfmod_vaddr(elf, map->start, map->pgoff, addr);
	*start = map->start;
	*end = map->end;
	return 0;
}

int os_sym_module_fd(struct os_symbolizer *s, uint32_t pid, uint64_t addr)
{
	struct sym_map *map = elf_map_at(s, pid, addr);

	return map ? os_elfmod_open_fd(module_elf(s, map->mod)) : -ENOENT;
}

uint64_t os_sym_func_start(struct os_symbolizer *s, uint32_t pid, uint64_t addr)
{
	struct sym_proc *p = proc_get(s, pid, false);
	struct os_perfmap_sym js;
	struct os_elfmod *elf;
	struct sym_map *map;
	uint64_t off, start;
	size_t i;

	if (!p)
		return 0;
	i = map_lower_bound(p, addr);
	map = i < p->n && p->maps[i].start <= addr ? &p->maps[i] : NULL;
	if (map && map->mod->elf) {
		elf = module_elf(s, map->mod);
		os_elfmod_warm_lines(elf); /* line tables are needed at the end */
		off = os_elfmod_vaddr(elf, map->start, map->pgoff, addr);
		if (os_elfmod_symbol_start(elf, off, &start))
			return 0;
		return addr - (off - start);
	}
	if (!os_perfmap_find(p->jit, addr, &js) && js.name)
		return js.start;
	return 0;
}

int os_sym_resolve(struct os_symbolizer *s, uint32_t pid, uint64_t addr,
		   struct os_sym_result *r)
{
	struct sym_proc *p = proc_get(s, pid, false);
	struct sym_map *map = NULL;
	struct os_perfmap_sym js;
	struct os_elfmod *elf;
	struct os_elfsym es;
	size_t i;

	memset(r, 0, sizeof(*r));
	r->offset = addr;
	if (!p)
		return -ENOENT;
	i = map_lower_bound(p, addr);
	if (i < p->n && p->maps[i].start <= addr)
		map = &p->maps[i];

	if (map && map->mod->elf) {
		r->module = map->mod->name;
		elf = module_elf(s, map->mod);
		r->offset = os_elfmod_vaddr(elf, map->start, map->pgoff, addr);
		r->build_id = os_elfmod_build_id(elf);
		if (!os_elfmod_symbol(elf, r->offset, &es)) {
			r->func = es.name;
			r->sym_start = addr - (r->offset - es.start);
			r->sym_size = es.size;
		} else if (!os_elfmod_nearest(elf, r->offset, &es)) {
			r->near_func = es.name;
			r->near_off = r->offset - es.start;
		}
		os_elfmod_line(elf, r->offset, &r->file, &r->line, &r->column);
		return 0;
	}
	if (!os_perfmap_find(p->jit, addr, &js)) {
		r->func = js.name;
		r->module = JIT_NAME;
		r->sym_start = js.start;
		r->sym_size = js.size;
		r->is_java = true;
		return 0;
	}
	if (map) {
		r->module = map->mod->name;
		r->offset = addr - map->start + map->pgoff;
		return 0;
	}
	return -ENOENT;
}
