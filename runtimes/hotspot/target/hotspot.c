/* hotspot.c - the HotSpot runtime adapter inside the target. See hotspot.h.
 *
 * Detection: preload/loaded.c shows every library the process loads
 * (osp_hs_load); the first time one defines JNI_CreateJavaVM and
 * gHotSpotVMStructs, the detours are installed (programs linked against
 * libjvm.so: its soname is looked up at start-up).
 * Installing happens from the java launcher's dlopen of libjvm.so, before
 * the JVM has created any thread: detour.h's single-thread assumption holds.
 *
 * Hooks (libjvm local symbols from its .symtab):
 *   AllocTracer::send_allocation_in_new_tlab / _outside_tlab -> OS_EV_JALLOC
 *   CollectedHeap::trace_heap_before_gc / _after_gc -> OS_EV_GC_BEGIN / END
 *   JNI_CreateJavaVM: prepends objscope's -XX options (the user's own options
 *   come after and win), then announces the JVM (OS_EV_JVM) and turns on
 *   move logging (hotspot_moves.c).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtimes/hotspot/hotspot_abi.h"
#include "runtimes/hotspot/hs_layout.h"
#include "runtimes/hotspot/hs_tlab.h"
#include "common/ring.h"
#include "preload/detour.h"
#include "runtimes/hotspot/target/hotspot.h"
#include "runtimes/hotspot/target/hotspot_attach.h"
#include "runtimes/hotspot/target/hotspot_elf.h"
#include "runtimes/hotspot/target/hotspot_vms.h"

#define HS_TLAB_FLOOR 1024 /* the JVM refuses MinTLABSize below its TLAB reserve (576 on JDK 17) */
#define HS_MAX_OPTS 8
#define HS_JNI_OK 0
#define HS_MIN_FP_FRAMES 3
/* The allocation hooks keep a frame pointer: the saved rbp is the frame
 * pointer of the hooked function's caller, where the walk starts. */
#define HS_FRAMED __attribute__((noinline, optimize("no-omit-frame-pointer")))

struct osp_hs_state osp_hs;

/* JNI's JavaVMInitArgs / JavaVMOption (stable ABI, declared here so the
 * build needs no JDK headers). */
struct hs_vm_option {
	char *optionString;
	void *extraInfo;
};
struct hs_vm_args {
	int32_t version;
	int32_t nOptions;
	struct hs_vm_option *options;
	uint8_t ignoreUnrecognized;
};
#define HS_JNI_VERSION_1_2 0x00010002

typedef void (*hs_new_tlab_fn)(void *, void *, size_t, size_t, void *);
typedef void (*hs_outside_fn)(void *, void *, size_t, void *);
typedef void (*hs_trace_fn)(void *, const void *);
typedef int32_t (*hs_create_fn)(void **, void **, void *);

static struct {
	hs_new_tlab_fn new_tlab;
	hs_outside_fn outside;
	hs_trace_fn before_gc, after_gc;
	hs_create_fn create_vm;
} hs_orig;

static int hs_installed;     /* 0 no, 1 in progress or done */
static int hs_created;       /* JNI_CreateJavaVM seen */
static int hs_map_ours;      /* the perf map at exit is only objscope's (OS_JVM_F_MAP_OURS) */
static int hs_map_refused;   /* ... but its path was taken: not asked for (OS_JVM_F_MAP_REFUSED) */
static void *hs_jvm_handle;  /* dlopen handle of libjvm.so */
static uintptr_t hs_jvm_base;

/* dl_iterate_phdr callback: libjvm's executable segment into osp_hs. */
static int hs_find_text(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	uintptr_t *lo = NULL, *hi = NULL;

	(void)size;
	(void)arg;
	if (info->dlpi_addr == hs_jvm_base) {
		lo = &osp_hs.jvm_lo;
		hi = &osp_hs.jvm_hi;
	} else if (strstr(name, "/libc.so.")) {
		lo = &osp_hs.end_lo[0];
		hi = &osp_hs.end_hi[0];
	} else if (strstr(name, "/libjli.so")) {
		lo = &osp_hs.end_lo[1];
		hi = &osp_hs.end_hi[1];
	}
	for (int i = 0; lo && i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			*hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
			*lo = info->dlpi_addr + ph->p_vaddr;
			break;
		}
	}
	return 0; /* all objects */
}
static uint32_t hs_mode = OS_JVM_MODE_EXACT;
static uint64_t hs_tlab = OS_JAVA_TLAB_DEFAULT; /* hybrid: requested TLAB size T */
static uint64_t hs_gc_seq;   /* GC begin hooks seen */

void (*osp_hs_pre_emit)(struct osp_thread *t, uint16_t type, uint64_t aux2);

int osp_hs_emit(struct osp_thread *t, uint16_t type, uint64_t addr, uint64_t size, uint64_t aux,
		uint64_t aux2, const uint64_t *words, uint32_t n)
{
	void (*pre)(struct osp_thread *, uint16_t, uint64_t) =
		__atomic_load_n(&osp_hs_pre_emit, __ATOMIC_ACQUIRE);

	if (pre)
		pre(t, type, aux2);
	return osp_record_words(t, type, addr, size, aux, aux2, words, n);
}

/* ---- allocation hooks (any Java thread, allocation slow path) ---------- */

/* The allocation slow path inside libjvm (MemAllocator, CollectedHeap,
 * OptoRuntime::new_array_C, ...) is the same for every Java object: keep
 * only its entry frame (the last libjvm frame before Java code). Events
 * get ~40% smaller, so bursts of Java allocations fit the rings. */
static int hs_trim_jvm_frames(uint64_t *frames, int n)
{
	int lead = 0;

	while (lead < n && frames[lead] >= osp_hs.jvm_lo && frames[lead] < osp_hs.jvm_hi)
		lead++;
	if (lead <= 1 || lead == n)
		return n;
	for (int i = lead - 1; i < n; i++) /* not memmove: that is one of our hooks */
		frames[i - lead + 1] = frames[i];
	return n - lead + 1;
}

static uint32_t hs_focus_of(struct osp_thread *t);

