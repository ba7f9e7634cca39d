/* memsrc.c - names of the memory levels and the latency histogram of the
 * per-context memory figures (struct os_memsrc, profile.h). */
#include "common/profile.h"

const char *const os_mem_level_name[OS_LVL_COUNT] = {
	"L1", "LFB", "L2", "L3", "RAM", "remote RAM", "remote cache", "other", "unknown",
};
const char *const os_mem_level_key[OS_LVL_COUNT] = {
	"l1", "lfb", "l2", "l3", "ram", "remote_ram", "remote_cache", "other", "unknown",
};

unsigned os_lat_bucket(uint64_t cycles)
{
	unsigned b = cycles ? 63 - (unsigned)__builtin_clzll(cycles) : 0;

	return b < OS_LAT_BUCKETS ? b : OS_LAT_BUCKETS - 1;
}

uint64_t os_lat_quantile_max(const uint64_t *hist, double q)
{
	uint64_t n = 0, seen = 0, need;

	for (unsigned b = 0; b < OS_LAT_BUCKETS; b++)
		n += hist[b];
	if (!n)
		return 0;
	need = (uint64_t)(q * (double)n + 0.999999);
	if (need < 1)
		need = 1;
	for (unsigned b = 0; b < OS_LAT_BUCKETS; b++) {
		seen += hist[b];
		if (seen >= need)
			return b == OS_LAT_BUCKETS - 1 ? UINT64_MAX : (1ULL << (b + 1)) - 1;
	}
	return UINT64_MAX;
}
