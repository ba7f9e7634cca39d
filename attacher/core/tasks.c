/* tasks.c - address spaces, processes and threads of the target. */
#include "attacher/core/tasks.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/grow.h"
#include "common/procmaps.h"

int os_tasks_init(struct os_tasks *t, struct os_symbolizer *sym)
{
	memset(t, 0, sizeof(*t));
	os_hmap_init(&t->pid2as);
	os_hmap_init(&t->tid2thr);
	t->sym = sym;
	t->nas = 1; /* asid 0 is "none" */
	return 0;
}

static void aspace_free(struct os_aspace *a)
{
	if (!a)
		return;
	if (a->objects)
		os_iv_free(a->objects);
	if (a->anon)
		os_iv_free(a->anon);
	free(a);
}

void os_tasks_destroy(struct os_tasks *t)
{
	for (uint32_t i = 1; i < t->nas; i++)
		aspace_free(t->as[i]);
	free(t->as);
	free(t->threads);
	free(t->pids);
	os_hmap_destroy(&t->pid2as);
	os_hmap_destroy(&t->tid2thr);
	memset(t, 0, sizeof(*t));
}

static void note_pid(struct os_tasks *t, uint32_t pid)
{
	for (uint32_t i = 0; i < t->npids; i++)
		if (t->pids[i] == pid)
			return;
	uint32_t *n = os_grow32(t->pids, &t->pidcap, (size_t)t->npids + 1, sizeof(*n), 16, UINT32_MAX);

	if (!n)
		return;
	t->pids = n;
	t->pids[t->npids++] = pid;
}

static struct os_aspace *aspace_new(struct os_tasks *t, uint32_t pid)
{
	struct os_aspace *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->objects = os_iv_new();
	a->anon = os_iv_new();
	if (!a->objects || !a->anon)
		goto fail;
	{
		struct os_aspace **n = os_grow32(t->as, &t->cap, (size_t)t->nas + 1, sizeof(*n), 16,
						 UINT32_MAX);

		if (!n)
			goto fail;
		t->as = n;
	}
	a->id = t->nas;
	a->pid = pid;
	t->as[t->nas++] = a;
	if (os_hmap_put(&t->pid2as, pid, a->id) < 0)
		return NULL; /* kept in t->as, freed with it */
	note_pid(t, pid);
	return a;
fail:
	aspace_free(a);
	return NULL;
}

struct os_aspace *os_tasks_get(struct os_tasks *t, uint32_t asid)
{
	return asid && asid < t->nas ? t->as[asid] : NULL;
}

struct maps_ctx {
	struct os_tasks *t;
	uint32_t pid;
};

static int seed_one(const struct os_maps_entry *e, void *arg)
{
	struct maps_ctx *c = arg;
	uint32_t prot = 0;

	if (e->perms[0] == 'r')
		prot |= PROT_READ;
	if (e->perms[1] == 'w')
		prot |= PROT_WRITE;
	if (e->perms[2] == 'x')
		prot |= PROT_EXEC;
	os_tasks_mmap_id(c->t, c->pid, e->start, e->end - e->start, e->offset, prot, e->path,
			 e->dev_major, e->dev_minor, e->inode);
	return 0;
}

struct os_aspace *os_tasks_aspace(struct os_tasks *t, uint32_t pid)
{
	uint64_t asid;
	struct os_aspace *a;
	struct maps_ctx c = { t, pid };

	if (os_hmap_get(&t->pid2as, pid, &asid))
		return t->as[asid];
	a = aspace_new(t, pid);
	if (a)
		os_maps_foreach_pid((pid_t)pid, seed_one, &c); /* best effort: may have exited */
	return a;
}

static void copy_iv(uint64_t start, uint64_t end, uint64_t val, void *arg)
{
	os_iv_insert(arg, start, end, val);
}

int os_tasks_fork(struct os_tasks *t, uint32_t ppid, uint32_t pid)
{
	struct os_aspace *parent = os_tasks_aspace(t, ppid), *a;

	if (!parent)
		return -ENOMEM;
	a = aspace_new(t, pid);
	if (!a)
		return -ENOMEM;
	os_iv_foreach(parent->objects, 0, UINT64_MAX, copy_iv, a->objects);
	os_iv_foreach(parent->anon, 0, UINT64_MAX, copy_iv, a->anon);
	a->stack_lo = parent->stack_lo;
	a->stack_hi = parent->stack_hi;
	a->self_lo = parent->self_lo;
	a->self_hi = parent->self_hi;
	a->unw_lo = parent->unw_lo;
	a->unw_hi = parent->unw_hi;
	if (t->sym)
		os_sym_fork(t->sym, parent->id, a->id);
	return 0;
}

int os_tasks_exec(struct os_tasks *t, uint32_t pid)
{
	uint64_t old;

	/* the old image's objects are dead; its stacks stay symbolizable */
	if (os_hmap_get(&t->pid2as, pid, &old)) {
		struct os_aspace *o = t->as[old];

		os_iv_free(o->objects);
		os_iv_free(o->anon);
		o->objects = os_iv_new();
		o->anon = os_iv_new();
	}
	return aspace_new(t, pid) ? 0 : -ENOMEM;
}

