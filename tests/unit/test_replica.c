/* Tests of the replica engine (attacher/analyses/replica.h) with a synthetic backend:
 * a fake target memory, fake debug registers (4 per thread) and hits made
 * up by the test. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attacher/analyses/replica.h"
#include "common/replica_math.h"

#define BASE 0x10000000ULL
#define MEMSZ (1u << 22)
#define OBJ 256 /* object size in the tests */

struct fake_watch {
	uint64_t cookie, addr;
	unsigned len;
	pid_t tid;
	bool on;
};

struct fake {
	uint8_t *mem;
	struct fake_watch w[4096];
	unsigned nw;
	int force_rc;      /* arm returns this when non-zero */
	unsigned arms, disarms, reads;
	uint64_t token;    /* gc_token's answer */
	uint64_t gc_in_read; /* the next read of this address "collects":
			      * token + 1, the memory given to other bytes */
};

static struct fake F;

static int f_arm(void *arg, pid_t pid, pid_t tid, uint64_t addr, unsigned len, uint64_t cookie,
		 uint64_t max_age_ns)
{
	unsigned on = 0;

	(void)arg;
	(void)pid;
	(void)max_age_ns;
	if (F.force_rc)
		return F.force_rc;
	for (unsigned i = 0; i < F.nw; i++)
		on += F.w[i].on && F.w[i].tid == tid;
	if (on >= WATCH_SLOTS)
		return -ENOSPC;
	cr_assert_lt(F.nw, 4096);
	cr_assert_eq(addr % len, 0, "unaligned watchpoint");
	F.w[F.nw++] = (struct fake_watch){ cookie, addr, len, tid, true };
	F.arms++;
	return 0;
}

static struct fake_watch *f_find(uint64_t cookie)
{
	for (unsigned i = 0; i < F.nw; i++)
		if (F.w[i].on && F.w[i].cookie == cookie)
			return &F.w[i];
	return NULL;
}

static int f_disarm(void *arg, uint64_t cookie)
{
	struct fake_watch *w = f_find(cookie);

	(void)arg;
	if (!w)
		return -ENOENT;
	w->on = false;
	F.disarms++;
	return 0;
}

static ssize_t f_read(void *arg, pid_t pid, uint64_t addr, void *buf, size_t len)
{
	(void)arg;
	(void)pid;
	if (addr < BASE || addr + len > BASE + MEMSZ)
		return -1;
	if (F.gc_in_read >= addr && F.gc_in_read < addr + len) {
		memset(F.mem + (addr - BASE), 0xee, len);
		F.token++;
		F.gc_in_read = 0;
	}
	memcpy(buf, F.mem + (addr - BASE), len);
	F.reads++;
	return (ssize_t)len;
}

static struct os_rep_backend BE = { .arm = f_arm, .disarm = f_disarm, .read = f_read };

static void setup(void)
{
	memset(&F, 0, sizeof(F));
	F.mem = calloc(1, MEMSZ);
	cr_assert_not_null(F.mem);
}

static void teardown(void)
{
	free(F.mem);
}

static uint64_t word_at(uint64_t addr)
{
	uint64_t w;

	memcpy(&w, F.mem + (addr - BASE), 8);
	return w;
}

static void sample(struct os_rep *r, uint64_t t, pid_t tid, uint32_t ctx, uint64_t lo,
		   uint64_t off, bool java)
{
	uint64_t a = lo + off;
	struct os_rep_sample s = { .time = t, .pid = 1, .tid = tid, .asid = 1, .ctx = ctx,
				   .lo = lo, .hi = lo + OBJ, .addr = a, .width = 8,
				   .value_ok = true, .word8 = word_at(a & ~7ULL), .java = java };

	os_rep_sample(r, &s);
}

/* The thread touches every watched address now: one hit each. */
static void touch_all(struct os_rep *r, uint64_t t)
{
	for (unsigned i = 0; i < F.nw; i++) {
		struct fake_watch *w = &F.w[i];
		struct watch_hit h = { .tid = w->tid, .addr = w->addr, .len = w->len,
				       .cookie = w->cookie, .width = w->len, .value_ok = true,
				       .time_ns = t };

		if (!w->on)
			continue;
		memcpy(&h.value, F.mem + (w->addr - BASE), w->len);
		w->on = false;
		os_rep_hit(r, &h);
	}
}