static void hs_alloc(void *klass, void *obj, size_t tlab_bytes, size_t bytes, const void *caller,
		     const void *fp)
{
	uint64_t focus_k = atomic_load_explicit(&osp_hdr->hs_focus_klass, memory_order_relaxed);
	uint64_t frames[OS_MAX_FRAMES];
	struct osp_thread *t = osp_enter();
	struct os_slot *s;
	int n, truncated;

	if (!t)
		return;
	s = osp_slot(t);
	if (!s)
		goto out;
	/* Below --min-size only counted, except in hybrid mode with TLABs of
	 * random size: an object that starts a new TLAB there is a sample by
	 * bytes (probability s / T, independent of the program's pattern), the
	 * evidence of where its class's objects come from (the
	 * collector: runtimes/hotspot/hotspot_paths.c). */
	if (bytes < osp_hdr->min_size && !(osp_hs.dither_off && tlab_bytes)) {
		osp_stat_add(&s->stats.small_allocs, 1);
		osp_stat_add(&s->stats.small_bytes, bytes);
		/* hybrid: outside any TLAB, so never sampled; counted, so that a
		 * JVM refusing a thread's TLABs is not silent (hs_tlab.h) */
		if (osp_hs.dither_off && !tlab_bytes)
			osp_stat_add(&s->stats.small_outside_tlab, 1);
		goto out;
	}
	/* such evidence is thinned: one in OS_HS_SMALL_THIN kept, weighed up;
	 * not the class of a focus */
	if (bytes < osp_hdr->min_size && (!focus_k || focus_k != (uint64_t)(uintptr_t)klass)) {
		if ((osp_rng_next(t) >> 32) % OS_HS_SMALL_THIN) {
			osp_stat_add(&s->stats.small_allocs, 1);
			osp_stat_add(&s->stats.small_bytes, bytes);
			goto out;
		}
		tlab_bytes |= OS_HS_THIN_BIT;
	}
	/* libjvm keeps frame pointers; JIT frames are stepped by their code
	 * blobs' frame sizes (runtimes/hotspot/hs_frames.h): the walk gives the same
	 * paths as libunwind at half the cost (docs/JAVA.md). libunwind is the
	 * fallback when the chain breaks at once (a libjvm without them). */
	n = osp_hs_walk_fp(frames, OS_MAX_FRAMES, caller, fp, &truncated);
	if (n < HS_MIN_FP_FRAMES)
		n = osp_hs_walk(frames, OS_MAX_FRAMES, caller, &truncated);
	if (truncated)
		osp_stat_add(&s->stats.truncated, 1);
	uintptr_t a = (uintptr_t)obj;

	if (osp_hs.zgc_offset_mask)
		a &= osp_hs.zgc_offset_mask;
	n = hs_trim_jvm_frames(frames, n);
	/* the TLAB this refill ends was drawn around OS_HS_FOCUS_TLAB */
	if (tlab_bytes && osp_hs.dither_off && hs_focus_of(t))
		tlab_bytes |= OS_HS_FOCUS_BIT;
	if (osp_hs_emit(t, OS_EV_JALLOC, a, bytes, tlab_bytes, (uint64_t)(uintptr_t)klass, frames,
			(uint32_t)n) == 0) {
		osp_stat_add(&s->stats.tracked_allocs, 1);
		osp_stat_add(&s->stats.tracked_bytes, bytes);
		osp_hs_fwd_track(a, bytes);
	}
out:
	osp_leave(t);
}

/* Hybrid mode, per thread (osp_thread.rt_state, zero at its start): its
 * Thread::_allocated_bytes at its last TLAB refill, the free sizes written
 * for its current and previous TLAB, and the running mean of (TLAB bytes
 * used - free size) that the next sizes compensate. */
struct hs_thread {
	uint64_t alloc_prev;
	uint32_t d_cur, d_prev; /* words: at most 7T/4 */
	int64_t corr; /* 1 / OS_HS_CORR_ONE words */
	uint32_t focus_cur;     /* the current TLAB was drawn around OS_HS_FOCUS_TLAB */
	uint32_t pad;
} __attribute__((may_alias));

_Static_assert(sizeof(struct hs_thread) <= sizeof(((struct osp_thread *)0)->rt_state),
	       "struct hs_thread must fit in osp_thread.rt_state");

static struct hs_thread *hs_thread_of(struct osp_thread *t)
{
	return (struct hs_thread *)(void *)t->rt_state;
}

static uint32_t hs_focus_of(struct osp_thread *t)
{
	return hs_thread_of(t)->focus_cur;
}

/* Hybrid mode: the size of the thread's NEXT TLAB, drawn uniformly from
 * [T/2, 3T/2) (mean T). With one fixed size, a program that allocates in a
 * fixed cycle keeps the TLAB ends in phase with it: on tests/java/ObjFixture
 * one of two allocation sites was never seen and the other counted twice.
 * A random length breaks the phase, so an object of s < T/2 bytes is the
 * one that does not fit with probability s / E[L], L being the bytes of
 * the allocation stream between two TLAB ends, whatever the pattern.
 *
 * L is not the free size D written here: a TLAB also holds the object that
 * made it (HotSpot sizes it D + that object) and loses the rest it had when
 * the next object did not fit. So each thread measures L of its TLAB that
 * just ended (the growth of Thread::_allocated_bytes, which counts a
 * retired TLAB's used bytes) against the D it had written for it, keeps a
 * running mean of the difference, and writes D = U - that mean: E[L] = T,
 * the T the collector's weights assume (os_hs_weight_jvm). Without the
 * correction a stream of equal 4 KiB arrays was estimated ~10% low.
 *
 * The thread writes its own TLAB's _desired_size (what compute_size asks
 * for at the next refill; with -ResizeTLAB the JVM never changes it after
 * start-up); the TLAB being used is untouched. */
void osp_hs_tlab_refilled(void *thread, const void *obj)
{
	uint64_t x, lo, d, alloc = 0, focus_k;
	struct hs_thread *ht = NULL;
	int64_t span, corr, err;
	struct osp_thread *t;
	uint32_t a, dx, focus;

	if (!osp_hs.dither_off || !thread)
		return;
	/* steered in an attached JVM: after the detach its own sizing is back */
	if (osp_hs.waste_off && atomic_load(&osp_hdr->disarmed))
		return;
	__asm__ volatile("rdtsc" : "=a"(a), "=d"(dx));
	x = ((uint64_t)dx << 32 | a) ^ (uint64_t)(uintptr_t)obj ^ (uint64_t)(uintptr_t)thread;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	lo = osp_hs.dither_lo;
	span = (int64_t)osp_hs.dither_span;
	/* a focus: TLABs around OS_HS_FOCUS_TLAB while the collector asks */
	focus_k = atomic_load_explicit(&osp_hdr->hs_focus_klass, memory_order_relaxed);
	focus = focus_k && osp_hs.dither_span > OS_HS_FOCUS_TLAB / 8;
	if (focus) {
		lo = OS_HS_FOCUS_TLAB / 16;
		span = OS_HS_FOCUS_TLAB / 8;
	}
	corr = 0;
	t = osp_enter();
	if (t && osp_hs.alloc_bytes_off) {
		ht = hs_thread_of(t);
		alloc = *(volatile uint64_t *)((uint8_t *)thread + osp_hs.alloc_bytes_off);
		if (ht->alloc_prev && ht->d_prev && alloc > ht->alloc_prev) {
			/* the TLAB that just ended was sized d_prev words */
			err = (int64_t)(alloc - ht->alloc_prev) / 8 - (int64_t)ht->d_prev;
			if (err > span / 2)
				err = span / 2;
			if (err < -span / 2)
				err = -span / 2;
			ht->corr += (err * OS_HS_CORR_ONE - ht->corr) / 16;
		}
		corr = ht->corr / OS_HS_CORR_ONE;
	}
	/* words, within [T/4, 7T/4) and never below the JVM's MinTLABSize */
	d = os_hs_tlab_next(x, lo, (uint64_t)span, corr, osp_hs.dither_floor);
	if (ht) {
		ht->alloc_prev = alloc;
		ht->d_prev = ht->d_cur;
		ht->d_cur = (uint32_t)d;
	}
	if (t) {
		hs_thread_of(t)->focus_cur = focus;
		osp_leave(t);
	}
	*(volatile size_t *)((uint8_t *)thread + osp_hs.dither_off) = (size_t)d;
	if (osp_hs.waste_off) /* words: above any TLAB */
		*(volatile size_t *)((uint8_t *)thread + osp_hs.waste_off) = (size_t)1 << 40;
}

