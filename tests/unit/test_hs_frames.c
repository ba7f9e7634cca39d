/* test_hs_frames.c - the HotSpot frame stepper (runtimes/hotspot/hs_frames.h) over a
 * synthetic code heap and stack: a segment map with hops, used and unused
 * blocks, compiled frames by their frame sizes, an interpreted frame by
 * rbp and its sender-sp slot, a stub and native frames by frame pointer,
 * and what must end a walk. Then the collector's Java walk (the HotSpot
 * adapter's java_walk op) over the same memory, read back through
 * vmStructs tables built in this process (process_vm_readv on ourselves):
 * frame words, the stop at an implausible return pc, the blob cache and its
 * flush at a collection. */
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attacher/core/attrib.h"
#include "runtimes/hotspot/hotspot.h"
#include "runtimes/runtime.h"
#include "attacher/core/tasks.h"
#include "runtimes/hotspot/hs_frames.h"
#include "common/shm.h"
#include "symbolizer/symbolizer.h"

#define LOG2 6
#define SEG (1u << LOG2)
#define NSEG 64
#define FREE 0xff

/* A fake CodeBlob: the fields at these offsets, code from CB_CODE on. */
#define CB_SIZE 0x00      /* int: bytes of the blob */
#define CB_FS 0x08        /* int: frame size in words */
#define CB_COMPLETE 0x0c  /* int: frame complete offset */
#define CB_BEGIN 0x10     /* address: code begin */
#define CB_CODE 0x20
#define BLOCK 16          /* sizeof(HeapBlock); _used at 8 */

static uint8_t code[NSEG * SEG] __attribute__((aligned(4096)));
static uint8_t segmap[NSEG];
static uint64_t seg_high;          /* CodeHeap::_segmap._high */
static uint8_t interp[512] __attribute__((aligned(64)));
static uint64_t stk[64];           /* the sampled stack */

static struct os_hsf_layout L;

