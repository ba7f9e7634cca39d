/* zero.c - the HotSpot Zero adapter inside the target. See zero.h.
 *
 * Hook: MemAllocator::allocate() const (a libjvm local symbol, .symtab).
 * The replacement calls the original, then reads the allocation from the
 * MemAllocator (after its vtable: _thread, _klass, _word_size; not in
 * vmStructs, so _klass is checked against the Klass of the returned
 * object's header, which vmStructs describes) and writes OS_EV_JALLOC with
 * the path: the Java frames of the Zero stack, then the native frames past
 * libjvm (the thread's start). */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "preload/detour.h"
#include "runtimes/hotspot/target/hotspot.h"
#include "runtimes/hotspot/target/hotspot_attach.h"
#include "runtimes/hotspot/target/hotspot_elf.h"
#include "runtimes/hotspot/target/hotspot_vms.h"
#include "runtimes/zero/target/zero.h"
#include "runtimes/zero/zero_abi.h"
#include "runtimes/zero/zero_frames.h"

/* The hook keeps a frame pointer: the saved rbp is the frame pointer of
 * MemAllocator::allocate's caller, where the native walk starts. */
#define ZT_FRAMED __attribute__((noinline, optimize("no-omit-frame-pointer")))
#define ZT_ALLOCATOR_THREAD 8    /* MemAllocator: vtable, _thread, _klass, _word_size */
#define ZT_ALLOCATOR_KLASS 16
#define ZT_ALLOCATOR_WORDS 24
#define ZT_ANCHOR_FP 16          /* JavaFrameAnchor: _last_Java_sp, _last_Java_pc, _last_Java_fp */
#define ZT_MAX_WORDS (1ULL << 40)

enum { ZT_ALLOCATE, ZT_MAIN_LOOP, ZT_RUN, ZT_NSYMS = ZT_RUN + OS_ZERO_MAX_RANGES };

static const char *const zt_names[ZT_NSYMS] = {
	"_ZNK12MemAllocator8allocateEv",
	"_ZN15ZeroInterpreter9main_loopEiP10JavaThread",
	"_ZN19BytecodeInterpreter3runILb0ELb0EEEvPS_",
	"_ZN19BytecodeInterpreter3runILb0ELb1EEEvPS_",
	"_ZN19BytecodeInterpreter3runILb1ELb0EEEvPS_",
	"_ZN19BytecodeInterpreter3runILb1ELb1EEEvPS_",
};

/* Written at install (one thread), read-only once `on` is set. */
static struct {
	int done;                 /* a Zero libjvm was installed, or an attach began */
	int on;                   /* the hook may write events */
	uint64_t base;            /* libjvm's load base */
	uint64_t ranges[2 * OS_ZERO_MAX_RANGES];
	uint32_t nranges;
	uint64_t anchor_off;      /* JavaThread::_anchor */
	uint64_t stack_base_off;  /* JavaThread::_stack_base (the highest address) */
	uint64_t hdr_klass_off;   /* oopDesc::_metadata._klass */
	uint64_t layout_off;      /* Klass::_layout_helper (< 0: an array) */
	uint64_t tlab_start_off;  /* Thread::_tlab + ThreadLocalAllocBuffer::_start, _end */
	uint64_t tlab_end_off;
	const uint8_t *compressed;    /* -XX:UseCompressedClassPointers */
	const uint64_t *nk_base;      /* CompressedKlassPointers: base, shift */
	const int32_t *nk_shift;
	struct os_zf_layout zf;   /* istate_words learnt by the first walk that can */
	struct osp_detour_patch pending;
	int patch;                /* 0 nothing, 1 prepared (attach), 2 written */
} zt;

static void *(*zt_orig)(const void *self);
static int zt_is_zero;         /* the process's libjvm is Zero (installed or attached) */
static uint64_t zt_mismatch;   /* allocations not sent: the MemAllocator did not match */
/* This thread wrote its hello (1; 2: with istate_words) in the session of
 * collector zt_said_to (an attach after a detach is a new session, whose
 * rings must see the hello again: the detours stayed, and the threads'
 * events start once the library is armed, before the attach's prepare). */
