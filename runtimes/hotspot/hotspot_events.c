/* hotspot_events.c - the JVM's ring events, prepared at drain time and
 * applied in time order (runtime.h ops prepare, apply): the JVM announced,
 * Java allocations with their weights, GC moves batched and applied at the
 * collection's end, dead objects dropped, objects born before an attach. */
#include "runtimes/hotspot/hotspot_int.h"

static void read_vendor(struct hs_jvm *j);

static void prepare_jvm(struct hotspot *h, struct hs_jvm *j, const struct os_event *ev)
{
	uint64_t t0;
	int rc;

	/* an older preload sends a shorter struct (no tlab_bytes): the rest
	 * stays 0; a newer one may send a longer one */
	if ((size_t)ev->nframes * 8 >= offsetof(struct os_jvm_info, tlab_bytes)) {
		size_t n = (size_t)ev->nframes * 8;

		memcpy(&j->info, ev->frames, n < sizeof(j->info) ? n : sizeof(j->info));
		j->info.gc[sizeof(j->info.gc) - 1] = 0;
		j->have_info = true;
	} else {
		j->info.heap_start = ev->addr;
		j->info.heap_end = ev->addr + ev->size;
		j->info.flags = (uint32_t)ev->aux2;
	}
	/* The preload decided, inside the JVM before it started: a check
	 * here would come after the JVM's exit when it ran briefly (its own
	 * map then looked like the user's), and would take a stale map of an
	 * earlier process with this pid for the user's. */
	j->map_ours = (j->info.flags & OS_JVM_F_MAP_OURS) != 0;
	if ((j->info.flags & OS_JVM_F_MAP_REFUSED) && !j->map.issue) {
		j->map.issue = HS_MAP_REFUSED_AT_START;
		j->map.pid = j->pid;
	}
	if (!j->have_info || j->vm_ok)
		return;
	t0 = os_now_ns();
	rc = os_hs_vm_load(&j->vm, &h->mem, j->pid, &j->info);
	os_debug("hotspot: pid %u: vmStructs read in %.1f ms", j->pid, (os_now_ns() - t0) / 1e6);
	if (rc < 0)
		os_debug("hotspot: pid %u: cannot read the vmStructs tables: %s", j->pid,
			 strerror(-rc));
	j->vm_ok = rc == 0;
	read_vendor(j);
	if (j->vm.major > HS_JDK_TESTED)
		os_warn("HotSpot pid %u: JDK %u is newer than JDK %u, the newest objscope was "
			"checked on: its layouts are read by name and checked, but answers may be "
			"wrong", j->pid, j->vm.major, HS_JDK_TESTED);
	if (j->vm_ok) {
		char miss[512];

		if (os_hs_vm_missing(&j->vm, miss, sizeof(miss)) > 0)
			os_debug("hotspot: pid %u: JDK %u lacks %s", j->pid, j->vm.major, miss);
		hs_gens_load(h, j);
		hs_frames_resolve(h, j);
		hs_name_pending(h, j);
	}
}

/* The JDK's vendor: IMPLEMENTOR="..." of the release file in the JDK
 * whose lib/server/libjvm.so the JVM mapped (through /proc/PID/root: the
 * JVM's own file system); "" when not found. */
static void read_vendor(struct hs_jvm *j)
{
	char path[4200], line[512], lib[4096] = "";
	FILE *f;
	int fd;

	j->vendor[0] = 0;
	snprintf(path, sizeof(path), "/proc/%u/maps", j->pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, " /"), *e;

		if (!p || !(e = strstr(p, "/lib/server/libjvm.so")))
			continue;
		*e = 0; /* the JDK's home */
		snprintf(lib, sizeof(lib), "%s", p + 1);
		break;
	}
	fclose(f);
	if (!lib[0])
		return;
	snprintf(path, sizeof(path), "/proc/%u/root%s/release", j->pid, lib);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return;
	}
	for (int n = 0; n < 64 && fgets(line, sizeof(line), f); n++) {
		char *v = line + strlen("IMPLEMENTOR=\""), *q;

		if (strncmp(line, "IMPLEMENTOR=\"", strlen("IMPLEMENTOR=\"")) || !(q = strchr(v, '"')))
			continue;
		*q = 0;
		for (char *c = v; *c; c++)
			if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e)
				*c = '?';
		q = v + strnlen(v, sizeof(j->vendor) - 1);
		memcpy(j->vendor, v, (size_t)(q - v));
		j->vendor[q - v] = 0;
		break;
	}
	fclose(f);
}

