/* hs_tlab.h - hybrid mode's next TLAB size (docs/JAVA.md "Hybrid, what is
 * seen"): the free size D, in words, that a thread's refill hook writes into
 * its ThreadLocalAllocBuffer::_desired_size for its next TLAB
 * (runtimes/hotspot/target/hotspot.c osp_hs_tlab_refilled; the Zero VM's
 * refills call the same hook).
 *
 * Header-only and pure (no state, no syscalls): the preload runs it inside
 * the target at every refill, the unit tests (tests/unit/test_hotspot.c)
 * check its edges.
 *
 * D = lo + draw mod span - corr, where lo + [0, span) is [T/2, 3T/2) and
 * corr the thread's running mean of (TLAB bytes used - D written), kept
 * within +-span/4 so that D stays in [T/4, 7T/4).
 *
 * D never goes below `floor`, the JVM's MinTLABSize in words: HotSpot's
 * ThreadLocalAllocBuffer::compute_size refuses a TLAB of D + object words
 * below MinTLABSize ("compute_size(6) returns failure"), the object is then
 * allocated outside any TLAB, no TLAB is ever made again for that thread
 * (the refill hook that would write a new D never runs) and from then on
 * every allocation of the thread takes the slow path unsampled. Seen with
 * T = 4096 (T/4 = 1 KiB under JDK 17's MinTLABSize of 2 KiB): 4 runs in 48
 * of tests/java/SmallSites.java had (nearly) all their allocations outside
 * TLABs, 50 objects seen instead of ~140,000 (CI: e2e_java small_objects_two_sites_
 * hot_site_first, "hot site's estimated share 0.000"). */
#ifndef OBJSCOPE_HS_TLAB_H
#define OBJSCOPE_HS_TLAB_H

#include <stdint.h>

/* MinTLABSize of JDK 17 and later, bytes: the floor when the JVM's flag
 * cannot be read */
#define OS_HS_MIN_TLAB_DEFAULT 2048

/* The running mean's unit, 1/256 word: kept in whole words, the mean's
 * update (difference - mean) / 16 rounds to 0 within 15 words of the
 * difference, so the mean stops up to 15 words short of it, on either side
 * depending on where it came from; E[L] then misses T by as much, the
 * estimates by up to 120 bytes / T (~3% at T = 4 KiB) */
#define OS_HS_CORR_ONE 256

static inline uint64_t os_hs_tlab_next(uint64_t draw, uint64_t lo, uint64_t span, int64_t corr,
				       uint64_t floor)
{
	int64_t q = (int64_t)span / 4, d;

	if (!span)
		return lo > floor ? lo : floor;
	if (corr > q)
		corr = q;
	if (corr < -q)
		corr = -q;
	d = (int64_t)(lo + draw % span) - corr;
	if (d < (int64_t)floor)
		d = (int64_t)floor;
	return (uint64_t)d;
}

#endif
