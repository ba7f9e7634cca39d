/* hotspot_stack.c - Java stack walks of access paths through JIT code
 * (runtime.h op java_walk): the frame layout resolved from vmStructs, code
 * blobs looked up in the code heaps through a per-JVM cache, and the walk
 * itself by hs_frames.h's rules. */
#include "runtimes/hotspot/hotspot_int.h"

/* What the Java walk needs (runtimes/hotspot/hs_frames.h's os_hsf_layout), from the
 * vmStructs tables and the code heaps the JVM created at start (their
 * reserved ranges never change; the segment maps' committed ends grow and
 * are read again after each flush of the blob cache). Leaves
 * j->frames.ok false when something is missing. */
void hs_frames_resolve(struct hotspot *h, struct hs_jvm *j)
{
	static const char *const need[] = {
		"CodeCache::_heaps", "CodeCache::_low_bound", "CodeCache::_high_bound",
		"GrowableArrayBase::_len", "GrowableArray<int>::_data", "CodeHeap::_memory",
		"CodeHeap::_segmap", "CodeHeap::_log2_segment_size", "VirtualSpace::_low_boundary",
		"VirtualSpace::_high_boundary", "VirtualSpace::_low", "VirtualSpace::_high",
		"HeapBlock", "HeapBlock::_header", "HeapBlock::Header::_used",
		"CodeBlob::_frame_size", "CodeBlob::_code_begin", "CodeBlob::_frame_complete_offset",
	};
	enum { P_HEAPS, P_LO, P_HI, O_LEN, O_DATA, O_MEM, O_SEG, O_LOG2, O_VLOWB, O_VHIGHB, O_VLOW,
	       O_VHIGH, S_BLOCK, O_HDR, O_USED, O_FS, O_BEGIN, O_COMPLETE, NNEED };
	struct os_hsf_layout *l = &j->frames;
	uint64_t v[NNEED], ga, arr, ss = 0, heap;
	int32_t len, log2;

	_Static_assert(sizeof(need) / sizeof(need[0]) == NNEED, "names");
	memset(l, 0, sizeof(*l));
	os_hs_scope_layout(&j->scl, &j->vm);
	os_hs_line_layout(&j->lil, &j->vm);
	if (os_hs_vm_field(&j->vm, "CodeBlob::_size", &j->blob_size_off) != 0)
		j->blob_size_off = -1;
	j->method_ok = true;
	if (os_hs_vm_get(&j->vm, "frame::interpreter_frame_method_offset", &ss) != 0) {
		if (os_hs_vm_get(&j->vm, "frame::interpreter_frame_last_sp_offset", &ss) == 0)
			ss -= 1; /* JDK 17, x86: the method slot is the one below last_sp */
		else
			j->method_ok = false;
	}
	/* frame slots are a few words from fp: a wild table value is not used */
	if ((int64_t)ss < -HS_FRAME_SLOTS_MAX || (int64_t)ss > HS_FRAME_SLOTS_MAX) {
		j->method_ok = false;
		ss = 0;
	}
	j->method_off = (int64_t)ss * 8;
	for (int i = 0; i < NNEED; i++) {
		if (os_hs_vm_get(&j->vm, need[i], &v[i]) != 0) {
			os_debug("hotspot: pid %u: no %s in vmStructs: JIT frames of access paths "
				 "by frame pointer only", j->pid, need[i]);
			return;
		}
	}
	/* the interpreter's caller-sp slot: -1 word from fp on x86 */
	if (os_hs_vm_get(&j->vm, "frame::interpreter_frame_sender_sp_offset", &ss) != 0)
		ss = (uint64_t)-1;
	if ((int64_t)ss < -HS_FRAME_SLOTS_MAX || (int64_t)ss > HS_FRAME_SLOTS_MAX)
		goto bad;
	if (!hs_rd_u64(h, j, v[P_HEAPS], &ga) || !hs_rd_i32(h, j, ga + v[O_LEN], &len) ||
	    !hs_rd_u64(h, j, ga + v[O_DATA], &arr) || len <= 0 || len > OS_HSF_MAX_HEAPS)
		goto bad;
	for (int32_t i = 0; i < len; i++) {
		struct os_hsf_heap *d = &l->heap[i];
		uint64_t mem, seg, low, seg_low;

		if (!hs_rd_u64(h, j, arr + 8 * (uint64_t)i, &heap) || !heap)
			goto bad;
		mem = heap + v[O_MEM];
		seg = heap + v[O_SEG];
		if (!hs_rd_u64(h, j, mem + v[O_VLOWB], &d->lo) ||
		    !hs_rd_u64(h, j, mem + v[O_VHIGHB], &d->hi) || !hs_rd_u64(h, j, mem + v[O_VLOW], &low) ||
		    !hs_rd_u64(h, j, seg + v[O_VLOWB], &d->seg_lo) ||
		    !hs_rd_u64(h, j, seg + v[O_VLOW], &seg_low) ||
		    !hs_rd_i32(h, j, heap + v[O_LOG2], &log2))
			goto bad;
		d->seg_high_at = seg + v[O_VHIGH];
		d->log2_seg = (uint32_t)log2;
		/* the block of segment i is at _memory._low + (i << log2): both
		 * virtual spaces commit from their low boundary */
		if (d->lo != low || d->seg_lo != seg_low || d->hi <= d->lo || log2 < 4 || log2 > 16)
			goto bad;
	}
	l->nheaps = (uint32_t)len;
	if (!hs_rd_u64(h, j, v[P_LO], &l->code_lo) || !hs_rd_u64(h, j, v[P_HI], &l->code_hi))
		goto bad;
	l->interp_lo = j->info.interp_start;
	l->interp_hi = j->info.interp_end;
	l->block_size = (uint32_t)v[S_BLOCK];
	l->used_off = (uint32_t)(v[O_HDR] + v[O_USED]);
	l->frame_size_off = (uint32_t)v[O_FS];
	l->code_begin_off = (uint32_t)v[O_BEGIN];
	l->complete_off = (uint32_t)v[O_COMPLETE];
	{
		const struct os_hs_res *b = os_hs_vm_res(&j->vm, "CodeBlob::_code_begin"),
				       *c = os_hs_vm_res(&j->vm, "CodeBlob::_frame_complete_offset");

		/* the widths the JVM declares (hs_layout.h) */
		if (!b || !c || (c->width != 2 && c->width != 4) ||
		    (b->how == HS_LA_REL) != (b->width == 4))
			goto bad;
		l->code_begin_rel = b->how == HS_LA_REL;
		l->complete_width = c->width;
	}
	l->sender_sp_off = (int32_t)(int64_t)ss * 8;
	l->ok = j->method_ok && l->interp_hi > l->interp_lo && l->code_hi > l->code_lo;
	if (!l->ok)
		goto bad;
	os_debug("hotspot: pid %u: %u code heaps in [0x%llx, 0x%llx): JIT frames of access paths "
		 "walked by their code blobs", j->pid, l->nheaps, (unsigned long long)l->code_lo,
		 (unsigned long long)l->code_hi);
	return;
bad:
	l->ok = false;
	os_debug("hotspot: pid %u: the code heaps could not be read: JIT frames of access paths "
		 "by frame pointer only", j->pid);
}