static uint64_t obj(unsigned ctx, unsigned i)
{
	return BASE + (uint64_t)ctx * 0x100000 + (uint64_t)i * OBJ;
}

TestSuite(replica, .init = setup, .fini = teardown);

/* Context 0: every object has the same content; context 1: all differ. */
Test(replica, theta_alpha_exact_counts)
{
	struct os_rep_cfg cfg;
	struct os_rep *r;
	struct os_replica c0, c1;
	struct os_replica_figures f0, f1;
	uint64_t t = 1000;

	os_rep_cfg_default(&cfg);
	cfg.full_check_interval_ns = 0;
	r = os_rep_new(&cfg, &BE);
	cr_assert_not_null(r);
	srand(7);
	for (unsigned i = 0; i < 200; i++) {
		for (unsigned k = 0; k < OBJ; k++) {
			F.mem[obj(0, i) - BASE + k] = (uint8_t)(k * 7);
			F.mem[obj(1, i) - BASE + k] = (uint8_t)rand();
		}
	}
	for (unsigned n = 0; n < 2000; n++) {
		unsigned i = (unsigned)rand() % 200, off = ((unsigned)rand() % (OBJ / 8)) * 8;

		sample(r, t++, 10 + (pid_t)(n % 3), n & 1, obj(n & 1, i), off, false);
		if (n % 5 == 4)
			touch_all(r, t++);
	}
	os_rep_finish(r);
	os_rep_counts(r, 0, &c0);
	os_rep_counts(r, 1, &c1);
	os_replica_figures(&c0, 200, &f0);
	os_replica_figures(&c1, 200, &f1);
	cr_assert_gt(c0.equivalent, 50);
	cr_assert_eq(c0.different, 0);
	cr_assert_gt(c1.different, 50);
	cr_assert_lt(c1.equivalent, c1.different / 20 + 1);
	cr_assert(f0.has_theta && f0.theta >= 0.99);
	cr_assert(f1.has_theta && f1.theta <= 0.05);
	/* whole contents: context 0 never differs, context 1 always does */
	cr_assert_gt(c0.full_checks, 10);
	cr_assert_eq(c0.full_differ, 0);
	cr_assert_eq(c0.full_match, c0.full_checks);
	cr_assert_gt(c1.full_checks, 10);
	cr_assert_eq(c1.full_differ, c1.full_checks);
	cr_assert_leq(c1.full_differ_match, c1.equivalent);
	/* exact: every hashed object of context 0 has a twin, none of context 1 */
	cr_assert_gt(c0.exact_objects, 100);
	cr_assert_eq(c0.exact_twins, c0.exact_objects);
	cr_assert_gt(c1.exact_objects, 100);
	cr_assert_eq(c1.exact_twins, 0);
	cr_assert(f0.has_exact && f0.exact == 1.0);
	cr_assert(f1.has_exact && f1.exact == 0.0);
	cr_assert_eq(os_rep_armed(r), 0);
	os_rep_free(r);
}

/* Objects that differ in one byte only: offsets mostly match although the
 * contents differ, which is what alpha measures. */
Test(replica, alpha_measured)
{
	struct os_rep_cfg cfg;
	struct os_rep *r;
	struct os_replica c;
	struct os_replica_figures f;
	uint64_t t = 1;

	os_rep_cfg_default(&cfg);
	cfg.full_check_interval_ns = 0;
	r = os_rep_new(&cfg, &BE);
	for (unsigned i = 0; i < 100; i++) {
		memset(F.mem + (obj(0, i) - BASE), 0x5a, OBJ);
		F.mem[obj(0, i) - BASE + OBJ - 1] = (uint8_t)i; /* last byte differs */
	}
	srand(3);
	for (unsigned n = 0; n < 1000; n++) {
		sample(r, t++, 5, 0, obj(0, (unsigned)rand() % 100), ((unsigned)rand() % 31) * 8,
		       false);
		touch_all(r, t++);
	}
	os_rep_finish(r);
	os_rep_counts(r, 0, &c);
	os_replica_figures(&c, 100, &f);
	cr_assert_gt(c.full_checks, 50);
	cr_assert_eq(c.full_differ, c.full_checks);
	cr_assert_eq(c.full_differ_match, c.full_differ); /* offsets < 248 always match */
	cr_assert_eq(c.full_match, c.full_checks);
	cr_assert(f.has_alpha && f.alpha == 1.0);
	cr_assert(f.has_theta && f.theta == 1.0);
	cr_assert_eq(c.exact_twins, 0);
	os_rep_free(r);
}

