/* hotspot_vm.c - vmStructs tables of a live HotSpot target, class and
 * method names read through them. */
#include "runtimes/hotspot/hotspot_vm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#define MAX_ENTRIES 100000 /* a runaway table (bad layout) stops here */
#define MAX_NAME 256
#define IOV_BATCH 512

static ssize_t proc_read(void *arg, uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };
	ssize_t n;

	(void)arg;
	n = process_vm_readv((pid_t)pid, &l, 1, &r, 1, 0);
	return n == (ssize_t)len ? n : -1;
}

static size_t proc_read_words(void *arg, uint32_t pid, const uint64_t *addrs, size_t n,
			      uint64_t *out, bool *ok)
{
	struct iovec l[IOV_BATCH], r[IOV_BATCH];
	size_t i = 0, good = 0;

	(void)arg;
	while (i < n) {
		size_t k = n - i < IOV_BATCH ? n - i : IOV_BATCH;
		ssize_t got;

		for (size_t j = 0; j < k; j++) {
			l[j].iov_base = &out[i + j];
			l[j].iov_len = 8;
			r[j].iov_base = (void *)(uintptr_t)addrs[i + j];
			r[j].iov_len = 8;
		}
		got = process_vm_readv((pid_t)pid, l, k, r, k, 0);
		/* the kernel stops at the first unreadable remote range */
		size_t full = got > 0 ? (size_t)got / 8 : 0;

		for (size_t j = 0; j < full; j++)
			ok[i + j] = true;
		good += full;
		if (full < k) {
			ok[i + full] = false;
			i += full + 1;
		} else {
			i += k;
		}
	}
	return good;
}

const struct os_hs_mem os_hs_mem_proc = { proc_read, proc_read_words, NULL };

size_t os_hs_mem_words(const struct os_hs_mem *m, uint32_t pid, const uint64_t *addrs, size_t n,
		       uint64_t *out, bool *ok)
{
	size_t good = 0;

	if (m->read_words)
		return m->read_words(m->arg, pid, addrs, n, out, ok);
	for (size_t i = 0; i < n; i++) {
		ok[i] = m->read(m->arg, pid, addrs[i], &out[i], 8) == 8;
		good += ok[i];
	}
	return good;
}

static int rd(const struct os_hs_mem *m, uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	if (!addr || m->read(m->arg, pid, addr, buf, len) != (ssize_t)len)
		return -EFAULT;
	return 0;
}

static int rd_u64(const struct os_hs_mem *m, uint32_t pid, uint64_t addr, uint64_t *v)
{
	return rd(m, pid, addr, v, 8);
}

/* Two fields of one object at base: in one read when they lie within 64
 * bytes of each other (each read is a system call), else in two. The
 * offsets come from the target's tables: outside [0, OS_HS_FIELD_MAX] they
 * are refused before any arithmetic on them. */
static int rd_two(const struct os_hs_mem *m, uint32_t pid, uint64_t base, int64_t off1,
		  void *buf1, size_t len1, int64_t off2, void *buf2, size_t len2)
{
	int64_t lo, hi;
	uint8_t span[64];

	if (off1 < 0 || off1 > OS_HS_FIELD_MAX || off2 < 0 || off2 > OS_HS_FIELD_MAX ||
	    len1 > sizeof(span) || len2 > sizeof(span))
		return -EINVAL;
	lo = off1 < off2 ? off1 : off2;
	hi = off1 + (int64_t)len1 > off2 + (int64_t)len2 ? off1 + (int64_t)len1
							: off2 + (int64_t)len2;
	if (hi - lo > (int64_t)sizeof(span))
		return rd(m, pid, base + (uint64_t)off1, buf1, len1) < 0 ||
				       rd(m, pid, base + (uint64_t)off2, buf2, len2) < 0
			       ? -EFAULT
			       : 0;
	if (rd(m, pid, base + (uint64_t)lo, span, (size_t)(hi - lo)) < 0)
		return -EFAULT;
	memcpy(buf1, span + (off1 - lo), len1);
	memcpy(buf2, span + (off2 - lo), len2);
	return 0;
}

/* A NUL-terminated string of the target (read in pieces: it may end near
 * the end of a mapping). */