static OSP_TLS int zt_said;
static OSP_TLS uint32_t zt_said_to;

/* ---- the hello (zero_abi.h) -------------------------------------------- */

static int zt_hello(struct osp_thread *t, uint64_t mismatch)
{
	uint64_t w[OS_ZERO_HELLO_WORDS + 2 * OS_ZERO_MAX_RANGES];

	w[OS_ZERO_HELLO_ISTATE] = __atomic_load_n(&zt.zf.istate_words, __ATOMIC_ACQUIRE);
	w[OS_ZERO_HELLO_JVM_LO] = osp_hs.jvm_lo;
	w[OS_ZERO_HELLO_JVM_HI] = osp_hs.jvm_hi;
	for (uint32_t i = 0; i < 2 * zt.nranges; i++)
		w[OS_ZERO_HELLO_WORDS + i] = zt.ranges[i];
	return osp_hs_emit(t, OS_EV_JVM, 0, mismatch, zt.base, OS_ZERO_HELLO, w,
			   OS_ZERO_HELLO_WORDS + 2 * zt.nranges);
}

/* Before any event of this thread in a Zero JVM (osp_hs_pre_emit: GC
 * events of the VM thread, the JVM's announcement, moves): the hello
 * first, once per session, so that whichever ring the collector drains
 * first names the JVM Zero's. */
static void zt_pre_emit(struct osp_thread *t, uint16_t type, uint64_t aux2)
{
	if (type == OS_EV_JVM && aux2 == OS_ZERO_HELLO)
		return; /* the hello itself */
	if (zt_said_to != osp_hdr->collector_pid)
		zt_said = 0;
	if (zt_said)
		return;
	if (zt_hello(t, __atomic_load_n(&zt_mismatch, __ATOMIC_RELAXED)) == 0) {
		zt_said = 1;
		zt_said_to = osp_hdr->collector_pid;
	}
}

/* ---- the allocation hook (any Java thread) ----------------------------- */

/* Reads for zero_frames.h: the frames were bounded by the walk, metadata
 * (Method, ConstMethod) is read where the checked istate points. */
static bool zt_read(void *arg, uint64_t addr, uint64_t *w)
{
	(void)arg;
	*w = *(const volatile uint64_t *)(uintptr_t)addr;
	return true;
}

/* The Klass* of obj from its header. */
static uint64_t zt_header_klass(const void *obj)
{
	const uint8_t *o = obj;

	if (zt.compressed && *zt.compressed)
		return *zt.nk_base + ((uint64_t) * (const uint32_t *)(o + zt.hdr_klass_off) << *zt.nk_shift);
	return *(const uint64_t *)(o + zt.hdr_klass_off);
}

/* The Java frames of `thread` (a JavaThread*) into frames[0..max): 0 when
 * it is not in a call from Java into the VM; *bad when its frames did not
 * follow the rules. lo: the lowest stack address a frame may have. */
static int zt_java(uint64_t thread, uint64_t *frames, int max, uint64_t lo, int *bad,
		   int *truncated)
{
	const uint8_t *th = (const uint8_t *)(uintptr_t)thread;
	uint64_t sp, top, hi;
	bool b = false, tr = false;
	uint32_t n;

	*bad = 0;
	if (!thread || !zt.anchor_off)
		return 0;
	sp = *(const volatile uint64_t *)(th + zt.anchor_off);
	top = *(const volatile uint64_t *)(th + zt.anchor_off + ZT_ANCHOR_FP);
	hi = *(const uint64_t *)(th + zt.stack_base_off);
	if (!sp || !top)
		return 0;
	if (top < lo || top >= hi) {
		*bad = 1;
		return 0;
	}
	if (!__atomic_load_n(&zt.zf.istate_words, __ATOMIC_ACQUIRE)) {
		struct os_zf_layout l = zt.zf;

		if (!os_zf_learn(&l, zt_read, NULL, top, thread, lo)) {
			*bad = 1;
			return 0;
		}
		__atomic_store_n(&zt.zf.istate_words, l.istate_words, __ATOMIC_RELEASE);
	}
	n = os_zf_walk(&zt.zf, zt_read, NULL, NULL, top, thread, lo, hi, frames, (uint32_t)max, &b, &tr);
	*bad = b || !n;
	*truncated = tr;
	return (int)n;
}