/* OS_EV_JALLOC: the path is interned with the class word innermost. */
#define HS_PATHS_MAX (1u << 18) /* expanded paths remembered at most (then emptied) */

/* Key of an allocation's raw path: its class and frames, as sent. */
static uint64_t path_key(uint64_t klass, const uint64_t *frames, uint32_t n)
{
	uint64_t h = os_hash64(klass ^ ((uint64_t)n << 56));

	for (uint32_t i = 0; i < n; i++)
		h = os_hash64(h ^ frames[i]) + i;
	return h == UINT64_MAX ? h - 1 : h;
}

static bool prepare_alloc(struct hotspot *h, struct hs_jvm *j, const struct os_event *ev,
			  struct os_obj_event *oe)
{
	uint64_t buf[OS_MAX_FRAMES], key, node;
	uint32_t n = ev->nframes < OS_MAX_FRAMES - 1 ? ev->nframes : OS_MAX_FRAMES - 1;
	uint64_t klass = ev->aux2 & OS_HS_WORD_MASK;
	bool named;

	if (ev->aux & ~(OS_HS_FOCUS_BIT | OS_HS_THIN_BIT)) /* seen at a TLAB refill */
		h->focus.seen_all++;
	if (ev->aux & OS_HS_FOCUS_BIT)
		h->focus.seen++;

	if (!ev->size)
		return false;
	if (j->vm_ok && j->vm.lay.compressed_klass < 0)
		os_hs_learn_header(&j->vm, &h->mem, j->pid, ev->addr, klass);
	/* The same raw path as an allocation before, with no code unloaded
	 * or replaced since (code_epoch): the same context, without expanding
	 * and naming its frames again (most of the collector's time on javac) */
	hs_blobs_maybe_flush(j, os_now_ns());
	if (j->paths_epoch != j->code_epoch || j->paths.count >= HS_PATHS_MAX) {
		os_hmap_destroy(&j->paths);
		os_hmap_init(&j->paths);
		j->paths_epoch = j->code_epoch;
	}
	key = path_key(klass, ev->frames, n);
	if (os_hmap_get(&j->paths, key, &node)) {
		j->paths_hits++;
		*oe = os_obj_ev(ev->type, hs_canon(j, ev->addr), ev->size,
				os_hs_weight_jvm(&j->info, ev->aux, ev->size), j->asid,
				(uint32_t)(node - 1));
		return true;
	}
	j->paths_misses++;
	buf[0] = OS_HS_TAG_KLASS | klass;
	n = hs_expand_path(h, j, ev->frames, n, buf + 1, OS_MAX_FRAMES - 1, &named);
	hs_name_path_word(h, j, buf[0]);
	for (uint32_t i = 1; i <= n && !named; i++)
		if (OS_FRAME_IS_METHOD(buf[i]))
			hs_name_path_word(h, j, buf[i]);
	*oe = os_obj_ev(ev->type, hs_canon(j, ev->addr), ev->size,
			os_hs_weight_jvm(&j->info, ev->aux, ev->size), j->asid,
			os_attrib_path(h->a, j->asid, buf, n + 1));
	if (oe->node != OS_CCT_NONE) {
		bool all = named;

		named = hs_name_known(j, buf[0]);
		for (uint32_t i = 1; named && !all && i <= n; i++)
			if (OS_FRAME_IS_METHOD(buf[i]))
				named = hs_name_known(j, buf[i]);
		os_hmap_put(&h->node2klass, oe->node, klass);
		/* remembered only once its class and methods are named: a name
		 * that could not be read yet is tried again by the next
		 * allocation of the path, as without the cache */
		if (named)
			os_hmap_put(&j->paths, key, oe->node + 1ULL);
	}
	return true;
}

