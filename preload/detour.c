/* detour.c - x86-64 inline detours: prologue relocation with capstone into
 * trampolines near the target, 5-byte jmp patch. See detour.h. Install time
 * only: allocates (capstone, through the allocator given to init) and maps
 * pages; nothing here runs on a hot path. */
#include <capstone/capstone.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "preload/detour.h"

#define DT_JMP_LEN 5          /* e9 rel32 */
#define DT_PAGE 4096u
#define DT_SLOT 128u          /* bytes per detour in a trampoline page */
#define DT_STUB 16u           /* absolute jump to the replacement, padded */
#define DT_MAX_PAGES 64
#define DT_MAX_INSNS 8
#define DT_REACH ((int64_t)0x7fffffff - 2 * DT_PAGE)
#define DT_HINT_STEP (16ull << 20)
#define DT_HINT_TRIES 120

struct dt_page {
	uint8_t *base;
	uint32_t used; /* bytes handed out */
};

/* capstone is loaded on first use (a JVM appeared), not linked: mapping and
 * relocating it costs every target ~3 MiB of resident memory. */
static struct {
	cs_err (*open)(cs_arch, cs_mode, csh *);
	cs_err (*close)(csh *);
	cs_err (*option)(csh, cs_opt_type, size_t);
	cs_insn *(*malloc)(csh);
	void (*free)(cs_insn *, size_t);
	bool (*disasm_iter)(csh, const uint8_t **, size_t *, uint64_t *, cs_insn *);
	int state; /* 0 not tried, 1 loaded, -1 unavailable */
} dt_cs;

static int dt_load_capstone(void)
{
	static const char *const names[] = { "libcapstone.so.4", "libcapstone.so.5",
					     "libcapstone.so" };
	void *h = NULL;

	if (dt_cs.state)
		return dt_cs.state > 0 ? 0 : -ENOENT;
	dt_cs.state = -1;
	for (size_t i = 0; !h && i < sizeof(names) / sizeof(names[0]); i++)
		h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return -ENOENT;
	*(void **)&dt_cs.open = dlsym(h, "cs_open");
	*(void **)&dt_cs.close = dlsym(h, "cs_close");
	*(void **)&dt_cs.option = dlsym(h, "cs_option");
	*(void **)&dt_cs.malloc = dlsym(h, "cs_malloc");
	*(void **)&dt_cs.free = dlsym(h, "cs_free");
	*(void **)&dt_cs.disasm_iter = dlsym(h, "cs_disasm_iter");
	if (!dt_cs.open || !dt_cs.close || !dt_cs.option || !dt_cs.malloc || !dt_cs.free ||
	    !dt_cs.disasm_iter)
		return -ENOENT;
	dt_cs.state = 1;
	return 0;
}

static struct dt_page dt_pages[DT_MAX_PAGES];
static int dt_npages;
static struct osp_detour_stats dt_stats;

int osp_detour_init(const struct osp_detour_mem *mem)
{
	cs_opt_mem m = {
		.malloc = malloc,
		.calloc = calloc,
		.realloc = realloc,
		.free = free,
		.vsnprintf = vsnprintf,
	};

	if (dt_load_capstone() < 0)
		return -ENOENT;
	if (!mem)
		return 0;
	if (mem->malloc)
		m.malloc = mem->malloc;
	if (mem->calloc)
		m.calloc = mem->calloc;
	if (mem->realloc)
		m.realloc = mem->realloc;
	if (mem->free)
		m.free = mem->free;
	return dt_cs.option(0, CS_OPT_MEM, (size_t)&m) == CS_ERR_OK ? 0 : -EINVAL;
}

void osp_detour_get_stats(struct osp_detour_stats *out)
{
	*out = dt_stats;
}

static int dt_near(uintptr_t a, uintptr_t b)
{
	int64_t d = (int64_t)(a - b);

	return d < DT_REACH && d > -DT_REACH;
}

static void dt_put32(uint8_t *p, int32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)((uint32_t)v >> (8 * i));
}

