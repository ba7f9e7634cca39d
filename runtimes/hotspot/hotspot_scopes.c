/* hotspot_scopes.c - an nmethod's inlining scopes (hotspot_scopes.h). */
#include "runtimes/hotspot/hotspot_scopes.h"
#include "common/unaligned.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NM_MAX_SECTION (16u << 20) /* a section larger than this is not believed */

int os_hs_stream_u5(const struct os_hs_vm *vm, bool *u5)
{
	uint64_t v;

	/* UNSIGNED5 came with the field info streams (JDK 21): both are
	 * required, and a JVM of unknown version is read the old way only
	 * when it has no field info streams */
	if (vm->major && vm->major < HS_JDK_UNSIGNED5) {
		*u5 = false;
		return 0;
	}
	if (os_hs_vm_get(vm, "InstanceKlass::_fieldinfo_stream", &v) == 0) {
		*u5 = true;
		return 0;
	}
	if (!vm->major) {
		*u5 = false;
		return 0;
	}
	return -ENOENT;
}

int64_t os_hs_field(const struct os_hs_vm *vm, const char *name, bool *ok)
{
	uint64_t v;

	if (os_hs_vm_get(vm, name, &v) != 0 || v > 4096) {
		*ok = false;
		return -1;
	}
	return (int64_t)v;
}

bool os_hs_read_int(const uint8_t *p, size_t len, size_t *pos, uint32_t *v)
{
	uint32_t sum = 0, shift = 0;

	for (int i = 0; i < 5; i++) {
		uint32_t b;

		if (*pos >= len)
			return false;
		b = p[(*pos)++];
		sum += b << shift;
		if (b < 192 || i == 4)
			break;
		shift += 6;
	}
	*v = sum;
	return true;
}

/* UNSIGNED5 (JDK 21+): bytes offset by one (0 is never a digit); a 0 byte
 * starts a run of zero values whose length follows (JDK 25's debug info).
 * *zeros: zero values of a run still to give (0 at a stream position a
 * reader starts from: a run never spans one). */
bool os_hs_read_u5(const uint8_t *p, size_t len, size_t *pos, uint32_t *v, uint32_t *zeros)
{
	uint32_t sum, shift = 6;

	if (zeros && *zeros) {
		(*zeros)--;
		*v = 0;
		return true;
	}
	if (*pos >= len)
		return false;
	if (p[*pos] == 0) { /* a run of zeros */
		if (!zeros || *pos + 1 >= len || !p[*pos + 1])
			return false;
		*zeros = (uint32_t)p[*pos + 1] - 1;
		*pos += 2;
		*v = 0;
		return true;
	}
	sum = (uint32_t)p[(*pos)++] - 1;
	if (sum < 191) {
		*v = sum;
		return true;
	}
	for (int i = 1; i < 5; i++, shift += 6) {
		uint32_t b;

		if (*pos >= len || !p[*pos])
			return false;
		b = p[(*pos)++];
		sum += (b - 1) << shift;
		if (b < 192 || i == 4)
			break;
	}
	*v = sum;
	return true;
}

bool os_hs_read_int_enc(const uint8_t *p, size_t len, size_t *pos, uint32_t *v, bool u5,
			uint32_t *zeros)
{
	return u5 ? os_hs_read_u5(p, len, pos, v, zeros) : os_hs_read_int(p, len, pos, v);
}