static int rd_cstr(const struct os_hs_mem *m, uint32_t pid, uint64_t addr, char *buf, size_t len)
{
	size_t got = 0;

	while (got + 1 < len) {
		size_t chunk = 32 - ((addr + got) & 31);

		if (chunk > len - 1 - got)
			chunk = len - 1 - got;
		if (rd(m, pid, addr + got, buf + got, chunk) < 0)
			return -EFAULT;
		if (memchr(buf + got, 0, chunk))
			return 0;
		got += chunk;
	}
	buf[len - 1] = 0;
	return 0;
}

static int vm_add(struct os_hs_vm *vm, const char *name, uint64_t value, bool is_static,
		  uint8_t width)
{
	char *dup;

	if (vm->n == vm->cap) {
		size_t cap = vm->cap ? vm->cap * 2 : 1024;
		struct os_hs_entry *n = realloc(vm->e, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		vm->e = n;
		vm->cap = cap;
	}
	dup = strdup(name);
	if (!dup)
		return -ENOMEM;
	vm->e[vm->n].name = dup;
	vm->e[vm->n].value = value;
	vm->e[vm->n].is_static = is_static;
	vm->e[vm->n].width = width;
	vm->n++;
	return 0;
}

int os_hs_vm_add(struct os_hs_vm *vm, const char *name, uint64_t value, bool is_static)
{
	return vm_add(vm, name, value, is_static, 0);
}

int os_hs_vm_add_typed(struct os_hs_vm *vm, const char *name, uint64_t value, bool is_static,
		       uint8_t width)
{
	return vm_add(vm, name, value, is_static, width);
}

void os_hs_vm_free(struct os_hs_vm *vm)
{
	for (size_t i = 0; i < vm->n; i++)
		free(vm->e[i].name);
	free(vm->e);
	memset(vm, 0, sizeof(*vm));
}

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct os_hs_entry *)a)->name, ((const struct os_hs_entry *)b)->name);
}

static const struct os_hs_entry *find(const struct os_hs_vm *vm, const char *name)
{
	struct os_hs_entry key = { .name = (char *)name };

	if (!vm->n)
		return NULL;
	return bsearch(&key, vm->e, vm->n, sizeof(*vm->e), cmp_entry);
}

const struct os_hs_res *os_hs_vm_res(const struct os_hs_vm *vm, const char *key)
{
	int k = hs_layout_key(key, NULL);

	return k >= 0 && vm->res[k].found ? &vm->res[k] : NULL;
}

int os_hs_vm_get(const struct os_hs_vm *vm, const char *name, uint64_t *value)
{
	const struct os_hs_entry *e;
	int k = hs_layout_key(name, NULL);

	if (k >= 0) {
		if (!vm->res[k].found)
			return -ENOENT;
		*value = vm->res[k].value;
		return 0;
	}
	e = find(vm, name);
	if (!e)
		return -ENOENT;
	*value = e->value;
	return 0;
}

/* Each key of hs_layout.h: the first alternative for this version that the
 * tables name with the width it is read with. A key some alternative of
 * which holds for this version and that none resolves is missing. */
static void resolve_keys(struct os_hs_vm *vm)
{
	vm->missing = 0;
	for (size_t i = 0; i < HS_LAYOUT_N; i++) {
		const struct hs_lkey *k = &hs_layout[i];
		struct os_hs_res *r = &vm->res[i];
		bool needed = false;

		memset(r, 0, sizeof(*r));
		for (int a = 0; a < HS_LAYOUT_ALTS && k->alt[a].name; a++) {
			const struct hs_lalt *al = &k->alt[a];
			const struct os_hs_entry *e;

			/* an unknown version: names alone decide (the keys whose
			 * meaning changed under one name also differ by width or
			 * come with fields of their own version) */
			if (vm->major && !hs_layout_in_range(al, vm->major))
				continue;
			needed = true;
			e = find(vm, al->name);
			if (!e || (al->width && e->width && e->width != al->width))
				continue;
			r->found = true;
			r->is_static = e->is_static;
			r->width = al->width ? al->width : e->width;
			r->how = al->how;
			r->value = e->value;
			r->name = al->name;
			break;
		}
		if (needed && !r->found && vm->major)
			vm->missing |= 1ULL << i;
	}
}

