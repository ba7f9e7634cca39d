/* hotspot_scan.h - finding the Java object that holds a sampled address by
 * reading the target's heap (objects born before the attach that no
 * allocation event or GC move ever showed).
 *
 * os_hs_scan_find reads a window of the target's memory below the address
 * (OS_HS_SCAN_BACK bytes at most, within the heap) and walks it backwards,
 * word by word, for a plausible object header: a mark word of a HotSpot
 * object (unlocked / biased: no bits above the hash; stack-locked,
 * inflated or forwarded by a collection, as left in from-space: a canonical
 * pointer), then a klass word (compressed or not, as
 * learnt by the adapter; both tried while unknown) that decodes to a real
 * Klass: 8-aligned, its Klass::_name a Symbol that reads back as a class
 * name ("[J", "java/lang/String"), its layout helper consistent with the
 * name (arrays negative, instances positive). Verified klasses (and
 * rejected ones) are cached. The size comes from the layout helper
 * (instances) or the array length (arrays); a candidate is taken when it
 * covers the address and, if its end lies inside the window, the word at its
 * end is zero (unused space) or the header of another such object; else it
 * is counted as rejected and the walk goes on, and it is taken only if no
 * candidate further down covers the address (TLABs are not zeroed: the
 * newest object of one is followed by old data; an object further down
 * that covers the address would hold it in its data: a forgery). Objects larger than the
 * window are found when they start at a 1..32 MiB aligned address (G1
 * humongous objects start at a region boundary).
 *
 * Cost bounds: a page whose scan found nothing is not scanned again for
 * OS_HS_SCAN_NEG_NS; at most max_per_sec scans per second (others counted
 * as skipped); the CPU time spent is measured (cpu_ns).
 * Return convention: 1 found, 0 not found, -EAGAIN skipped (cache, rate).
 */
#ifndef OBJSCOPE_HOTSPOT_SCAN_H
#define OBJSCOPE_HOTSPOT_SCAN_H

#include <stdbool.h>
#include <stdint.h>

#include "runtimes/hotspot/hotspot_vm.h"
#include "common/hashmap.h"

#define OS_HS_SCAN_BACK (64u << 10)
#define OS_HS_SCAN_NEG_NS 500000000ULL
#define OS_HS_SCAN_PER_SEC 2000u

struct os_hs_scan {
	struct os_hmap klass;      /* Klass* -> 1 << 32 | layout helper (valid), 0 (not) */
	struct os_hmap neg;        /* heap page -> time of its last fruitless scan */
	uint64_t sec_start;        /* rate window */
	uint32_t sec_scans, max_per_sec;
	uint32_t back;             /* window below the address; 0: OS_HS_SCAN_BACK (and
	                              large objects at aligned starts); else only
	                              objects that start within `back` bytes */
	uint64_t found, not_found, rejected, skipped, scans, cpu_ns;
	uint64_t unverified_end;   /* found, though the word after it was neither zero nor
	                              a header (the newest object of a TLAB) */
	uint64_t *buf;             /* the window read (owned) */
};

struct os_hs_found {
	uint64_t start, size, klass;
	bool forwarded;            /* its mark is a forwarding pointer: a copy left in
	                              from-space by a collection, dead */
};

/* A plausible HotSpot class name (a Symbol's len bytes, "java/lang/String",
 * "[J", "[Ljava/lang/Object;"): what a header found by the scan must name,
 * so that a word that only looks like a Klass* is not taken for one. */
bool os_hs_class_name_ok(const char *name, uint16_t len);
void os_hs_scan_init(struct os_hs_scan *s);
void os_hs_scan_destroy(struct os_hs_scan *s);
/* The object of pid's heap [lo, hi) that holds addr, at time now_ns. The
 * layout's compressed_klass is set when a header shows it. `covered`
 * (may be NULL) says whether a range is already tracked (a candidate
 * overlapping tracked objects is rejected). */
int os_hs_scan_find(struct os_hs_scan *s, struct os_hs_vm *vm, const struct os_hs_mem *m,
		    uint32_t pid, uint64_t lo, uint64_t hi, uint64_t addr, uint64_t now_ns,
		    bool (*covered)(void *arg, uint64_t start, uint64_t end), void *arg,
		    struct os_hs_found *out);

#endif