static void dt_put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Maps a page within reach of `target`, probing hints on both sides. */
static uint8_t *dt_map_near(uintptr_t target)
{
	uintptr_t base = target & ~(uintptr_t)(DT_PAGE - 1);

	for (int k = 1; k <= DT_HINT_TRIES; k++) {
		for (int side = -1; side <= 1; side += 2) {
			uintptr_t hint = base + (uintptr_t)((int64_t)side * k * (int64_t)DT_HINT_STEP);
			void *p;

			if (side < 0 && hint > base)
				continue; /* wrapped below zero */
			p = mmap((void *)hint, DT_PAGE, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
			if (p == MAP_FAILED)
				continue;
			if (dt_near((uintptr_t)p, target))
				return p;
			munmap(p, DT_PAGE); /* old kernel: hint ignored */
		}
	}
	return NULL;
}

/* Returns a DT_SLOT-byte slot within reach of target, its page writable. */
static uint8_t *dt_slot_near(uintptr_t target, struct dt_page **pg_out)
{
	struct dt_page *pg = NULL;

	for (int i = 0; i < dt_npages; i++) {
		if (dt_pages[i].used + DT_SLOT <= DT_PAGE &&
		    dt_near((uintptr_t)dt_pages[i].base, target)) {
			pg = &dt_pages[i];
			break;
		}
	}
	if (!pg) {
		uint8_t *p;

		if (dt_npages == DT_MAX_PAGES)
			return NULL;
		p = dt_map_near(target);
		if (!p)
			return NULL;
		pg = &dt_pages[dt_npages++];
		pg->base = p;
		pg->used = 0;
	} else if (mprotect(pg->base, DT_PAGE, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) {
		return NULL;
	}
	*pg_out = pg;
	return pg->base + pg->used;
}

static int dt_has_group(const cs_insn *in, uint8_t g)
{
	for (int i = 0; i < in->detail->groups_count; i++)
		if (in->detail->groups[i] == g)
			return 1;
	return 0;
}

/* Target of a relative branch, or 0 when `in` is not one. */
static uintptr_t dt_branch_target(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	if (!dt_has_group(in, CS_GRP_BRANCH_RELATIVE) || x->op_count < 1 ||
	    x->operands[0].type != X86_OP_IMM)
		return 0;
	return (uintptr_t)x->operands[0].imm;
}

static int dt_rel32(uintptr_t to, uintptr_t next, int32_t *out)
{
	int64_t d = (int64_t)(to - next);

	if (d > INT32_MAX || d < INT32_MIN)
		return -ENOTSUP;
	*out = (int32_t)d;
	return 0;
}

/* Copies one instruction from its address to `dst` (whose final address is
 * `at`), fixing what depends on its position. Returns bytes written or
 * -ENOTSUP. Branches into [lo, hi) (the overwritten bytes) are refused. */
static int dt_relocate(const cs_insn *in, uint8_t *dst, uintptr_t at, uintptr_t lo, uintptr_t hi)
{
	const cs_x86 *x = &in->detail->x86;
	uintptr_t to = dt_branch_target(in);
	int32_t rel;

	if (to) {
		if (to >= lo && to < hi)
			return -ENOTSUP;
		switch (in->id) {
		case X86_INS_JMP:
			dst[0] = 0xe9;
			if (dt_rel32(to, at + 5, &rel))
				return -ENOTSUP;
			dt_put32(dst + 1, rel);
			return 5;
		case X86_INS_CALL:
			dst[0] = 0xe8;
			if (dt_rel32(to, at + 5, &rel))
				return -ENOTSUP;
			dt_put32(dst + 1, rel);
			return 5;
		default:
			break;
		}
		/* jcc: 7x rel8 or 0f 8x rel32 -> 0f 8x rel32 */
		if (in->size == 2 && (in->bytes[0] & 0xf0) == 0x70) {
			dst[1] = (uint8_t)(0x80 | (in->bytes[0] & 0x0f));
		} else if (in->size == 6 && in->bytes[0] == 0x0f && (in->bytes[1] & 0xf0) == 0x80) {
			dst[1] = in->bytes[1];
		} else {
			return -ENOTSUP; /* loop, jrcxz, xbegin, prefixed forms */
		}
		dst[0] = 0x0f;
		if (dt_rel32(to, at + 6, &rel))
			return -ENOTSUP;
		dt_put32(dst + 2, rel);
		return 6;
	}
	for (int i = 0; i < in->size; i++)
		dst[i] = in->bytes[i];
	for (int i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];
		uintptr_t abs;

		if (op->type != X86_OP_MEM || op->mem.base != X86_REG_RIP)
			continue;
		if (x->encoding.disp_offset == 0 || x->encoding.disp_size != 4)
			return -ENOTSUP;
		abs = (uintptr_t)in->address + in->size + (uintptr_t)op->mem.disp;
		if (abs >= lo && abs < hi)
			return -ENOTSUP; /* reads the bytes we overwrite */
		if (dt_rel32(abs, at + in->size, &rel))
			return -ENOTSUP;
		dt_put32(dst + x->encoding.disp_offset, rel);
	}
	if (dt_has_group(in, CS_GRP_JUMP) || dt_has_group(in, CS_GRP_CALL)) {
		/* Indirect jumps/calls through registers or non-RIP memory are
		 * position independent; anything else relative was handled. */
		if (dt_has_group(in, CS_GRP_BRANCH_RELATIVE))
			return -ENOTSUP;
	}
	return in->size;
}

/* Scans the function body for relative branches into (start, start+stolen). */
static int dt_body_branches_in(csh h, cs_insn *in, uintptr_t start, size_t size, size_t stolen)
{
	const uint8_t *code = (const uint8_t *)start;
	size_t left = size;
	uint64_t addr = start;

	while (left > 0) {
		const uint8_t *before = code;

		if (!dt_cs.disasm_iter(h, &code, &left, &addr, in)) {
			code = before + 1; /* resynchronise past undecodable bytes */
			left--;
			addr++;
			continue;
		}
		uintptr_t to = dt_branch_target(in);

		if (to > start && to < start + stolen)
			return 1;
	}
	return 0;
}

/* Decodes and relocates the prologue into `out` (final address `at`).
 * Returns the relocated length, *stolen = bytes overwritten. */
static int dt_build(csh h, cs_insn *in, uintptr_t start, size_t size, uint8_t *out,
		    uintptr_t at, size_t *stolen, int *has_call)
{
	const uint8_t *code = (const uint8_t *)start;
	uint64_t addr = start;
	size_t left = 32, n = 0, len = 0;
	int ninsn = 0;

	/* First pass: how many bytes the whole instructions cover. */
	while (n < DT_JMP_LEN) {
		if (ninsn == DT_MAX_INSNS || !dt_cs.disasm_iter(h, &code, &left, &addr, in))
			return -EINVAL;
		n += in->size;
		ninsn++;
	}
	if (size && n > size)
		return -ENOSPC;
	code = (const uint8_t *)start;
	addr = start;
	left = n;
	while (left > 0) {
		int w;

		if (!dt_cs.disasm_iter(h, &code, &left, &addr, in))
			return -EINVAL;
		if (dt_has_group(in, CS_GRP_CALL))
			*has_call = 1;
		w = dt_relocate(in, out + len, at + len, start, start + n);
		if (w < 0)
			return w;
		len += (size_t)w;
	}
	*stolen = n;
	return (int)len;
}

static int dt_patch(uintptr_t start, size_t stolen, uintptr_t stub)
{
	uintptr_t p0 = start & ~(uintptr_t)(DT_PAGE - 1);
	size_t plen = ((start + stolen + DT_PAGE - 1) & ~(uintptr_t)(DT_PAGE - 1)) - p0;
	uint8_t patch[32];
	int32_t rel;

	if (dt_rel32(stub, start + DT_JMP_LEN, &rel))
		return -ENOTSUP;
	patch[0] = 0xe9;
	dt_put32(patch + 1, rel);
	for (size_t i = DT_JMP_LEN; i < stolen; i++)
		patch[i] = 0x90; /* never executed: nothing branches here (checked) */
	/* RWX rather than RW: the page may hold code another part of this
	 * process is running; restored to r-x (text of a loaded object). */
	if (mprotect((void *)p0, plen, PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
		return -errno;
	for (size_t i = 0; i < stolen; i++)
		((volatile uint8_t *)start)[i] = patch[i];
	__builtin___clear_cache((char *)start, (char *)start + stolen);
	if (mprotect((void *)p0, plen, PROT_READ | PROT_EXEC) != 0)
		return -errno;
	return 0;
}

int osp_detour_prepare(void *target, size_t size, void *replacement, void **original,
			struct osp_detour_patch *p)
{
	uintptr_t start = (uintptr_t)target;
	struct dt_page *pg = NULL;
	uint8_t code[DT_SLOT - DT_STUB];
	uint8_t *slot = NULL;
	cs_insn *in = NULL;
	size_t stolen = 0;
	int err, len, has_call = 0;
	csh h = 0;
	int32_t rel;

	if (!target || !replacement || !original || !p)
		return -EINVAL;
	if (size && size < DT_JMP_LEN) {
		dt_stats.refused_short++;
		return -ENOSPC;
	}
	if (dt_load_capstone() < 0 || dt_cs.open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK) {
		err = -EINVAL;
		goto out;
	}
	dt_cs.option(h, CS_OPT_DETAIL, CS_OPT_ON);
	in = dt_cs.malloc(h);
	if (!in) {
		err = -ENOMEM;
		goto out;
	}
	slot = dt_slot_near(start, &pg);
	if (!slot) {
		err = -ENOMEM;
		goto out;
	}
	len = dt_build(h, in, start, size, code, (uintptr_t)slot + DT_STUB, &stolen, &has_call);
	if (len < 0) {
		err = len;
		goto out;
	}
	if (len + DT_JMP_LEN > (int)sizeof(code)) {
		err = -ENOTSUP;
		goto out;
	}
	if (size && dt_body_branches_in(h, in, start, size, stolen)) {
		err = -ENOTSUP;
		goto out;
	}
	/* Jump back to the first instruction left in place. */
	code[len] = 0xe9;
	if (dt_rel32(start + stolen, (uintptr_t)slot + DT_STUB + (uintptr_t)len + DT_JMP_LEN,
		     &rel)) {
		err = -ENOTSUP;
		goto out;
	}
	dt_put32(code + len + 1, rel);
	len += DT_JMP_LEN;
	/* Stub: jmp [rip+0]; .quad replacement */
	slot[0] = 0xff;
	slot[1] = 0x25;
	dt_put32(slot + 2, 0);
	dt_put64(slot + 6, (uint64_t)(uintptr_t)replacement);
	for (unsigned i = 14; i < DT_STUB; i++)
		slot[i] = 0x90;
	for (int i = 0; i < len; i++)
		slot[DT_STUB + i] = code[i];
	pg->used += DT_SLOT;
	err = mprotect(pg->base, DT_PAGE, PROT_READ | PROT_EXEC) ? -errno : 0;
	pg = NULL;
	if (err)
		goto out;
	p->start = start;
	p->stolen = (uint32_t)stolen;
	p->stub = (uintptr_t)slot;
	p->has_call = has_call;
	*original = slot + DT_STUB;
out:
	if (pg) /* slot not used: leave the page executable again */
		mprotect(pg->base, DT_PAGE, PROT_READ | PROT_EXEC);
	if (err == -ENOSPC)
		dt_stats.refused_short++;
	else if (err == -ENOTSUP)
		dt_stats.refused_reloc++;
	else if (err)
		dt_stats.refused_other++;
	if (in)
		dt_cs.free(in, 1);
	if (h)
		dt_cs.close(&h);
	return err;
}

int osp_detour_commit(const struct osp_detour_patch *p)
{
	int err;

	if (!p || !p->start || p->stolen < DT_JMP_LEN)
		return -EINVAL;
	err = dt_patch(p->start, p->stolen, p->stub);
	if (err)
		dt_stats.refused_other++;
	else
		dt_stats.installed++;
	return err;
}

int osp_detour_install(void *target, size_t size, void *replacement, void **original)
{
	struct osp_detour_patch p;
	void *orig = NULL;
	int err;

	err = osp_detour_prepare(target, size, replacement, &orig, &p);
	if (err)
		return err;
	err = osp_detour_commit(&p);
	if (err)
		return err;
	*original = orig;
	return 0;
}
