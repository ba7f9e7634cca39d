/* zero.c - the HotSpot Zero adapter of the collector (see zero.h): its
 * JVMs (the address spaces whose threads sent the hello), claim, the
 * events rewritten where Zero differs, and the ops table, which hands
 * everything else to the HotSpot adapter it holds. */
#include "runtimes/zero/zero_int.h"

#include <stdlib.h>
#include <string.h>

#include "attacher/core/attrib.h"
#include "attacher/core/tasks.h"
#include "common/grow.h"
#include "common/shm.h"
#include "runtimes/hotspot/hotspot.h"
#include "runtimes/hotspot/hotspot_abi.h"

/* An event rewritten before the HotSpot adapter sees it: fixed part and
 * the frames of the largest event Zero rewrites (a JALLOC path). */
#define ZERO_EV_WORDS (OS_EVENT_FIXED / 8 + OS_MAX_FRAMES + OS_JVM_INFO_WORDS)

struct zero *zero_of(struct os_runtime *rt)
{
	return rt->priv;
}

struct zero_jvm *zero_jvm_find(struct zero *z, uint32_t asid)
{
	uint64_t i;

	return os_hmap_get(&z->asid2jvm, asid, &i) ? &z->jvms[i] : NULL;
}

static struct zero_jvm *jvm_get(struct zero *z, const struct os_aspace *as)
{
	struct zero_jvm *j = zero_jvm_find(z, as->id), *n;

	if (j)
		return j;
	n = os_grow(z->jvms, &z->capjvms, z->njvms + 1, sizeof(*n), 4);
	if (!n)
		return NULL;
	z->jvms = n;
	if (os_hmap_put(&z->asid2jvm, as->id, z->njvms) < 0)
		return NULL;
	j = &z->jvms[z->njvms++];
	memset(j, 0, sizeof(*j));
	j->asid = as->id;
	j->pid = as->pid;
	return j;
}

/* Zero takes the address spaces whose threads sent the hello (zero_abi.h):
 * each thread sends it before its first event of the Zero adapter. */
static bool zero_claim(struct os_runtime *rt, struct os_aspace *as, const struct os_event *ev)
{
	(void)rt;
	(void)as;
	return ev->type == OS_EV_JVM && ev->aux2 == OS_ZERO_HELLO;
}

static void hello(struct zero_jvm *j, const struct os_event *ev)
{
	uint32_t n;

	if (ev->nframes < OS_ZERO_HELLO_WORDS)
		return;
	n = (ev->nframes - OS_ZERO_HELLO_WORDS) / 2;
	if (n > OS_ZERO_MAX_RANGES)
		n = OS_ZERO_MAX_RANGES;
	if (n && !j->nranges) {
		memcpy(j->ranges, ev->frames + OS_ZERO_HELLO_WORDS, 2 * n * sizeof(uint64_t));
		j->nranges = n;
	}
	if (ev->frames[OS_ZERO_HELLO_ISTATE] && ev->frames[OS_ZERO_HELLO_ISTATE] < 64)
		j->istate_words = (uint32_t)ev->frames[OS_ZERO_HELLO_ISTATE];
	if (ev->frames[OS_ZERO_HELLO_JVM_HI] > ev->frames[OS_ZERO_HELLO_JVM_LO]) {
		j->jvm_lo = ev->frames[OS_ZERO_HELLO_JVM_LO];
		j->jvm_hi = ev->frames[OS_ZERO_HELLO_JVM_HI];
	}
	if (ev->size > j->mismatch)
		j->mismatch = ev->size;
}

static bool zero_prepare(struct os_runtime *rt, struct os_aspace *as, const struct os_event *ev,
			 struct os_obj_event *oe)
{
	struct zero *z = zero_of(rt);
	struct zero_jvm *j = jvm_get(z, as);
	uint64_t buf[ZERO_EV_WORDS];
	struct os_event *cp = (struct os_event *)buf;