/* Forgets the blobs when the cache is older than HS_BLOBS_AGE_NS at now
 * (code may have been replaced since): the one age check of the blob cache
 * and of the allocation-path cache that follows it (code_epoch). */
void hs_blobs_maybe_flush(struct hs_jvm *j, uint64_t now)
{
	if (now - j->blobs_since > HS_BLOBS_AGE_NS)
		hs_blobs_flush(j);
}

/* Forgets the blobs the Java walk looked up. */
void hs_blobs_flush(struct hs_jvm *j)
{
	if (j->nblobs)
		j->blob_flushes++;
	j->nblobs = 0;
	j->blobs_since = os_now_ns();
	j->code_epoch++;
	memset(j->popped_pc, 0, sizeof(j->popped_pc));
	memset(j->seg_high, 0, sizeof(j->seg_high));
	memset(j->segpage_tag, 0, sizeof(j->segpage_tag));
}

/* Remote reads of one blob lookup, by lines of HS_LINE bytes: the segment
 * map's hops and the block's header fields lie close together. */
struct hs_lines {
	struct hotspot *h;
	struct hs_jvm *j;
	uint64_t tag[HS_LINES];     /* line address + 1, 0 = empty */
	uint8_t data[HS_LINES][HS_LINE];
	uint32_t next;
};

static bool remote_rd(struct hs_lines *c, uint64_t addr, void *buf, size_t len)
{
	c->j->blob_reads++;
	return c->h->mem.read(c->h->mem.arg, c->j->pid, addr, buf, len) == (ssize_t)len;
}

static bool lines_rd(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct hs_lines *c = arg;
	uint64_t line = addr & ~(uint64_t)(HS_LINE - 1);
	uint32_t i;

	if (!len || (addr & (HS_LINE - 1)) + len > HS_LINE)
		return remote_rd(c, addr, buf, len);
	for (i = 0; i < HS_LINES; i++)
		if (c->tag[i] == line + 1)
			break;
	if (i == HS_LINES) {
		i = c->next++ % HS_LINES;
		c->tag[i] = 0;
		/* a line lies in one page: readable whole when addr is */
		if (!remote_rd(c, line, c->data[i], HS_LINE))
			return remote_rd(c, addr, buf, len);
		c->tag[i] = line + 1;
	}
	memcpy(buf, c->data[i] + (addr & (HS_LINE - 1)), len);
	return true;
}