int os_hs_vm_missing(const struct os_hs_vm *vm, char *buf, size_t len)
{
	size_t at = 0;
	int n = 0;

	if (len)
		buf[0] = 0;
	for (size_t i = 0; i < HS_LAYOUT_N && i < 64; i++) {
		const struct hs_lkey *k = &hs_layout[i];
		const char *name = k->alt[0].name;

		if (!(vm->missing & (1ULL << i)))
			continue;
		for (int a = 0; a < HS_LAYOUT_ALTS && k->alt[a].name; a++)
			if (hs_layout_in_range(&k->alt[a], vm->major)) {
				name = k->alt[a].name;
				break;
			}
		if (at < len) {
			int w = snprintf(buf + at, len - at, "%s%s (%s)", n ? "; " : "", name,
					 k->feature);

			at += w > 0 ? (size_t)w : 0;
		}
		n++;
	}
	return n;
}

int os_hs_vm_field(const struct os_hs_vm *vm, const char *name, int64_t *value)
{
	uint64_t v;

	if (os_hs_vm_get(vm, name, &v) != 0)
		return -ENOENT;
	if (v > OS_HS_FIELD_MAX) /* negative ones too */
		return -ERANGE;
	*value = (int64_t)v;
	return 0;
}

/* The first of the names that exists, as an offset in [0, OS_HS_FIELD_MAX]
 * (-1: none, or the first one found is out of range). */
static int64_t first_of(const struct os_hs_vm *vm, const char *const *names)
{
	int64_t v;

	for (; *names; names++) {
		int rc = os_hs_vm_field(vm, *names, &v);

		if (rc == 0)
			return v;
		if (rc == -ERANGE)
			return -1;
	}
	return -1;
}

#define FIRST(vm, ...) first_of(vm, (const char *const[]){ __VA_ARGS__, NULL })

_Static_assert(HS_LAYOUT_N <= 64, "os_hs_vm.missing is a 64-bit mask");

/* A static int of the target named name into *v. */
static bool static_i32(const struct os_hs_vm *vm, const struct os_hs_mem *m, uint32_t pid,
		       const char *name, uint32_t *v)
{
	const struct os_hs_entry *e = find(vm, name);

	return e && e->is_static && rd(m, pid, e->value, v, 4) == 0;
}

/* Abstract_VM_Version: the JVM's version, before any key is resolved. */
static void read_version(struct os_hs_vm *vm, const struct os_hs_mem *m, uint32_t pid)
{
	const struct os_hs_entry *e;
	uint64_t p;

	vm->major = vm->minor = vm->security = vm->build = 0;
	vm->release[0] = 0;
	if (!static_i32(vm, m, pid, "Abstract_VM_Version::_vm_major_version", &vm->major) ||
	    vm->major < 8 || vm->major > 1000) {
		vm->major = 0; /* not a version: unknown */
		return;
	}
	static_i32(vm, m, pid, "Abstract_VM_Version::_vm_minor_version", &vm->minor);
	static_i32(vm, m, pid, "Abstract_VM_Version::_vm_security_version", &vm->security);
	static_i32(vm, m, pid, "Abstract_VM_Version::_vm_build_number", &vm->build);
	e = find(vm, "Abstract_VM_Version::_s_vm_release");
	if (e && e->is_static && rd_u64(m, pid, e->value, &p) == 0 && p &&
	    rd_cstr(m, pid, p, vm->release, sizeof(vm->release)) == 0) {
		for (char *c = vm->release; *c; c++)
			if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e)
				*c = '?';
	} else {
		vm->release[0] = 0;
	}
}