/* OS_EV_MOVES: the triples are copied out of the ring; the block travels
 * with the queued event and is freed when applied. */
static bool prepare_moves(struct hotspot *h, struct hs_jvm *j, const struct os_event *ev,
			  struct os_obj_event *oe)
{
	size_t n = ev->nframes / 3;
	struct os_hs_move *mv;

	if (!n)
		return false;
	mv = malloc(n * sizeof(*mv));
	if (!mv || os_hmap_put(&h->blocks, (uint64_t)(uintptr_t)mv, n) < 0) {
		free(mv);
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		mv[i].src = hs_canon(j, ev->frames[3 * i]);
		mv[i].dst = hs_canon(j, ev->frames[3 * i + 1]);
		os_hs_move_decode(ev->frames[3 * i + 2], &mv[i].bytes, &mv[i].seq);
	}
	*oe = os_obj_ev(ev->type, (uint64_t)(uintptr_t)mv, n, ev->aux, j->asid, OS_CCT_NONE);
	return true;
}

bool hs_prepare(struct os_runtime *rt, struct os_aspace *as, const struct os_event *ev,
		struct os_obj_event *oe)
{
	struct hotspot *h = hs_of(rt);
	struct hs_jvm *j;

	switch (ev->type) {
	case OS_EV_JVM:
	case OS_EV_JALLOC:
	case OS_EV_MOVES:
	case OS_EV_MOVE:
	case OS_EV_GC_BEGIN:
	case OS_EV_GC_END:
		break;
	default:
		return false;
	}
	j = hs_jvm_get(h, as);
	if (!j) {
		h->a->c.dropped_events++;
		return false;
	}
	if (ev->type == OS_EV_GC_BEGIN || ev->type == OS_EV_GC_END)
		hs_blobs_flush(j); /* code is unloaded at collections */
	if (ev->type == OS_EV_GC_END && j->vm_ok)
		/* G1: the regions' generations, as the target read them at the
		 * end (after the small objects' counts), or read now; wanted
		 * by the lifetimes and by every collection's drop of the dead
		 * (drop_small: what a freed region held died) */
		hs_gens_drained(h, j, (uint32_t)ev->aux,
				ev->nframes > OS_HS_FWD_WORDS ? ev->frames + OS_HS_FWD_WORDS : NULL,
				ev->nframes > OS_HS_FWD_WORDS ? ev->nframes - OS_HS_FWD_WORDS : 0);
	switch (ev->type) {
	case OS_EV_JVM:
		prepare_jvm(h, j, ev);
		/* The heap is not an object: its reservation and the
		 * commits of its pieces, tracked as mappings until the JVM said
		 * where its heap is, leave the index; later ones are not tracked
		 * (attrib.c born, in_heap). A Java-heap sample no Java object
		 * holds is then counted as such, never charged to the mapping. */
		if (j->info.heap_end > j->info.heap_start)
			os_iv_remove_overlaps(as->objects, j->info.heap_start, j->info.heap_end,
					      NULL, NULL);
		return false;
	case OS_EV_JALLOC:
		return prepare_alloc(h, j, ev, oe);
	case OS_EV_MOVES:
		return prepare_moves(h, j, ev, oe);
	case OS_EV_MOVE:
		*oe = os_obj_ev(ev->type, hs_canon(j, ev->addr), ev->size,
				hs_canon(j, ev->aux), j->asid, OS_CCT_NONE);
		return true;
	default: /* GC_END: addr = moves not delivered so far (cumulative) */
		if (ev->type == OS_EV_GC_END && ev->nframes >= OS_HS_FWD_WORDS)
			for (int i = 0; i < OS_HS_FWD_WORDS; i++)
				if (ev->frames[i] > j->fwd[i])
					j->fwd[i] = ev->frames[i];
		*oe = os_obj_ev(ev->type, ev->addr, ev->size, ev->aux, j->asid, OS_CCT_NONE);
		return true;
	}
}