	if (j && ev->type == OS_EV_JVM && ev->aux2 == OS_ZERO_HELLO) {
		hello(j, ev);
		return false;
	}
	if (!j || ev->len > sizeof(buf) || ev->len < OS_EVENT_FIXED + 8u * ev->nframes)
		return z->hs->ops->prepare(z->hs, as, ev, oe);
	if (ev->type == OS_EV_JVM && ev->nframes * 8u >= sizeof(struct os_jvm_info))
		j->mode = ((const struct os_jvm_info *)(const void *)ev->frames)->mode;
	if (ev->type == OS_EV_JALLOC) {
		uint64_t flags = ev->aux & OS_ZERO_A_FLAGS;
		bool r;

		j->allocs++;
		if (flags & OS_ZERO_A_NO_JAVA)
			j->no_java++;
		if (!flags)
			return z->hs->ops->prepare(z->hs, as, ev, oe);
		memcpy(buf, ev, ev->len);
		cp->aux &= ~(uint64_t)OS_ZERO_A_FLAGS; /* the TLAB bytes HotSpot weighs by */
		r = z->hs->ops->prepare(z->hs, as, cp, oe);
		if (r && (flags & OS_ZERO_A_ARRAY)) {
			/* every array reaches the hook: seen for sure */
			oe->aux = OS_W_ONE;
			j->arrays++;
		}
		return r;
	}
	return z->hs->ops->prepare(z->hs, as, ev, oe);
}

/* ---- the HotSpot adapter's ops, for Zero's JVMs alone -------------------- */

/* The HotSpot adapter Zero holds, for an address space of Zero's; NULL
 * otherwise: Zero then answers "do not know" (runtime.h), so that the
 * registry's own HotSpot adapter, asked next, keeps what it learns of the
 * other JVMs before they are claimed (their native paths' method words). */
static struct os_runtime *hs_for(struct os_runtime *rt, uint32_t asid)
{
	struct zero *z = zero_of(rt);

	return zero_jvm_find(z, asid) ? z->hs : NULL;
}

static uint64_t zero_frame_word(struct os_runtime *rt, uint32_t asid, uint64_t pc, uint64_t fp,
				const uint64_t *leaf_regs,
				bool (*read)(void *arg, uint64_t addr, uint64_t *word), void *arg)
{
	struct os_runtime *h = hs_for(rt, asid);

	return h && h->ops->frame_word ? h->ops->frame_word(h, asid, pc, fp, leaf_regs, read, arg)
				       : pc;
}

static uint32_t zero_path_words(struct os_runtime *rt, struct os_aspace *as, const uint64_t *frames,
				uint32_t n, uint64_t *out, uint32_t max)
{
	struct os_runtime *h = hs_for(rt, as->id);

	if (h && h->ops->path_words)
		return h->ops->path_words(h, as, frames, n, out, max);
	if (n > max)
		n = max;
	memcpy(out, frames, n * sizeof(*frames));
	return n;
}

static void zero_sample_taken(struct os_runtime *rt, struct os_aspace *as, uint64_t addr)
{
	struct os_runtime *h = hs_for(rt, as->id);

	if (h && h->ops->sample_taken)
		h->ops->sample_taken(h, as, addr);
}

static uint32_t zero_heap_miss(struct os_runtime *rt, struct os_aspace *as, uint64_t addr)
{
	struct os_runtime *h = hs_for(rt, as->id);

	return h && h->ops->heap_miss ? h->ops->heap_miss(h, as, addr) : OS_NONE;
}

static void zero_apply(struct os_runtime *rt, struct os_aspace *as, const struct os_obj_event *oe)
{
	struct os_runtime *h = hs_for(rt, as->id);

	if (h && h->ops->apply)
		h->ops->apply(h, as, oe);
}

static uint64_t zero_sample_addr(struct os_runtime *rt, uint32_t asid, uint64_t addr)
{
	struct os_runtime *h = hs_for(rt, asid);

	return h && h->ops->sample_addr ? h->ops->sample_addr(h, asid, addr) : addr;
}

static bool zero_in_heap(struct os_runtime *rt, uint32_t asid, uint64_t addr)
{
	struct os_runtime *h = hs_for(rt, asid);

	return h && h->ops->in_heap && h->ops->in_heap(h, asid, addr);
}

static void zero_before_symbolize(struct os_runtime *rt)
{
	struct os_runtime *h = zero_of(rt)->hs;

	if (h->ops->before_symbolize)
		h->ops->before_symbolize(h);
}

static void zero_mapping(struct os_runtime *rt, struct os_aspace *as, const struct os_event *ev)
{
	struct os_runtime *h = hs_for(rt, as->id);

	if (h && h->ops->mapping)
		h->ops->mapping(h, as, ev);
}

static bool zero_heap_opaque(struct os_runtime *rt, uint32_t asid, uint64_t addr)
{
	struct os_runtime *h = hs_for(rt, asid);

	return h && h->ops->heap_opaque && h->ops->heap_opaque(h, asid, addr);
}