HS_FRAMED static void hs_new_tlab(void *klass, void *obj, size_t tlab_bytes, size_t bytes,
				  void *thread)
{
	hs_alloc(klass, obj, tlab_bytes, bytes, __builtin_return_address(0),
		 *(void *const *)__builtin_frame_address(0));
	osp_hs_tlab_refilled(thread, obj);
	hs_orig.new_tlab(klass, obj, tlab_bytes, bytes, thread);
}

HS_FRAMED static void hs_outside(void *klass, void *obj, size_t bytes, void *thread)
{
	hs_alloc(klass, obj, 0, bytes, __builtin_return_address(0),
		 *(void *const *)__builtin_frame_address(0));
	osp_hs_tlab_outside(thread, bytes);
	hs_orig.outside(klass, obj, bytes, thread);
}

void osp_hs_tlab_outside(void *thread, size_t bytes)
{
	if (osp_hs.alloc_bytes_off && thread) {
		/* not part of any TLAB: keep it out of the next measured L */
		struct osp_thread *t = osp_enter();

		if (t) {
			if (hs_thread_of(t)->alloc_prev)
				hs_thread_of(t)->alloc_prev += bytes;
			osp_leave(t);
		}
	}
}

/* ---- GC begin / end (the thread running the pause or cycle) ------------ */

static uint64_t hs_total_collections(const void *heap)
{
	if (!osp_hs.total_coll_off || !heap)
		return 0;
	return *(const uint32_t *)((const uint8_t *)heap + osp_hs.total_coll_off);
}

/* GC_BEGIN/END: aux = CollectedHeap::_total_collections, aux2 = objscope's
 * own sequence number (1, 2, ...: Shenandoah leaves _total_collections 0);
 * GC_BEGIN's size = the shm's gc_begun it raised (common/shm.h).
 * GC_END also carries size = moves flushed by this end, and addr = moves
 * that could not be delivered so far (cumulative). */
/* The header whose gc_begun this collection raised: its end is counted
 * there too, so that the two counters pair even when an attach or a detach
 * changes osp_hdr in between (one collection at a time: the VM thread). */
static struct os_shm_header *hs_gc_hdr;
static uint32_t hs_gc_begun; /* its gc_begun, for its GC_BEGIN event */

static uint64_t hs_end_words[OS_EVENT_MAX_FRAMES]; /* GC_END's payload */
static int hs_end_busy;

static void hs_gc_event(const void *heap, uint16_t type)
{
	struct osp_thread *t = osp_enter_heavy();
	uint64_t flushed = 0, lost = 0, seq, fwd[OS_HS_FWD_WORDS];

	if (!t)
		return;
	if (type == OS_EV_GC_BEGIN) {
		seq = __atomic_add_fetch(&hs_gc_seq, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&osp_hs.gc_count, seq, __ATOMIC_RELAXED);
		osp_rep_dead(0, t->pid); /* objects move: in-target replica watches end */
		osp_hs_emit(t, type, 0, hs_gc_begun, hs_total_collections(heap), seq, NULL, 0);
	} else {
		uint32_t n = OS_HS_FWD_WORDS;

		seq = __atomic_load_n(&hs_gc_seq, __ATOMIC_RELAXED);
		osp_hs_moves_flush_all(t, seq, &flushed, &lost);
		osp_hs_fwd_collect(t, seq, &flushed);
		/* one collection ends at a time (the VM thread); the flag only
		 * keeps a surprise out of the shared buffer */
		if (!__atomic_exchange_n(&hs_end_busy, 1, __ATOMIC_ACQUIRE)) {
			osp_hs_fwd_stats(hs_end_words);
			n += osp_hs_g1gens(heap, hs_end_words + OS_HS_FWD_WORDS,
					   OS_EVENT_MAX_FRAMES - OS_HS_FWD_WORDS);
			/* a record too long for a small ring (--ring-kb 16): the
			 * end without the generations (the collector reads the
			 * table then), never no end */
			if (os_event_len(n) > osp_hdr->ring_bytes / 2)
				n = OS_HS_FWD_WORDS;
			osp_hs_emit(t, type, osp_hs_moves_lost(), flushed,
				    hs_total_collections(heap), seq, hs_end_words, n);
			__atomic_store_n(&hs_end_busy, 0, __ATOMIC_RELEASE);
		} else {
			osp_hs_fwd_stats(fwd);
			osp_hs_emit(t, type, osp_hs_moves_lost(), flushed,
				    hs_total_collections(heap), seq, fwd, OS_HS_FWD_WORDS);
		}
	}
	osp_leave(t);
}

static void hs_before_gc(void *heap, const void *tracer)
{
	struct os_shm_header *h = osp_hdr;

	/* before anything moves: the collector's late reads stop */
	hs_gc_begun = h ? __atomic_add_fetch(&h->gc_begun, 1, __ATOMIC_SEQ_CST) : 0;
	__atomic_store_n(&hs_gc_hdr, h, __ATOMIC_RELAXED);
	hs_gc_event(heap, OS_EV_GC_BEGIN);
	hs_orig.before_gc(heap, tracer);
}

static void hs_after_gc(void *heap, const void *tracer)
{
	struct os_shm_header *h;

	hs_orig.after_gc(heap, tracer);
	hs_gc_event(heap, OS_EV_GC_END);
	h = __atomic_exchange_n(&hs_gc_hdr, NULL, __ATOMIC_RELAXED);
	if (h)
		__atomic_add_fetch(&h->gc_ended, 1, __ATOMIC_SEQ_CST);
}

/* ---- the JVM is up: vmStructs -> os_jvm_info --------------------------- */

static int hs_flag_bool(const struct osp_vms *v, const char *name)
{
	void *p;

	return osp_vms_flag(v, name, &p) == 0 ? *(const uint8_t *)p : -1;
}

static uint64_t hs_flag_size(const struct osp_vms *v, const char *name)
{
	void *p;

	return osp_vms_flag(v, name, &p) == 0 ? *(const uint64_t *)p : 0;
}