int os_hs_vm_finish(struct os_hs_vm *vm, const struct os_hs_mem *m, uint32_t pid)
{
	struct os_hs_layout *l = &vm->lay;
	const struct os_hs_res *r;
	uint32_t shift = 0;
	uint64_t hs = 0, hb = 0, ks = 0;

	qsort(vm->e, vm->n, sizeof(*vm->e), cmp_entry);
	read_version(vm, m, pid);
	resolve_keys(vm);
	l->klass_name = FIRST(vm, "Klass::_name");
	l->klass_super = FIRST(vm, "Klass::_super");
	l->symbol_length = FIRST(vm, "Symbol::_length");
	l->symbol_body = FIRST(vm, "Symbol::_body", "Symbol::_body[0]");
	l->method_const = FIRST(vm, "Method::_constMethod");
	l->const_constants = FIRST(vm, "ConstMethod::_constants");
	l->const_name_index = FIRST(vm, "ConstMethod::_name_index");
	l->const_sig_index = FIRST(vm, "ConstMethod::_signature_index");
	l->cpool_holder = FIRST(vm, "ConstantPool::_pool_holder");
	l->cpool_size = FIRST(vm, "ConstantPool");
	l->oop_klass = FIRST(vm, "oopDesc::_metadata._klass");
	l->oop_cklass = FIRST(vm, "oopDesc::_metadata._compressed_klass");
	l->compressed_klass = -1;
	l->heap_total_coll = FIRST(vm, "CollectedHeap::_total_collections");
	l->heap_gc_active = FIRST(vm, "CollectedHeap::_is_gc_active");
	l->universe_heap = 0;
	{
		const struct os_hs_entry *e = find(vm, "Universe::_collectedHeap");

		l->universe_heap = e && e->is_static ? e->value : 0;
	}
	/* static fields: the table gives their address; read the value */
	r = os_hs_vm_res(vm, "CompressedKlassPointers::_narrow_klass._base");
	if (r && r->is_static)
		rd_u64(m, pid, r->value, &l->narrow_klass_base);
	r = os_hs_vm_res(vm, "CompressedKlassPointers::_narrow_klass._shift");
	if (r && r->is_static && rd(m, pid, r->value, &shift, 4) == 0) {
		if (shift < 64)
			l->narrow_klass_shift = shift;
		else
			l->oop_cklass = -1; /* compressed class words not decodable */
	}
	/* the mark word: an unlocked one's hash ends below mark_hash_top */
	l->mark_hash_top = 0;
	if (os_hs_vm_get(vm, "markWord::hash_shift", &hs) == 0 &&
	    os_hs_vm_get(vm, "markWord::hash_bits", &hb) == 0 && hs + hb <= 64 && hs >= 2)
		l->mark_hash_top = (uint32_t)(hs + hb);
	l->mark_klass_shift = 0;
	if (os_hs_vm_get(vm, "markWord::klass_shift", &ks) == 0 && ks > 2 && ks < 64 &&
	    (!l->mark_hash_top || ks >= l->mark_hash_top))
		l->mark_klass_shift = (uint32_t)ks;
	if (l->klass_name < 0 || l->symbol_length < 0 || l->symbol_body < 0)
		return -EINVAL;
	return 0;
}

