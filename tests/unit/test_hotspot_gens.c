/* test_hotspot_gens.c - G1's region types as the target sends them in the
 * GC_END record (runtimes/hotspot/hotspot_abi.h OS_HS_GENS_*) and as the
 * collector answers from them (runtimes/hotspot/hotspot_gens.c): exact
 * (lag 0) whatever the collector's delay. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "runtimes/hotspot/hotspot_int.h"

#define LO 0x600000000ULL
#define SHIFT 20 /* 1 MiB regions */
#define NREG 40

static const unsigned kinds[5] = { OS_HS_GENS_UNKNOWN, OS_HS_GENS_FREE, OS_HS_GENS_YOUNG,
				   OS_HS_GENS_OLD, OS_HS_GENS_HUGE };

/* Region r has kind kinds[r % 5]. */
static uint32_t payload(uint64_t *w)
{
	uint32_t nw = OS_HS_GENS_HDR + (NREG + OS_HS_GENS_PER_WORD - 1) / OS_HS_GENS_PER_WORD;

	memset(w, 0, nw * sizeof(*w));
	w[0] = OS_HS_GENS_MAGIC | (uint64_t)SHIFT << 8;
	w[1] = LO;
	w[2] = NREG;
	for (unsigned r = 0; r < NREG; r++)
		w[OS_HS_GENS_HDR + r / OS_HS_GENS_PER_WORD] |= (uint64_t)kinds[r % 5]
							       << (4 * (r % OS_HS_GENS_PER_WORD));
	return nw;
}

static uint64_t region(unsigned r)
{
	return LO + ((uint64_t)r << SHIFT) + 4096;
}

Test(hotspot_gens, target_types_used_exactly)
{
	static struct hs_jvm j;
	uint64_t w[16];
	uint32_t nw = payload(w);

	memset(&j, 0, sizeof(j));
	j.gens.kind = HS_GENS_G1;
	/* the payload is used: the heap is never read (no hotspot state) */
	hs_gens_drained(NULL, &j, 7, w, nw);
	cr_assert_eq(j.gens.g1_in_target, 1);
	cr_assert_eq(j.gens.g1_read_late, 0);
	cr_assert(hs_gens_select(&j, 7), "the end of collection 7 has no generations");
	cr_expect_eq(j.gens.cur.lag, 0);
	for (unsigned r = 0; r < NREG; r++) {
		static const uint32_t want[5] = { OS_GEN_UNKNOWN, OS_GEN_FREE, OS_GEN_YOUNG,
						  OS_GEN_OLD, OS_GEN_OLD_DIRECT };

		cr_expect_eq(hs_gen_of(&j, region(r)), want[r % 5], "region %u: %u", r,
			     hs_gen_of(&j, region(r)));
	}
	/* a survivor's region read free at the end itself: not known (never
	 * guessed young as after a lag) */
	cr_expect_eq(hs_gen_of_dest(&j, region(1)), OS_GEN_UNKNOWN);
	cr_expect_eq(hs_gen_of_dest(&j, region(2)), OS_GEN_YOUNG);
	cr_expect_eq(hs_gen_of_dest(&j, region(4)), OS_GEN_OLD);
	cr_expect_eq(hs_gen_of(&j, LO - 1), OS_GEN_UNKNOWN, "below the first region");
	cr_expect_eq(hs_gen_of(&j, region(NREG)), OS_GEN_UNKNOWN, "past the last region");
	hs_gens_free(&j);
}
