/* hotspot_frames.c - interpreted Java frames (runtime.h op frame_word):
 * the Method* word of a frame with its source line, from the method's line
 * table (hotspot_lines.h) at the frame's bytecode pointer. */
#include "runtimes/hotspot/hotspot_int.h"

bool hs_nm_rd(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct hs_rd *r = arg;

	return r->h->mem.read(r->h->mem.arg, r->j->pid, addr, buf, len) == (ssize_t)len;
}

/* The source file of the classes whose constant pool is cp: string index
 * + 1, 0 none (cached: one class, many methods). */
static uint32_t file_of(struct hotspot *h, struct hs_jvm *j, uint64_t cp)
{
	struct hs_rd r = { h, j };
	char buf[NAME_MAX_LEN];
	uint64_t v, sym;

	if (os_hmap_get(&j->files, cp, &v))
		return (uint32_t)v;
	v = 0;
	if (os_hs_source_symbol(&j->lil, hs_nm_rd, &r, cp, &sym) == 0 && sym &&
	    os_hs_symbol_str(&j->vm, &h->mem, j->pid, sym, buf, sizeof(buf)) == 0 && buf[0]) {
		int64_t at = hs_str_add(h, buf);

		v = at >= 0 ? (uint64_t)at + 1 : 0;
	}
	os_hmap_put(&j->files, cp, v);
	return (uint32_t)v;
}

/* Method m's bytecodes, line table and file: read once, while the method
 * runs (a frame of it was just seen); NULL when it cannot be read. */
const struct hs_ml *hs_ml_get(struct hotspot *h, struct hs_jvm *j, uint64_t m)
{
	struct hs_rd r = { h, j };
	struct os_hs_mlines ml;
	struct hs_ml *n;
	uint64_t idx;

	if (!j->lil.ok || !j->vm_ok)
		return NULL;
	if (os_hmap_get(&j->ml_at, m, &idx))
		return idx ? &j->mls[idx - 1] : NULL;
	if (j->nmls >= HS_MLS_MAX)
		return NULL;
	n = os_grow(j->mls, &j->capmls, j->nmls + 1, sizeof(*n), 256);
	if (!n)
		return NULL;
	j->mls = n;
	if (os_hs_mlines_read(&ml, &j->lil, hs_nm_rd, &r, m) < 0) {
		j->ml_failed++; /* the JVM gone (paths drained at its end), or not a method */
		os_hmap_put(&j->ml_at, m, 0);
		return NULL;
	}
	if (os_hmap_put(&j->ml_at, m, j->nmls + 1) < 0) {
		os_hs_mlines_free(&ml);
		return NULL;
	}
	j->mls[j->nmls].ml = ml;
	j->mls[j->nmls].file = file_of(h, j, ml.cpool);
	return &j->mls[j->nmls++];
}

/* The word of method m at bytecode index bci (-1: its entry; < -1: not
 * known): with its source line when the method has one there and its class
 * names its file. */
uint64_t hs_line_word(struct hotspot *h, struct hs_jvm *j, uint64_t m, int32_t bci)
{
	const struct hs_ml *ml = bci >= -1 ? hs_ml_get(h, j, m) : NULL;
	uint32_t line = 0;

	if (ml && ml->file && bci < (int32_t)ml->ml.code_size)
		line = os_hs_line_at(ml->ml.pairs, ml->ml.npairs, bci);
	if (!line || line > OS_FRAME_LINE_MAX) {
		j->line_none++;
		return OS_FRAME_METHOD | m;
	}
	j->line_frames++;
	return OS_FRAME_METHOD | (uint64_t)line << OS_FRAME_POS_SHIFT | m;
}

/* ... at bytecode pointer bcp (low13: its 13 low bits only). */
static uint64_t bcp_word(struct hotspot *h, struct hs_jvm *j, uint64_t m, uint64_t bcp, bool low13)
{
	const struct hs_ml *ml = hs_ml_get(h, j, m);

	return hs_line_word(h, j, m, ml ? os_hs_bci_of(&ml->ml, bcp, low13) : -2);
}