/* 4 registers, N offers without hits: each offer ends up armed with
 * probability 4/N, the old ones as likely as the new ones. */
Test(replica, reservoir_fair)
{
	enum { N = 16, TRIALS = 3000 };
	unsigned armed_at[N + 1] = { 0 };

	for (unsigned trial = 0; trial < TRIALS; trial++) {
		struct os_rep_cfg cfg;
		struct os_rep *r;

		memset(F.w, 0, sizeof(F.w));
		F.nw = 0;
		os_rep_cfg_default(&cfg);
		cfg.seed = 0x1234567ULL + trial * 7919ULL;
		cfg.exact_per_ctx = 0;
		r = os_rep_new(&cfg, &BE);
		sample(r, 1, 9, 0, obj(0, 0), 8, false); /* the reference */
		for (unsigned i = 1; i <= N; i++)
			sample(r, 1 + i, 9, 0, obj(0, i), 8, false);
		for (unsigned k = 0; k < F.nw; k++)
			if (F.w[k].on)
				armed_at[(F.w[k].addr - obj(0, 0)) / OBJ]++;
		cr_assert_eq(os_rep_armed(r), WATCH_SLOTS);
		os_rep_free(r);
	}
	for (unsigned i = 1; i <= N; i++) {
		double p = (double)armed_at[i] / TRIALS;

		cr_assert(p > 0.25 * 0.8 && p < 0.25 * 1.2, "offer %u armed with p=%.3f (want 0.25)",
			  i, p);
	}
}

/* A free of the watched object disarms its watchpoint; a hit after the
 * free (in time) is not compared, one before it is. */
Test(replica, free_and_gc_invalidate)
{
	struct os_rep *r = os_rep_new(NULL, &BE);
	struct os_rep_stats st;
	struct os_replica c;
	struct watch_hit h = { .tid = 5, .len = 8, .width = 8, .value_ok = true };

	memset(F.mem, 1, 4 * OBJ);
	sample(r, 10, 5, 0, obj(0, 0), 16, false);
	sample(r, 20, 5, 0, obj(0, 1), 16, false);
	cr_assert_eq(os_rep_armed(r), 1);
	cr_assert_eq(F.w[0].addr, obj(0, 1) + 16);
	/* hit at 50 queued; the object is freed at 40 */
	h.cookie = F.w[0].cookie;
	h.addr = F.w[0].addr;
	h.time_ns = 50;
	h.value = word_at(h.addr);
	os_rep_hit(r, &h);
	os_rep_free_object(r, 40, 1, obj(0, 1), obj(0, 1) + OBJ);
	cr_assert_eq(os_rep_armed(r), 0);
	cr_assert_eq(F.disarms, 1);
	os_rep_flush(r, UINT64_MAX);
	os_rep_counts(r, 0, &c);
	cr_assert_eq(c.equivalent + c.different, 0);
	os_rep_get_stats(r, &st);
	cr_assert_eq(st.invalidated, 1);
	cr_assert_eq(st.hit_unknown, 1);

	/* a hit before the free is compared */
	sample(r, 60, 5, 0, obj(0, 2), 16, false);
	cr_assert_eq(os_rep_armed(r), 1);
	h.cookie = F.w[1].cookie;
	h.addr = F.w[1].addr;
	h.time_ns = 65;
	os_rep_hit(r, &h);
	os_rep_event(r, 70, 1, obj(0, 2), obj(0, 2) + OBJ, false);
	os_rep_counts(r, 0, &c);
	cr_assert_eq(c.equivalent, 1);

	/* Java objects: a collection forgets every comparison of the space */
	sample(r, 100, 5, 1, obj(1, 0), 16, true);
	sample(r, 110, 5, 1, obj(1, 1), 16, true);
	cr_assert_eq(os_rep_armed(r), 1);
	os_rep_event(r, 120, 1, 0, 0, true);
	cr_assert_eq(os_rep_armed(r), 0);
	/* after the collection the references are gone: no self comparison of
	 * a moved object */
	sample(r, 130, 5, 1, obj(1, 0), 16, true);
	cr_assert_eq(os_rep_armed(r), 0);
	/* a sample older than a collection seen at drain time is skipped */
	os_rep_gc_seen(r, 1, 200);
	sample(r, 150, 5, 1, obj(1, 1), 16, true);
	os_rep_get_stats(r, &st);
	cr_assert_eq(st.gc_window, 1);
	cr_assert_eq(os_rep_armed(r), 0);
	os_rep_free(r);
}