/* One table: entries of `stride` bytes until one whose first name is NULL. */
static int load_table(struct os_hs_vm *vm, const struct os_hs_mem *m, uint32_t pid,
		      const struct os_jvm_table *t, int kind)
{
	uint8_t ent[512];
	char a[MAX_NAME], b[MAX_NAME], ts[MAX_NAME], name[2 * MAX_NAME + 4];
	int rc;

	/* bytes read at each off[]: names and 8-byte values, IsStatic and the
	 * int constants' values 4; 0: not read */
	static const uint8_t width[OS_JVM_NTABLES][6] = {
		[OS_JVM_STRUCTS] = { 8, 8, 8, 4, 8, 8 },
		[OS_JVM_TYPES] = { 8, 0, 0, 0, 0, 8 },
		[OS_JVM_INTS] = { 8, 4 },
		[OS_JVM_LONGS] = { 8, 8 },
	};

	if (kind < 0 || kind >= OS_JVM_NTABLES || !t->addr || !t->stride || t->stride > sizeof(ent))
		return -EINVAL;
	for (int k = 0; k < 6; k++)
		if (width[kind][k] &&
		    (t->off[k] > t->stride || t->stride - t->off[k] < width[kind][k]))
			return -EINVAL;
	for (uint32_t i = 0; i < MAX_ENTRIES; i++) {
		uint64_t p1 = 0, p2 = 0, val = 0;
		int32_t st = 0;

		rc = rd(m, pid, t->addr + (uint64_t)i * t->stride, ent, t->stride);
		if (rc < 0)
			return rc;
		memcpy(&p1, ent + t->off[0], 8);
		if (!p1)
			return 0; /* end of the table */
		if (rd_cstr(m, pid, p1, a, sizeof(a)) < 0)
			continue;
		switch (kind) {
		case OS_JVM_STRUCTS:
			memcpy(&p2, ent + t->off[1], 8);
			if (!p2 || rd_cstr(m, pid, p2, b, sizeof(b)) < 0)
				continue;
			memcpy(&st, ent + t->off[3], 4);
			if (st)
				memcpy(&val, ent + t->off[5], 8);
			else
				memcpy(&val, ent + t->off[4], 8);
			/* the declared type: the width a field is read with is
			 * checked against it (hs_layout.h) */
			memcpy(&p2, ent + t->off[2], 8);
			if (!p2 || rd_cstr(m, pid, p2, ts, sizeof(ts)) < 0)
				ts[0] = 0;
			snprintf(name, sizeof(name), "%s::%s", a, b);
			rc = vm_add(vm, name, val, st != 0, hs_layout_type_width(ts));
			break;
		case OS_JVM_TYPES:
			memcpy(&val, ent + t->off[5], 8);
			rc = os_hs_vm_add(vm, a, val, false);
			break;
		case OS_JVM_INTS:
			memcpy(&st, ent + t->off[1], 4);
			rc = os_hs_vm_add(vm, a, (uint64_t)(int64_t)st, false);
			break;
		default:
			memcpy(&val, ent + t->off[1], 8);
			rc = os_hs_vm_add(vm, a, val, false);
			break;
		}
		if (rc < 0)
			return rc;
	}
	return -EINVAL;
}

/* While the tables are loaded: the pages they and their names live in
 * (libjvm's data, never written after start-up) are read whole, once. A
 * JDK 17 vmStructs load made ~21,000 reads of 2 to 32 bytes before, ~60 ms
 * of system calls per JVM. A page that cannot be read whole (the end of a
 * mapping) is read piecewise as before. */
#define LOAD_PAGES 128

struct load_cache {
	const struct os_hs_mem *m;
	uint64_t tag[LOAD_PAGES];   /* page address + 1, 0 = empty */
	uint8_t (*data)[4096];
	uint32_t next;
};

static ssize_t cached_read(void *arg, uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct load_cache *c = arg;
	uint64_t page = addr & ~4095ULL;
	uint32_t i;

	if (!c->data || len == 0 || (addr & 4095) + len > 4096)
		return c->m->read(c->m->arg, pid, addr, buf, len);
	for (i = 0; i < LOAD_PAGES; i++)
		if (c->tag[i] == page + 1)
			break;
	if (i == LOAD_PAGES) {
		i = c->next++ % LOAD_PAGES;
		c->tag[i] = 0;
		if (c->m->read(c->m->arg, pid, page, c->data[i], 4096) != 4096)
			return c->m->read(c->m->arg, pid, addr, buf, len);
		c->tag[i] = page + 1;
	}
	memcpy(buf, c->data[i] + (addr & 4095), len);
	return (ssize_t)len;
}

int os_hs_vm_load(struct os_hs_vm *vm, const struct os_hs_mem *m, uint32_t pid,
		  const struct os_jvm_info *info)
{
	struct load_cache c = { .m = m, .data = calloc(LOAD_PAGES, 4096) };
	struct os_hs_mem cm = { cached_read, NULL, &c };
	int rc;

	memset(vm, 0, sizeof(*vm));
	for (int k = 0; k < OS_JVM_NTABLES; k++) {
		rc = load_table(vm, &cm, pid, &info->tables[k], k);
		/* the constants are optional; structs and types are not */
		if (rc < 0 && (k == OS_JVM_STRUCTS || k == OS_JVM_TYPES))
			goto out;
	}
	rc = os_hs_vm_finish(vm, m, pid);
out:
	free(c.data);
	if (rc < 0)
		os_hs_vm_free(vm);
	return rc;
}