static void batch_add(struct hs_jvm *j, const struct os_hs_move *m)
{
	struct os_hs_move *n = os_grow(j->batch, &j->capbatch, j->nbatch + 1, sizeof(*n), 1024);

	if (!n)
		return;
	j->batch = n;
	j->batch[j->nbatch++] = *m;
}

static uint64_t klass_of_ctx(void *arg, uint64_t ctx)
{
	struct hotspot *h = arg;
	uint64_t k;

	ctx = os_val_ctx(ctx); /* an interval value: weight bits above */
	if (ctx >= h->a->nctx || !os_hmap_get(&h->node2klass, h->a->ctx[ctx].node, &k))
		return 0; /* not a Java object (a malloc'd block in the heap range?) */
	return k;
}

/* The heap is as collection `total` left it: no later one has started. */
static bool heap_quiet(struct hotspot *h, struct hs_jvm *j, uint32_t total)
{
	uint32_t now;
	bool active;

	return os_hs_gc_state(&j->vm, &h->mem, j->pid, &now, &active) == 0 && !active &&
	       now == total;
}

static bool confirm_quiet(void *arg)
{
	struct hotspot *h = arg;

	return heap_quiet(h, h->checking, h->checking_total);
}

/* Klass::_layout_helper of klass (fixed while the class lives): one remote
 * read per class, kept in j->klass_lh. */
static bool layout_helper(struct hotspot *h, struct hs_jvm *j, uint64_t klass, uint64_t lh_off,
			  int32_t *lh)
{
	uint64_t v;

	if (os_hmap_get(&j->klass_lh, klass, &v)) {
		*lh = (int32_t)(uint32_t)v;
		return true;
	}
	if (h->mem.read(h->mem.arg, j->pid, klass + lh_off, lh, 4) != 4)
		return false;
	os_hmap_put(&j->klass_lh, klass, (uint64_t)(uint32_t)*lh | 1ULL << 32);
	return true;
}

/* Size of the object whose header is at oop, read through its klass
 * (Klass::_layout_helper: instance size, or array header and element size
 * with the length in the header); 0 when not an object. *klass gets it. */
static uint64_t object_size(struct hotspot *h, struct hs_jvm *j, uint64_t oop, int compressed,
			    uint64_t *klass)
{
	struct os_hs_layout lay = j->vm.lay;
	uint64_t word, lh_off;
	int32_t lh, len = 0;
	int64_t ko;

	lay.compressed_klass = compressed;
	ko = os_hs_klass_word_offset(&lay);
	if (ko < 0 || os_hs_vm_get(&j->vm, "Klass::_layout_helper", &lh_off) != 0 ||
	    h->mem.read(h->mem.arg, j->pid, oop + (uint64_t)ko, &word, 8) != 8)
		return 0;
	*klass = os_hs_decode_klass(&lay, word);
	if (!*klass || (*klass & 7) || !layout_helper(h, j, *klass, lh_off, &lh))
		return 0;
	/* an array's length follows the klass word (compact headers: the
	 * mark word) */
	if (lh < 0 && (os_hs_array_length_offset(&lay) < 0 ||
		       h->mem.read(h->mem.arg, j->pid,
				   oop + (uint64_t)os_hs_array_length_offset(&lay), &len, 4) != 4))
		return 0;
	return os_hs_object_bytes(lh, len);
}

/* Whether a class's name (internal form) is kname. */
static bool klass_is(struct hotspot *h, struct hs_jvm *j, uint64_t klass, const char *kname)
{
	char buf[64];

	return os_hs_klass_name(&j->vm, &h->mem, j->pid, klass, buf, sizeof(buf)) >= 0 &&
	       !strcmp(buf, kname);
}

/* The enum whose constant an object of this class is (the class itself, or
 * the enum above a constant's own body class), 0 if none: read once per
 * class (two or three remote reads) while the JVM runs. */
