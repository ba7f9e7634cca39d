/* test_generic.c - the generic runtime adapter (runtimes/generic/): its pure
 * parts (VM libraries, thread kinds, reservations, the maps' view of a
 * heap), the attribution change it relies on (a heap_opaque sample skips
 * the mappings the heap is made of: attacher/core/attrib.c), and the
 * adapter itself over this very process with a real libjvm.so loaded: the
 * heap is the largest reservation the VM's library made, its samples go to
 * the "objects not identified" line, never to the commit's mapping. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "attacher/core/attrib.h"
#include "common/ivindex.h"
#include "common/procmaps.h"
#include "common/ring.h"
#include "common/profile.h"
#include "common/shm.h"
#include "attacher/cli/options.h"
#include "runtimes/generic/generic.h"
#include "symbolizer/symbolizer.h"

Test(generic, vm_libraries_by_name)
{
	cr_expect(os_gen_vm_library("/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"));
	cr_expect(os_gen_vm_library("/opt/openj9/lib/default/libj9vm29.so"));
	cr_expect(os_gen_vm_library("/opt/openj9/lib/default/libj9gc29.so"));
	cr_expect(os_gen_vm_library("/opt/graalvm/lib/libjvmcicompiler.so"));
	cr_expect(os_gen_vm_library("libjvm.so"));
	cr_expect_not(os_gen_vm_library("/usr/lib/jvm/java-17-openjdk-amd64/lib/libjli.so"));
	cr_expect_not(os_gen_vm_library("/usr/lib/jvm/java-17-openjdk-amd64/lib/libjava.so"));
	cr_expect_not(os_gen_vm_library("/lib/x86_64-linux-gnu/libc.so.6"));
	cr_expect_not(os_gen_vm_library("/tmp/libjvm.so.old"));
	cr_expect_not(os_gen_vm_library("/usr/lib/libjvm/other.so"), "the base name counts");
	cr_expect_not(os_gen_vm_library(""));
	cr_expect_not(os_gen_vm_library(NULL));
}

Test(generic, thread_kinds_by_names_common_to_vms)
{
	cr_expect_eq(os_gen_thread_kind("GC Thread#0"), OS_THR_GC);
	cr_expect_eq(os_gen_thread_kind("G1 Conc#0"), OS_THR_GC);
	cr_expect_eq(os_gen_thread_kind("GC Worker"), OS_THR_GC);
	cr_expect_eq(os_gen_thread_kind("C2 CompilerThre"), OS_THR_JIT);
	cr_expect_eq(os_gen_thread_kind("JIT Compilation"), OS_THR_JIT);
	cr_expect_eq(os_gen_thread_kind("JVMCI CompilerT"), OS_THR_JIT);
	cr_expect_eq(os_gen_thread_kind("VM Thread"), OS_THR_VM);
	cr_expect_eq(os_gen_thread_kind("main"), -1, "what a thread runs is not known");
	cr_expect_eq(os_gen_thread_kind("java"), -1);
	cr_expect_eq(os_gen_thread_kind(NULL), -1);
}

Test(generic, reservations_replaced_trimmed_committed_and_the_heap)
{
	struct os_gen_resvs r = { 0 };
	uint64_t lo, hi;

	cr_expect_not(os_gen_resv_heap(&r, &lo, &hi));
	cr_assert_eq(os_gen_resv_add(&r, 0x1000000, 0x2000000), 0);
	cr_assert_eq(os_gen_resv_add(&r, 0x80000000, 0x100000000), 0);
	cr_assert_eq(os_gen_resv_add(&r, 0x200000000, 0x240000000), 0);
	cr_assert(os_gen_resv_heap(&r, &lo, &hi));
	cr_expect_eq(lo, 0x80000000);
	cr_expect_eq(hi, 0x100000000);
	/* trimmed at its top (HotSpot reserves more, then unmaps the rest) */
	os_gen_resv_cut(&r, 0xf0000000, 0x100000000);
	cr_assert(os_gen_resv_heap(&r, &lo, &hi));
	cr_expect_eq(hi, 0xf0000000);
	/* and at its bottom */
	os_gen_resv_cut(&r, 0x70000000, 0x90000000);
	cr_assert(os_gen_resv_heap(&r, &lo, &hi));
	cr_expect_eq(lo, 0x90000000);
	/* a hole keeps the larger side */
	os_gen_resv_cut(&r, 0xa0000000, 0xa0001000);
	cr_assert(os_gen_resv_heap(&r, &lo, &hi));
	cr_expect_eq(lo, 0xa0001000);
	cr_expect_eq(hi, 0xf0000000);
	/* a new mapping over one replaces it */
	cr_assert_eq(os_gen_resv_add(&r, 0xa0001000, 0xa0002000), 0);
	cr_assert(os_gen_resv_heap(&r, &lo, &hi));
	cr_expect_eq(lo, 0x200000000, "0x%llx", (unsigned long long)lo);
	/* the most committed wins over the largest (a heap smaller than a
	 * class space), and loses what is uncommitted */
	os_gen_resv_commit(&r, 0x1000000, 0x1800000, true);
	cr_assert(os_gen_resv_heap(&r, &lo, &hi));
	cr_expect_eq(lo, 0x1000000, "0x%llx", (unsigned long long)lo);
	os_gen_resv_commit(&r, 0x200000000, 0x200100000, true);
	cr_assert(os_gen_resv_heap(&r, &lo, &hi));
	cr_expect_eq(lo, 0x1000000, "8 MiB committed against 1 MiB");
	os_gen_resv_commit(&r, 0x1000000, 0x1780000, false);
	cr_assert(os_gen_resv_heap(&r, &lo, &hi));
	cr_expect_eq(lo, 0x200000000, "0.5 MiB left against 1 MiB");
	os_gen_resv_commit(&r, 0x1000000, 0x2000000, false);
	os_gen_resv_commit(&r, 0x1000000, 0x2000000, false); /* never below 0 */
	cr_assert(os_gen_resv_heap(&r, &lo, &hi));
	cr_expect_eq(lo, 0x200000000);
	/* gone entirely */
	os_gen_resv_cut(&r, 0x200000000, 0x240000000);
	cr_assert(os_gen_resv_heap(&r, &lo, &hi));
	cr_expect_eq(lo, 0x1000000, "0x%llx", (unsigned long long)lo);
	os_gen_resv_free(&r);
}