static int symbol_str(const struct os_hs_vm *vm, const struct os_hs_mem *m, uint32_t pid,
		      uint64_t sym, char *buf, size_t len)
{
	int64_t lo = vm->lay.symbol_length, body = vm->lay.symbol_body;
	uint8_t head[96];
	uint16_t n = 0;
	ssize_t got;

	if (!sym || len < 1)
		return -EFAULT;
	if (lo < 0 || lo > OS_HS_FIELD_MAX || body < 0 || body > OS_HS_FIELD_MAX)
		return -EINVAL;
	/* Most symbols are short: the length and the body in one read (the
	 * collector names many methods; each read is a system call). A read
	 * that stops at an unmapped page reads the length alone first. */
	if (body > lo && body - lo < 32) {
		got = m->read(m->arg, pid, sym + (uint64_t)lo, head, sizeof(head));
		if (got >= body - lo) {
			memcpy(&n, head, 2);
			if (n >= len)
				n = (uint16_t)(len - 1);
			if ((int64_t)n <= got - (body - lo)) {
				memcpy(buf, head + (body - lo), n);
				buf[n] = 0;
				return 0;
			}
		}
	}
	if (rd(m, pid, sym + (uint64_t)lo, &n, 2) < 0)
		return -EFAULT;
	if (n >= len)
		n = (uint16_t)(len - 1);
	if (n && rd(m, pid, sym + (uint64_t)body, buf, n) < 0)
		return -EFAULT;
	buf[n] = 0;
	return 0;
}

int os_hs_klass_name(const struct os_hs_vm *vm, const struct os_hs_mem *m, uint32_t pid,
		     uint64_t klass, char *buf, size_t len)
{
	uint64_t sym;

	if (vm->lay.klass_name < 0)
		return -ENOENT;
	if (!klass || rd_u64(m, pid, klass + (uint64_t)vm->lay.klass_name, &sym) < 0)
		return -EFAULT;
	return symbol_str(vm, m, pid, sym, buf, len);
}

int os_hs_klass_super(const struct os_hs_vm *vm, const struct os_hs_mem *m, uint32_t pid,
		      uint64_t klass, uint64_t *super)
{
	if (vm->lay.klass_super < 0)
		return -ENOENT;
	if (!klass || rd_u64(m, pid, klass + (uint64_t)vm->lay.klass_super, super) < 0)
		return -EFAULT;
	return 0;
}

int os_hs_symbol_str(const struct os_hs_vm *vm, const struct os_hs_mem *m, uint32_t pid,
		     uint64_t sym, char *buf, size_t len)
{
	return symbol_str(vm, m, pid, sym, buf, len);
}

int os_hs_method_parts(const struct os_hs_vm *vm, const struct os_hs_mem *m, uint32_t pid,
		       uint64_t method, uint64_t *holder, char *name, size_t len)
{
	const struct os_hs_layout *l = &vm->lay;
	uint64_t cm, cp, sym;
	uint16_t idx;

	if (l->method_const < 0 || l->const_constants < 0 || l->const_name_index < 0 ||
	    l->cpool_holder < 0 || l->cpool_size <= 0)
		return -ENOENT;
	if (rd_u64(m, pid, method + (uint64_t)l->method_const, &cm) < 0 ||
	    rd_two(m, pid, cm, l->const_constants, &cp, 8, l->const_name_index, &idx, 2) < 0)
		return -EFAULT;
	{
		/* the holder and the name's constant: one system call */
		uint64_t at[2] = { cp + (uint64_t)l->cpool_holder,
				   cp + (uint64_t)l->cpool_size + (uint64_t)idx * 8 }, v[2];
		bool ok[2];

		if (!cp || os_hs_mem_words(m, pid, at, 2, v, ok) != 2 || !ok[0] || !ok[1])
			return -EFAULT;
		*holder = v[0];
		sym = v[1];
	}
	return symbol_str(vm, m, pid, sym, name, len);
}

int os_hs_method_name(const struct os_hs_vm *vm, const struct os_hs_mem *m, uint32_t pid,
		      uint64_t method, char *buf, size_t len)
{
	uint64_t holder;
	char cls[MAX_NAME], meth[MAX_NAME];
	int rc = os_hs_method_parts(vm, m, pid, method, &holder, meth, sizeof(meth));

	if (rc < 0)
		return rc;
	if (os_hs_klass_name(vm, m, pid, holder, cls, sizeof(cls)) < 0)
		return -EFAULT;
	for (char *c = cls; *c; c++)
		if (*c == '/')
			*c = '.';
	snprintf(buf, len, "%s.%s", cls, meth);
	return 0;
}

