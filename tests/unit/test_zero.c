/* test_zero.c - the HotSpot Zero adapter's pure parts: the Zero-stack walk
 * (runtimes/zero/zero_frames.h) over a synthetic Zero stack and synthetic
 * Method/ConstMethod metadata (interpreter frames, an entry frame between
 * them, the istate offset learnt, what must end a walk or skip a frame),
 * and the collector side (runtimes/zero/zero.c): the hello claims an
 * address space for Zero and nothing else does, the interpreter ranges it
 * carries count the samples taken there, and the notes render. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attacher/core/attrib.h"
#include "attacher/core/tasks.h"
#include "common/profile.h"
#include "common/shm.h"
#include "runtimes/runtime.h"
#include "runtimes/zero/zero.h"
#include "runtimes/zero/zero_abi.h"
#include "runtimes/zero/zero_frames.h"
#include "tests/unit/unit_helpers.h"

#define BASE 0x7f0000000000ULL /* fake addresses of mem[] */
#define WORDS 4096
#define IS_WORDS 17            /* the istate's distance below its frame, in words */
#define THREAD 0x55550000a000ULL
#define CM_CODE 48             /* sizeof(ConstMethod) here */
#define CM_CODE_SIZE 34        /* ConstMethod::_code_size (u2, unaligned on purpose) */

static uint64_t mem[WORDS];

static uint64_t at(uint32_t word)
{
	return BASE + 8ULL * word;
}

static bool rd(void *arg, uint64_t addr, uint64_t *w)
{
	(void)arg;
	if (addr < BASE || addr >= BASE + sizeof(mem) || (addr & 7))
		return false;
	*w = mem[(addr - BASE) / 8];
	return true;
}

static void put(uint64_t addr, uint64_t v)
{
	mem[(addr - BASE) / 8] = v;
}

/* os_zf_walk over mem[] from the first frame (word 2000) up to hi. */
static uint32_t walk(const struct os_zf_layout *l, uint64_t hi, uint64_t *out, uint32_t max,
		     bool *bad, bool *trunc)
{
	return os_zf_walk(l, rd, NULL, NULL, at(2000), THREAD, BASE, hi, out, max, bad, trunc);
}

static const struct os_zf_layout L0 = {
	.thread_off = 0, .bcp_off = 8, .method_off = 32, .const_method_off = 8,
	.code_size_off = CM_CODE_SIZE, .code_off = CM_CODE,
};

static void put16(uint64_t addr, uint16_t v)
{
	uint64_t *w = &mem[((addr & ~7ULL) - BASE) / 8];
	unsigned sh = 8 * (unsigned)(addr & 7);

	*w = (*w & ~(0xffffULL << sh)) | (uint64_t)v << sh;
}

/* A Method at word mw whose ConstMethod at word cw has `code` bytes. */
static uint64_t method(uint32_t mw, uint32_t cw, uint16_t code)
{
	put(at(mw) + 8, at(cw));
	put16(at(cw) + CM_CODE_SIZE, code);
	return at(mw);
}

static uint64_t code_at(uint32_t cw, uint32_t bci)
{
	return at(cw) + CM_CODE + bci;
}

/* An interpreter frame at word fw: next frame, type, its istate. */
static void iframe(uint32_t fw, uint64_t next, uint64_t thread, uint64_t m, uint64_t bcp)
{
	uint64_t is = at(fw) - 8ULL * IS_WORDS;

	put(at(fw), next);
	put(at(fw) - 8, 2); /* INTERPRETER_FRAME */
	put(is, thread);
	put(is + 8, bcp);
	put(is + 32, m);
}

static void eframe(uint32_t fw, uint64_t next)
{
	put(at(fw), next);
	put(at(fw) - 8, 1); /* ENTRY_FRAME */
}

/* Three interpreter frames (2000 < 2400 < 3000) with an entry frame
 * (2200) between the first two: methods m1 (bci 5), m2 (bci 17), m3. */
static uint64_t m1, m2, m3;

static void stack3(void)
{
	memset(mem, 0, sizeof(mem));
	m1 = method(100, 110, 40);
	m2 = method(200, 210, 300);
	m3 = method(300, 310, 8);
	iframe(2000, at(2200), THREAD, m1, code_at(110, 5));
	eframe(2200, at(2400));
	iframe(2400, at(3000), THREAD, m2, code_at(210, 17));
	iframe(3000, 0, THREAD, m3, code_at(310, 0));
}