static int maps_cb(const struct os_maps_entry *e, void *arg)
{
	os_gen_maps_add(arg, e);
	return 0;
}

/* A JVM's maps (cut): a heap committed piecewise (rw-p / ---p), the code
 * cache (rwx + ---p), a malloc arena, libjvm. */
static const char jvm_maps[] =
	"55d4c8a00000-55d4c8a02000 r-xp 00001000 08:01 1 /usr/lib/jvm/bin/java\n"
	"80000000-8c000000 rw-p 00000000 00:00 0 \n"
	"8c000000-f0000000 ---p 00000000 00:00 0 \n"
	"f0000000-f0400000 rw-p 00000000 00:00 0 \n"
	"f0400000-100000000 ---p 00000000 00:00 0 \n"
	"100000000-100010000 rw-p 00000000 00:00 0 [heap]\n"
	"7f3b20000000-7f3b206f9000 rw-p 00000000 00:00 0 \n"
	"7f3b206f9000-7f3b24000000 ---p 00000000 00:00 0 \n"
	"7f3b8f000000-7f3b8f400000 rwxp 00000000 00:00 0 \n"
	"7f3b8f400000-7f3b9e000000 ---p 00000000 00:00 0 \n"
	"7f3bacc52000-7f3bad9aa000 r-xp 00252000 fe:00 5 /usr/lib/jvm/lib/server/libjvm.so\n"
	"7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0 [stack]\n";