static void hs_gc_name(const struct osp_vms *v, struct os_jvm_info *info)
{
	static const char *const gcs[][2] = {
		{ "UseG1GC", "G1" }, { "UseParallelGC", "Parallel" }, { "UseSerialGC", "Serial" },
		{ "UseZGC", "Z" }, { "UseShenandoahGC", "Shenandoah" }, { "UseEpsilonGC", "Epsilon" },
	};

	for (size_t i = 0; i < sizeof(gcs) / sizeof(gcs[0]); i++) {
		if (hs_flag_bool(v, gcs[i][0]) == 1) {
			snprintf(info->gc, sizeof(info->gc), "%s", gcs[i][1]);
			return;
		}
	}
	snprintf(info->gc, sizeof(info->gc), "unknown");
}

/* Heap range, GC counter and ZGC address masks. */
static void hs_read_heap(const struct osp_vms *v, struct os_jvm_info *info)
{
	uint64_t o_res, o_start, o_words, o_tc, o_mask;
	void *p_heap, *p_zg;
	const uint8_t *heap;

	if (osp_vms_static(v, "Universe", "_collectedHeap", &p_heap) != 0)
		return;
	heap = *(const uint8_t *const *)p_heap;
	if (!heap)
		return;
	if (osp_vms_offset(v, "CollectedHeap", "_reserved", &o_res) == 0 &&
	    osp_vms_offset(v, "MemRegion", "_start", &o_start) == 0 &&
	    osp_vms_offset(v, "MemRegion", "_word_size", &o_words) == 0) {
		info->heap_start = *(const uint64_t *)(heap + o_res + o_start);
		info->heap_end = info->heap_start + 8 * *(const uint64_t *)(heap + o_res + o_words);
	}
	if (osp_vms_offset(v, "CollectedHeap", "_total_collections", &o_tc) == 0)
		osp_hs.total_coll_off = o_tc;
	/* ZGC: _reserved is empty; addresses are colored views of one range.
	 * heap_start/heap_end become the colorless range [0, offset mask + 1):
	 * the collector masks an address with heap_end - 1. */
	if ((info->flags & OS_JVM_F_ZGC) &&
	    osp_vms_static(v, "ZGlobalsForVMStructs", "_instance_p", &p_zg) == 0 &&
	    osp_vms_offset(v, "ZGlobalsForVMStructs", "_ZAddressOffsetMask", &o_mask) == 0) {
		const uint8_t *zg = *(const uint8_t *const *)p_zg;
		const uint64_t *mask = zg ? *(const uint64_t *const *)(zg + o_mask) : NULL;

		if (mask && *mask) {
			osp_hs.zgc_offset_mask = *mask;
			osp_hs.zgc_meta_mask = (*mask + 1) * 0xf; /* 4 color bits above the offset */
			info->heap_start = 0;
			info->heap_end = *mask + 1;
		}
	}
}

/* vmStructs offsets of what the frame stepper (runtimes/hotspot/hs_frames.h) reads to
 * walk JIT frames that keep no frame pointer. */
struct hs_code_offs {
	void *p_heaps, *p_lo, *p_hi;
	uint64_t len, data, mem, seg, log2, vlow, vhigh, vlowb, vhighb, bsize;
	uint64_t hdr, used, fs, begin, complete;
	uint8_t begin_w, begin_how, complete_w;
	int32_t sender_sp;
};

static int hs_code_offsets(const struct osp_vms *v, struct hs_code_offs *o)
{
	uint8_t w;

	if (osp_vms_static(v, "CodeCache", "_heaps", &o->p_heaps) ||
	    osp_vms_static(v, "CodeCache", "_low_bound", &o->p_lo) ||
	    osp_vms_static(v, "CodeCache", "_high_bound", &o->p_hi) ||
	    osp_vms_offset(v, "GrowableArrayBase", "_len", &o->len) ||
	    osp_vms_offset(v, "GrowableArray<int>", "_data", &o->data) ||
	    osp_vms_offset(v, "CodeHeap", "_memory", &o->mem) ||
	    osp_vms_offset(v, "CodeHeap", "_segmap", &o->seg) ||
	    osp_vms_offset(v, "CodeHeap", "_log2_segment_size", &o->log2) ||
	    osp_vms_offset(v, "VirtualSpace", "_low_boundary", &o->vlowb) ||
	    osp_vms_offset(v, "VirtualSpace", "_high_boundary", &o->vhighb) ||
	    osp_vms_offset(v, "VirtualSpace", "_low", &o->vlow) ||
	    osp_vms_offset(v, "VirtualSpace", "_high", &o->vhigh) ||
	    osp_vms_type_size(v, "HeapBlock", &o->bsize) ||
	    osp_vms_offset(v, "HeapBlock", "_header", &o->hdr) ||
	    osp_vms_offset(v, "HeapBlock::Header", "_used", &o->used) ||
	    osp_vms_offset(v, "CodeBlob", "_frame_size", &o->fs) ||
	    osp_vms_field(v, "CodeBlob", "_code_begin", &o->begin, &o->begin_w, &o->begin_how) ||
	    osp_vms_field(v, "CodeBlob", "_frame_complete_offset", &o->complete, &o->complete_w,
			  &w) ||
	    osp_vms_int(v, "frame::interpreter_frame_sender_sp_offset", &o->sender_sp))
		return -ENOENT;
	/* the widths read (runtimes/hotspot/hs_layout.h) */
	if ((o->complete_w != 2 && o->complete_w != 4) ||
	    (o->begin_how == HS_LA_REL) != (o->begin_w == 4))
		return -ENOENT;
	return 0;
}

/* The code heaps, once the JVM has created them. */
static void hs_read_code_heaps(const struct osp_vms *v, const struct os_jvm_info *info)
{
	struct os_hsf_layout *l = &osp_hs.frames;
	struct hs_code_offs o;
	const uint8_t *ga, *const *heaps;
	int32_t len;

	memset(l, 0, sizeof(*l));
	if (hs_code_offsets(v, &o) != 0)
		return;
	ga = *(const uint8_t *const *)o.p_heaps;
	if (!ga)
		return;
	len = *(const int32_t *)(ga + o.len);
	heaps = *(const uint8_t *const *const *)(ga + o.data);
	if (len <= 0 || len > OS_HSF_MAX_HEAPS || !heaps)
		return;
	for (int32_t i = 0; i < len; i++) {
		const uint8_t *h = heaps[i], *mem, *seg;
		struct os_hsf_heap *d = &l->heap[i];

		if (!h)
			return;
		mem = h + o.mem;
		seg = h + o.seg;
		d->lo = *(const uint64_t *)(mem + o.vlowb);
		d->hi = *(const uint64_t *)(mem + o.vhighb);
		d->seg_lo = *(const uint64_t *)(seg + o.vlowb);
		d->seg_high_at = (uint64_t)(uintptr_t)(seg + o.vhigh);
		d->log2_seg = (uint32_t)*(const int32_t *)(h + o.log2);
		/* the block of segment i is at _memory._low + (i << log2): both
		 * virtual spaces commit from their low boundary */
		if (d->lo != *(const uint64_t *)(mem + o.vlow) ||
		    d->seg_lo != *(const uint64_t *)(seg + o.vlow) || d->hi <= d->lo ||
		    d->log2_seg < 4 || d->log2_seg > 16)
			return;
	}
	l->nheaps = (uint32_t)len;
	l->code_lo = *(const uintptr_t *)o.p_lo;
	l->code_hi = *(const uintptr_t *)o.p_hi;
	l->interp_lo = info->interp_start;
	l->interp_hi = info->interp_end;
	l->block_size = (uint32_t)o.bsize;
	l->used_off = (uint32_t)(o.hdr + o.used);
	l->frame_size_off = (uint32_t)o.fs;
	l->code_begin_off = (uint32_t)o.begin;
	l->complete_off = (uint32_t)o.complete;
	l->code_begin_rel = o.begin_how == HS_LA_REL;
	l->complete_width = o.complete_w;
	l->sender_sp_off = o.sender_sp * 8;
	l->ok = l->interp_hi > l->interp_lo && l->code_hi > l->code_lo;
}