static uint64_t enum_of(struct hotspot *h, struct hs_jvm *j, uint64_t klass)
{
	uint64_t v, s1 = 0, s2 = 0, e = 0;

	if (os_hmap_get(&j->enum_of, klass, &v))
		return v - 1;
	if (j->vm_ok && os_hs_klass_super(&j->vm, &h->mem, j->pid, klass, &s1) == 0 && s1) {
		if (klass_is(h, j, s1, "java/lang/Enum"))
			e = klass;
		else if (os_hs_klass_super(&j->vm, &h->mem, j->pid, s1, &s2) == 0 && s2 &&
			 klass_is(h, j, s2, "java/lang/Enum"))
			e = s1;
	}
	os_hmap_put(&j->enum_of, klass, e + 1);
	return e;
}

/* The context "class, then a synthetic frame" (word: HS_WORD_BEFORE or
 * HS_WORD_SMALL) of objects found without their allocation path; an enum
 * constant's is "class, E.<clinit>" (HS_TAG_CLINIT): Java makes them there
 * only, so that path is known without having seen the allocation. */
uint32_t hs_class_ctx(struct hotspot *h, struct hs_jvm *j, struct os_aspace *as,
		   uint64_t klass, uint64_t word)
{
	uint64_t frames[3], e = enum_of(h, j, klass);
	uint32_t node, ci, n = 2;

	frames[0] = OS_HS_TAG_KLASS | (klass & OS_HS_WORD_MASK);
	frames[1] = word;
	if (e) {
		frames[1] = HS_TAG_CLINIT | (e & OS_HS_WORD_MASK);
		frames[2] = HS_WORD_ENUM;
		n = 3;
		hs_name_clinit(h, j, e);
		j->enum_found++;
	}
	node = os_attrib_path(h->a, j->asid, frames, n);
	ci = node == OS_CCT_NONE ? OS_NONE : os_attrib_context(h->a, as->id, node);
	if (ci == OS_NONE)
		return OS_NONE;
	hs_name_klass(h, j, klass);
	os_hmap_put(&h->node2klass, node, klass);
	return ci;
}

uint32_t hs_before_ctx(struct hotspot *h, struct hs_jvm *j, struct os_aspace *as,
		    uint64_t klass)
{
	return hs_class_ctx(h, j, as, klass, HS_WORD_BEFORE);
}

/* A move add_before_attach may add: into the heap, onto no object known. */
static bool before_candidate(struct hotspot *h, struct hs_jvm *j, struct os_aspace *as,
			     const struct os_hs_move *m)
{
	uint64_t one;

	return m->dst >= j->info.heap_start && m->dst + m->bytes <= j->info.heap_end &&
	       !os_hmap_get(&h->moved, m->dst, &one) &&
	       !os_iv_lookup(as->objects, m->dst, NULL, NULL, NULL) &&
	       !os_iv_lookup(as->objects, m->dst + m->bytes - 1, NULL, NULL, NULL);
}

/* The object of move m, of class klass, added; false when it cannot be. */
static bool before_add(struct hotspot *h, struct hs_jvm *j, struct os_aspace *as,
		       const struct os_hs_move *m, uint64_t klass)
{
	uint32_t ci = hs_before_ctx(h, j, as, klass);

	if (ci == OS_NONE)
		return false;
	h->a->ctx[ci].allocations++;
	h->a->ctx[ci].bytes += m->bytes;
	h->a->ctx[ci].est_allocations += 1;
	h->a->ctx[ci].est_bytes += (double)m->bytes;
	os_iv_insert(as->objects, m->dst, m->dst + m->bytes, ci);
	j->before++;
	return true;
}

#define HS_BEFORE_BATCH 256 /* objects whose headers are read in one batch */

/* Attach mode: an object that a collection moved but that was never seen
 * allocated (born before the attach, or not sampled at allocation) is added
 * at its new place with its class, when its header confirms the move's
 * size (a move of a region holding several objects does not). Once the
 * header layout is known the headers are read in batches (the klass word,
 * and the array length after it: one word with compressed class pointers,
 * two without) and each class's layout helper once: a javac attach adds
 * ~60,000 such objects, which took three remote reads each. */