Test(generic, maps_view_of_a_heap)
{
	struct os_gen_maps m;

	os_gen_maps_init(&m);
	cr_assert_eq(os_maps_foreach_text(jvm_maps, maps_cb, &m), 0);
	os_gen_maps_end(&m);
	cr_expect(m.vm);
	cr_expect_str_eq(m.vm_lib, "libjvm.so");
	cr_expect_eq(m.heap_lo, 0x80000000, "0x%llx", (unsigned long long)m.heap_lo);
	cr_expect_eq(m.heap_hi, 0x100000000, "0x%llx", (unsigned long long)m.heap_hi);

	/* a heap smaller than the class space: the most committed wins */
	os_gen_maps_init(&m);
	cr_assert_eq(os_maps_foreach_text(
			     "e0000000-f7000000 rw-p 00000000 00:00 0 \n"
			     "f7000000-100000000 ---p 00000000 00:00 0 \n"
			     "7f18ff000000-7f18ff100000 rw-p 00000000 00:00 0 \n"
			     "7f18ff100000-7f1940000000 ---p 00000000 00:00 0 \n"
			     "7f3bacc52000-7f3bad9aa000 r-xp 00252000 fe:00 5 /jvm/libjvm.so\n",
			     maps_cb, &m),
		     0);
	os_gen_maps_end(&m);
	cr_expect_eq(m.heap_lo, 0xe0000000, "0x%llx", (unsigned long long)m.heap_lo);
	cr_expect_eq(m.heap_hi, 0x100000000, "0x%llx", (unsigned long long)m.heap_hi);

	/* no VM library, no uncommitted part: no heap */
	os_gen_maps_init(&m);
	cr_assert_eq(os_maps_foreach_text("10000-20000 rw-p 00000000 00:00 0 \n"
					  "20000-30000 r-xp 00000000 08:01 1 /bin/cat\n",
					  maps_cb, &m),
		     0);
	os_gen_maps_end(&m);
	cr_expect_not(m.vm);
	cr_expect_eq(m.heap_hi, 0);
}

/* ---- attribution: a heap whose objects nobody tracks (attrib.c) -------- */

#define FPID 999999997u /* no such process: nothing is read from /proc */
#define FHEAP 0x20000000ULL

static struct os_tasks tasks;
static struct os_attrib at;

static bool f_in_heap(struct os_runtime *rt, uint32_t asid, uint64_t addr)
{
	(void)rt;
	(void)asid;
	return addr >= FHEAP && addr < FHEAP + 0x1000000;
}

static uint32_t f_miss(void *arg, struct os_aspace *as, uint64_t addr)
{
	uint64_t word = 0x1000000000000001ULL;

	(void)arg;
	(void)addr;
	return os_attrib_context(&at, as->id, os_attrib_path(&at, as->id, &word, 1));
}

static void feed(struct os_event *ev)
{
	struct os_obj_event oe;

	ev->len = os_event_len(ev->nframes);
	if (os_attrib_prepare(&at, ev, &oe))
		os_attrib_event(&at, &oe);
}

static void mmap_event(uint32_t pid, uint64_t addr, uint64_t size, int prot, int flags,
		       uint64_t site)
{
	uint64_t buf[16] = { 0 };
	struct os_event *ev = (struct os_event *)buf;

	ev->type = OS_EV_MMAP;
	ev->pid = ev->tid = pid;
	ev->addr = addr;
	ev->size = size;
	ev->aux = (uint32_t)prot | (uint64_t)(uint32_t)flags << 32;
	ev->nframes = 2;
	ev->frames[0] = site;
	ev->frames[1] = 0x400100;
	feed(ev);
}

static uint32_t charge(uint32_t pid, uint64_t addr)
{
	struct os_aspace *as = os_tasks_aspace(&tasks, pid);
	uint64_t leaf = 0x400500;
	uint32_t acc;

	cr_assert_not_null(as);
	return os_attrib_charge(&at, as->id, addr, 0x7fff0000,
				os_attrib_path(&at, as->id, &leaf, 1), &acc);
}