static uint64_t A(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

static uint64_t blk(uint32_t seg)
{
	return A(code) + (uint64_t)seg * SEG;
}

/* the CodeBlob of the block at segment seg, and its code */
static uint64_t cb_of(uint32_t seg)
{
	return blk(seg) + BLOCK;
}

static uint64_t code_of(uint32_t seg)
{
	return cb_of(seg) + CB_CODE;
}

static void put32(uint64_t addr, int32_t v)
{
	memcpy((void *)(uintptr_t)addr, &v, 4);
}

/* A used (or unused) block of nseg segments at seg: the segment map hops
 * back by at most 5 (as JDK 17 caps its hops), the blob's fields set. */
static void mk_block(uint32_t seg, uint32_t nseg, bool used, int32_t frame_size,
		     int32_t complete)
{
	uint64_t cb = cb_of(seg), begin = code_of(seg);

	for (uint32_t k = 0; k < nseg; k++)
		segmap[seg + k] = (uint8_t)(k == 0 ? 0 : (k % 5 == 0 ? 5 : k % 5));
	code[seg * SEG + 8] = used;
	put32(cb + CB_SIZE, (int32_t)(nseg * SEG - BLOCK));
	put32(cb + CB_FS, frame_size);
	put32(cb + CB_COMPLETE, complete);
	memcpy((void *)(uintptr_t)(cb + CB_BEGIN), &begin, 8);
}

/* Blocks: A (compiled, 4 words) at 2..5, B (compiled, 6 words) at 10..30,
 * an unused block at 32..33, S (a stub without a frame size of its own,
 * stepped by rbp) at 36..37; the rest is free. */
#define SEG_A 2
#define SEG_B 10
#define SEG_U 32
#define SEG_S 36

static uint64_t N1, N2; /* native return pcs (this binary's code) */

static void native_one(void)
{
}

static void native_two(void)
{
}

static void heap_setup(void)
{
	memset(code, 0, sizeof(code));
	memset(segmap, FREE, sizeof(segmap));
	mk_block(SEG_A, 4, true, 4, 8);
	mk_block(SEG_B, 21, true, 6, 8);
	mk_block(SEG_U, 2, false, 4, 0);
	/* frame size -1 (no_frame_size), as C1's runtime stubs have it */
	mk_block(SEG_S, 2, true, -1, -1);
	seg_high = A(segmap) + NSEG;
	memset(&L, 0, sizeof(L));
	L.nheaps = 1;
	L.heap[0].lo = A(code);
	L.heap[0].hi = A(code) + sizeof(code);
	L.heap[0].seg_lo = A(segmap);
	L.heap[0].seg_high_at = A(&seg_high);
	L.heap[0].log2_seg = LOG2;
	L.code_lo = A(code);
	L.code_hi = A(code) + sizeof(code);
	L.interp_lo = A(interp);
	L.interp_hi = A(interp) + sizeof(interp);
	L.block_size = BLOCK;
	L.used_off = 8;
	L.frame_size_off = CB_FS;
	L.code_begin_off = CB_BEGIN;
	L.complete_off = CB_COMPLETE;
	L.sender_sp_off = -8;
	L.ok = true;
	N1 = A((const void *)native_one) + 1;
	N2 = A((const void *)native_two) + 1;
}

/* The Method* of the interpreted frame (named by the adapter test). */
struct f_symbol { uint32_t hash; uint16_t length; uint8_t body[64]; };
struct f_klass { uint64_t pad[2]; struct f_symbol *name; };
struct f_cpool { uint64_t pad[3]; struct f_klass *holder; struct f_symbol *slots[8]; };
struct f_constm { uint64_t pad; struct f_cpool *constants; uint16_t name_index, sig_index; };
struct f_method { uint64_t pad; struct f_constm *cm; };

static struct f_symbol sym_holder = { 0, 9, "pkg/Walks" };
static struct f_symbol sym_meth = { 0, 4, "loop" };
static struct f_klass k_holder = { { 0, 0 }, &sym_holder };
static struct f_cpool cpool = { { 0, 0, 0 }, &k_holder, { NULL, &sym_meth } };
static struct f_constm constm = { 0, &cpool, 1, 0 };
static struct f_method method = { 0, &constm };

/* compiled B (leaf) -> interpreted -> compiled A (its unextended sp from
 * the interpreter's sender-sp slot) -> stub S (frame pointer) -> native
 * N1 -> native N2 -> end (return pc 0). */
static void stack_setup(void)
{
	memset(stk, 0, sizeof(stk));
	/* B's frame: 6 words from stk[0]; saved rbp and return pc on top */
	stk[4] = A(&stk[12]);
	stk[5] = A(interp) + 0x40;
	/* the interpreter frame: fp = &stk[12] */
	stk[9] = A(&method);          /* Method* slot, fp - 24 */
	stk[11] = A(&stk[16]);        /* sender sp, fp - 8: A's unextended sp */
	stk[12] = 0x1234;             /* saved rbp: A keeps none (garbage) */
	stk[13] = code_of(SEG_A) + 0x10;
	/* A's frame: 4 words from stk[16] */
	stk[18] = A(&stk[22]);
	stk[19] = code_of(SEG_S) + 4;
	/* S by frame pointer: fp = &stk[22] */
	stk[22] = A(&stk[26]);
	stk[23] = N1;
	/* native N1: fp = &stk[26] */
	stk[26] = A(&stk[30]);
	stk[27] = N2;
	/* native N2: fp = &stk[30], return pc 0 */
	stk[30] = A(&stk[40]);
	stk[31] = 0;
}

static bool stack_rd(void *arg, uint64_t addr, void *buf, size_t len)
{
	(void)arg;
	if (addr < A(stk) || addr + len > A(stk) + sizeof(stk) || addr + len < addr)
		return false;
	memcpy(buf, (void *)(uintptr_t)addr, len);
	return true;
}

static int code_reads;

static bool mem_rd(void *arg, uint64_t addr, void *buf, size_t len)
{
	bool in_code = addr >= A(code) && addr + len <= A(code) + sizeof(code);
	bool in_map = addr >= A(segmap) && addr + len <= A(segmap) + sizeof(segmap);
	bool in_high = addr == A(&seg_high) && len == 8;

	(void)arg;
	if (!in_code && !in_map && !in_high)
		return false;
	code_reads++;
	memcpy(buf, (void *)(uintptr_t)addr, len);
	return true;
}

static bool find(void *arg, uint64_t pc, struct os_hsf_blob *b)
{
	return os_hsf_blob(arg, mem_rd, NULL, pc, b);
}

static bool step(struct os_hsf_frame *f, bool leaf)
{
	return os_hsf_step(&L, find, &L, stack_rd, NULL, f, leaf);
}

static void expect_frame(const struct os_hsf_frame *f, uint64_t pc, uint64_t sp, uint64_t fp,
			 const char *what)
{
	cr_expect_eq(f->pc, pc, "%s: pc %#llx, want %#llx", what, (unsigned long long)f->pc,
		     (unsigned long long)pc);
	cr_expect_eq(f->sp, sp, "%s: sp %#llx, want %#llx", what, (unsigned long long)f->sp,
		     (unsigned long long)sp);
	cr_expect_eq(f->fp, fp, "%s: fp %#llx, want %#llx", what, (unsigned long long)f->fp,
		     (unsigned long long)fp);
}

TestSuite(hs_frames, .init = heap_setup);

Test(hs_frames, blob_through_hops)
{
	struct os_hsf_blob b;

	/* the last segment of B: hops 5, 5, 5, 5 back to its first */
	cr_assert(os_hsf_blob(&L, mem_rd, NULL, blk(SEG_B + 20) + 7, &b));
	cr_expect_eq(b.start, cb_of(SEG_B));
	cr_expect_eq(b.code_begin, code_of(SEG_B));
	cr_expect_eq(b.complete_pc, code_of(SEG_B) + 8);
	cr_expect_eq(b.frame_size, 6);
	cr_assert(os_hsf_blob(&L, mem_rd, NULL, blk(SEG_B + 13), &b));
	cr_expect_eq(b.start, cb_of(SEG_B));
	cr_assert(os_hsf_blob(&L, mem_rd, NULL, code_of(SEG_S), &b));
	cr_expect_eq(b.frame_size, 0);
	cr_expect_eq(b.complete_pc, UINT64_MAX, "no frame-complete offset");
	/* the first word of a block is its header: pc before code_begin */
	cr_expect_not(os_hsf_blob(&L, mem_rd, NULL, blk(SEG_A), &b));
}

Test(hs_frames, blob_lookup_failures)
{
	struct os_hsf_blob b;

	cr_expect_not(os_hsf_blob(&L, mem_rd, NULL, blk(40) + 8, &b), "free segment");
	cr_expect_not(os_hsf_blob(&L, mem_rd, NULL, blk(SEG_U + 1) + 8, &b), "unused block");
	cr_expect_not(os_hsf_blob(&L, mem_rd, NULL, A(code) - 1, &b), "below the heap");
	/* a segment beyond the segment map's committed end */
	seg_high = A(segmap) + SEG_B + 5;
	cr_expect_not(os_hsf_blob(&L, mem_rd, NULL, blk(SEG_B + 12), &b), "uncommitted map");
	cr_expect(os_hsf_blob(&L, mem_rd, NULL, blk(SEG_B + 3), &b), "committed part");
	seg_high = A(segmap) + NSEG;
	/* a hop beyond the first segment (a corrupt map) */
	segmap[1] = 5;
	cr_expect_not(os_hsf_blob(&L, mem_rd, NULL, blk(1) + 8, &b), "hop beyond the map");
	segmap[1] = FREE;
	/* an unreadable map */
	L.heap[0].seg_lo = 8;
	cr_expect_not(os_hsf_blob(&L, mem_rd, NULL, code_of(SEG_A), &b), "map unreadable");
}

Test(hs_frames, compiled_interpreted_compiled_native)
{
	struct os_hsf_frame f = { code_of(SEG_B) + 0x30, A(&stk[0]), 0xdead, 0 };

	stack_setup();
	cr_assert(step(&f, true), "compiled leaf B");
	expect_frame(&f, A(interp) + 0x40, A(&stk[6]), A(&stk[12]), "B -> interpreted");
	cr_assert(step(&f, false), "interpreted");
	expect_frame(&f, code_of(SEG_A) + 0x10, A(&stk[16]), 0x1234,
		     "interpreted -> A (unextended sp from the sender-sp slot)");
	cr_assert(step(&f, false), "compiled A");
	expect_frame(&f, code_of(SEG_S) + 4, A(&stk[20]), A(&stk[22]), "A -> stub S");
	cr_assert(step(&f, false), "stub S by frame pointer");
	expect_frame(&f, N1, A(&stk[24]), A(&stk[26]), "S -> native");
	cr_assert(step(&f, false), "native N1");
	expect_frame(&f, N2, A(&stk[28]), A(&stk[30]), "native -> native");
	cr_expect_not(step(&f, false), "a return pc of 0 ends the walk");
	expect_frame(&f, N2, A(&stk[28]), A(&stk[30]), "an ended walk leaves the frame");
}

Test(hs_frames, what_ends_a_walk)
{
	struct os_hsf_frame f;

	stack_setup();
	/* a pc in a free segment or an unused block: no rule holds */
	f = (struct os_hsf_frame){ blk(40) + 8, A(&stk[0]), A(&stk[22]), 0 };
	cr_expect_not(step(&f, false), "free segment");
	f = (struct os_hsf_frame){ blk(SEG_U + 1) + 8, A(&stk[0]), A(&stk[22]), 0 };
	cr_expect_not(step(&f, false), "unused block");
	/* a leaf in A's prologue (before its frame is complete) */
	f = (struct os_hsf_frame){ code_of(SEG_A) + 2, A(&stk[16]), 0x1234, 0 };
	cr_expect_not(step(&f, true), "prologue leaf");
	cr_expect(step(&f, false), "the same pc as a return address is past the prologue");
	/* sp must grow: a frame pointer below the frame's sp */
	f = (struct os_hsf_frame){ N1, A(&stk[30]), A(&stk[22]), 0 };
	cr_expect_not(step(&f, false), "native frame whose fp lies below its sp");
	f = (struct os_hsf_frame){ N1, A(&stk[30]), A(&stk[22]) + 4, 0 };
	cr_expect_not(step(&f, false), "unaligned frame pointer");
	/* an interpreted frame whose sender sp lies inside its own frame */
	stk[11] = A(&stk[12]);
	f = (struct os_hsf_frame){ A(interp) + 0x40, A(&stk[6]), A(&stk[12]), 0 };
	cr_expect_not(step(&f, false), "sender sp below fp + 16");
	/* reads out of the stack copy */
	f = (struct os_hsf_frame){ code_of(SEG_B) + 0x30, A(&stk[60]), 0, 0 };
	cr_expect_not(step(&f, true), "B's frame runs past the copy");
	f = (struct os_hsf_frame){ N1, A(&stk[0]), A(&stk[63]), 0 };
	cr_expect_not(step(&f, false), "return pc past the copy");
	f = (struct os_hsf_frame){ A(interp), A(&stk[0]), A(&stk[1]) - 64, 0 };
	cr_expect_not(step(&f, false), "interpreter slots below the copy");
}

/* ---- the collector's Java walk: the HotSpot adapter's java_walk op ---- */

struct s_ent { const char *type, *field, *tstr; int32_t is_static; uint64_t offset; void *addr; };
struct t_ent { const char *type, *super; int32_t oop, integer, unsig; uint64_t size; };
struct i_ent { const char *name; int32_t value; };
struct l_ent { const char *name; uint64_t value; };

struct f_vspace { uint64_t low_boundary, high_boundary, low, high; };
struct f_codeheap { uint64_t pad; struct f_vspace memory, segmap; int32_t log2; };
struct f_garray { int32_t len, max; struct f_codeheap **data; };

static struct f_codeheap fheap;
static struct f_codeheap *fheaps[1] = { &fheap };
static struct f_garray fgarray = { 1, 1, fheaps };
static struct f_garray *code_heaps = &fgarray;
static uint64_t code_low, code_high;

#define VS(f) offsetof(struct f_vspace, f)

static struct s_ent S[] = {
	{ "Klass", "_name", "Symbol*", 0, offsetof(struct f_klass, name), NULL },
	{ "Symbol", "_length", "u2", 0, offsetof(struct f_symbol, length), NULL },
	{ "Symbol", "_body[0]", "u1", 0, offsetof(struct f_symbol, body), NULL },
	{ "Method", "_constMethod", "ConstMethod*", 0, offsetof(struct f_method, cm), NULL },
	{ "ConstMethod", "_constants", "ConstantPool*", 0, offsetof(struct f_constm, constants),
	  NULL },
	{ "ConstMethod", "_name_index", "u2", 0, offsetof(struct f_constm, name_index), NULL },
	{ "ConstantPool", "_pool_holder", "InstanceKlass*", 0, offsetof(struct f_cpool, holder),
	  NULL },
	{ "CodeCache", "_heaps", "GrowableArray<CodeHeap*>*", 1, 0, &code_heaps },
	{ "CodeCache", "_low_bound", "address", 1, 0, &code_low },
	{ "CodeCache", "_high_bound", "address", 1, 0, &code_high },
	{ "GrowableArrayBase", "_len", "int", 0, offsetof(struct f_garray, len), NULL },
	{ "GrowableArray<int>", "_data", "int*", 0, offsetof(struct f_garray, data), NULL },
	{ "CodeHeap", "_memory", "VirtualSpace", 0, offsetof(struct f_codeheap, memory), NULL },
	{ "CodeHeap", "_segmap", "VirtualSpace", 0, offsetof(struct f_codeheap, segmap), NULL },
	{ "CodeHeap", "_log2_segment_size", "int", 0, offsetof(struct f_codeheap, log2), NULL },
	{ "VirtualSpace", "_low_boundary", "char*", 0, VS(low_boundary), NULL },
	{ "VirtualSpace", "_high_boundary", "char*", 0, VS(high_boundary), NULL },
	{ "VirtualSpace", "_low", "char*", 0, VS(low), NULL },
	{ "VirtualSpace", "_high", "char*", 0, VS(high), NULL },
	{ "HeapBlock", "_header", "HeapBlock::Header", 0, 0, NULL },
	{ "HeapBlock::Header", "_used", "bool", 0, 8, NULL },
	{ "CodeBlob", "_size", "int", 0, CB_SIZE, NULL },
	{ "CodeBlob", "_frame_size", "int", 0, CB_FS, NULL },
	{ "CodeBlob", "_frame_complete_offset", "int", 0, CB_COMPLETE, NULL },
	{ "CodeBlob", "_code_begin", "address", 0, CB_BEGIN, NULL },
	{ NULL, NULL, NULL, 0, 0, NULL },
};
static struct t_ent T[] = {
	{ "ConstantPool", "Metadata", 0, 0, 0, offsetof(struct f_cpool, slots) },
	{ "HeapBlock", NULL, 0, 0, 0, BLOCK },
	{ NULL, NULL, 0, 0, 0, 0 },
};
static struct i_ent I[] = {
	{ "frame::interpreter_frame_sender_sp_offset", -1 },
	{ "frame::interpreter_frame_last_sp_offset", -2 },
	{ NULL, 0 },
};
static struct l_ent Lc[] = { { NULL, 0 } };

static void fill_info(struct os_jvm_info *info)
{
	memset(info, 0, sizeof(*info));
	info->tables[OS_JVM_STRUCTS] = (struct os_jvm_table){
		A(S), sizeof(S[0]),
		{ offsetof(struct s_ent, type), offsetof(struct s_ent, field),
		  offsetof(struct s_ent, tstr), offsetof(struct s_ent, is_static),
		  offsetof(struct s_ent, offset), offsetof(struct s_ent, addr) } };
	info->tables[OS_JVM_TYPES] = (struct os_jvm_table){
		A(T), sizeof(T[0]),
		{ offsetof(struct t_ent, type), offsetof(struct t_ent, super),
		  offsetof(struct t_ent, oop), offsetof(struct t_ent, integer),
		  offsetof(struct t_ent, unsig), offsetof(struct t_ent, size) } };
	info->tables[OS_JVM_INTS] = (struct os_jvm_table){
		A(I), sizeof(I[0]), { offsetof(struct i_ent, name), offsetof(struct i_ent, value) } };
	info->tables[OS_JVM_LONGS] = (struct os_jvm_table){
		A(Lc), sizeof(Lc[0]), { offsetof(struct l_ent, name), offsetof(struct l_ent, value) } };
	info->interp_start = A(interp);
	info->interp_end = A(interp) + sizeof(interp);
	info->mode = OS_JVM_MODE_EXACT;
	snprintf(info->gc, sizeof(info->gc), "G1");
}

static void feed(struct os_attrib *a, uint16_t type, const void *frames, uint32_t nbytes,
		 uint64_t aux)
{
	uint32_t nwords = (nbytes + 7) / 8;
	struct os_event *ev = calloc(1, OS_EVENT_FIXED + nwords * 8);
	struct os_obj_event oe;

	cr_assert_not_null(ev);
	ev->type = type;
	ev->nframes = (uint16_t)nwords;
	ev->len = OS_EVENT_FIXED + nwords * 8;
	ev->pid = ev->tid = (uint32_t)getpid();
	ev->aux = aux;
	if (nbytes)
		memcpy(ev->frames, frames, nbytes);
	os_attrib_prepare(a, ev, &oe);
	free(ev);
}

struct walk_env {
	struct os_symbolizer *sym;
	struct os_tasks tasks;
	struct os_attrib a;
	struct os_runtime *rt;
	uint32_t asid;
};

/* A JVM (this process) announced to the adapter, its code heap the one above. */
static void env_begin(struct walk_env *e, bool with_code_heap)
{
	struct os_jvm_info info;
	struct os_aspace *as;

	fheap.memory = (struct f_vspace){ A(code), A(code) + sizeof(code), A(code),
					  A(code) + sizeof(code) };
	fheap.segmap = (struct f_vspace){ A(segmap), A(segmap) + NSEG, A(segmap), A(segmap) + NSEG };
	fheap.log2 = LOG2;
	fgarray.len = with_code_heap ? 1 : 0;
	code_low = A(code);
	code_high = A(code) + sizeof(code);
	e->sym = os_sym_new();
	cr_assert_not_null(e->sym);
	os_tasks_init(&e->tasks, e->sym);
	cr_assert_eq(os_attrib_init(&e->a, &e->tasks), 0);
	e->rt = e->a.rt = os_hotspot_new(&e->a, e->sym, NULL);
	cr_assert_not_null(e->rt);
	cr_assert_not_null(e->rt->ops->java_walk);
	/* this process's executable mappings, for the native return pcs */
	as = os_tasks_aspace(&e->tasks, (uint32_t)getpid());
	cr_assert_not_null(as);
	e->asid = as->id;
	fill_info(&info);
	feed(&e->a, OS_EV_JVM, &info, sizeof(info), 0);
}

static void env_end(struct walk_env *e)
{
	e->rt->ops->destroy(e->rt);
	e->a.rt = NULL;
	os_attrib_destroy(&e->a);
	os_tasks_destroy(&e->tasks);
	os_sym_free(e->sym);
	fgarray.len = 1;
}

static uint32_t walk(struct walk_env *e, uint64_t pc, uint64_t sp, uint64_t fp, bool leaf,
		     uint64_t *frames, uint32_t max)
{
	struct os_rt_frame f = { pc, sp, fp, NULL };

	return e->rt->ops->java_walk(e->rt, e->asid, &f, leaf, stack_rd, NULL, frames, max);
}

Test(hs_frames, java_walk_frame_words)
{
	struct walk_env e;
	uint64_t frames[16], mw = OS_FRAME_METHOD | A(&method);
	const char *name = NULL;
	uint32_t n;

	stack_setup();
	env_begin(&e, true);
	n = walk(&e, code_of(SEG_B) + 0x30, A(&stk[0]), 0xdead, true, frames, 16);
	cr_assert_eq(n, 6, "B, interpreted, A, S, N1, N2: %u frames", n);
	cr_expect_eq(frames[0], code_of(SEG_B) + 0x30, "a compiled frame is its pc");
	cr_expect_eq(frames[1], mw, "the interpreted frame is its Method*");
	cr_expect_eq(e.rt->ops->name_word(e.rt, e.asid, frames[1], &name, NULL, NULL), OS_RT_WORD_FRAME);
	cr_expect_str_eq(name, "pkg.Walks.loop");
	cr_expect_eq(frames[2], code_of(SEG_A) + 0x10);
	cr_expect_eq(frames[3], code_of(SEG_S) + 4);
	cr_expect_eq(frames[4], N1, "a native caller in a known ELF mapping");
	cr_expect_eq(frames[5], N2);
	/* max frames */
	cr_expect_eq(walk(&e, code_of(SEG_B) + 0x30, A(&stk[0]), 0xdead, true, frames, 3), 3);
	cr_expect_eq(frames[2], code_of(SEG_A) + 0x10);
	/* from the interpreted frame, as a DWARF unwinding stopped there would */
	cr_expect_eq(walk(&e, A(interp) + 0x40, A(&stk[6]), A(&stk[12]), false, frames, 16), 5);
	cr_expect_eq(frames[0], mw);
	/* not the JVM's code: the caller keeps its own way */
	cr_expect_eq(walk(&e, N1, A(&stk[24]), A(&stk[26]), false, frames, 16), 0);
	cr_expect_eq(walk(&e, blk(40) + 8, A(&stk[0]), 0, true, frames, 16), 0, "free code");
	/* an implausible return pc ends the walk before it */
	stk[27] = 0x10;
	cr_expect_eq(walk(&e, code_of(SEG_B) + 0x30, A(&stk[0]), 0xdead, true, frames, 16), 5,
		     "unmapped return pc");
	stk[27] = N2;
	stk[19] = blk(40) + 8;
	cr_expect_eq(walk(&e, code_of(SEG_B) + 0x30, A(&stk[0]), 0xdead, true, frames, 16), 3,
		     "return pc into free code");
	stk[19] = code_of(SEG_S) + 4;
	/* another address space: not a JVM */
	{
		struct os_rt_frame f = { code_of(SEG_B) + 0x30, A(&stk[0]), 0, NULL };

		cr_expect_eq(e.rt->ops->java_walk(e.rt, e.asid + 7, &f, true, stack_rd, NULL,
						  frames, 16),
			     0);
	}
	env_end(&e);
}

/* A leaf at a compiled method's return poll (`cmp rsp, [r15 + poll]`
 * sampled, pc at the `ja slow; ret` after it) has popped its frame: its
 * caller's pc is at sp, rbp is the caller's again. */
Test(hs_frames, java_walk_leaf_at_return_poll)
{
	static const uint8_t tail[] = { 0x0f, 0x87, 0x10, 0x00, 0x00, 0x00, 0xc3 };
	struct walk_env e;
	uint64_t frames[16], pc = code_of(SEG_B) + 0x40;

	stack_setup();
	memcpy((void *)(uintptr_t)pc, tail, sizeof(tail));
	env_begin(&e, true);
	cr_expect_eq(walk(&e, pc, A(&stk[5]), A(&stk[12]), true, frames, 16), 6);
	cr_expect_eq(frames[0], pc);
	cr_expect_eq(frames[1], OS_FRAME_METHOD | A(&method), "the caller, interpreted");
	cr_expect_eq(frames[2], code_of(SEG_A) + 0x10);
	cr_expect_eq(walk(&e, pc, A(&stk[5]), A(&stk[12]), true, frames, 1), 1, "max 1");
	/* not a leaf (a return address there): B's frame is whole */
	cr_expect_eq(walk(&e, pc, A(&stk[0]), 0, false, frames, 16), 6);
	cr_expect_eq(frames[1], OS_FRAME_METHOD | A(&method));
	/* the short jump form */
	env_end(&e);
	pc = code_of(SEG_B) + 0x80;
	((uint8_t *)(uintptr_t)pc)[0] = 0x77;
	((uint8_t *)(uintptr_t)pc)[1] = 0x10;
	((uint8_t *)(uintptr_t)pc)[2] = 0xc3;
	env_begin(&e, true);
	cr_expect_eq(walk(&e, pc, A(&stk[5]), A(&stk[12]), true, frames, 16), 6);
	/* anything else at the leaf: its frame is whole (a return address at
	 * sp is not taken for the caller) */
	cr_expect_eq(walk(&e, code_of(SEG_B) + 0x60, A(&stk[5]), A(&stk[12]), true, frames, 16), 1,
		     "B's frame from stk[5] ends at a return pc of 0");
	env_end(&e);
}

/* Blob lookups are cached until the next collection: a frame size changed
 * behind the cache's back is seen only after a GC event. */
Test(hs_frames, java_walk_blob_cache)
{
	struct walk_env e;
	uint64_t frames[16];

	stack_setup();
	env_begin(&e, true);
	cr_assert_eq(walk(&e, code_of(SEG_A) + 0x10, A(&stk[16]), 0, false, frames, 16), 4);
	/* a blob compiled since (in segments that were free when the segment
	 * map was read): found without waiting for a flush */
	mk_block(40, 2, true, 4, 8);
	cr_expect_eq(walk(&e, code_of(40) + 0x10, A(&stk[16]), 0, false, frames, 16), 4,
		     "new blob");
	/* A's frame grows by a word: its return pc would be stk[20] = 0 */
	put32(cb_of(SEG_A) + CB_FS, 5);
	cr_expect_eq(walk(&e, code_of(SEG_A) + 0x10, A(&stk[16]), 0, false, frames, 16), 4,
		     "cached: the old frame size");
	feed(&e.a, OS_EV_GC_BEGIN, NULL, 0, 1);
	cr_expect_eq(walk(&e, code_of(SEG_A) + 0x10, A(&stk[16]), 0, false, frames, 16), 1,
		     "after a collection: read again");
	put32(cb_of(SEG_A) + CB_FS, 4);
	feed(&e.a, OS_EV_GC_END, NULL, 0, 1);
	cr_expect_eq(walk(&e, code_of(SEG_A) + 0x10, A(&stk[16]), 0, false, frames, 16), 4);
	/* a blob freed (its segments 0xff): a cached entry still answers
	 * until the flush; then the pc is in no blob */
	memset(segmap + SEG_A, FREE, 4);
	feed(&e.a, OS_EV_GC_END, NULL, 0, 2);
	cr_expect_eq(walk(&e, code_of(SEG_A) + 0x10, A(&stk[16]), 0, false, frames, 16), 0);
	env_end(&e);
}

/* A JVM whose code heaps cannot be read: no Java walks. */
Test(hs_frames, java_walk_without_code_heaps)
{
	struct walk_env e;
	uint64_t frames[16];

	stack_setup();
	env_begin(&e, false);
	cr_expect_eq(walk(&e, code_of(SEG_B) + 0x30, A(&stk[0]), 0xdead, true, frames, 16), 0);
	env_end(&e);
}
