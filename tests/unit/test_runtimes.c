/* test_runtimes.c - the runtime registry's dispatch (runtimes/dispatch.c):
 * an address space belongs to the first runtime that claims it, unowned
 * address spaces get the first answer that is not "do not know"; and the
 * notes runtimes keep as counters (common/profile.h os_note_counters):
 * written, read back, rendered where they stood among the notes. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "attacher/core/attrib.h"
#include "attacher/core/tasks.h"
#include "common/profile.h"
#include "common/shm.h"
#include "runtimes/runtime.h"

struct fake {
	struct os_runtime rt;
	int id;
	uint16_t takes;    /* the event type it claims */
	unsigned prepared, destroyed;
};

static struct fake *fk(struct os_runtime *rt)
{
	return rt->priv;
}

static bool f_claim(struct os_runtime *rt, struct os_aspace *as, const struct os_event *ev)
{
	(void)as;
	return ev->type == fk(rt)->takes;
}

static bool f_prepare(struct os_runtime *rt, struct os_aspace *as, const struct os_event *ev,
		      struct os_obj_event *oe)
{
	(void)as;
	(void)ev;
	(void)oe;
	fk(rt)->prepared++;
	return false;
}

/* Knows only the pcs of its id's range. */
static uint64_t f_frame_word(struct os_runtime *rt, uint32_t asid, uint64_t pc, uint64_t fp,
			     const uint64_t *leaf_regs,
			     bool (*read)(void *arg, uint64_t addr, uint64_t *word), void *arg)
{
	(void)asid;
	(void)fp;
	(void)leaf_regs;
	(void)read;
	(void)arg;
	return pc >> 12 == (uint64_t)fk(rt)->id ? pc + 1 : pc;
}

static int f_thread_kind(struct os_runtime *rt, uint32_t pid, const char *name)
{
	(void)pid;
	return strcmp(name, fk(rt)->id == 1 ? "one" : "two") == 0 ? fk(rt)->id : -1;
}

static void f_destroy(struct os_runtime *rt)
{
	fk(rt)->destroyed++;
}

static const struct os_runtime_ops f_ops = {
	.name = "fake",
	.claim = f_claim,
	.prepare = f_prepare,
	.frame_word = f_frame_word,
	.thread_kind = f_thread_kind,
	.destroy = f_destroy,
};

Test(runtimes, first_claim_owns_the_address_space)
{
	struct fake a = { { &f_ops, &a }, 1, OS_EV_JVM, 0, 0 };
	struct fake b = { { &f_ops, &b }, 2, OS_EV_JALLOC, 0, 0 };
	struct os_runtime *rts[] = { &a.rt, &b.rt };
	struct os_runtime *d = os_runtimes_of(rts, 2);
	struct os_aspace as1 = { .id = 1 }, as2 = { .id = 2 };
	struct os_event jvm = { .type = OS_EV_JVM }, jalloc = { .type = OS_EV_JALLOC };
	struct os_obj_event oe;

	cr_assert_not_null(d);
	/* as1 announced by a's event type: a's from then on, b's type too */
	d->ops->prepare(d, &as1, &jvm, &oe);
	d->ops->prepare(d, &as1, &jalloc, &oe);
	cr_expect_eq(a.prepared, 2);
	cr_expect_eq(b.prepared, 0);
	/* as2 claimed by b */
	d->ops->prepare(d, &as2, &jalloc, &oe);
	d->ops->prepare(d, &as2, &jvm, &oe);
	cr_expect_eq(b.prepared, 2);
	cr_expect_eq(a.prepared, 2);
	/* a later address space past the first table */
	{
		struct os_aspace as40 = { .id = 40 };

		d->ops->prepare(d, &as40, &jalloc, &oe);
		cr_expect_eq(d->ops->frame_word(d, 40, 0x2010, 0, NULL, NULL, NULL), 0x2011);
		cr_expect_eq(d->ops->frame_word(d, 40, 0x1010, 0, NULL, NULL, NULL), 0x1010);
	}
	cr_expect_eq(b.prepared, 3);
	/* an owned address space asks its owner alone */
	cr_expect_eq(d->ops->frame_word(d, 1, 0x2010, 0, NULL, NULL, NULL), 0x2010);
	cr_expect_eq(d->ops->frame_word(d, 1, 0x1010, 0, NULL, NULL, NULL), 0x1011);
	cr_expect_eq(d->ops->frame_word(d, 2, 0x2010, 0, NULL, NULL, NULL), 0x2011);
	/* an unowned one: the first answer that is not "do not know" */
	cr_expect_eq(d->ops->frame_word(d, 7, 0x2010, 0, NULL, NULL, NULL), 0x2011);
	cr_expect_eq(d->ops->frame_word(d, 7, 0x3010, 0, NULL, NULL, NULL), 0x3010);
	cr_expect_eq(d->ops->thread_kind(d, 5, "two"), 2);
	cr_expect_eq(d->ops->thread_kind(d, 5, "three"), -1);
	cr_expect_eq(os_runtime_find(d, "fake"), &a.rt, "by name: the first");
	cr_expect_null(os_runtime_find(d, "none"));
	d->ops->destroy(d);
	cr_expect_eq(a.destroyed + b.destroyed, 2);
}