static void add_before_attach(struct hotspot *h, struct hs_jvm *j, struct os_aspace *as)
{
	uint64_t addrs[2 * HS_BEFORE_BATCH], words[2 * HS_BEFORE_BATCH], lh_off;
	bool ok[2 * HS_BEFORE_BATCH];
	size_t idx[HS_BEFORE_BATCH], i = 0;
	uint32_t added = 0;

	while (i < j->nbatch && added < HS_BEFORE_MAX) {
		const struct os_hs_layout *lay = &j->vm.lay;
		int64_t ko = os_hs_klass_word_offset(lay);
		size_t n = 0, cw = lay->compressed_klass == 1 ? 1 : 2;

		if (lay->compressed_klass < 0 || ko < 0 ||
		    os_hs_vm_get(&j->vm, "Klass::_layout_helper", &lh_off) != 0) {
			/* no allocation seen yet: learn the header layout here */
			const struct os_hs_move *m = &j->batch[i++];
			uint64_t klass = 0, size = 0;

			if (!before_candidate(h, j, as, m))
				continue;
			for (int c = 2; c >= 0 && size != m->bytes; c--) {
				size = object_size(h, j, m->dst, c, &klass);
				if (size == m->bytes)
					j->vm.lay.compressed_klass = c;
			}
			if (size == m->bytes && before_add(h, j, as, m, klass))
				added++;
			continue;
		}
		for (; i < j->nbatch && n < HS_BEFORE_BATCH; i++) {
			const struct os_hs_move *m = &j->batch[i];

			if (!before_candidate(h, j, as, m))
				continue;
			idx[n] = i;
			addrs[cw * n] = m->dst + (uint64_t)ko;
			if (cw == 2)
				addrs[cw * n + 1] = m->dst + (uint64_t)ko + 8;
			n++;
		}
		if (!n)
			break;
		os_hs_mem_words(&h->mem, j->pid, addrs, cw * n, words, ok);
		for (size_t k = 0; k < n && added < HS_BEFORE_MAX; k++) {
			const struct os_hs_move *m = &j->batch[idx[k]];
			uint64_t klass;
			int32_t lh, len = 0;

			if (!ok[cw * k])
				continue;
			klass = os_hs_decode_klass(lay, words[cw * k]);
			if (!klass || (klass & 7) || !layout_helper(h, j, klass, lh_off, &lh))
				continue;
			if (lh < 0) { /* an array: its length follows the klass word */
				if (cw == 1)
					len = (int32_t)(uint32_t)(words[k] >> 32);
				else if (ok[2 * k + 1])
					len = (int32_t)(uint32_t)words[2 * k + 1];
				else
					continue;
			}
			if (os_hs_object_bytes(lh, len) != m->bytes ||
			    os_iv_lookup(as->objects, m->dst, NULL, NULL, NULL))
				continue;
			if (before_add(h, j, as, m, klass))
				added++;
		}
	}
}

static uint32_t gen_of(const void *arg, uint64_t addr)
{
	return hs_gen_of(arg, addr);
}

/* The collection just applied, to whoever listens (attrib.h os_gc_report):
 * each survivor's way (h->moved: destination -> source) and generation. */
static void gc_report(struct hotspot *h, struct hs_jvm *j, bool lost, uint32_t total)
{
	struct os_gc_report r = { .asid = j->asid, .moves_lost = lost };
	struct os_obj_move *mv = NULL;
	uint64_t to, from;
	size_t it = 0, n = 0;

	if (!h->a->collected)
		return;
	r.no_ages = (j->info.flags & (OS_JVM_F_ZGC | OS_JVM_F_CONCURRENT)) != 0;
	r.gens_known = j->gens.kind == HS_GENS_RANGE ||
		       (j->gens.kind == HS_GENS_G1 && hs_gens_select(j, total));
	if (h->moved.count)
		mv = malloc(h->moved.count * sizeof(*mv));
	while (mv && os_hmap_next(&h->moved, &it, &to, &from))
		mv[n++] = (struct os_obj_move){ from, to, r.gens_known ? hs_gen_of_dest(j, to) : 0 };
	r.moves = mv;
	r.nmoves = n;
	if (r.gens_known) {
		r.gen_of = gen_of;
		r.gen_arg = j;
	}
	if (h->moved.count && !mv)
		r.moves_lost = true; /* out of memory: as good as lost */
	os_attrib_collected(h->a, &r);
	free(mv);
}