Test(zero_frames, learns_the_istate_and_walks_past_an_entry_frame)
{
	struct os_zf_layout l = L0;
	uint64_t out[8];
	bool bad, trunc;
	uint32_t n;

	stack3();
	cr_assert(os_zf_learn(&l, rd, NULL, at(2000), THREAD, BASE));
	cr_assert_eq(l.istate_words, IS_WORDS);
	n = walk(&l, BASE + sizeof(mem), out, 8, &bad, &trunc);
	cr_assert_eq(n, 3);
	cr_expect(!bad && !trunc);
	cr_expect_eq(out[0], os_zf_word(m1, code_at(110, 5)));
	cr_expect_eq(out[1], os_zf_word(m2, code_at(210, 17)));
	cr_expect_eq(out[2], os_zf_word(m3, code_at(310, 0)));
	/* the words are the HotSpot adapter's: method, bcp's low bits */
	cr_expect(OS_FRAME_IS_METHOD(out[0]));
	cr_expect_eq(out[0] & 0x0000ffffffffffffULL, m1);
	cr_expect_eq((out[0] >> OS_FRAME_POS_SHIFT) & 0x3fff,
		     OS_FRAME_BCP_KNOWN | (code_at(110, 5) & OS_FRAME_BCP_LOW));
}

Test(zero_frames, nothing_learnt_from_another_thread_or_a_bcp_outside_its_method)
{
	struct os_zf_layout l = L0;

	stack3();
	cr_expect(!os_zf_learn(&l, rd, NULL, at(2000), THREAD + 8, BASE));
	cr_expect_eq(l.istate_words, 0);
	/* bcp one past the method's 40 bytes of code */
	iframe(2000, at(2200), THREAD, m1, code_at(110, 40));
	cr_expect(!os_zf_learn(&l, rd, NULL, at(2000), THREAD, BASE));
	/* an istate below lo is never read */
	iframe(2000, at(2200), THREAD, m1, code_at(110, 39));
	cr_expect(!os_zf_learn(&l, rd, NULL, at(2000), THREAD, at(2000) - 8 * 4));
	cr_expect(os_zf_learn(&l, rd, NULL, at(2000), THREAD, BASE));
}

Test(zero_frames, frames_of_another_thread_or_method_give_no_word)
{
	struct os_zf_layout l = L0;
	uint64_t out[8];
	bool bad, trunc;
	uint32_t n;

	stack3();
	l.istate_words = IS_WORDS;
	iframe(2400, at(3000), THREAD + 64, m2, code_at(210, 17));
	put(at(3000) - 8ULL * IS_WORDS + 32, 0x13); /* misaligned Method* */
	n = walk(&l, BASE + sizeof(mem), out, 8, &bad, &trunc);
	cr_expect_eq(n, 1);
	cr_expect(!bad, "the chain itself followed the rules");
}

Test(zero_frames, a_chain_that_does_not_grow_or_leaves_the_stack_ends_bad)
{
	struct os_zf_layout l = L0;
	uint64_t out[8];
	bool bad, trunc;
	uint32_t n;

	stack3();
	l.istate_words = IS_WORDS;
	put(at(2400), at(2300)); /* back down */
	n = walk(&l, BASE + sizeof(mem), out, 8, &bad, &trunc);
	cr_expect_eq(n, 2);
	cr_expect(bad);
	stack3();
	/* the stack ends below the last frame */
	n = walk(&l, at(2500), out, 8, &bad, &trunc);
	cr_expect_eq(n, 2);
	cr_expect(bad);
	/* unknown istate offset: nothing */
	l.istate_words = 0;
	n = walk(&l, BASE + sizeof(mem), out, 8, &bad, &trunc);
	cr_expect_eq(n, 0);
	cr_expect(bad);
}

Test(zero_frames, max_cuts_the_walk)
{
	struct os_zf_layout l = L0;
	uint64_t out[2];
	bool bad, trunc;

	stack3();
	l.istate_words = IS_WORDS;
	cr_expect_eq(walk(&l, BASE + sizeof(mem), out, 2, &bad, &trunc), 2);
	cr_expect(trunc && !bad);
}

/* ---- the collector side ------------------------------------------------ */

static struct os_event *event(uint16_t type, uint64_t aux2, const uint64_t *w, uint16_t n)
{
	struct os_event *ev = calloc(1, OS_EVENT_FIXED + 8u * n);

	ev->type = type;
	ev->nframes = n;
	ev->len = OS_EVENT_FIXED + 8u * n;
	ev->aux2 = aux2;
	if (n)
		memcpy(ev->frames, w, 8u * n);
	return ev;
}