Test(runtimes, registry_creates_every_runtime)
{
	struct os_runtime *d = os_runtimes_new(NULL, NULL, NULL);

	cr_assert_not_null(d);
	cr_assert_gt(os_nruntimes, 0);
	for (size_t i = 0; i < os_nruntimes; i++)
		cr_expect_not_null(os_runtime_find(d, os_runtimes[i].name), "%s",
				   os_runtimes[i].name);
	d->ops->destroy(d);
}

/* "t.count" knows its sentence; other kinds fall back to the figures. */
static size_t render(const struct os_profile *p, const struct os_note_counters *g, char *buf,
		     size_t len)
{
	uint64_t v = 0;

	if (strcmp(p->strings[g->kind], "t.count") != 0)
		return 0;
	os_profile_note_val(p, g, "n", OS_NV_U64, &v);
	return (size_t)snprintf(buf, len, "counted %llu", (unsigned long long)v);
}

static const char *note(const struct os_profile *p, uint32_t i)
{
	return i < p->meta.nnotes ? os_profile_str(p, p->meta.notes[i]) : "(none)";
}

Test(runtimes, note_counters_written_read_and_rendered_in_place)
{
	struct os_profile *p = os_profile_new(), *q = NULL;
	char path[] = "/tmp/objscope-test-notesXXXXXX", err[256] = "";
	uint32_t g;
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_not_null(p);
	cr_assert_eq(os_profile_add_note(p, "first"), 0);
	g = os_profile_note_group(p, "t.count");
	cr_assert_neq(g, OS_NONE);
	cr_assert_eq(os_profile_note_u64(p, g, "n", 42), 0);
	g = os_profile_note_group(p, "t.other");
	cr_assert_eq(os_profile_note_f64(p, g, "ms", 1.5), 0);
	cr_assert_eq(os_profile_note_str(p, g, "gc", "G1"), 0);
	cr_assert_eq(os_profile_add_note(p, "last"), 0);
	cr_assert_eq(os_profile_write(p, path, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(os_profile_read(path, &q, err, sizeof(err)), 0, "%s", err);
	unlink(path);
	cr_assert_eq(q->nnote_counters, 2);
	cr_assert_eq(q->meta.nnotes, 2);
	cr_assert_eq(os_profile_render_notes(q, render), 0);
	cr_assert_eq(q->meta.nnotes, 4);
	cr_expect_str_eq(note(q, 0), "first");
	cr_expect_str_eq(note(q, 1), "counted 42");
	cr_expect_str_eq(note(q, 2), "t.other: ms 1.5, gc G1");
	cr_expect_str_eq(note(q, 3), "last");
	cr_expect_eq(q->nnote_counters, 0, "rendered once");
	os_profile_free(p);
	os_profile_free(q);
}