/* After collection `total`: tracked objects it neither moved nor kept
 * (their header no longer shows their class) are dropped. */
static void drop_dead(struct hotspot *h, struct hs_jvm *j, struct os_aspace *as, uint32_t total)
{
	/* concurrent collectors: headers are read while the JVM runs on, and
	 * ZGC's masked addresses are not readable as such: no validation */
	if (!j->vm_ok || (j->info.flags & (OS_JVM_F_ZGC | OS_JVM_F_CONCURRENT)))
		return;
	/* this end is applied late (time order): when a later collection has
	 * begun (or the JVM is gone) the headers do not show this one's
	 * result; the next end's check covers the objects */
	if (!heap_quiet(h, j, total))
		return;
	j->checked++;
	h->checking = j;
	h->checking_total = total;
	j->dropped += os_hs_drop_dead(as->objects, j->info.heap_start, j->info.heap_end,
				      &h->moved, klass_of_ctx, h, &h->mem, j->pid, &j->vm.lay,
				      confirm_quiet);
}

/* Objects of at most HS_MOVE_MIN bytes: their copies are made inline, never
 * through memcpy (runtimes/hotspot/target/hotspot_moves.c HM_MIN_BYTES).
 * Under G1, Parallel and Serial the target reads their moves from their
 * forwarding pointers at the collection's end (OS_JVM_F_SMALL_MOVES,
 * hotspot_fwd.c): one that did not move died (or its move was not followed:
 * counted in the GC note). Under the others nobody knows where it went. Its
 * old place soon holds another object, maybe of its class (hybrid mode
 * tracks sampled small objects). So such objects left outside the
 * old generation without a move are dropped at each collection's end,
 * without reading their headers. So are larger ones left without a move in
 * a G1 region that the collection freed: the header check of drop_dead
 * kept them while the dead copy still showed their class, and samples on
 * the new objects placed there later were charged to them. */
#define HS_MOVE_MIN 64

struct small_dead {
	struct hotspot *h;
	struct hs_jvm *j;
	bool gens;
	uint64_t *start;
	size_t n, cap;
};

static void small_one(uint64_t start, uint64_t end, uint64_t val, void *arg)
{
	struct small_dead *d = arg;
	uint64_t one, *n;

	(void)val;
	if (os_hmap_get(&d->h->moved, start, &one))
		return;
	if (end - start > HS_MOVE_MIN) {
		/* larger: unmoved in a region the collection left free (G1,
		 * read at this end), it died there; its header may still show
		 * its class (drop_dead would keep it) until new objects, at
		 * other offsets, overwrite it */
		if (!d->gens || hs_gen_of(d->j, start) != OS_GEN_FREE)
			return;
	} else if (d->gens && hs_gen_of(d->j, start) == OS_GEN_OLD) {
		return;
	}
	n = os_grow(d->start, &d->cap, d->n + 1, sizeof(*n), 256);
	if (!n)
		return;
	d->start = n;
	d->start[d->n++] = start;
}

static void drop_small(struct hotspot *h, struct hs_jvm *j, struct os_aspace *as,
		       uint32_t total)
{
	struct small_dead d = { .h = h, .j = j };

	if (!j->have_info || j->info.heap_end <= j->info.heap_start)
		return;
	d.gens = j->gens.kind == HS_GENS_RANGE ||
		 (j->gens.kind == HS_GENS_G1 && hs_gens_select(j, total));
	os_iv_foreach(as->objects, j->info.heap_start, j->info.heap_end, small_one, &d);
	for (size_t i = 0; i < d.n; i++)
		if (os_iv_remove(as->objects, d.start[i], NULL, NULL) == 0)
			j->dropped++;
	free(d.start);
}