/* The Method* slot of an interpreter frame, in bytes from fp (0: unknown).
 * JDK 17 exports the slots next to it; on x86 (frame_x86.hpp) the method
 * slot is the one below last_sp. */
static int64_t hs_method_slot(const struct osp_vms *v)
{
	int32_t method = 0, last_sp;

	if (osp_vms_int(v, "frame::interpreter_frame_method_offset", &method) != 0 &&
	    osp_vms_int(v, "frame::interpreter_frame_last_sp_offset", &last_sp) == 0)
		method = last_sp - 1;
	return (int64_t)method * 8;
}

static void hs_read_code(const struct osp_vms *v, struct os_jvm_info *info)
{
	uint64_t o_buf, o_lim;
	void *p_code, *p_lo, *p_hi;

	if (osp_vms_static(v, "AbstractInterpreter", "_code", &p_code) == 0 &&
	    osp_vms_offset(v, "StubQueue", "_stub_buffer", &o_buf) == 0 &&
	    osp_vms_offset(v, "StubQueue", "_buffer_limit", &o_lim) == 0) {
		const uint8_t *q = *(const uint8_t *const *)p_code;

		if (q) {
			info->interp_start = *(const uint64_t *)(q + o_buf);
			info->interp_end = info->interp_start + (uint64_t)*(const int32_t *)(q + o_lim);
		}
	}
	if (osp_vms_static(v, "CodeCache", "_low_bound", &p_lo) == 0 &&
	    osp_vms_static(v, "CodeCache", "_high_bound", &p_hi) == 0) {
		osp_hs.code_lo = *(const uintptr_t *)p_lo;
		osp_hs.code_hi = *(const uintptr_t *)p_hi;
	}
	osp_hs.method_off = hs_method_slot(v);
	hs_read_code_heaps(v, info);
}

/* The mode the flags actually in force give (the user's options may have
 * overridden ours): exact when every object >= min_size reaches the
 * allocation hooks; hybrid when TLABs are fixed (-ResizeTLAB) at a size T
 * above min_size, *tlab set to T; sampled otherwise (adaptive TLABs). */
static uint32_t hs_mode_in_force(const struct osp_vms *v, const char *gc, uint64_t *tlab_out)
{
	int no_tlab_slow = strcmp(gc, "Parallel") != 0 && strcmp(gc, "Serial") != 0;
	uint64_t tlab = hs_flag_size(v, "TLABSize");

	*tlab_out = 0;
	if (hs_mode == OS_JVM_MODE_SAMPLED)
		return OS_JVM_MODE_SAMPLED;
	if (hs_flag_bool(v, "UseTLAB") == 0 && no_tlab_slow)
		return OS_JVM_MODE_EXACT;
	if (hs_flag_bool(v, "UseTLAB") == 1 && hs_flag_bool(v, "ResizeTLAB") == 0 && tlab) {
		if (tlab <= osp_hdr->min_size)
			return OS_JVM_MODE_EXACT;
		/* a fixed TLAB larger than min_size: an object smaller than it
		 * is seen when it does not fit the TLAB's free rest */
		*tlab_out = tlab;
		return OS_JVM_MODE_HYBRID;
	}
	return OS_JVM_MODE_SAMPLED;
}

static int hs_preserve_fp = -1; /* -XX:+PreserveFramePointer in force */
static int hs_fp_for_layout;     /* ... added for want of a code-blob field */

/* Attach mode: the running JVM sizes its TLABs itself (ResizeTLAB) and
 * keeps a TLAB whose rest is above its refill waste limit, allocating the
 * object outside it. Hybrid sampling needs neither, and both are per-thread
 * fields it reads at each refill: from the first refill of each thread
 * after the attach, the refill hook writes that thread's next TLAB size
 * (drawn as in launch mode) and a refill waste limit above any TLAB (every
 * object that does not fit the rest makes a new TLAB). A collection's TLAB
 * resize rewrites both, for one TLAB per thread and collection; after the
 * detach nothing rewrites them and the JVM's own sizing is back at its next
 * collection. Returns the steered T (bytes), or 0 when vmStructs lack a
 * field (the sampled mode stays). */
static uint64_t hs_steer_tlabs(const struct osp_vms *v, const struct os_jvm_info *info)
{
	uint64_t o_tlab, o_desired, o_waste, o_alloc, t = OS_JAVA_TLAB_DEFAULT;

	if (info->mode != OS_JVM_MODE_SAMPLED || hs_mode == OS_JVM_MODE_SAMPLED ||
	    hs_flag_bool(v, "UseTLAB") != 1 ||
	    osp_vms_offset(v, "Thread", "_tlab", &o_tlab) != 0 ||
	    osp_vms_offset(v, "ThreadLocalAllocBuffer", "_desired_size", &o_desired) != 0 ||
	    osp_vms_offset(v, "ThreadLocalAllocBuffer", "_refill_waste_limit", &o_waste) != 0 ||
	    osp_vms_offset(v, "Thread", "_allocated_bytes", &o_alloc) != 0)
		return 0;
	if (t < osp_hdr->min_size)
		t = osp_hdr->min_size;
	if (t < HS_TLAB_FLOOR)
		t = HS_TLAB_FLOOR;
	osp_hs.waste_off = o_tlab + o_waste;
	return t;
}