/* The lookup's reader (os_hsf_blob): the segment maps' committed ends and
 * pages as read since the last flush of the blob cache (a lookup that
 * fails on them is made again on fresh reads: hs_walk_find), block headers
 * afresh by lines. */
static bool code_rd(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct hs_lines *c = arg;
	struct hs_jvm *j = c->j;
	const struct os_hsf_layout *l = &j->frames;

	for (uint32_t i = 0; i < l->nheaps; i++) {
		const struct os_hsf_heap *hp = &l->heap[i];
		uint64_t page = addr & ~4095ULL, v;
		uint32_t slot;

		if (addr == hp->seg_high_at && len == 8) {
			if (!j->seg_high[i]) {
				if (!remote_rd(c, addr, &v, 8))
					return false;
				j->seg_high[i] = v + 1;
			}
			v = j->seg_high[i] - 1;
			memcpy(buf, &v, 8);
			return true;
		}
		if (addr < hp->seg_lo || addr - hp->seg_lo >= (hp->hi - hp->lo) >> hp->log2_seg ||
		    (addr & 4095) + len > 4096)
			continue;
		if (!j->segpage) {
			j->segpage = malloc(HS_SEGPAGES * sizeof(*j->segpage));
			if (!j->segpage)
				return lines_rd(c, addr, buf, len);
		}
		slot = (uint32_t)((page >> 12) % HS_SEGPAGES);
		if (j->segpage_tag[slot] != page + 1) {
			j->segpage_tag[slot] = 0;
			if (!remote_rd(c, page, j->segpage[slot], 4096))
				return lines_rd(c, addr, buf, len); /* the map's committed end */
			j->segpage_tag[slot] = page + 1;
		}
		memcpy(buf, j->segpage[slot] + (addr & 4095), len);
		return true;
	}
	return lines_rd(c, addr, buf, len);
}