/* A method word of the preload's (common/shm.h: the bcp's low bits) as the
 * collector's (a line). */
uint64_t hs_canon_word(struct hotspot *h, struct hs_jvm *j, uint64_t w)
{
	uint32_t pos = (uint32_t)((w & OS_FRAME_POS_MASK) >> OS_FRAME_POS_SHIFT);
	uint64_t m = w & OS_HS_WORD_MASK;

	if (!OS_FRAME_IS_METHOD(w))
		return w;
	if (!(pos & OS_FRAME_BCP_KNOWN) || !j || !j->vm_ok)
		return OS_FRAME_METHOD | m;
	hs_name_method(h, j, OS_FRAME_METHOD | m);
	if (!hs_name_known(j, OS_FRAME_METHOD | m)) /* not readable: "Interpreter" */
		return OS_FRAME_METHOD | m;
	return bcp_word(h, j, m, pos & OS_FRAME_BCP_LOW, true);
}

/* The word of an interpreted frame whose Method* slot holds m (read: its
 * reader said yes) at bytecode pointer bcp (0: not known), or pc. */
uint64_t hs_method_word(struct hotspot *h, struct hs_jvm *j, uint64_t pc, bool read,
		     uint64_t m, uint64_t bcp)
{
	uint64_t w, base = OS_FRAME_METHOD | m;

	if (!read || !m || (m & 7) || (m & ~OS_HS_WORD_MASK))
		return pc;
	hs_name_method(h, j, base);
	if (!hs_name_known(j, base)) /* not a method (a frame not yet built) */
		return pc;
	w = bcp ? bcp_word(h, j, m, bcp, false) : hs_line_word(h, j, m, -2);
	hs_name_method(h, j, w);
	return hs_name_known(j, w) ? w : base;
}

uint64_t hs_frame_word(struct os_runtime *rt, uint32_t asid, uint64_t pc, uint64_t fp,
		       const uint64_t *leaf_regs,
		       bool (*read)(void *arg, uint64_t addr, uint64_t *word), void *arg)
{
	struct hotspot *h = hs_of(rt);
	struct hs_jvm *j = hs_jvm_find(h, asid);
	uint64_t m = 0, bcp = 0;
	bool ok;

	/* the Method* slot of an interpreter frame (hs_frames_resolve) */
	if (!j || !j->vm_ok || !j->method_ok || pc < j->info.interp_start ||
	    pc >= j->info.interp_end)
		return pc;
	ok = read(arg, fp + (uint64_t)j->method_off, &m);
	if (leaf_regs) /* the interrupted frame's bcp: r13 on x86_64 */
		bcp = leaf_regs[OS_REG_R13];
	else if (!read(arg, fp + (uint64_t)j->method_off - OS_HSF_BCP_BELOW_METHOD, &bcp))
		bcp = 0;
	return hs_method_word(h, j, pc, ok, m, bcp);
}

uint64_t os_hotspot_bcp_word(struct os_runtime *rt, uint32_t asid, uint64_t m, uint64_t bcp)
{
	struct hotspot *h = rt && !strcmp(rt->ops->name, "hotspot") ? hs_of(rt) : NULL;
	struct hs_jvm *j = h && h->njvms ? hs_jvm_find(h, asid) : NULL;
	const struct hs_ml *ml;
	uint64_t w, base = OS_FRAME_METHOD | m;
	int32_t bci;

	if (!j || !j->vm_ok || !m || (m & 7) || (m & ~OS_HS_WORD_MASK) || !bcp)
		return 0;
	hs_name_method(h, j, base);
	if (!hs_name_known(j, base))
		return 0;
	ml = hs_ml_get(h, j, m);
	bci = ml ? os_hs_bci_of(&ml->ml, bcp, false) : -1;
	if (bci < 0)
		return 0;
	w = hs_line_word(h, j, m, bci);
	hs_name_method(h, j, w);
	return hs_name_known(j, w) ? w : base;
}