static void hs_jvm_up(int attach)
{
	struct os_jvm_info info;
	struct osp_thread *t;
	struct osp_vms v;

	if (osp_vms_open(&v, hs_jvm_handle) != 0)
		return;
	t = osp_enter_heavy();
	if (!t)
		return;
	memset(&info, 0, sizeof(info));
	memcpy(info.tables, v.t, sizeof(info.tables));
	hs_gc_name(&v, &info);
	if (strcmp(info.gc, "Z") == 0)
		info.flags |= OS_JVM_F_ZGC | OS_JVM_F_CONCURRENT;
	else if (strcmp(info.gc, "Shenandoah") == 0)
		info.flags |= OS_JVM_F_CONCURRENT;
	hs_read_heap(&v, &info);
	hs_read_code(&v, &info);
	hs_preserve_fp = hs_flag_bool(&v, "PreserveFramePointer");
	if (hs_flag_bool(&v, "DebugNonSafepoints") == 1)
		info.flags |= OS_JVM_F_NONSAFEPOINT_DEBUG;
	info.libjvm_base = hs_jvm_base;
	if (hs_map_ours)
		info.flags |= OS_JVM_F_MAP_OURS;
	if (hs_map_refused)
		info.flags |= OS_JVM_F_MAP_REFUSED;
	if (hs_fp_for_layout && hs_preserve_fp == 1)
		info.flags |= OS_JVM_F_FP_FOR_LAYOUT;
	info.mode = hs_mode_in_force(&v, info.gc, &info.tlab_bytes);
	if (attach) {
		uint64_t t = hs_steer_tlabs(&v, &info);

		if (t) {
			info.mode = OS_JVM_MODE_HYBRID;
			info.tlab_bytes = t;
			info.flags |= OS_JVM_F_TLAB_STEERED;
		}
	}
	if (info.mode == OS_JVM_MODE_HYBRID && info.tlab_bytes >= 4096) {
		uint64_t o_tlab, o_desired, o_alloc;

		if (osp_vms_offset(&v, "Thread", "_tlab", &o_tlab) == 0 &&
		    osp_vms_offset(&v, "ThreadLocalAllocBuffer", "_desired_size", &o_desired) == 0) {
			uint64_t min_tlab = hs_flag_size(&v, "MinTLABSize");

			if (!min_tlab)
				min_tlab = OS_HS_MIN_TLAB_DEFAULT;
			osp_hs.dither_lo = info.tlab_bytes / 16;    /* words: T/2 */
			osp_hs.dither_span = info.tlab_bytes / 8;   /* words: T */
			osp_hs.dither_floor = (min_tlab + 7) / 8;   /* words */
			osp_hs.dither_off = o_tlab + o_desired;
			if (osp_vms_offset(&v, "Thread", "_allocated_bytes", &o_alloc) == 0)
				osp_hs.alloc_bytes_off = o_alloc;
			info.flags |= OS_JVM_F_TLAB_DITHER;
		}
	}
	osp_hs_g1gens_setup(&v, info.gc);
	osp_hs.heap_lo = info.heap_start;
	osp_hs.heap_hi = info.heap_end;
	osp_hs.fwd_marks = !(info.flags & (OS_JVM_F_ZGC | OS_JVM_F_CONCURRENT)) &&
			   (!strcmp(info.gc, "G1") || !strcmp(info.gc, "Parallel") ||
			    !strcmp(info.gc, "Serial"));
	if (osp_hs.fwd_marks)
		info.flags |= OS_JVM_F_SMALL_MOVES;
	osp_hs.interp_lo = info.interp_start;
	osp_hs.interp_hi = info.interp_end;
	__atomic_store_n(&osp_hs.up, 1, __ATOMIC_RELEASE);
	osp_hs_emit(t, OS_EV_JVM, info.heap_start, info.heap_end - info.heap_start,
		    info.libjvm_base, info.flags, (const uint64_t *)&info, OS_JVM_INFO_WORDS);
	if (info.heap_end > info.heap_start) {
		/* the filter's own first tests, made before the hook's bookkeeping
		 * (ZGC's colored views are not one range: the size only) */
		osp_move_min = OSP_HS_MOVE_MIN;
		if (!osp_hs.zgc_offset_mask) {
			osp_move_lo = info.heap_start;
			osp_move_hi = info.heap_end;
		}
		osp_move_filter = osp_hs_move_filter;
		__atomic_store_n(&osp_move_flags, OS_SHM_F_MOVES, __ATOMIC_RELEASE);
	}
	osp_leave(t);
}

/* ---- JNI_CreateJavaVM: objscope's options first ------------------------ */

static int hs_need_fp(void)
{
	const char *e = secure_getenv(OS_JAVA_FP_ENV);
	struct hs_code_offs o;
	struct osp_vms v;

	if (e && strcmp(e, "1") == 0)
		return 1;
	hs_fp_for_layout = osp_vms_open(&v, hs_jvm_handle) != 0 || hs_code_offsets(&v, &o) != 0;
	return hs_fp_for_layout;
}

/* The JVM writes /tmp/perf-PID.map at exit because objscope asks it to,
 * following whatever the name is then: in a world-writable /tmp another user
 * may have planted a link there to a file this process's user can write (a
 * root JVM: any file). So the name is made ours first, a new regular file
 * (O_EXCL, O_NOFOLLOW); in a sticky /tmp no one else can replace it after.
 * A regular file of ours already there (an earlier process with this pid)
 * will do. Anything else, or a /tmp that is world-writable without the
 * sticky bit: false, the map is not asked for (said in the report). */
static bool hs_claim_map(void)
{
	char path[48];
	struct stat st;
	int fd;

	if (stat("/tmp", &st) != 0 || ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX)))
		return false;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (fd >= 0) {
		close(fd);
		return true;
	}
	return errno == EEXIST && lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	       st.st_uid == geteuid() && st.st_nlink == 1;
}

static int hs_options(char bufs[][48], char **opts, bool perf_map)
{
	size_t tlab = osp_hdr->min_size > HS_TLAB_FLOOR ? osp_hdr->min_size : HS_TLAB_FLOOR;
	int n = 0;

	/* hybrid: T = max(requested, min_size, floor); exact: T = max(min_size, floor) */
	if (hs_mode == OS_JVM_MODE_HYBRID && hs_tlab > tlab)
		tlab = (size_t)hs_tlab;
	/* hybrid keeps the JVM's MinTLABSize (2048 on JDK 17), which TLABSize
	 * must not be below: the CLI's floor (4096), whatever the environment */
	if (hs_mode == OS_JVM_MODE_HYBRID && tlab < 4096)
		tlab = 4096;

	/* Java frames in JIT code are walked by their code blobs' frame sizes
	 * (runtimes/hotspot/hs_frames.h) when this libjvm's vmStructs export what that
	 * needs; frame pointers only otherwise, or when asked (they cost the
	 * JVM 2-4% of its CPU: docs/BENCHMARKS.md). */
	if (hs_need_fp())
		opts[n++] = "-XX:+PreserveFramePointer";
	opts[n++] = "-XX:+UnlockDiagnosticVMOptions";
	if (perf_map)
		opts[n++] = "-XX:+DumpPerfMapAtExit";
	/* debug info between safepoints too: the methods inlined at an
	 * interrupted compiled pc (runtimes/hotspot/hotspot_scopes.h); only the
	 * recorded debug info grows, the code is the same */
	opts[n++] = "-XX:+DebugNonSafepoints";
	if (hs_mode == OS_JVM_MODE_EXACT || hs_mode == OS_JVM_MODE_HYBRID) {
		/* Exact: a TLAB never has room for an object >= min_size, so each
		 * such object takes the slow path that calls the allocation hooks.
		 * Hybrid: the same for objects >= T; a smaller one takes it when
		 * it does not fit the free rest of a TLAB of fixed size T. */
		snprintf(bufs[0], sizeof(bufs[0]), "-XX:TLABSize=%zu", tlab);
		opts[n++] = bufs[0];
		/* Hybrid keeps the default MinTLABSize: the PLAB minimum follows
		 * it (MinTLABSize / 8 words), and G1 refuses to start when that
		 * exceeds OldPLABSize (1024 words: MinTLABSize above ~8 KiB).
		 * It only bounds the rare shorter TLAB at a region's end. */
		if (hs_mode == OS_JVM_MODE_EXACT) {
			snprintf(bufs[1], sizeof(bufs[1]), "-XX:MinTLABSize=%zu", tlab);
			opts[n++] = bufs[1];
		} else {
			/* An object that does not fit the TLAB's rest always makes
			 * a new TLAB (refill waste limit = the whole TLAB) rather
			 * than going outside while the old TLAB is kept: with the
			 * default (refill only when the rest is <= T/64) a rest
			 * lingers and every larger object is seen while it does,
			 * three times the probability the weights assume on
			 * tests/java/ObjFixture (docs/JAVA.md). With every miss a
			 * refill, the TLAB ends form a renewal process whose
			 * lengths osp_hs_tlab_refilled() draws: see os_hs_weight_jvm(). */
			opts[n++] = "-XX:TLABRefillWasteFraction=1";
		}
		opts[n++] = "-XX:-ResizeTLAB";
	}
	return n;
}