static uint64_t f_gc_token(void *arg)
{
	(void)arg;
	return F.token;
}

/* Samples of two Java objects of context 0 (offset 16): the second is
 * compared with a reference; hit and taken when `hit`. */
static void java_pair(struct os_rep *r, uint64_t t, unsigned a, unsigned b, bool hit)
{
	sample(r, t, 5, 0, obj(0, a), 16, true);
	sample(r, t + 1, 5, 0, obj(0, b), 16, true);
	if (hit) {
		touch_all(r, t + 2);
		os_rep_flush(r, UINT64_MAX);
	}
}

/* Whole contents and the exact figure are read well after the hit: never
 * while a collection runs or has begun undrained (token 0), and what was
 * read across one (the token changed) is dropped. Copies stay copies. */
Test(replica, late_java_reads_wait_for_collections)
{
	struct os_rep_backend be = BE;
	struct os_rep_cfg cfg;
	struct os_rep_stats st, st0;
	struct os_replica c;
	struct os_rep *r;
	unsigned reads;

	be.gc_token = f_gc_token;
	os_rep_cfg_default(&cfg);
	cfg.full_check_interval_ns = 0;
	r = os_rep_new(&cfg, &be);
	cr_assert_not_null(r);
	for (unsigned i = 0; i < 8; i++)
		memset(F.mem + (obj(0, i) - BASE), 0x42, OBJ); /* all copies */

	/* a collection runs: nothing is read late, nothing counted */
	F.token = 0;
	reads = F.reads;
	java_pair(r, 10, 0, 1, true);
	os_rep_counts(r, 0, &c);
	os_rep_get_stats(r, &st);
	cr_assert_eq(c.equivalent, 1, "the hit's own value is still compared");
	cr_assert_eq(c.full_checks, 0);
	cr_assert_eq(st.exact_hashed, 0);
	cr_assert_eq(F.reads, reads, "an object was read while a collection ran");
	cr_assert_eq(st.gc_unsettled, 3, "2 exact offers and 1 whole check: %llu",
		     (unsigned long long)st.gc_unsettled);

	/* one begins while the object hit is read: its check is dropped, the
	 * bytes that replaced it never count as a difference */
	F.token = 7;
	java_pair(r, 20, 2, 3, false);
	os_rep_get_stats(r, &st0);
	cr_assert_eq(os_rep_armed(r), 2);
	F.gc_in_read = obj(0, 3) + 64;
	touch_all(r, 30);
	os_rep_flush(r, UINT64_MAX);
	os_rep_counts(r, 0, &c);
	os_rep_get_stats(r, &st);
	cr_assert_eq(F.gc_in_read, 0, "object 3 was not read");
	cr_assert_eq(st.gc_unsettled, st0.gc_unsettled + 1);
	cr_assert_eq(c.full_checks, 1, "object 2's check (before the collection) counts");
	cr_assert_eq(c.full_differ, 0, "content read across a collection was compared");

	/* quiet again: compared whole, equal */
	memset(F.mem + (obj(0, 3) - BASE), 0x42, OBJ);
	java_pair(r, 40, 4, 5, true);
	os_rep_counts(r, 0, &c);
	cr_assert_geq(c.full_checks, 2);
	cr_assert_eq(c.full_differ, 0);
	os_rep_free(r);
}