static char *render_all(struct os_runtime *rt)
{
	struct os_profile *p = os_profile_new();
	char *all;

	rt->ops->notes(rt, p);
	all = ut_notes_text(p);
	os_profile_free(p);
	return all;
}

Test(zero_runtime, the_hello_claims_and_its_ranges_count_interpreter_samples)
{
	struct os_runtime *rt = os_zero_create(NULL, NULL);
	struct os_aspace as = { .id = 3, .pid = 4242 };
	/* istate words, libjvm's text, the interpreter's ranges */
	const uint64_t words[] = { IS_WORDS, 0x400000, 0x900000, 0x1000, 0x2000, 0x5000, 0x5100 };
	struct os_event *hello = event(OS_EV_JVM, OS_ZERO_HELLO, words, 7);
	struct os_event *jvm = event(OS_EV_JVM, 0, NULL, 0), *gc = event(OS_EV_GC_BEGIN, 1, NULL, 0);
	struct os_obj_event oe;
	struct os_rt_frame f = { .pc = 0x1800 };
	char *notes;

	cr_assert_not_null(rt);
	cr_expect_str_eq(rt->ops->name, "zero");
	/* HotSpot's own events are not Zero's: HotSpot (next) claims them */
	cr_expect(!rt->ops->claim(rt, &as, jvm));
	cr_expect(!rt->ops->claim(rt, &as, gc));
	cr_assert(rt->ops->claim(rt, &as, hello));
	cr_expect(!rt->ops->prepare(rt, &as, hello, &oe), "the hello is consumed");
	/* leaves: two in the interpreter's ranges, one outside; callers not counted */
	rt->ops->java_walk(rt, 3, &f, true, NULL, NULL, NULL, 0);
	f.pc = 0x50ff;
	rt->ops->java_walk(rt, 3, &f, true, NULL, NULL, NULL, 0);
	f.pc = 0x5100;
	rt->ops->java_walk(rt, 3, &f, true, NULL, NULL, NULL, 0);
	f.pc = 0x1800;
	rt->ops->java_walk(rt, 3, &f, false, NULL, NULL, NULL, 0);
	/* another address space: not counted */
	rt->ops->java_walk(rt, 4, &f, true, NULL, NULL, NULL, 0);
	notes = render_all(rt);
	cr_expect(strstr(notes, "HotSpot Zero pid 4242: 2 of 3 addressed samples were taken in "
				"the bytecode interpreter"),
		  "%s", notes);
	cr_expect(strstr(notes, "HotSpot Zero pid 4242: Java objects are seen where the VM "
				"allocates them"),
		  "%s", notes);
	free(notes);
	free(hello);
	free(jvm);
	free(gc);
	rt->ops->destroy(rt);
}

/* Asked first for an address space nobody owns yet (a JVM before its
 * first event), Zero must not answer for it: HotSpot, asked next, keeps
 * what it learns there (a start-up path's method words, named later). */
Test(zero_runtime, another_jvm_is_left_to_the_next_runtime)
{
	struct os_runtime *rt = os_zero_create(NULL, NULL);
	struct os_aspace as = { .id = 5, .pid = 4343 };
	const uint64_t path[] = { 0x401000, OS_FRAME_METHOD | 0x7f0000001000ULL, 0x402000 };
	uint64_t out[8];
	char *notes;

	cr_assert_not_null(rt);
	cr_assert_eq(rt->ops->path_words(rt, &as, path, 3, out, 8), 3);
	cr_expect_arr_eq(out, path, sizeof(path), "the path was rewritten");
	cr_expect_eq(rt->ops->sample_addr(rt, 5, 0x1234), 0x1234);
	cr_expect(!rt->ops->in_heap(rt, 5, 0x1234));
	notes = render_all(rt);
	cr_expect_str_eq(notes, "", "notes of a JVM that is not Zero's: %s", notes);
	free(notes);
	rt->ops->destroy(rt);
}

Test(zero_runtime, registered_before_hotspot)
{
	size_t zero = os_nruntimes, hs = os_nruntimes;

	for (size_t i = 0; i < os_nruntimes; i++) {
		if (!strcmp(os_runtimes[i].name, "zero"))
			zero = i;
		if (!strcmp(os_runtimes[i].name, "hotspot"))
			hs = i;
	}
	cr_assert_lt(zero, os_nruntimes);
	cr_expect(hs == os_nruntimes || zero < hs, "zero must claim before hotspot");
}