int os_hs_gc_state(struct os_hs_vm *vm, const struct os_hs_mem *m, uint32_t pid,
		   uint32_t *total, bool *active)
{
	const struct os_hs_layout *l = &vm->lay;
	uint8_t act = 0;

	if (!l->universe_heap || l->heap_total_coll < 0 || l->heap_gc_active < 0)
		return -ENOENT;
	/* the heap object is made once, before any Java code runs: read it
	 * once; both fields then come in one read when they are close (the
	 * collector calls this for many samples) */
	if (!vm->heap && (rd_u64(m, pid, l->universe_heap, &vm->heap) < 0 || !vm->heap)) {
		vm->heap = 0;
		return -EFAULT;
	}
	if (rd_two(m, pid, vm->heap, l->heap_total_coll, total, 4, l->heap_gc_active, &act, 1) < 0)
		return -EFAULT;
	*active = act != 0;
	return 0;
}

int64_t os_hs_klass_word_offset(const struct os_hs_layout *lay)
{
	if (lay->compressed_klass == 2)
		return lay->mark_klass_shift ? 0 : -1; /* the mark word */
	if (lay->compressed_klass == 1 && lay->oop_cklass >= 0)
		return lay->oop_cklass;
	return lay->oop_klass;
}

int64_t os_hs_array_length_offset(const struct os_hs_layout *lay)
{
	int64_t ko = os_hs_klass_word_offset(lay);

	if (ko < 0 || lay->compressed_klass < 0)
		return -1;
	if (lay->compressed_klass == 2)
		return 8; /* compact headers: the word after the mark word */
	return ko + (lay->compressed_klass == 1 ? 4 : 8);
}

uint64_t os_hs_decode_klass(const struct os_hs_layout *lay, uint64_t word)
{
	if (lay->compressed_klass == 2) {
		uint64_t narrow;

		/* a mark word that holds no class: an inflated lock's monitor,
		 * a forwarding pointer */
		if (!lay->mark_klass_shift || (word & 3) >= 2)
			return 0;
		narrow = word >> lay->mark_klass_shift;
		return narrow ? lay->narrow_klass_base + (narrow << lay->narrow_klass_shift) : 0;
	}
	if (lay->compressed_klass == 1)
		return lay->narrow_klass_base + ((uint64_t)(uint32_t)word << lay->narrow_klass_shift);
	if (lay->compressed_klass == 0)
		return word;
	return 0;
}

uint64_t os_hs_object_bytes(int32_t lh, int32_t len)
{
	if (lh > 0)
		return (uint64_t)(lh & ~7);
	if (lh == 0 || len < 0)
		return 0;
	return ((((uint32_t)lh >> 16) & 0xff) + ((uint64_t)len << (lh & 0x3f)) + 7) & ~7ULL;
}

int os_hs_learn_header(struct os_hs_vm *vm, const struct os_hs_mem *m, uint32_t pid, uint64_t oop,
		       uint64_t klass)
{
	struct os_hs_layout *l = &vm->lay, t = vm->lay;
	uint64_t word;

	if (l->compressed_klass >= 0)
		return 0;
	/* compact headers (JDK 24+): the class in the mark word; tried first,
	 * as the word after it is then the object's first field */
	if (l->mark_klass_shift && rd_u64(m, pid, oop, &word) == 0) {
		t.compressed_klass = 2;
		if (os_hs_decode_klass(&t, word) == klass) {
			l->compressed_klass = 2;
			return 0;
		}
	}
	if (l->oop_klass < 0)
		return -EINVAL;
	if (rd_u64(m, pid, oop + (uint64_t)l->oop_klass, &word) < 0)
		return -EFAULT;
	if (word == klass) {
		l->compressed_klass = 0;
		return 0;
	}
	if (l->narrow_klass_base + ((uint64_t)(uint32_t)word << l->narrow_klass_shift) == klass) {
		l->compressed_klass = 1;
		return 0;
	}
	return -EINVAL;
}