/* The native frames past libjvm's last one (the thread's start: JavaMain,
 * start_thread, ...) appended to frames[n..max). */
static int zt_native_tail(uint64_t *frames, int n, int max, const void *caller, const void *fp,
			  int *truncated)
{
	uint64_t native[OS_MAX_FRAMES];
	int m, last = -1, tr = 0;

	m = osp_hs_walk_fp(native, OS_MAX_FRAMES, caller, fp, &tr);
	for (int i = 0; i < m; i++)
		if (native[i] >= osp_hs.jvm_lo && native[i] < osp_hs.jvm_hi)
			last = i;
	if (last < 0) /* not through libjvm: keep the walk as it is */
		last = -1;
	for (int i = last + 1; i < m && n < max; i++)
		frames[n++] = native[i];
	if (n == max || tr)
		*truncated = 1;
	return n;
}

/* An array (OS_ZERO_A_ARRAY), or an instance: the bytes of the TLAB it
 * starts when it made a new one (HotSpot's refill, whose size the sampled
 * mode weighs by), 0 otherwise. */
static uint64_t zt_tlab(uint64_t thread, uint64_t klass, const void *obj)
{
	const uint8_t *th = (const uint8_t *)(uintptr_t)thread;
	uint64_t start, end;

	if (*(const int32_t *)(uintptr_t)(klass + zt.layout_off) < 0)
		return OS_ZERO_A_ARRAY;
	if (!thread)
		return 0;
	start = *(const uint64_t *)(th + zt.tlab_start_off);
	end = *(const uint64_t *)(th + zt.tlab_end_off);
	if (start != (uint64_t)(uintptr_t)obj || end <= start)
		return 0;
	return (end - start) & ~(uint64_t)OS_ZERO_A_FLAGS;
}

/* Returns whether the MemAllocator matched the object (its fields usable). */
static bool zt_alloc(const void *self, void *obj, const void *caller, const void *fp)
{
	const uint8_t *a = self;
	uint64_t frames[OS_MAX_FRAMES], klass, words, thread, flags = 0, c;
	struct osp_thread *t = osp_enter();
	struct os_slot *s;
	int n, bad, truncated = 0;
	bool match = false;

	if (!t)
		return false;
	s = osp_slot(t);
	if (!s)
		goto out;
	klass = *(const uint64_t *)(a + ZT_ALLOCATOR_KLASS);
	words = *(const uint64_t *)(a + ZT_ALLOCATOR_WORDS);
	thread = *(const uint64_t *)(a + ZT_ALLOCATOR_THREAD);
	if (!klass || klass != zt_header_klass(obj) || !words || words >= ZT_MAX_WORDS) {
		c = __atomic_add_fetch(&zt_mismatch, 1, __ATOMIC_RELAXED);
		if (!(c & (c - 1)))
			zt_hello(t, c);
		goto out;
	}
	match = true;
	if (words * 8 < osp_hdr->min_size) {
		osp_stat_add(&s->stats.small_allocs, 1);
		osp_stat_add(&s->stats.small_bytes, words * 8);
		goto out;
	}
	n = zt_java(thread, frames, OS_MAX_FRAMES, (uint64_t)(uintptr_t)__builtin_frame_address(0),
		    &bad, &truncated);
	/* after the walk: the hello says where istates lie once one was found */
	if (zt_said_to != osp_hdr->collector_pid)
		zt_said = 0;
	if (zt_said != 2) {
		uint32_t k = __atomic_load_n(&zt.zf.istate_words, __ATOMIC_RELAXED);

		if (!zt_said || k) {
			if (zt_hello(t, __atomic_load_n(&zt_mismatch, __ATOMIC_RELAXED)) != 0)
				goto out; /* ring full: counted there; no event before the hello */
			zt_said = k ? 2 : 1;
			zt_said_to = osp_hdr->collector_pid;
		}
	}
	if (bad && thread)
		flags |= OS_ZERO_A_NO_JAVA;
	n = zt_native_tail(frames, n, OS_MAX_FRAMES, caller, fp, &truncated);
	flags |= zt_tlab(thread, klass, obj);
	if (truncated)
		osp_stat_add(&s->stats.truncated, 1);
	if (osp_hs_emit(t, OS_EV_JALLOC, (uint64_t)(uintptr_t)obj, words * 8, flags, klass, frames,
			(uint32_t)n) == 0) {
		osp_stat_add(&s->stats.tracked_allocs, 1);
		osp_stat_add(&s->stats.tracked_bytes, words * 8);
		osp_hs_fwd_track((uint64_t)(uintptr_t)obj, words * 8);
	}
out:
	osp_leave(t);
	return match;
}