static void gc_end(struct hotspot *h, struct hs_jvm *j, struct os_aspace *as, uint64_t lost,
		   uint32_t total)
{
	size_t moved;
	bool lost_now = lost > j->moves_lost;

	os_hmap_destroy(&h->moved);
	os_hmap_init(&h->moved);
	moved = os_hs_apply_moves(as->objects, j->batch, j->nbatch, &h->moved);
	if (h->att.on && j->vm_ok && !(j->info.flags & (OS_JVM_F_ZGC | OS_JVM_F_CONCURRENT)) &&
	    heap_quiet(h, j, total))
		add_before_attach(h, j, as);
	j->nbatch = 0;
	j->end_total = total;
	j->in_gc = false;
	/* lookups made before this collection cannot stand for later samples;
	 * those read after it (drained before this end is applied) stay */
	hs_pre_prune(j, total);
	j->moves += moved;
	if (lost > j->moves_lost)
		j->moves_lost = lost;
	j->gcs++;
	h->a->c.moves += moved;
	h->a->c.gc_count++;
	drop_small(h, j, as, total);
	drop_dead(h, j, as, total);
	gc_report(h, j, lost_now, total);
}

static void born(struct hotspot *h, struct hs_jvm *j, struct os_aspace *as,
		 const struct os_obj_event *ev)
{
	struct os_attrib *a = h->a;
	uint32_t ci = ev->node == OS_CCT_NONE ? OS_NONE : os_attrib_context(a, as->id, ev->node);
	uint64_t wq = ev->aux ? ev->aux : OS_W_ONE; /* fixed point (prepare_alloc) */
	double w = (double)wq / (double)OS_W_ONE;
	struct os_ctx *x;

	if (ci == OS_NONE) {
		a->c.dropped_events++;
		return;
	}
	/* allocations and bytes are the estimates, rounded (counts when every
	 * weight is 1); the fractions are kept in est_* */
	x = &a->ctx[ci];
	x->est_allocations += w;
	x->est_bytes += w * (double)ev->size;
	x->allocations = (uint64_t)(x->est_allocations + 0.5);
	x->bytes = (uint64_t)(x->est_bytes + 0.5);
	x->seen++;
	a->c.objects_seen++;
	j->estimated += w;
	if (wq != OS_W_ONE)
		j->small++;
	if (j->info.mode == OS_JVM_MODE_SAMPLED || j->info.mode == OS_JVM_MODE_HYBRID) {
		h->estimated += w;
		a->c.objects_estimated = (uint64_t)(h->estimated + 0.5);
		a->weighted = true;
	}
	j->objects++;
	os_iv_remove_overlaps(as->objects, ev->addr, ev->addr + ev->size, NULL, NULL);
	os_iv_insert(as->objects, ev->addr, ev->addr + ev->size, os_val_make(ci, wq));
}

void hs_apply(struct os_runtime *rt, struct os_aspace *as, const struct os_obj_event *ev)
{
	struct hotspot *h = hs_of(rt);
	struct hs_jvm *j = hs_jvm_find(h, ev->asid);
	struct os_hs_move *mv;

	if (ev->type == OS_EV_MOVES) {
		if (!os_hmap_del(&h->blocks, ev->addr))
			return;
		mv = (struct os_hs_move *)(uintptr_t)ev->addr;
		for (uint64_t i = 0; j && i < ev->size; i++)
			batch_add(j, &mv[i]);
		free(mv);
		return;
	}
	if (!j)
		return;
	switch (ev->type) {
	case OS_EV_JALLOC:
		born(h, j, as, ev);
		break;
	case OS_EV_MOVE:
		batch_add(j, &(struct os_hs_move){ .src = ev->aux, .dst = ev->addr,
						   .bytes = ev->size });
		break;
	case OS_EV_GC_END:
		gc_end(h, j, as, ev->addr, (uint32_t)ev->aux);
		break;
	default: /* OS_EV_GC_BEGIN: moves before it belong to it as well */
		j->in_gc = true; /* samples from here to its end: taken during it */
		break;
	}
}