/* Another runtime claimed asid: Zero never kept anything for an address
 * space it does not own (hs_for), its HotSpot adapter is told all the same. */
static void zero_forget(struct os_runtime *rt, uint32_t asid)
{
	struct os_runtime *h = zero_of(rt)->hs;

	if (!zero_jvm_find(zero_of(rt), asid) && h->ops->forget)
		h->ops->forget(h, asid);
}

static enum os_rt_word zero_name_word(struct os_runtime *rt, uint32_t asid, uint64_t word,
				      const char **name, const char **file, uint32_t *line)
{
	struct os_runtime *h = hs_for(rt, asid);

	return h && h->ops->name_word ? h->ops->name_word(h, asid, word, name, file, line)
				      : OS_RT_WORD_UNKNOWN;
}

static const char *zero_jit_name(struct os_runtime *rt, uint32_t asid, const char *raw, char *buf,
				 size_t len)
{
	struct zero *z = zero_of(rt);

	/* no JIT: only a Zero JVM's own names (its stubs) are asked here */
	if (!zero_jvm_find(z, asid) || !z->hs->ops->jit_name)
		return NULL;
	return z->hs->ops->jit_name(z->hs, asid, raw, buf, len);
}

static int zero_thread_kind(struct os_runtime *rt, uint32_t pid, const char *name)
{
	struct zero *z = zero_of(rt);

	for (size_t i = 0; i < z->njvms; i++)
		if (z->jvms[i].pid == pid && z->hs->ops->thread_kind)
			return z->hs->ops->thread_kind(z->hs, pid, name);
	return -1;
}

static void zero_attached(struct os_runtime *rt, uint32_t pid, const struct os_rt_plan *plan)
{
	struct os_runtime *h = zero_of(rt)->hs;

	if (h->ops->attached)
		h->ops->attached(h, pid, plan);
}

static void zero_detached(struct os_runtime *rt, uint32_t pid, const struct os_rt_plan *plan,
			  char *note, size_t len)
{
	struct os_runtime *h = zero_of(rt)->hs;

	if (len)
		note[0] = 0;
	if (h->ops->detached)
		h->ops->detached(h, pid, plan, note, len);
}

static uint64_t zero_estimate_op(struct os_runtime *rt, uint64_t now)
{
	struct zero *z = zero_of(rt);

	return z->hs->ops->estimate ? z->hs->ops->estimate(z->hs, now) : 0;
}

static void zero_notes_op(struct os_runtime *rt, struct os_profile *p)
{
	struct zero *z = zero_of(rt);

	if (z->hs->ops->notes)
		z->hs->ops->notes(z->hs, p);
	zero_notes(z, p);
}

static void zero_destroy(struct os_runtime *rt)
{
	struct zero *z = zero_of(rt);

	if (z->hs->ops->destroy)
		z->hs->ops->destroy(z->hs);
	os_hmap_destroy(&z->asid2jvm);
	free(z->jvms);
	free(z);
}

static const struct os_runtime_ops zero_ops = {
	.name = "zero",
	.claim = zero_claim,
	.prepare = zero_prepare,
	.sample_taken = zero_sample_taken,
	.apply = zero_apply,
	.heap_miss = zero_heap_miss,
	.mapping = zero_mapping,
	.heap_opaque = zero_heap_opaque,
	.forget = zero_forget,
	.sample_addr = zero_sample_addr,
	.before_symbolize = zero_before_symbolize,
	.name_word = zero_name_word,
	.frame_word = zero_frame_word,
	.path_words = zero_path_words,
	.java_walk = zero_java_walk,
	.in_heap = zero_in_heap,
	.jit_name = zero_jit_name,
	.thread_kind = zero_thread_kind,
	.attached = zero_attached,
	.detached = zero_detached,
	.notes = zero_notes_op,
	.estimate = zero_estimate_op,
	.destroy = zero_destroy,
};

bool os_zero_wanted(const struct os_opts *o)
{
	return os_runtime_selected(o, "zero") || os_runtime_selected(o, "hotspot");
}

struct os_runtime *os_zero_create(struct os_attrib *a, struct os_symbolizer *sym)
{
	struct zero *z = calloc(1, sizeof(*z));

	if (!z)
		return NULL;
	z->hs = os_hotspot_create(a, sym);
	if (!z->hs) {
		free(z);
		return NULL;
	}
	z->rt.ops = &zero_ops;
	z->rt.priv = z;
	os_hmap_init(&z->asid2jvm);
	return &z->rt;
}