/* The last of -XX:+DumpPerfMapAtExit / -XX:-DumpPerfMapAtExit in s into
 * *want (unchanged when s has neither). */
static void hs_scan_map_flag(const char *s, int *want)
{
	static const char flag[] = "DumpPerfMapAtExit";

	for (const char *p = s; p && (p = strstr(p, flag)); p += sizeof(flag) - 1) {
		char c = p > s ? p[-1] : 0;
		char e = p[sizeof(flag) - 1];

		if ((c == '+' || c == '-') && (e == 0 || e == ' ' || e == '\t'))
			*want = c == '+';
	}
}

/* Whether the user asked for the perf map at exit themselves, in the order
 * HotSpot reads its options: JAVA_TOOL_OPTIONS, the launch options
 * (JDK_JAVA_OPTIONS included: the launcher put them there), _JAVA_OPTIONS.
 * @argfiles are expanded into the launch options by the launcher, so they
 * count; a -XX:Flags= file is not read: a map asked for only there is
 * removed like objscope's (docs/JAVA.md). */
static int hs_user_wants_map(const struct hs_vm_args *a)
{
	int want = 0;

	hs_scan_map_flag(getenv("JAVA_TOOL_OPTIONS"), &want);
	for (int i = 0; i < a->nOptions; i++)
		hs_scan_map_flag(a->options[i].optionString, &want);
	hs_scan_map_flag(getenv("_JAVA_OPTIONS"), &want);
	return want;
}

/* Framed: native paths during the JVM's start-up walk through it by frame
 * pointer (hotspot_walk.c). */
HS_FRAMED static int32_t hs_create_vm(void **pvm, void **penv, void *args)
{
	struct hs_vm_args *a = args, na;
	struct hs_vm_option *o = NULL;
	char bufs[2][48], *ours[HS_MAX_OPTS];
	int32_t r;
	int k;

	if (!a || a->version < HS_JNI_VERSION_1_2 || a->nOptions < 0 || !osp_armed() ||
	    __atomic_exchange_n(&hs_created, 1, __ATOMIC_ACQ_REL) || !osp_real.malloc)
		return hs_orig.create_vm(pvm, penv, args);
	hs_map_ours = !hs_user_wants_map(a);
	if (hs_map_ours && !hs_claim_map()) {
		hs_map_ours = 0;
		hs_map_refused = 1;
	}
	k = hs_options(bufs, ours, hs_map_ours);
	o = osp_real.malloc(sizeof(*o) * (size_t)(k + a->nOptions));
	if (!o)
		return hs_orig.create_vm(pvm, penv, args);
	for (int i = 0; i < k; i++) {
		o[i].optionString = ours[i];
		o[i].extraInfo = NULL;
	}
	for (int i = 0; i < a->nOptions; i++)
		o[k + i] = a->options[i];
	na = *a;
	na.nOptions = k + a->nOptions;
	na.options = o;
	r = hs_orig.create_vm(pvm, penv, &na);
	osp_real.free(o);
	if (r == HS_JNI_OK)
		hs_jvm_up(0);
	return r;
}

/* ---- installation ------------------------------------------------------ */

/* OS_JAVA_TLAB_ENV: decimal bytes, no malloc or stdio; the default when
 * unset, empty, not all digits, zero or above 1 GiB. */
static uint64_t hs_parse_tlab(const char *s)
{
	uint64_t v = 0;

	if (!s || !*s)
		return OS_JAVA_TLAB_DEFAULT;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return OS_JAVA_TLAB_DEFAULT;
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > (1ULL << 30))
			return OS_JAVA_TLAB_DEFAULT;
	}
	return v ? v : OS_JAVA_TLAB_DEFAULT;
}

enum { HS_NEW_TLAB, HS_OUTSIDE, HS_BEFORE_GC, HS_AFTER_GC, HS_CREATE_VM, HS_NHOOKS };

/* hs_patch[i]: 0 nothing, 1 prepared (attach mode, not written), 2 written */
static int hs_patch[HS_NHOOKS];
static struct osp_detour_patch hs_pending[HS_NHOOKS];

/* Finds the hooks in libjvm and detours them. plan NULL (launch mode, no
 * JVM thread yet): written at once, JNI_CreateJavaVM included. plan given
 * (attach mode, the JVM runs): only prepared, JNI_CreateJavaVM left alone
 * (the JVM exists); the collector writes them through hs_attach_commit
 * with every other thread stopped. The caller set hs_installed. */
