/* maker.c - the frame that names an object (report/maker.h). */
#include "report/maker.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/hashmap.h"

/* Allocators and their wrappers that are not the code that made an object
 * (docs/INTERFACE.md "Makers" lists them): libc's own, the x*alloc family
 * of GNU programs, GLib, C++'s allocation, and the allocation layers of the
 * runtimes objscope meets as native programs (CPython's object allocator
 * and arenas, Perl's, HotSpot's C heap). A trailing '*' matches any rest. */
static const char *const builtin[] = {
	"malloc", "calloc", "realloc", "reallocarray", "memalign", "posix_memalign",
	"aligned_alloc", "valloc", "pvalloc", "strdup", "strndup", "asprintf", "vasprintf",
	"xmalloc", "xcalloc", "xrealloc", "xzalloc", "xstrdup", "xstrndup", "xmemdup",
	"xnmalloc", "xcharalloc", "ximalloc", "xicalloc", "emalloc", "ecalloc", "erealloc",
	"g_malloc", "g_malloc0", "g_realloc", "g_try_malloc", "g_try_malloc0", "g_malloc_n",
	"g_malloc0_n", "g_realloc_n", "g_slice_alloc", "g_slice_alloc0", "g_strdup",
	"g_memdup", "g_memdup2", "g_new", "g_new0",
	"operator new", "operator new[]", "__gnu_cxx::new_allocator<*",
	"std::__new_allocator<*", "std::allocator<*", "std::allocator_traits<*",
	"_PyObject_ArenaMmap", "_PyObject_ArenaMalloc", "new_arena", "allocate_from_new_pool",
	"pymalloc_alloc", "_PyObject_Malloc", "_PyObject_Calloc", "_PyObject_Realloc",
	"PyObject_Malloc", "PyObject_Calloc", "PyObject_Realloc", "PyMem_Malloc",
	"PyMem_Calloc", "PyMem_Realloc", "PyMem_RawMalloc", "PyMem_RawCalloc",
	"PyMem_RawRealloc", "_PyMem_RawMalloc", "_PyMem_RawCalloc", "_PyMem_RawRealloc",
	"_PyMem_DebugRawAlloc", "_PyMem_DebugRawMalloc", "_PyMem_DebugMalloc",
	"Perl_safesysmalloc", "Perl_safesyscalloc", "Perl_safesysrealloc",
	"os::malloc", "os::realloc", "AllocateHeap", "ReallocateHeap",
};

#define MAX_EXTRA 64
static const char *extra[MAX_EXTRA];
static size_t nextra;

int report_maker_add_wrapper(const char *name)
{
	if (nextra == MAX_EXTRA)
		return -ENOMEM;
	extra[nextra++] = name;
	return 0;
}

/* name (as a frame shows it, parameters included) is the function w. */
static bool name_is(const char *name, const char *w)
{
	size_t n = strlen(w);

	if (n && w[n - 1] == '*')
		return strncmp(name, w, n - 1) == 0;
	return strncmp(name, w, n) == 0 && (name[n] == 0 || name[n] == '(' || name[n] == ' ');
}

static bool listed(const struct os_profile *p, uint32_t frame)
{
	const char *name;
	size_t i;

	if (frame >= p->nframes || p->frames[frame].kind == OS_FRAME_JAVA)
		return false;
	name = os_profile_str(p, p->frames[frame].name);
	if (!name || !*name)
		return false;
	for (i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
		if (name_is(name, builtin[i]))
			return true;
	for (i = 0; i < nextra; i++)
		if (name_is(name, extra[i]))
			return true;
	return false;
}

/* The paths as a tree from the leaf (frame 0) outwards: node ids from the
 * map (parent << 32 | frame), each node's count of distinct next frames. */
struct tree {
	struct os_hmap map;
	uint32_t *next;  /* per node: distinct frames after it */
	uint32_t n, cap;
};

static int64_t child(struct tree *t, uint32_t parent, uint32_t frame)
{
	uint64_t *ref = os_hmap_ref(&t->map, (uint64_t)parent << 32 | frame, UINT64_MAX);

	if (!ref)
		return -ENOMEM;
	if (*ref == UINT64_MAX) {
		if (t->n == t->cap) {
			uint32_t cap = t->cap ? 2 * t->cap : 1024;
			uint32_t *nx = realloc(t->next, (size_t)cap * sizeof(*nx));

			if (!nx)
				return -ENOMEM;
			t->next = nx;
			t->cap = cap;
		}
		t->next[t->n] = 0;
		*ref = t->n++;
		t->next[parent]++;
	}
	return (int64_t)*ref;
}

uint32_t *report_makers_find(const struct os_profile *p)
{
	uint32_t *maker = calloc((size_t)p->ncontexts + 1, sizeof(*maker));
	uint32_t *path = NULL, maxn = 0, c, i;
	struct tree t = { .n = 0 };
	int64_t id;

	if (!maker)
		return NULL;
	os_hmap_init(&t.map);
	/* node 0: the root, not in the map (its children's keys are 0 << 32 | frame) */
	t.next = calloc(1024, sizeof(*t.next));
	if (!t.next)
		goto fail;
	t.cap = 1024;
	t.n = 1;
	for (c = 0; c < p->ncontexts; c++) {
		uint32_t s = p->contexts[c].stack;

		if (s != OS_NONE && s < p->nstacks && p->stacks[s].nframes > maxn)
			maxn = p->stacks[s].nframes;
	}
	path = malloc(((size_t)maxn + 1) * sizeof(*path));
	if (!path)
		goto fail;
	/* each distinct stack once: contexts sharing a stack are one path */
	for (c = 0; c < p->ncontexts; c++) {
		uint32_t s = p->contexts[c].stack, node = 0;

		if (s == OS_NONE || s >= p->nstacks)
			continue;
		for (i = 0; i < p->stacks[s].nframes; i++) {
			if ((id = child(&t, node, p->stacks[s].frames[i])) < 0)
				goto fail;
			node = (uint32_t)id;
		}
	}
	for (c = 0; c < p->ncontexts; c++) {
		uint32_t s = p->contexts[c].stack, n, node = 0, at = 0, j;

		if (s == OS_NONE || s >= p->nstacks || !(n = p->stacks[s].nframes))
			continue;
		for (i = 0; i < n; i++) {
			if ((id = child(&t, node, p->stacks[s].frames[i])) < 0)
				goto fail;
			path[i] = node = (uint32_t)id;
		}
		/* skip a listed frame, or a run of frames each with one caller
		 * ending in a frame with many: the allocator's layers */
		while (at + 1 < n) {
			if (listed(p, p->stacks[s].frames[at])) {
				at++;
				continue;
			}
			for (j = at; j + 1 < n && t.next[path[j]] == 1; j++)
				;
			if (j + 1 < n && t.next[path[j]] >= REPORT_MAKER_CALLERS) {
				at = j + 1;
				continue;
			}
			break;
		}
		maker[c] = at;
	}
	free(path);
	free(t.next);
	os_hmap_destroy(&t.map);
	return maker;
fail:
	free(path);
	free(t.next);
	os_hmap_destroy(&t.map);
	free(maker);
	return NULL;
}