/* HotSpot's hybrid mode draws each next TLAB size at a refill (its own
 * refill hook is empty on Zero): every refill is made here, in the VM (the
 * interpreter only bumps its TLAB's top), whatever the object's size. */
static void zt_refill(const void *self, const void *obj)
{
	const uint8_t *th = *(const uint8_t *const *)((const uint8_t *)self + ZT_ALLOCATOR_THREAD);
	uint64_t start, end, o = (uint64_t)(uintptr_t)obj;

	if (!th || !osp_hs.dither_off)
		return;
	start = *(const uint64_t *)(th + zt.tlab_start_off);
	end = *(const uint64_t *)(th + zt.tlab_end_off);
	if (o == start && end > start)
		osp_hs_tlab_refilled((void *)th, obj);
	else if (o < start || o >= end)
		osp_hs_tlab_outside((void *)th,
				    8 * *(const uint64_t *)((const uint8_t *)self + ZT_ALLOCATOR_WORDS));
}

ZT_FRAMED static void *zt_allocate(const void *self)
{
	void *obj = zt_orig(self);

	if (obj && __atomic_load_n(&zt.on, __ATOMIC_ACQUIRE) &&
	    zt_alloc(self, obj, __builtin_return_address(0),
		     *(void *const *)__builtin_frame_address(0)))
		zt_refill(self, obj);
	return obj;
}

/* ---- installation ------------------------------------------------------ */

/* vmStructs: what the hook and the walk read. 0, or -ENOENT. */
static int zt_layout(void *handle)
{
	struct osp_vms v;
	uint64_t cm_size;
	void *p;

	if (osp_vms_open(&v, handle) != 0 ||
	    osp_vms_offset(&v, "JavaThread", "_anchor", &zt.anchor_off) ||
	    osp_vms_offset(&v, "JavaThread", "_stack_base", &zt.stack_base_off) ||
	    osp_vms_offset(&v, "oopDesc", "_metadata._klass", &zt.hdr_klass_off) ||
	    osp_vms_offset(&v, "Klass", "_layout_helper", &zt.layout_off) ||
	    osp_vms_static(&v, "CompressedKlassPointers", "_narrow_klass._base", &p))
		return -ENOENT;
	zt.nk_base = p;
	if (osp_vms_static(&v, "CompressedKlassPointers", "_narrow_klass._shift", &p) ||
	    osp_vms_flag(&v, "UseCompressedClassPointers", (void **)&zt.compressed))
		return -ENOENT;
	zt.nk_shift = p;
	{
		uint64_t o_tlab, o_start, o_end;

		if (osp_vms_offset(&v, "Thread", "_tlab", &o_tlab) ||
		    osp_vms_offset(&v, "ThreadLocalAllocBuffer", "_start", &o_start) ||
		    osp_vms_offset(&v, "ThreadLocalAllocBuffer", "_end", &o_end))
			return -ENOENT;
		zt.tlab_start_off = o_tlab + o_start;
		zt.tlab_end_off = o_tlab + o_end;
	}
	{
		uint64_t o_cm, o_cs;

		if (osp_vms_offset(&v, "Method", "_constMethod", &o_cm) ||
		    osp_vms_offset(&v, "ConstMethod", "_code_size", &o_cs) ||
		    osp_vms_type_size(&v, "ConstMethod", &cm_size))
			return -ENOENT;
		/* BytecodeInterpreter: _thread, _bcp, _locals, _constants, _method */
		zt.zf = (struct os_zf_layout){
			.thread_off = 0, .bcp_off = 8, .method_off = 32,
			.const_method_off = (uint32_t)o_cm, .code_size_off = (uint32_t)o_cs,
			.code_off = (uint32_t)cm_size,
		};
	}
	return 0;
}