Test(generic, opaque_heap_skips_its_own_mappings)
{
	struct os_runtime_ops ops = { .name = "fake", .in_heap = f_in_heap };
	struct os_runtime rt = { &ops, NULL };
	uint32_t mapping_ci, ci;

	os_tasks_init(&tasks, NULL);
	cr_assert_eq(os_attrib_init(&at, &tasks), 0);
	at.heap_miss = f_miss;
	/* the commit of the heap's first 1 MiB, made before the runtime knew
	 * its heap: a native mapping (once the heap is known, attrib.c tracks
	 * no mapping inside it: below) */
	mmap_event(FPID, FHEAP, 0x100000, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, 0x400800);
	at.rt = &rt;
	mapping_ci = charge(FPID, FHEAP + 0x10);
	cr_assert_neq(mapping_ci, OS_NONE, "without heap_opaque the mapping takes it");
	/* heap_opaque: the same address goes to heap_miss's context */
	ops.heap_opaque = (bool (*)(struct os_runtime *, uint32_t, uint64_t))f_in_heap;
	ci = charge(FPID, FHEAP + 0x10);
	cr_assert_neq(ci, OS_NONE);
	cr_expect_neq(ci, mapping_ci);
	cr_expect_eq(at.ctx[mapping_ci].samples, 1);
	cr_expect_eq(at.ctx[ci].samples, 1);
	cr_expect_eq(at.c.samples_java_heap, 2);
	/* a commit made once the heap is known is no object: heap_miss's */
	ops.heap_opaque = NULL;
	mmap_event(FPID, FHEAP + 0x100000, 0x100000, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, 0x400810);
	cr_expect_not(os_iv_lookup(os_tasks_aspace(&tasks, FPID)->objects, FHEAP + 0x100010, NULL,
				   NULL, NULL), "a mapping inside the managed heap was tracked");
	cr_expect_eq(charge(FPID, FHEAP + 0x100010), ci);
	/* outside the heap the mapping rules as before */
	mmap_event(FPID, 0x30000000, 0x100000, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, 0x400900);
	cr_expect_neq(charge(FPID, 0x30000010), ci);
	os_attrib_destroy(&at);
	os_tasks_destroy(&tasks);
}

/* ---- the adapter over this process, libjvm.so loaded -------------------- */

static void *load_libjvm(void)
{
	glob_t gl;
	void *h = NULL;

	if (glob("/usr/lib/jvm/*/lib/server/libjvm.so", 0, NULL, &gl) != 0)
		return NULL;
	for (size_t i = 0; i < gl.gl_pathc && !h; i++)
		h = dlopen(gl.gl_pathv[i], RTLD_LAZY | RTLD_LOCAL);
	globfree(&gl);
	return h;
}

static uint32_t dp_miss(void *arg, struct os_aspace *as, uint64_t addr)
{
	struct os_runtime *rt = arg;

	return rt->ops->heap_miss(rt, as, addr);
}

/* Tasks and attribution over this very process, rt their runtime (made
 * with &at): its address space. */
static struct os_aspace *over_us(struct os_runtime *rt, struct os_symbolizer *sym)
{
	struct os_aspace *as;

	cr_assert_not_null(rt);
	os_tasks_init(&tasks, sym);
	cr_assert_eq(os_attrib_init(&at, &tasks), 0);
	at.rt = rt;
	at.heap_miss = dp_miss;
	at.heap_miss_arg = rt;
	as = os_tasks_aspace(&tasks, (uint32_t)getpid());
	cr_assert_not_null(as);
	return as;
}