/* The mark word of Java objects is not data; Java windows never cover it. */
Test(replica, java_header_excluded)
{
	struct os_rep_cfg cfg;
	struct os_rep *r;
	struct os_replica c;

	os_rep_cfg_default(&cfg);
	r = os_rep_new(&cfg, &BE);
	for (unsigned i = 0; i < 10; i++) {
		memset(F.mem + (obj(0, i) - BASE), 0x33, OBJ);
		F.mem[obj(0, i) - BASE] = (uint8_t)(i + 1); /* mark word differs */
	}
	for (unsigned i = 0; i < 10; i++)
		sample(r, 1 + i, 5, 0, obj(0, i), 0, true); /* access at the mark word */
	os_rep_finish(r);
	os_rep_counts(r, 0, &c);
	cr_assert_eq(c.exact_objects, 10);
	cr_assert_eq(c.exact_twins, 10);
	cr_assert_eq(F.arms, 0, "a window on the mark word was armed");
	os_rep_free(r);
}

/* Nor the class word and the array length (bytes 8-15 with compressed class
 * pointers): equal in every same-sized object of a context, they would
 * count as replicas (a bounds check reads the length at offset 12). */
Test(replica, java_class_word_and_length_excluded)
{
	struct os_rep *r = os_rep_new(NULL, &BE);

	for (unsigned i = 0; i < 10; i++)
		memset(F.mem + (obj(0, i) - BASE), (int)(i + 1), OBJ);
	for (unsigned i = 0; i < 10; i++)
		sample(r, 1 + i, 5, 0, obj(0, i), 12, true);
	cr_assert_eq(F.arms, 0, "a window on the array length was armed");
	for (unsigned i = 0; i < 10; i++)
		sample(r, 20 + i, 5, 0, obj(0, i), 16, true);
	cr_assert_gt(F.arms, 0, "no window on the first data word");
	os_rep_free(r);
}

/* No free debug register, or the thread is gone: counted, nothing armed. */
Test(replica, enospc_and_thread_gone)
{
	struct os_rep *r = os_rep_new(NULL, &BE);
	struct os_rep_stats st;

	F.force_rc = -ENOSPC;
	sample(r, 1, 5, 0, obj(0, 0), 8, false);
	for (unsigned i = 1; i < 4; i++)
		sample(r, 1 + i, 5, 0, obj(0, i), 8, false);
	F.force_rc = -ESRCH;
	sample(r, 10, 6, 0, obj(0, 5), 8, false);
	os_rep_get_stats(r, &st);
	cr_assert_eq(st.enospc, 3);
	cr_assert_eq(st.thread_gone, 1);
	cr_assert_eq(st.armed, 0);
	cr_assert_eq(os_rep_armed(r), 0);
	/* the registers become free again: arming works */
	F.force_rc = 0;
	sample(r, 20, 5, 0, obj(0, 6), 8, false);
	cr_assert_eq(os_rep_armed(r), 1);
	/* a real ENOSPC from a thread whose 4 registers are busy elsewhere */
	for (unsigned k = 0; k < 4; k++)
		F.w[F.nw++] = (struct fake_watch){ 1000 + k, BASE, 8, 7, true };
	sample(r, 30, 7, 0, obj(0, 7), 8, false);
	os_rep_get_stats(r, &st);
	cr_assert_eq(st.enospc, 4);
	os_rep_free(r);
}

/* Unhit watchpoints are forgotten after their age; a late hit is ignored. */
Test(replica, expiry)
{
	struct os_rep_cfg cfg;
	struct os_rep *r;
	struct os_rep_stats st;

	os_rep_cfg_default(&cfg);
	cfg.max_age_ns = 1000;
	r = os_rep_new(&cfg, &BE);
	sample(r, 1, 5, 0, obj(0, 0), 8, false);
	sample(r, 2, 5, 0, obj(0, 1), 8, false);
	cr_assert_eq(os_rep_armed(r), 1);
	sample(r, 2 + 1000 + 400000000ULL, 5, 1, obj(1, 0), 8, false);
	cr_assert_eq(os_rep_armed(r), 0);
	os_rep_get_stats(r, &st);
	cr_assert_eq(st.expired, 1);
	os_rep_free(r);
}

/* The access width comes from decoding the sampled instruction in the
 * target (cached per instruction), the value from the aligned word. */