static void hs_install_at(void *handle, struct os_rt_plan *plan)
{
	static const char *const names[HS_NHOOKS] = {
		"_ZN11AllocTracer27send_allocation_in_new_tlabEP5KlassPP12HeapWordImplmmP10JavaThread",
		"_ZN11AllocTracer28send_allocation_outside_tlabEP5KlassPP12HeapWordImplmP10JavaThread",
		"_ZN13CollectedHeap20trace_heap_before_gcEPK8GCTracer",
		"_ZN13CollectedHeap19trace_heap_after_gcEPK8GCTracer",
		"JNI_CreateJavaVM",
	};
	void *const repl[HS_NHOOKS] = {
		(void *)hs_new_tlab, (void *)hs_outside, (void *)hs_before_gc,
		(void *)hs_after_gc, (void *)hs_create_vm,
	};
	void **const orig[HS_NHOOKS] = {
		(void **)&hs_orig.new_tlab, (void **)&hs_orig.outside, (void **)&hs_orig.before_gc,
		(void **)&hs_orig.after_gc, (void **)&hs_orig.create_vm,
	};
	struct osp_detour_mem mem = {
		osp_real.malloc, osp_real.calloc, osp_real.realloc, osp_real.free,
	};
	struct osp_elf_want want[HS_NHOOKS];
	struct link_map *lm = NULL;
	const char *mode = secure_getenv(OS_JAVA_MODE_ENV);
	void *create = dlsym(handle, "JNI_CreateJavaVM");
	struct osp_thread *t;
	Dl_info info;

	if (!create || !dlsym(handle, "gHotSpotVMStructs"))
		return;
	/* --runtime generic: the JVM is left to the generic adapter, untouched */
	if (osp_hdr && (osp_hdr->flags & OS_SHM_F_RT_GENERIC))
		return;
	t = osp_enter_heavy(); /* our own allocations below pass through the hooks */
	if (!t)
		return;
	if (!dladdr1(create, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm || !lm->l_name[0])
		goto out;
	hs_jvm_handle = handle;
	hs_jvm_base = lm->l_addr;
	/* native allocation paths of a JVM: never unw_backtrace (adapter.h);
	 * the code cache's bounds are read live until hs_jvm_up */
	{
		struct osp_vms v;
		void *lo, *hi, *code;
		uint64_t o_buf, o_lim;

		if (osp_vms_open(&v, handle) == 0) {
			if (osp_vms_static(&v, "CodeCache", "_low_bound", &lo) == 0 &&
			    osp_vms_static(&v, "CodeCache", "_high_bound", &hi) == 0) {
				osp_hs.code_lo_at = lo;
				osp_hs.code_hi_at = hi;
			}
			/* interpreted frames of the JDK's start-up code, which runs
			 * inside JNI_CreateJavaVM, yield their Method* too */
			osp_hs.method_off = hs_method_slot(&v);
			if (osp_hs.method_off &&
			    osp_vms_static(&v, "AbstractInterpreter", "_code", &code) == 0 &&
			    osp_vms_offset(&v, "StubQueue", "_stub_buffer", &o_buf) == 0 &&
			    osp_vms_offset(&v, "StubQueue", "_buffer_limit", &o_lim) == 0) {
				osp_hs.interp_buf_off = o_buf;
				osp_hs.interp_lim_off = o_lim;
				osp_hs.interp_code_at = code;
			}
		}
	}
	__atomic_store_n(&osp_path_jit, osp_hs_walk_native, __ATOMIC_RELEASE);
	dl_iterate_phdr(hs_find_text, NULL);
	if (mode && strcmp(mode, "sampled") == 0)
		hs_mode = OS_JVM_MODE_SAMPLED;
	else if (mode && strcmp(mode, "hybrid") == 0)
		hs_mode = OS_JVM_MODE_HYBRID;
	hs_tlab = hs_parse_tlab(secure_getenv(OS_JAVA_TLAB_ENV));
	for (int i = 0; i < HS_NHOOKS; i++)
		want[i].name = names[i];
	if (osp_elf_find_local(lm->l_name, lm->l_addr, want, HS_NHOOKS) < 0 ||
	    osp_detour_init(&mem) != 0)
		goto out;
	/* JNI_CreateJavaVM last: without it nothing else is announced. */
	for (int i = 0; i < HS_NHOOKS && !plan; i++) {
		if (want[i].addr &&
		    osp_detour_install((void *)want[i].addr, want[i].size, repl[i], orig[i]) != 0)
			*orig[i] = NULL;
		else if (want[i].addr)
			hs_patch[i] = 2;
	}
	/* attach mode: a prologue holding a call is refused (a thread inside
	 * the callee would return into the middle of the jump) */
	for (int i = 0; i < HS_CREATE_VM && plan; i++) {
		if (!want[i].addr ||
		    osp_detour_prepare((void *)want[i].addr, want[i].size, repl[i], orig[i],
				       &hs_pending[i]) != 0 ||
		    hs_pending[i].has_call)
			plan->refused++;
		else
			hs_patch[i] = 1;
	}
out:
	osp_leave(t);
}

static void hs_install(void *handle)
{
	if (__atomic_exchange_n(&hs_installed, 1, __ATOMIC_ACQ_REL))
		return;
	hs_install_at(handle, NULL);
}

/* ---- attach mode: the JVM runs already (preload/attach.c) -------------- */

static int hs_attach_prepare(struct os_rt_plan *plan)
{
	void *h;

	memset(plan, 0, sizeof(*plan));
	/* set first: the dlopen below may be our own hook */
	if (!__atomic_exchange_n(&hs_installed, 1, __ATOMIC_ACQ_REL)) {
		h = dlopen("libjvm.so", RTLD_NOW | RTLD_NOLOAD);
		if (!h)
			return 0;
		hs_install_at(h, plan);
	}
	if (!hs_jvm_handle)
		return 0;
	/* the JVM is up: read vmStructs, announce it, log moves */
	hs_jvm_up(1);
	if (!__atomic_load_n(&osp_hs.up, __ATOMIC_ACQUIRE))
		return 0;
	plan->found = 1;
	snprintf(plan->runtime, sizeof(plan->runtime), "hotspot");
	snprintf(plan->what, sizeof(plan->what), "JVM");
	plan->stacks = hs_preserve_fp != 1 && osp_hs.frames.ok ? 2 : (uint32_t)hs_preserve_fp;
	for (int i = 0; i < HS_CREATE_VM; i++) {
		if (hs_patch[i] == 2)
			plan->active++;
		if (hs_patch[i] != 1 || plan->pending == OS_RT_PLAN_MAX)
			continue;
		plan->lo[plan->pending] = hs_pending[i].start + 1;
		plan->hi[plan->pending] = hs_pending[i].start + hs_pending[i].stolen;
		plan->pending++;
	}
	return 1;
}

static int hs_attach_commit(void)
{
	int n = 0;

	for (int i = 0; i < HS_CREATE_VM; i++) {
		if (hs_patch[i] != 1)
			continue;
		if (osp_detour_commit(&hs_pending[i]) != 0)
			return n ? n : -EFAULT;
		hs_patch[i] = 2;
		n++;
	}
	return n;
}

static const char *const hs_attach_imports[] = { "memcpy", "memmove" };

const struct osp_runtime_attach osp_hs_attach = {
	.name = "hotspot",
	.prepare = hs_attach_prepare,
	.commit = hs_attach_commit,
	.got_imports = hs_attach_imports,
	.ngot_imports = sizeof(hs_attach_imports) / sizeof(hs_attach_imports[0]),
	.got_object = "/libjvm.so",
};

/* A library was loaded (preload/loaded.c): libjvm.so installs the hooks.
 * Another library (capstone, loaded by another runtime's install) leaves
 * the one-time install to libjvm. */
static void hs_loaded(void *handle)
{
	if (!__atomic_load_n(&hs_installed, __ATOMIC_ACQUIRE) &&
	    dlsym(handle, "JNI_CreateJavaVM") && dlsym(handle, "gHotSpotVMStructs"))
		hs_install(handle);
}

const struct osp_runtime_load osp_hs_load = {
	.name = "hotspot",
	.loaded = hs_loaded,
	/* programs linked against libjvm.so (JNI embedders) have it before us */
	.preloaded = "libjvm.so",
};