void os_hs_scope_layout(struct os_hs_scope_layout *l, const struct os_hs_vm *vm)
{
	bool ok = true, split = true;
	uint64_t size = 0;
	int64_t last = 0;

	memset(l, 0, sizeof(*l));
	l->name = os_hs_field(vm, "CodeBlob::_name", &ok);
	l->method = os_hs_field(vm, "CompiledMethod::_method", &ok);
	l->cid = os_hs_field(vm, "nmethod::_compile_id", &ok);
	l->pc_off = os_hs_field(vm, "PcDesc::_pc_offset", &ok);
	l->scope_off = os_hs_field(vm, "PcDesc::_scope_decode_offset", &ok);
	if (os_hs_vm_get(vm, "PcDesc", &size) != 0 || size < 8 || size > 64)
		ok = false;
	if (!ok)
		return;
	/* the blob layout, else the split one: each needs all of its fields
	 * (hs_layout.h gives each only for the versions it holds in) */
	l->sdata = os_hs_field(vm, "CompiledMethod::_scopes_data_begin", &ok);
	l->meta = os_hs_field(vm, "nmethod::_metadata_offset", &ok);
	l->pcs = os_hs_field(vm, "nmethod::_scopes_pcs_offset", &ok);
	l->deps = os_hs_field(vm, "nmethod::_dependencies_offset", &ok);
	l->mode = OS_HS_NM_BLOB;
	if (!ok) {
		l->sdata = os_hs_field(vm, "nmethod::_immutable_data@25", &split);
		l->imm_size = os_hs_field(vm, "nmethod::_immutable_data_size@25", &split);
		l->pcs = os_hs_field(vm, "nmethod::_scopes_pcs_offset@25", &split);
		l->deps = os_hs_field(vm, "nmethod::_scopes_data_offset@25", &split);
		l->meta = os_hs_field(vm, "CodeBlob::_mutable_data@25", &split);
		l->mut_size = os_hs_field(vm, "CodeBlob::_mutable_data_size@25", &split);
		l->reloc = os_hs_field(vm, "CodeBlob::_relocation_size@25", &split);
		if (!split) {
			l->mode = 0;
			return;
		}
		l->mode = OS_HS_NM_SPLIT;
	}
	l->pcdesc = (uint32_t)size;
	/* the streams' integer coding (hs_layout.h HS_JDK_UNSIGNED5) */
	if (os_hs_stream_u5(vm, &l->u5) != 0)
		return;
	if (l->pc_off + 4 > (int64_t)size || l->scope_off + 4 > (int64_t)size)
		return;
	for (const int64_t *f = &l->name; f <= &l->cid; f++)
		if (*f > last)
			last = *f;
	l->hdr_len = (uint32_t)last + 8;
	l->ok = true;
}

void os_hs_nm_free(struct os_hs_nm *nm)
{
	free(nm->pcs);
	free(nm->data);
	free(nm->meta);
	memset(nm, 0, sizeof(*nm));
}

static bool read_hdr(const struct os_hs_scope_layout *l, os_hs_read_fn rd, void *arg,
		     uint64_t start, uint8_t *hdr)
{
	return l->hdr_len <= 1024 && rd(arg, start, hdr, l->hdr_len);
}

/* One section [lo, hi) of the target into a new buffer of n bytes. */
static int section(os_hs_read_fn rd, void *arg, uint64_t lo, uint64_t hi, void **out)
{
	size_t n;

	*out = NULL;
	if (hi < lo || hi - lo > 3 * (uint64_t)NM_MAX_SECTION)
		return -EINVAL;
	n = (size_t)(hi - lo);
	if (!n)
		return 0;
	*out = malloc(n);
	if (!*out)
		return -ENOMEM;
	if (!rd(arg, lo, *out, n))
		return -EFAULT;
	return 0;
}

/* The PcDescs of raw (npcs of them) into nm->pcs: false when not sorted. */
static bool fill_pcs(struct os_hs_nm *nm, const struct os_hs_scope_layout *l, const uint8_t *raw)
{
	for (uint32_t i = 0; i < nm->npcs; i++) {
		nm->pcs[2 * i] = os_i32_at(raw + (size_t)i * l->pcdesc, l->pc_off);
		nm->pcs[2 * i + 1] = os_i32_at(raw + (size_t)i * l->pcdesc, l->scope_off);
		if (i && nm->pcs[2 * i] < nm->pcs[2 * i - 2]) /* HotSpot keeps them sorted */
			return false;
	}
	return true;
}

/* JDK 25: PcDescs and scopes in the immutable data block, the metadata
 * after the relocations in the mutable one. */