Test(generic, heap_from_the_vms_reservations)
{
	void *jvm = load_libjvm();
	uint32_t pid = (uint32_t)getpid();
	struct os_runtime *g;
	struct os_aspace *as;
	uint64_t in_jvm, in_libc = (uint64_t)(uintptr_t)&malloc;
	const uint64_t heap = 0x7e0000000000ULL, gib = 1ULL << 30;
	const char *name;
	uint32_t ci, mapping_ci;
	int nr = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;

	if (!jvm)
		cr_skip_test("no libjvm.so under /usr/lib/jvm/*/lib/server");
	in_jvm = (uint64_t)(uintptr_t)dlsym(jvm, "JNI_CreateJavaVM");
	cr_assert_neq(in_jvm, 0);
	g = os_generic_new(&at, NULL, 0);
	as = over_us(g, NULL);
	/* before any reservation: no heap */
	cr_expect_not(g->ops->in_heap(g, as->id, heap + 0x1000));
	/* the VM's: 1 GiB (the heap) and 256 MiB; libc's arena of 2 GiB is not the VM's */
	mmap_event(pid, heap, gib, PROT_NONE, nr, in_jvm);
	mmap_event(pid, heap + 2 * gib, gib / 4, PROT_NONE, nr, in_jvm);
	mmap_event(pid, heap + 4 * gib, 2 * gib, PROT_NONE, nr, in_libc);
	cr_expect(g->ops->in_heap(g, as->id, heap));
	cr_expect(g->ops->in_heap(g, as->id, heap + gib - 1));
	cr_expect_not(g->ops->in_heap(g, as->id, heap + gib));
	cr_expect_not(g->ops->in_heap(g, as->id, heap + 2 * gib), "the smaller one");
	cr_expect_not(g->ops->in_heap(g, as->id, heap + 4 * gib), "libc's");
	/* committed piecewise: the commit lies in the managed heap, no object
	 * (attrib.c born asks in_heap) */
	mmap_event(pid, heap, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		   in_jvm);
	cr_expect_not(os_iv_lookup(as->objects, heap + 0x10, NULL, NULL, NULL));
	ci = charge(pid, heap + 0x10);
	cr_assert_neq(ci, OS_NONE);
	cr_expect_eq(g->ops->name_word(g, as->id, 0x1000000000000001ULL, &name, NULL, NULL),
		     OS_RT_WORD_SYNTHETIC);
	{
		uint64_t frames[4];
		uint32_t asid, n = os_attrib_unpath(&at, at.ctx[ci].node, frames, 4, &asid);

		cr_assert_eq(n, 1, "the line's path is its one synthetic word");
		cr_expect_eq(g->ops->name_word(g, asid, frames[0], &name, NULL, NULL),
			     OS_RT_WORD_SYNTHETIC);
		cr_expect_str_eq(name, "[managed heap of an unknown runtime: objects not identified]");
	}
	/* a native mapping outside the heap is an object as ever */
	mmap_event(pid, heap + 3 * gib, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		   in_jvm);
	mapping_ci = charge(pid, heap + 3 * gib + 0x10);
	cr_expect_neq(mapping_ci, OS_NONE);
	cr_expect_neq(mapping_ci, ci);
	cr_expect_eq(at.c.samples_java_heap, 1);
	/* trimmed: the top 256 MiB given back */
	{
		uint64_t buf[8] = { 0 };
		struct os_event *ev = (struct os_event *)buf;

		ev->type = OS_EV_MUNMAP;
		ev->pid = ev->tid = pid;
		ev->addr = heap + gib - gib / 4;
		ev->size = gib / 4;
		feed(ev);
	}
	cr_expect_not(g->ops->in_heap(g, as->id, heap + gib - 1));
	cr_expect(g->ops->in_heap(g, as->id, heap + gib / 2));
	/* threads of a VM */
	cr_expect_eq(g->ops->thread_kind(g, pid, "C1 CompilerThre"), OS_THR_JIT);
	cr_expect_eq(g->ops->thread_kind(g, 999999996u, "C1 CompilerThre"), -1, "no VM");
	/* another runtime claimed it: do not know from now on */
	g->ops->forget(g, as->id);
	cr_expect_not(g->ops->in_heap(g, as->id, heap + 0x10));
	cr_expect_eq(g->ops->thread_kind(g, pid, "C1 CompilerThre"), -1);
	g->ops->destroy(g);
	os_attrib_destroy(&at);
	os_tasks_destroy(&tasks);
}

Test(generic, notes_rendered)
{
	struct os_profile *p = os_profile_new();
	uint32_t grp;
	char buf[2048];

	cr_assert_not_null(p);
	grp = os_profile_note_group(p, "generic.heap");
	os_profile_note_u64(p, grp, "pid", 42);
	os_profile_note_str(p, grp, "library", "libj9vm29.so");
	os_profile_note_u64(p, grp, "from", 1);
	os_profile_note_u64(p, grp, "lo", 0x80000000);
	os_profile_note_u64(p, grp, "hi", 0x100000000);
	os_profile_note_u64(p, grp, "samples", 7);
	cr_assert_gt(os_generic_render_note(p, &p->note_counters[0], buf, sizeof(buf)), 0);
	cr_expect(strstr(buf, "[0x80000000, 0x100000000) (2048 MiB"), "%s", buf);
	cr_expect(strstr(buf, "libj9vm29.so"), "%s", buf);
	cr_expect(strstr(buf, "7 samples"), "%s", buf);
	cr_expect(strstr(buf, "objects not identified"), "%s", buf);
	cr_expect(strstr(buf, "not guessed"), "%s", buf);
	grp = os_profile_note_group(p, "generic.jit");
	os_profile_note_u64(p, grp, "pid", 42);
	os_profile_note_u64(p, grp, "map", 0);
	cr_assert_gt(os_generic_render_note(p, &p->note_counters[1], buf, sizeof(buf)), 0);
	cr_expect(strstr(buf, "no /tmp/perf-42.map"), "%s", buf);
	os_profile_free(p);
}