/* The first cached blob whose hi lies above pc. */
static size_t blobs_bound(const struct hs_jvm *j, uint64_t pc)
{
	size_t lo = 0, hi = j->nblobs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (j->blobs[mid].hi <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* os_hsf_find: the blob of pc, from the cache or the target's code heap. */
bool hs_walk_find(void *arg, uint64_t pc, struct os_hsf_blob *b)
{
	struct hs_walk *w = arg;
	struct hs_jvm *j = w->j;
	struct hs_lines lines;
	struct hs_blob_ent e, *n;
	size_t i = blobs_bound(j, pc);
	int32_t size;

	j->blob_lookups++;
	if (i < j->nblobs && j->blobs[i].lo <= pc) {
		*b = j->blobs[i].b;
		return true;
	}
	j->blob_misses++;
	lines.h = w->h;
	lines.j = j;
	lines.next = 0;
	memset(lines.tag, 0, sizeof(lines.tag));
	if (!os_hsf_blob(&j->frames, code_rd, &lines, pc, b)) {
		/* the kept segment map may be older than the blob: again afresh */
		memset(j->seg_high, 0, sizeof(j->seg_high));
		memset(j->segpage_tag, 0, sizeof(j->segpage_tag));
		if (!os_hsf_blob(&j->frames, code_rd, &lines, pc, b))
			return false; /* not cached: a free block may be used soon */
	}
	/* the blob's extent: CodeBlob::_size bytes from the blob; else this pc */
	e.lo = b->start;
	e.hi = pc + 1;
	if (j->blob_size_off >= 0 &&
	    lines_rd(&lines, b->start + (uint64_t)j->blob_size_off, &size, 4) &&
	    size > 0 && b->start + (uint64_t)size > pc)
		e.hi = b->start + (uint64_t)size;
	else
		e.lo = pc;
	e.b = *b;
	if (j->nblobs >= HS_BLOBS_MAX)
		hs_blobs_flush(j);
	n = os_grow(j->blobs, &j->capblobs, j->nblobs + 1, sizeof(*n), 64);
	if (!n)
		return true;
	j->blobs = n;
	/* disjoint: what the new blob overlaps (stale entries) goes */
	i = blobs_bound(j, e.lo);
	{
		size_t k = i;

		while (k < j->nblobs && j->blobs[k].lo < e.hi)
			k++;
		if (k > i)
			memmove(&j->blobs[i], &j->blobs[k], (j->nblobs - k) * sizeof(e));
		j->nblobs -= k - i;
	}
	memmove(&j->blobs[i + 1], &j->blobs[i], (j->nblobs - i) * sizeof(e));
	j->blobs[i] = e;
	j->nblobs++;
	return true;
}

/* A return pc where a walk may go on: the interpreter, a used code blob,
 * or an ELF file's executable mapping. */
static bool walk_plausible(struct hs_walk *w, uint64_t pc)
{
	struct os_hsf_blob b;
	const char *path;
	uint64_t bias, start, end;

	if (os_hsf_in_interp(&w->j->frames, pc))
		return true;
	if (os_hsf_in_code(&w->j->frames, pc))
		return hs_walk_find(w, pc, &b);
	return w->h->sym && os_sym_module_at(w->h->sym, w->j->asid, pc, &path, &bias, &start,
					     &end) == 0;
}

/* Whether a sampled compiled frame at pc has popped its frame already:
 * C1 and C2 end a method with `add rsp, N; pop rbp; cmp rsp, [r15 + poll];
 * ja slow; ret` (JDK 17, x86_64), and the soft sampler's pc is the one
 * after the accessing instruction, the poll: pc at `ja rel; ret`. */
static bool at_return_poll(struct hotspot *h, struct hs_jvm *j, uint64_t pc)
{
	uint32_t slot = (uint32_t)(os_hash64(pc) & (HS_POPPED - 1));
	uint8_t c[7];
	bool r;

	if (j->popped_pc[slot] == pc + 1)
		return j->popped[slot];
	if (h->mem.read(h->mem.arg, j->pid, pc, c, sizeof(c)) == (ssize_t)sizeof(c))
		r = (c[0] == 0x0f && c[1] == 0x87 && c[6] == 0xc3) || (c[0] == 0x77 && c[2] == 0xc3);
	else if (h->mem.read(h->mem.arg, j->pid, pc, c, 3) == 3) /* at a mapping's end */
		r = c[0] == 0x77 && c[2] == 0xc3;
	else
		r = false;
	j->popped_pc[slot] = pc + 1;
	j->popped[slot] = r;
	return r;
}

uint32_t hs_java_walk(struct os_runtime *rt, uint32_t asid, const struct os_rt_frame *start,
		      bool leaf, os_rt_read read, void *arg, uint64_t *frames, uint32_t max)
{
	struct hotspot *h = hs_of(rt);
	struct hs_jvm *j = h->njvms ? hs_jvm_find(h, asid) : NULL;
	struct hs_walk w = { h, j };
	struct os_hsf_frame f = { start->pc, start->sp, start->fp, 0 };
	struct os_hsf_blob b = { 0, 0, 0, 0 };
	uint32_t n = 0;

	if (!j || !j->frames.ok || !max)
		return 0;
	if (!os_hsf_in_interp(&j->frames, f.pc)) {
		if (!os_hsf_in_code(&j->frames, f.pc))
			return 0;
		hs_blobs_maybe_flush(j, os_now_ns());
		if (!hs_walk_find(&w, f.pc, &b))
			return 0; /* a pc in no used blob: nothing to stand on */
	}
	j->walks++;
	/* a leaf whose frame is gone already: its caller's pc is at sp */
	if (leaf && b.frame_size > 0 && f.pc >= b.complete_pc && at_return_poll(h, j, f.pc)) {
		uint64_t ra;

		j->walk_popped++;
		n = hs_jit_expand(h, j, &b, f.pc, false, frames, max);
		if (!n)
			frames[n++] = f.pc;
		if (n == max || !read(arg, f.sp, &ra, 8) || !walk_plausible(&w, ra)) {
			j->walk_frames += n;
			return n;
		}
		f.pc = ra;
		f.sp += 8;
		leaf = false;
	}
	for (;;) {
		uint64_t m = 0;
		bool ok;

		if (os_hsf_in_interp(&j->frames, f.pc)) {
			uint64_t bcp = 0;

			ok = read(arg, f.fp + (uint64_t)j->method_off, &m, 8);
			/* the interrupted frame's bcp is in a register; a caller's
			 * in its frame (runtimes/hotspot/hs_frames.h) */
			if (leaf)
				bcp = start->regs ? start->regs[OS_REG_R13] : 0;
			else if (!read(arg, f.fp + (uint64_t)j->method_off - OS_HSF_BCP_BELOW_METHOD,
				       &bcp, 8))
				bcp = 0;
			frames[n++] = hs_method_word(h, j, f.pc, ok, m, bcp);
		} else {
			uint32_t k = 0;

			if (os_hsf_in_code(&j->frames, f.pc) && hs_walk_find(&w, f.pc, &b))
				k = hs_jit_expand(h, j, &b, f.pc, !leaf, frames + n, max - n);
			if (k)
				n += k;
			else
				frames[n++] = f.pc;
		}
		if (n == max)
			break;
		if (!os_hsf_step(&j->frames, hs_walk_find, &w, read, arg, &f, leaf))
			break;
		leaf = false;
		if (!walk_plausible(&w, f.pc)) {
			j->walk_cut++;
			break;
		}
	}
	j->walk_frames += n;
	return n;
}