static int nm_read_split(struct os_hs_nm *nm, const struct os_hs_scope_layout *l,
			 os_hs_read_fn rd, void *arg, uint64_t start, uint64_t code_begin,
			 const uint8_t *hdr)
{
	uint64_t imm = os_u64_at(hdr, l->sdata), mut = os_u64_at(hdr, l->meta);
	int32_t imm_size = os_i32_at(hdr, l->imm_size), pcs_off = os_i32_at(hdr, l->pcs),
		data_off = os_i32_at(hdr, l->deps), mut_size = os_i32_at(hdr, l->mut_size),
		reloc = os_i32_at(hdr, l->reloc);
	uint64_t meta_lo, meta_hi;
	uint8_t *raw = NULL;
	int rc;

	if (!imm || !mut || (imm & 7) || (mut & 7) || imm_size <= 0 || pcs_off < 0 ||
	    data_off < pcs_off || data_off > imm_size || mut_size < 0 || reloc < 0 ||
	    reloc > mut_size || (uint32_t)imm_size > NM_MAX_SECTION ||
	    (uint32_t)mut_size > NM_MAX_SECTION || (data_off - pcs_off) % l->pcdesc)
		return -EINVAL;
	meta_lo = mut + (((uint64_t)reloc + 7) & ~7ULL);
	meta_hi = mut + (uint64_t)mut_size;
	if (meta_lo > meta_hi)
		return -EINVAL;
	nm->start = start;
	nm->code_begin = code_begin;
	nm->method = os_u64_at(hdr, l->method);
	nm->sdata_at = imm;
	nm->compile_id = os_i32_at(hdr, l->cid);
	nm->u5 = l->u5;
	/* PcDescs and scopes in one read; the metadata in another */
	rc = section(rd, arg, imm + (uint64_t)pcs_off, imm + (uint64_t)imm_size, (void **)&raw);
	if (!rc && meta_hi > meta_lo)
		rc = section(rd, arg, meta_lo, meta_hi, (void **)&nm->meta);
	nm->nmeta = (uint32_t)((meta_hi - meta_lo) / 8);
	nm->ndata = (uint32_t)(imm_size - data_off);
	nm->npcs = (uint32_t)((data_off - pcs_off) / (int32_t)l->pcdesc);
	if (!rc && nm->ndata && !(nm->data = malloc(nm->ndata)))
		rc = -ENOMEM;
	if (!rc && nm->npcs && !(nm->pcs = malloc(2 * sizeof(int32_t) * nm->npcs)))
		rc = -ENOMEM;
	if (!rc) {
		if (nm->ndata)
			memcpy(nm->data, raw + (data_off - pcs_off), nm->ndata);
		if (!fill_pcs(nm, l, raw))
			rc = -EINVAL;
	}
	free(raw);
	if (rc)
		os_hs_nm_free(nm);
	return rc;
}

int os_hs_nm_read(struct os_hs_nm *nm, struct os_hs_scope_layout *l, os_hs_read_fn rd,
		  void *arg, uint64_t start, uint64_t code_begin)
{
	uint8_t hdr[1024], *raw = NULL, *pcs;
	char name[8];
	uint64_t name_at, meta_lo, data_lo, pcs_lo, pcs_hi;
	int32_t pcs_off, deps_off, meta_off;
	int rc;

	memset(nm, 0, sizeof(*nm));
	if (!l->ok)
		return -ENOENT;
	if (!read_hdr(l, rd, arg, start, hdr))
		return -EFAULT;
	name_at = os_u64_at(hdr, l->name);
	if (!name_at)
		return -EFAULT;
	if (name_at != l->name_seen) {
		if (!rd(arg, name_at, name, sizeof(name)))
			return -EFAULT;
		if (memcmp(name, "nmethod", 8) != 0)
			return -ENOENT;
		l->name_seen = name_at;
	}
	if (l->mode == OS_HS_NM_SPLIT)
		return nm_read_split(nm, l, rd, arg, start, code_begin, hdr);
	meta_off = os_i32_at(hdr, l->meta);
	pcs_off = os_i32_at(hdr, l->pcs);
	deps_off = os_i32_at(hdr, l->deps);
	data_lo = os_u64_at(hdr, l->sdata);
	meta_lo = start + (uint64_t)(int64_t)meta_off;
	pcs_lo = start + (uint64_t)(int64_t)pcs_off;
	pcs_hi = start + (uint64_t)(int64_t)deps_off;
	/* the sections follow one another: metadata, scopes data, PcDescs */
	if (meta_off <= 0 || pcs_off <= 0 || deps_off < pcs_off || data_lo < meta_lo ||
	    pcs_lo < data_lo || (data_lo - meta_lo) % 8 || (pcs_hi - pcs_lo) % l->pcdesc)
		return -EINVAL;
	nm->start = start;
	nm->code_begin = code_begin;
	nm->method = os_u64_at(hdr, l->method);
	nm->sdata_at = data_lo;
	nm->compile_id = os_i32_at(hdr, l->cid);
	nm->u5 = l->u5;
	/* the three sections in one read (each remote read is a system call:
	 * javac reads ~3,800 nmethods), then apart */
	if (data_lo - meta_lo > NM_MAX_SECTION || pcs_lo - data_lo > NM_MAX_SECTION ||
	    pcs_hi - pcs_lo > NM_MAX_SECTION) {
		os_hs_nm_free(nm);
		return -EINVAL;
	}
	rc = section(rd, arg, meta_lo, pcs_hi, (void **)&raw);
	if (!rc && data_lo > meta_lo && !(nm->meta = malloc(data_lo - meta_lo)))
		rc = -ENOMEM;
	if (!rc && pcs_lo > data_lo && !(nm->data = malloc(pcs_lo - data_lo)))
		rc = -ENOMEM;
	if (rc) {
		free(raw);
		os_hs_nm_free(nm);
		return rc;
	}
	if (nm->meta)
		memcpy(nm->meta, raw, data_lo - meta_lo);
	if (nm->data)
		memcpy(nm->data, raw + (data_lo - meta_lo), pcs_lo - data_lo);
	pcs = raw ? raw + (pcs_lo - meta_lo) : NULL; /* the PcDescs */
	nm->nmeta = (uint32_t)((data_lo - meta_lo) / 8);
	nm->ndata = (uint32_t)(pcs_lo - data_lo);
	nm->npcs = (uint32_t)((pcs_hi - pcs_lo) / l->pcdesc);
	if (nm->npcs) {
		nm->pcs = malloc(2 * sizeof(int32_t) * nm->npcs);
		if (!nm->pcs) {
			free(raw);
			os_hs_nm_free(nm);
			return -ENOMEM;
		}
	}
	for (uint32_t i = 0; i < nm->npcs; i++) {
		nm->pcs[2 * i] = os_i32_at(pcs + (size_t)i * l->pcdesc, l->pc_off);
		nm->pcs[2 * i + 1] = os_i32_at(pcs + (size_t)i * l->pcdesc, l->scope_off);
		if (i && nm->pcs[2 * i] < nm->pcs[2 * i - 2]) { /* HotSpot keeps them sorted */
			free(raw);
			os_hs_nm_free(nm);
			return -EINVAL;
		}
	}
	free(raw);
	return 0;
}