/* Whether the libjvm at path (load base) is Zero, and its symbols. */
static int zt_symbols(const char *path, uintptr_t base, struct osp_elf_want *want)
{
	for (int i = 0; i < ZT_NSYMS; i++)
		want[i] = (struct osp_elf_want){ .name = zt_names[i] };
	if (osp_elf_find_local(path, base, want, ZT_NSYMS) < 0 || !want[ZT_MAIN_LOOP].addr ||
	    !want[ZT_ALLOCATE].addr)
		return 0;
	zt.nranges = 0;
	for (int i = ZT_RUN; i < ZT_NSYMS; i++) {
		if (!want[i].addr || !want[i].size)
			continue;
		zt.ranges[2 * zt.nranges] = want[i].addr;
		zt.ranges[2 * zt.nranges + 1] = want[i].addr + want[i].size;
		zt.nranges++;
	}
	zt.base = base;
	return 1;
}

/* The libjvm of handle, when it is Zero: its symbols and layout. 1 yes. */
static int zt_find(void *handle, struct osp_elf_want *want)
{
	void *create = dlsym(handle, "JNI_CreateJavaVM");
	struct link_map *lm = NULL;
	Dl_info info;

	if (!create || !dlsym(handle, "gHotSpotVMStructs") ||
	    !dladdr1(create, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm || !lm->l_name[0])
		return 0;
	return zt_symbols(lm->l_name, lm->l_addr, want) && zt_layout(handle) == 0;
}

/* --runtime generic: the JVM is left to the generic adapter, untouched. */
static int zt_generic(void)
{
	return osp_hdr && (osp_hdr->flags & OS_SHM_F_RT_GENERIC);
}

static void zt_loaded(void *handle)
{
	struct osp_detour_mem mem = {
		osp_real.malloc, osp_real.calloc, osp_real.realloc, osp_real.free,
	};
	struct osp_elf_want want[ZT_NSYMS];
	struct osp_thread *t;

	if (__atomic_load_n(&zt.done, __ATOMIC_ACQUIRE) || zt_generic() ||
	    !dlsym(handle, "JNI_CreateJavaVM"))
		return;
	t = osp_enter(); /* our own allocations below pass through the hooks */
	if (!t)
		return;
	/* one libjvm per process: looked at once (a later library that
	 * depends on it finds JNI_CreateJavaVM through it too) */
	__atomic_store_n(&zt.done, 1, __ATOMIC_RELEASE);
	if (zt_find(handle, want)) {
		zt_is_zero = 1;
		__atomic_store_n(&osp_hs_pre_emit, zt_pre_emit, __ATOMIC_RELEASE);
		if (osp_detour_init(&mem) == 0 &&
		    osp_detour_install((void *)want[ZT_ALLOCATE].addr, want[ZT_ALLOCATE].size,
				       (void *)zt_allocate, (void **)&zt_orig) == 0) {
			zt.patch = 2;
			__atomic_store_n(&zt.on, 1, __ATOMIC_RELEASE);
		}
	}
	osp_leave(t);
}

const struct osp_runtime_load osp_zero_load = {
	.name = "zero",
	.loaded = zt_loaded,
	.preloaded = NULL, /* libjvm.so: the HotSpot entry looks it up, every entry sees it */
};

/* ---- attach mode: the JVM runs already (preload/attach.c) -------------- */

/* dl_iterate_phdr: libjvm.so's path and load base. */
struct zt_lib {
	char path[512];
	uintptr_t base;
};

static int zt_find_lib(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct zt_lib *l = arg;
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	size_t n = strlen(name);

	(void)size;
	if (n < 10 || strcmp(name + n - 10, "/libjvm.so") != 0)
		return 0;
	snprintf(l->path, sizeof(l->path), "%s", name);
	l->base = info->dlpi_addr;
	return 1;
}

/* Found by the first attach (the library stays loaded after a detach,
 * detours written: a later attach announces the JVM again). */
static struct zt_lib zt_lib;

static int zt_attach_prepare(struct os_rt_plan *plan)
{
	struct osp_elf_want want[ZT_NSYMS];
	struct osp_thread *t;
	int first, said;
	void *h;

	memset(plan, 0, sizeof(*plan));
	/* first: the dlopen of the HotSpot adapter's prepare shows libjvm to
	 * every runtime (preload/loaded.c), which must not install now */
	if (zt_generic())
		return 0;
	first = !__atomic_exchange_n(&zt.done, 1, __ATOMIC_ACQ_REL);
	if (first)
		zt_is_zero = dl_iterate_phdr(zt_find_lib, &zt_lib) &&
			     zt_symbols(zt_lib.path, zt_lib.base, want);
	if (!zt_is_zero)
		return 0; /* not Zero: the HotSpot entry, next, may take it */
	t = osp_enter();
	if (!t)
		return 0;
	said = zt_hello(t, __atomic_load_n(&zt_mismatch, __ATOMIC_RELAXED)) == 0;
	osp_leave(t);
	if (!said)
		return 0;
	zt_said = 1;
	zt_said_to = osp_hdr->collector_pid;
	__atomic_store_n(&osp_hs_pre_emit, zt_pre_emit, __ATOMIC_RELEASE);
	/* the HotSpot adapter: its detours prepared, the JVM announced */
	if (osp_hs_attach.prepare(plan) != 1)
		return 0;
	snprintf(plan->runtime, sizeof(plan->runtime), "zero");
	snprintf(plan->what, sizeof(plan->what), "JVM (Zero)");
	plan->stacks = 2; /* Java frames from the Zero stack, no JIT code */
	if (zt.patch == 2) {
		plan->active++;
		return 1;
	}
	h = first ? dlopen(zt_lib.path, RTLD_NOW | RTLD_NOLOAD) : NULL;
	if (!h || zt_layout(h) != 0 ||
	    osp_detour_prepare((void *)want[ZT_ALLOCATE].addr, want[ZT_ALLOCATE].size,
			       (void *)zt_allocate, (void **)&zt_orig, &zt.pending) != 0 ||
	    zt.pending.has_call || plan->pending == OS_RT_PLAN_MAX) {
		plan->refused++;
		return 1;
	}
	zt.patch = 1;
	plan->lo[plan->pending] = zt.pending.start + 1;
	plan->hi[plan->pending] = zt.pending.start + zt.pending.stolen;
	plan->pending++;
	return 1;
}

static int zt_attach_commit(void)
{
	int n = osp_hs_attach.commit ? osp_hs_attach.commit() : 0;

	if (n < 0)
		return n;
	if (zt.patch == 1) {
		if (osp_detour_commit(&zt.pending) != 0)
			return n ? n : -EFAULT;
		zt.patch = 2;
		__atomic_store_n(&zt.on, 1, __ATOMIC_RELEASE);
		n++;
	}
	return n;
}

static const char *const zt_attach_imports[] = { "memcpy", "memmove" };

const struct osp_runtime_attach osp_zero_attach = {
	.name = "zero",
	.prepare = zt_attach_prepare,
	.commit = zt_attach_commit,
	.got_imports = zt_attach_imports,
	.ngot_imports = sizeof(zt_attach_imports) / sizeof(zt_attach_imports[0]),
	.got_object = "/libjvm.so",
};