static void move_event(struct os_runtime *g, struct os_aspace *as, uint64_t src, uint64_t dst,
		       uint64_t n)
{
	struct os_event ev = { .type = OS_EV_MOVE, .pid = as->pid, .tid = as->pid, .addr = dst,
			       .size = n, .aux = src };
	struct os_obj_event oe;

	cr_expect_not(g->ops->prepare(g, as, &ev, &oe), "a copy moves no tracked object");
}

/* --runtime generic: wanted alone, the HotSpot side off in the target
 * (OS_SHM_F_RT_GENERIC), GC threads' copies logged (OS_SHM_F_MOVES) and
 * counted when inside the managed heap. */
Test(generic, forced_adapter_counts_gc_copies_in_the_heap)
{
	struct os_opts forced = { .runtime = "generic" }, hs = { .runtime = "hotspot" }, aut = { 0 };
	void *jvm = load_libjvm();
	uint32_t pid = (uint32_t)getpid();
	const uint64_t heap = 0x7e0000000000ULL, gib = 1ULL << 30;
	struct os_profile *p;
	struct os_runtime *g;
	struct os_aspace *as;
	char buf[1024] = "";

	cr_expect(os_generic_wanted(&aut));
	cr_expect_eq(os_generic_shm_flags(&aut), 0);
	cr_expect_not(os_generic_wanted(&hs));
	cr_expect(os_runtime_selected(&hs, "hotspot"));
	cr_expect_not(os_runtime_selected(&forced, "hotspot"), "HotSpot stays off when forced");
	cr_expect(os_generic_wanted(&forced));
	cr_expect_eq(os_generic_shm_flags(&forced), OS_SHM_F_RT_GENERIC | OS_SHM_F_MOVES);
	if (!jvm) {
		os_generic_wanted(NULL);
		cr_skip_test("no libjvm.so under /usr/lib/jvm/*/lib/server");
	}
	g = os_generic_create(&at, NULL); /* forced: os_generic_wanted saw it */
	os_generic_wanted(NULL);
	as = over_us(g, NULL);
	mmap_event(pid, heap, gib, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		   (uint64_t)(uintptr_t)dlsym(jvm, "JNI_CreateJavaVM"));
	move_event(g, as, heap + 0x1000, heap + 0x100000, 4096);
	move_event(g, as, heap + 0x2000, heap + 0x200000, 1 << 20);
	move_event(g, as, 0x1000, heap + 0x300000, 64);       /* from outside: not the heap's */
	move_event(g, as, heap + gib - 8, heap + 0x400000, 64); /* runs past its end */
	p = os_profile_new();
	cr_assert_not_null(p);
	g->ops->notes(g, p);
	for (uint32_t i = 0; i < p->nnote_counters; i++)
		if (!strcmp(p->strings[p->note_counters[i].kind], "generic.moves"))
			os_generic_render_note(p, &p->note_counters[i], buf, sizeof(buf));
	cr_expect(strstr(buf, "copied 1 MiB in 2 copies inside the managed heap"), "%s", buf);
	cr_expect(strstr(buf, "2 more copies"), "%s", buf);
	os_profile_free(p);
	g->ops->destroy(g);
	os_attrib_destroy(&at);
	os_tasks_destroy(&tasks);
}

/* A specific runtime that claims what announces a JVM (as HotSpot's
 * OS_EV_JVM does). */
static bool claims_jvm(struct os_runtime *rt, struct os_aspace *as, const struct os_event *ev)
{
	(void)rt;
	(void)as;
	return ev->type == OS_EV_JVM;
}

/* Auto mode: the generic adapter answers for a VM nobody owns, waits its
 * grace time before it charges heap samples to its line, and stops
 * answering once a specific runtime claims the address space (forget). */