bool os_hs_nm_same(const struct os_hs_nm *nm, const struct os_hs_scope_layout *l,
		   os_hs_read_fn rd, void *arg)
{
	uint8_t hdr[1024];

	return read_hdr(l, rd, arg, nm->start, hdr) && os_i32_at(hdr, l->cid) == nm->compile_id &&
	       os_u64_at(hdr, l->method) == nm->method && os_u64_at(hdr, l->sdata) == nm->sdata_at;
}

/* One compressed int of the scopes data at *pos (*zeros: a run of zeros). */
static bool read_int(const struct os_hs_nm *nm, uint32_t *pos, uint32_t *v, uint32_t *zeros)
{
	size_t at = *pos;
	bool ok = os_hs_read_int_enc(nm->data, nm->ndata, &at, v, nm->u5, zeros);

	*pos = (uint32_t)at;
	return ok;
}

/* The PcDesc index for pc offset off: exact, or the first at or after it. */
static bool find_pc(const struct os_hs_nm *nm, int64_t off, bool exact, uint32_t *at)
{
	uint32_t lo = 0, hi = nm->npcs;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (nm->pcs[2 * mid] < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == nm->npcs || (exact && nm->pcs[2 * lo] != off))
		return false;
	*at = lo;
	return true;
}

uint32_t os_hs_nm_expand(const struct os_hs_nm *nm, uint64_t pc, bool exact, uint64_t *out,
			 int32_t *bci, uint32_t max)
{
	uint32_t at, n = 0, scope;
	int64_t off;

	if (!max || pc < nm->code_begin || pc - nm->code_begin > INT32_MAX)
		return 0;
	off = (int64_t)(pc - nm->code_begin);
	if (!find_pc(nm, off, exact, &at))
		return 0;
	scope = (uint32_t)nm->pcs[2 * at + 1];
	if (nm->pcs[2 * at + 1] <= 0) /* serialized_null: no scope recorded here */
		return 0;
	while (scope) {
		uint32_t sender, idx, b, pos = scope, zeros = 0;

		/* sender offset, method index, bci + 1 (InvocationEntryBci -1
		 * stored as 0) */
		if (n == max || n == OS_HS_SCOPE_DEPTH || !read_int(nm, &pos, &sender, &zeros) ||
		    !read_int(nm, &pos, &idx, &zeros) || !idx || idx > nm->nmeta ||
		    !read_int(nm, &pos, &b, &zeros) ||
		    b > 0x10000)
			return 0;
		out[n] = nm->meta[idx - 1];
		if (bci)
			bci[n] = (int32_t)b - 1;
		if (!out[n] || (out[n] & 7))
			return 0;
		n++;
		/* a sender lies before its callee in the stream */
		if (sender >= scope)
			return 0;
		scope = sender;
	}
	return n && out[n - 1] == nm->method ? n : 0;
}
