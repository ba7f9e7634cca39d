/* hotspot_g1gens.c - G1's region types read in the target at the end of each
 * collection (the hook after it: the VM thread, Java threads stopped), sent
 * in the GC_END record (hotspot_abi.h OS_HS_GENS_*).
 *
 * The collector used to read the region table when it drained GC_END: on a
 * loaded machine (or under AddressSanitizer) one or two later collections
 * had retyped regions by then, and survivors copied to young regions read
 * as promoted (e2e_lifetimes/java_ages_match_hotspot_g1: age 2 at 0.37-0.85
 * of HotSpot's own count under make asan). Read here, the types are those
 * the collection left, whatever the collector's delay.
 *
 * Every read goes through process_vm_readv on this process (as
 * hotspot_fwd.c): a wrong offset in an unknown JDK fails the read instead of
 * faulting. No malloc, no locks, no stdio. */
#include "runtimes/hotspot/hotspot_abi.h"
#include "runtimes/hotspot/target/hotspot.h"
#include "runtimes/hotspot/target/hotspot_vms.h"

#define HG_READ OSP_HS_READ_MAX /* words per process_vm_readv */

static struct {
	uint64_t hrm, table;            /* G1CollectedHeap::_hrm, HeapRegionManager::_regions */
	uint64_t base, length, bias, shift; /* G1HeapRegionTable's fields */
	uint64_t tag;                   /* HeapRegion::_type + HeapRegionType::_tag */
	uint32_t young, huge;           /* HeapRegionType masks (huge 0: not known) */
	int ok;
} hg;

static int hg_word(uint64_t addr, uint64_t *v)
{
	uint8_t ok;

	osp_hs_read_words(&addr, 1, v, &ok);
	return ok;
}

void osp_hs_g1gens_setup(const struct osp_vms *v, const char *gc)
{
	int32_t young = 0, huge = 0;
	uint64_t type = 0, tag = 0;

	hg.ok = 0;
	if (__builtin_strcmp(gc, "G1") != 0 ||
	    osp_vms_offset(v, "G1CollectedHeap", "_hrm", &hg.hrm) != 0 ||
	    osp_vms_offset(v, "HeapRegionManager", "_regions", &hg.table) != 0 ||
	    osp_vms_offset(v, "G1HeapRegionTable", "_base", &hg.base) != 0 ||
	    osp_vms_offset(v, "G1HeapRegionTable", "_length", &hg.length) != 0 ||
	    osp_vms_offset(v, "G1HeapRegionTable", "_bias", &hg.bias) != 0 ||
	    osp_vms_offset(v, "G1HeapRegionTable", "_shift_by", &hg.shift) != 0 ||
	    osp_vms_offset(v, "HeapRegion", "_type", &type) != 0 ||
	    osp_vms_offset(v, "HeapRegionType", "_tag", &tag) != 0 ||
	    osp_vms_int(v, "HeapRegionType::YoungMask", &young) != 0 || young <= 0)
		return;
	if (osp_vms_int(v, "HeapRegionType::HumongousMask", &huge) != 0 || huge < 0)
		huge = 0;
	hg.tag = type + tag;
	hg.young = (uint32_t)young;
	hg.huge = (uint32_t)huge;
	hg.ok = 1;
}

/* The region table of heap: its entries' address, length, bias and shift,
 * checked for sense (_hrm is the manager itself in some JDKs, a pointer to
 * it in others: the one whose fields make sense). */
static int hg_table(const void *heap, uint64_t *base, uint64_t *len, uint64_t *bias,
		    uint64_t *shift)
{
	for (int k = 0; k < 2; k++) {
		uint64_t hrm = (uint64_t)(uintptr_t)heap + hg.hrm, t, sh = 0;

		if (k == 1 && !hg_word(hrm, &hrm))
			break;
		t = hrm + hg.table;
		if (hg_word(t + hg.base, base) && hg_word(t + hg.length, len) &&
		    hg_word(t + hg.bias, bias) && hg_word(t + hg.shift, &sh) && *base && *len &&
		    *len <= OS_HS_GENS_MAX_REGIONS && (uint32_t)sh >= 16 && (uint32_t)sh < 40) {
			*shift = (uint32_t)sh;
			return 1;
		}
	}
	return 0;
}

uint32_t osp_hs_g1gens(const void *heap, uint64_t *w, uint32_t max)
{
	uint64_t base, len, bias, shift, addr[HG_READ], word[HG_READ];
	uint8_t ok[HG_READ];
	uint32_t nw;

	if (!hg.ok || !heap || max < OS_HS_GENS_HDR || !hg_table(heap, &base, &len, &bias, &shift))
		return 0;
	nw = OS_HS_GENS_HDR + (uint32_t)((len + OS_HS_GENS_PER_WORD - 1) / OS_HS_GENS_PER_WORD);
	if (nw > max)
		return 0;
	w[0] = OS_HS_GENS_MAGIC | shift << 8;
	w[1] = bias << shift;
	w[2] = len;
	for (uint32_t i = OS_HS_GENS_HDR; i < nw; i++)
		w[i] = 0;
	for (uint64_t from = 0; from < len; from += HG_READ) {
		uint32_t k = len - from < HG_READ ? (uint32_t)(len - from) : HG_READ;

		/* the table's entries (HeapRegion*), then each region's tag */
		for (uint32_t i = 0; i < k; i++)
			addr[i] = base + 8 * (from + i);
		osp_hs_read_words(addr, k, word, ok);
		for (uint32_t i = 0; i < k; i++)
			addr[i] = ok[i] && word[i] ? word[i] + hg.tag : 0;
		for (uint32_t i = 0; i < k; i++)
			if (!addr[i])
				addr[i] = 8; /* unreadable: fails below */
		osp_hs_read_words(addr, k, word, ok);
		for (uint32_t i = 0; i < k; i++) {
			uint64_t r = from + i, g;
			uint32_t tag = (uint32_t)word[i];

			if (!ok[i] || addr[i] == 8)
				g = OS_HS_GENS_UNKNOWN;
			else if (!tag)
				g = OS_HS_GENS_FREE;
			else if (tag & hg.young)
				g = OS_HS_GENS_YOUNG;
			else if (hg.huge && (tag & hg.huge))
				g = OS_HS_GENS_HUGE;
			else
				g = OS_HS_GENS_OLD;
			w[OS_HS_GENS_HDR + r / OS_HS_GENS_PER_WORD] |= g
								       << (4 * (r % OS_HS_GENS_PER_WORD));
		}
	}
	return nw;
}
