/* Tests of os_rep_stop (attacher/analyses/replica.h): when the collection stops
 * (before `attach` leaves the target) every unhit watchpoint is disarmed,
 * none is armed afterwards, and a hit already taken is still compared.
 * Suite `replica` (declared in test_replica.c; fixtures per test here). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attacher/analyses/replica.h"

#define SBASE 0x20000000ULL
#define SMEM (1u << 20)
#define SOBJ 256

static uint8_t *smem;
static unsigned sarmed, sdisarms;
static struct {
	uint64_t cookie, addr;
	pid_t tid;
	bool on;
} sw[64];

static int s_arm(void *arg, pid_t pid, pid_t tid, uint64_t addr, unsigned len, uint64_t cookie,
		 uint64_t max_age_ns)
{
	(void)arg;
	(void)pid;
	(void)len;
	(void)max_age_ns;
	cr_assert_lt(sarmed, 64);
	sw[sarmed].cookie = cookie;
	sw[sarmed].addr = addr;
	sw[sarmed].tid = tid;
	sw[sarmed++].on = true;
	return 0;
}

static int s_disarm(void *arg, uint64_t cookie)
{
	(void)arg;
	for (unsigned i = 0; i < sarmed; i++) {
		if (sw[i].on && sw[i].cookie == cookie) {
			sw[i].on = false;
			sdisarms++;
			return 0;
		}
	}
	return -ENOENT;
}

static ssize_t s_read(void *arg, pid_t pid, uint64_t addr, void *buf, size_t len)
{
	(void)arg;
	(void)pid;
	if (addr < SBASE || addr + len > SBASE + SMEM)
		return -1;
	memcpy(buf, smem + (addr - SBASE), len);
	return (ssize_t)len;
}

static struct os_rep_backend SBE = { .arm = s_arm, .disarm = s_disarm, .read = s_read };

static void s_setup(void)
{
	smem = calloc(1, SMEM);
	cr_assert_not_null(smem);
	memset(smem, 7, SMEM); /* every object equal */
	sarmed = sdisarms = 0;
	memset(sw, 0, sizeof(sw));
}

static void s_teardown(void)
{
	free(smem);
}

static void s_sample(struct os_rep *r, uint64_t t, pid_t tid, unsigned i)
{
	uint64_t lo = SBASE + (uint64_t)i * SOBJ, a = lo + 64, w;
	struct os_rep_sample s = { .time = t, .pid = 1, .tid = tid, .asid = 1, .ctx = 0,
				   .lo = lo, .hi = lo + SOBJ, .addr = a, .width = 8,
				   .value_ok = true };

	memcpy(&w, smem + (a - SBASE), 8);
	s.word8 = w;
	os_rep_sample(r, &s);
}

Test(replica, stop_disarms_and_arms_no_more, .init = s_setup, .fini = s_teardown)
{
	struct os_rep *r = os_rep_new(NULL, &SBE);
	struct os_rep_stats st;
	struct os_replica c;
	struct watch_hit h = { .len = 8, .width = 8, .value_ok = true, .time_ns = 45 };

	cr_assert_not_null(r);
	s_sample(r, 10, 5, 0);  /* reference */
	s_sample(r, 20, 5, 1);  /* armed on thread 5 */
	s_sample(r, 30, 6, 2);  /* armed on thread 6 */
	cr_assert_eq(os_rep_armed(r), 2);
	cr_assert_eq(sarmed, 2);
	/* thread 5 hit its watchpoint (the hit disarmed it); not taken yet */
	h.tid = sw[0].tid;
	h.addr = sw[0].addr;
	h.cookie = sw[0].cookie;
	memcpy(&h.value, smem + (sw[0].addr - SBASE), 8);
	sw[0].on = false;
	os_rep_hit(r, &h);

	os_rep_stop(r);
	cr_assert_eq(sdisarms, 1, "the unhit watchpoint is disarmed");
	cr_assert_not(sw[1].on);
	os_rep_get_stats(r, &st);
	cr_assert_eq(st.stopped, 1);

	/* later samples (applied after the stop) arm nothing */
	s_sample(r, 50, 7, 3);
	s_sample(r, 60, 5, 4);
	cr_assert_eq(sarmed, 2, "armed after the stop");
	os_rep_get_stats(r, &st);
	cr_assert_eq(st.after_stop, 2);

	/* the hit taken before the stop is still compared */
	os_rep_finish(r);
	os_rep_counts(r, 0, &c);
	cr_assert_eq(c.equivalent, 1);
	cr_assert_eq(c.different, 0);
	cr_assert_eq(os_rep_armed(r), 0);
	os_rep_free(r);
}