static bool is_anon_name(const char *file)
{
	return !file || !*file || !strcmp(file, "//anon") || !strcmp(file, "[heap]") ||
	       !strncmp(file, "/dev/zero", 9) || !strncmp(file, "/memfd:", 7) ||
	       !strncmp(file, "[anon:", 6);
}

static void widen(uint64_t *lo, uint64_t *hi, uint64_t a, uint64_t b)
{
	if (!*hi || a < *lo)
		*lo = a;
	if (b > *hi)
		*hi = b;
}

bool os_aspace_is_self(const struct os_aspace *a, const uint64_t *frames, uint32_t n)
{
	if (!a->self_hi || !n)
		return false;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t pc = frames[i];

		if (pc >= a->self_lo && pc < a->self_hi)
			return true;
		if (!(a->unw_hi && pc >= a->unw_lo && pc < a->unw_hi))
			return false;
	}
	return false;
}

void os_tasks_mmap(struct os_tasks *t, uint32_t pid, uint64_t addr, uint64_t len, uint64_t pgoff,
		   uint32_t prot, const char *file)
{
	os_tasks_mmap_id(t, pid, addr, len, pgoff, prot, file, 0, 0, 0);
}

void os_tasks_mmap_id(struct os_tasks *t, uint32_t pid, uint64_t addr, uint64_t len,
		      uint64_t pgoff, uint32_t prot, const char *file, uint32_t maj, uint32_t min,
		      uint64_t ino)
{
	struct os_aspace *a = os_tasks_aspace(t, pid);

	if (!a || !len)
		return;
	if (file && !strcmp(file, "[stack]")) {
		a->stack_lo = addr;
		a->stack_hi = addr + len;
		return;
	}
	if (is_anon_name(file)) {
		/* a new mapping replaces whatever was there */
		os_iv_remove_overlaps(a->anon, addr, addr + len, NULL, NULL);
		if (prot & PROT_WRITE)
			os_iv_insert(a->anon, addr, addr + len, 0);
		return;
	}
	if ((prot & PROT_EXEC) && file) {
		const char *base = strrchr(file, '/');

		base = base ? base + 1 : file;
		if (!strcmp(base, "libobjscope.so"))
			widen(&a->self_lo, &a->self_hi, addr, addr + len);
		else if (!strncmp(base, "libunwind.so", 12) ||
			 !strncmp(base, "libunwind-x86_64.so", 19))
			widen(&a->unw_lo, &a->unw_hi, addr, addr + len);
	}
	if ((prot & PROT_EXEC) && t->sym)
		os_sym_add_mapping_id(t->sym, a->id, addr, addr + len, pgoff, file, maj, min, ino);
}

struct os_thread_info *os_tasks_find_thread(struct os_tasks *t, uint32_t pid, uint32_t tid)
{
	uint64_t idx;

	if (os_hmap_get(&t->tid2thr, tid, &idx) && t->threads[idx].pid == pid)
		return &t->threads[idx];
	return NULL;
}

struct os_thread_info *os_tasks_thread(struct os_tasks *t, uint32_t pid, uint32_t tid,
				       const char *name)
{
	struct os_thread_info *th = os_tasks_find_thread(t, pid, tid);

	if (!th) {
		struct os_thread_info *n = os_grow32(t->threads, &t->thrcap, (size_t)t->nthreads + 1,
						     sizeof(*n), 64, UINT32_MAX);

		if (!n)
			return NULL;
		t->threads = n;
		th = &t->threads[t->nthreads];
		memset(th, 0, sizeof(*th));
		th->pid = pid;
		th->tid = tid;
		if (os_hmap_put(&t->tid2thr, tid, t->nthreads) < 0)
			return NULL;
		t->nthreads++;
	}
	if (name && *name)
		snprintf(th->name, sizeof(th->name), "%s", name);
	return th;
}

struct os_thread_info *os_tasks_thread_named(struct os_tasks *t, uint32_t pid, uint32_t tid,
					     const char *name, uint64_t time)
{
	struct os_thread_info *th = os_tasks_thread(t, pid, tid, NULL);

	if (th && name && *name && time >= th->name_time) {
		snprintf(th->name, sizeof(th->name), "%s", name);
		th->name_time = time;
	}
	return th;
}

bool os_aspace_is_heap(struct os_aspace *a, uint64_t addr, uint64_t sp)
{
	uint64_t s, e, ss, se;

	if (addr >= a->stack_lo && addr < a->stack_hi)
		return false;
	if (!os_iv_lookup(a->anon, addr, &s, &e, NULL))
		return false;
	/* a thread stack is anonymous memory too: exclude the sampled thread's */
	if (sp && os_iv_lookup(a->anon, sp, &ss, &se, NULL) && ss == s)
		return false;
	return true;
}