Test(generic, auto_mode_yields_to_a_specific_runtime)
{
	static const struct os_runtime_ops specific_ops = { .name = "specific",
							    .claim = claims_jvm };
	struct os_runtime specific = { &specific_ops, NULL };
	void *jvm = load_libjvm();
	uint32_t pid = (uint32_t)getpid();
	const uint64_t heap = 0x7e0000000000ULL;
	struct os_runtime *rts[2], *d, *g;
	struct os_aspace *as;
	struct os_event ev = { .type = OS_EV_JVM };
	struct os_obj_event oe;

	if (!jvm)
		cr_skip_test("no libjvm.so under /usr/lib/jvm/*/lib/server");
	g = os_generic_new(&at, NULL, 3600ULL * 1000000000ULL); /* a grace never over */
	cr_assert_not_null(g);
	rts[0] = &specific;
	rts[1] = g;
	d = os_runtimes_of(rts, 2);
	as = over_us(d, NULL);
	mmap_event(pid, heap, 1ULL << 30, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		   (uint64_t)(uintptr_t)dlsym(jvm, "JNI_CreateJavaVM"));
	cr_expect(d->ops->in_heap(d, as->id, heap + 0x10), "nobody owns it: the generic answers");
	cr_expect_eq(charge(pid, heap + 0x10), OS_NONE, "within its grace: counted only");
	cr_expect_eq(at.c.samples_java_heap, 1);
	cr_expect_eq(at.nctx, 0, "the reservation is the heap, no object; no heap line made");
	ev.pid = ev.tid = pid;
	d->ops->prepare(d, as, &ev, &oe); /* the specific runtime announces its JVM */
	cr_expect_not(d->ops->in_heap(d, as->id, heap + 0x10), "claimed: the generic forgot it");
	cr_expect_not(g->ops->in_heap(g, as->id, heap + 0x10));
	d->ops->destroy(d);
	os_attrib_destroy(&at);
	os_tasks_destroy(&tasks);
}

/* The perf map lies in a world-writable /tmp: a link planted there is not
 * followed (the note says it was not read); a regular file of the
 * process's user is read, and left in place (it is not objscope's). */
Test(generic, perf_map_checked_before_it_is_read)
{
	void *jvm = load_libjvm();
	uint32_t pid = (uint32_t)getpid();
	struct os_symbolizer *sym;
	struct os_runtime *g;
	struct os_profile *p;
	char path[64], buf[1024];
	FILE *f;

	if (!jvm)
		cr_skip_test("no libjvm.so under /usr/lib/jvm/*/lib/server");
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
	for (int planted = 1; planted >= 0; planted--) {
		unlink(path);
		if (planted) {
			cr_assert_eq(symlink("/etc/hostname", path), 0);
		} else {
			f = fopen(path, "w");
			cr_assert_not_null(f);
			fprintf(f, "7f0000001000 100 Lfoo/Bar;::baz\n");
			fclose(f);
		}
		sym = os_sym_new();
		cr_assert_not_null(sym);
		g = os_generic_new(&at, sym, 0);
		over_us(g, sym);
		mmap_event(pid, 0x7e0000000000ULL, 1ULL << 30, PROT_NONE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			   (uint64_t)(uintptr_t)dlsym(jvm, "JNI_CreateJavaVM"));
		g->ops->before_symbolize(g);
		p = os_profile_new();
		cr_assert_not_null(p);
		g->ops->notes(g, p);
		buf[0] = 0;
		for (uint32_t i = 0; i < p->nnote_counters; i++)
			if (!strcmp(p->strings[p->note_counters[i].kind], "generic.jit"))
				os_generic_render_note(p, &p->note_counters[i], buf, sizeof(buf));
		if (planted)
			cr_expect(strstr(buf, "was not read"), "%s", buf);
		else
			cr_expect(strstr(buf, "JIT code named from"), "%s", buf);
		cr_expect_eq(access(path, F_OK), 0, "the map was removed");
		os_profile_free(p);
		g->ops->destroy(g);
		os_attrib_destroy(&at);
		os_tasks_destroy(&tasks);
		os_sym_free(sym);
	}
	unlink(path);
}