Test(replica, access_width_and_value)
{
	static const struct {
		uint8_t code[4];
		unsigned len, width;
	} insns[] = {
		{ { 0x8b, 0x47, 0x08 }, 3, 4 },       /* mov eax, [rdi+8] */
		{ { 0x0f, 0xb6, 0x07 }, 3, 1 },       /* movzx eax, byte [rdi] */
		{ { 0x48, 0x8b, 0x07 }, 3, 8 },       /* mov rax, [rdi] */
		{ { 0x66, 0x8b, 0x07 }, 3, 2 },       /* mov ax, [rdi] */
	};
	struct os_rep *r = os_rep_new(NULL, &BE);
	uint64_t code_at = BASE + 0x200000, word;
	uint8_t width;

	for (unsigned i = 0; i < 4; i++) {
		uint64_t at = code_at + 16 * i;

		memcpy(F.mem + (at - BASE), insns[i].code, insns[i].len);
		cr_assert(os_rep_read_access(r, 1, 1, at, at + insns[i].len, BASE + 0x13, &width,
					     &word));
		cr_assert_eq(width, insns[i].width, "instruction %u: width %u", i, width);
	}
	/* cached: a changed byte at the same address is not decoded again */
	F.mem[code_at - BASE] = 0x90;
	cr_assert(os_rep_read_access(r, 1, 1, code_at, code_at + 3, BASE + 8, &width, &word));
	cr_assert_eq(width, 4);
	/* the value: the 8 bytes at addr & ~7 */
	memcpy(F.mem + 0x10, "ABCDEFGH", 8);
	cr_assert(os_rep_read_access(r, 1, 1, code_at, code_at + 3, BASE + 0x13, &width, &word));
	cr_assert_eq(memcmp(&word, "ABCDEFGH", 8), 0);
	/* unreadable: no value */
	cr_assert_not(os_rep_read_access(r, 1, 1, code_at, code_at + 3, 0x1000, &width, &word));
	os_rep_free(r);
}

/* A context compared in the target whose own comparisons keep being
 * forgotten (objects freed before a hit) gets one offer a second; a
 * compared one lets every offer through again. A context not compared in
 * the target keeps every offer, however often its objects die. */
Test(replica, futile_offers_bounded_when_compared_in_target)
{
	struct os_rep *r = os_rep_new(NULL, &BE);
	struct os_rep_stats st;
	uint64_t ms = 1000000, t = 10000 * ms; /* CLOCK_MONOTONIC: seconds after boot */
	unsigned arms;

	memset(F.mem, 1, MEMSZ);
	/* context 1: never compared in the target; 40 objects die unhit */
	for (unsigned i = 0; i < 40; i++, t += ms) {
		sample(r, t, 5, 1, obj(1, i), 16, false);
		os_rep_free_object(r, t + 1, 1, obj(1, i), obj(1, i) + OBJ);
	}
	os_rep_get_stats(r, &st);
	cr_assert_eq(st.own_futile, 0);
	cr_assert_eq(st.armed, 39, "armed %llu", (unsigned long long)st.armed); /* first: no ref */
	/* context 0, compared in the target */
	os_rep_exact_hashed(r, 0, 1, obj(0, 999), 42);
	for (unsigned i = 0; i < 40; i++, t += ms) {
		sample(r, t, 5, 0, obj(0, i), 16, false);
		os_rep_free_object(r, t + 1, 1, obj(0, i), obj(0, i) + OBJ);
	}
	os_rep_get_stats(r, &st);
	/* 1 without a reference, 16 forgotten, the 17th goes through as the
	 * first probe, the 22 after it within the second are not offered */
	cr_assert_eq(st.armed, 39 + 17, "armed %llu", (unsigned long long)st.armed);
	cr_assert_eq(st.own_futile, 22, "futile %llu", (unsigned long long)st.own_futile);
	/* a second later one probe; it is compared: every offer goes through */
	t += 1000 * ms;
	sample(r, t, 5, 0, obj(0, 100), 16, false);
	cr_assert_eq(os_rep_armed(r), 1);
	arms = F.arms;
	touch_all(r, t + 1);
	os_rep_flush(r, UINT64_MAX);
	for (unsigned i = 0; i < 5; i++) {
		t += ms;
		sample(r, t, 5, 0, obj(0, 101 + i), 16, false);
		os_rep_free_object(r, t + 1, 1, obj(0, 101 + i), obj(0, 101 + i) + OBJ);
	}
	cr_assert_eq(F.arms, arms + 5);
	os_rep_get_stats(r, &st);
	cr_assert_eq(st.own_futile, 22);
	cr_assert_eq(st.compared, 1);
	os_rep_free(r);
}
