/* runtimes/hotspot/hs_layout.h and its decoders fed the vmStructs names,
 * declared widths and values of both JDKs the adapter is checked on (read
 * from the JVMs on the test machine with `jhsdb clhsdb` vmstructsdump:
 * Debian 17.0.21 and Temurin 25.0.3): which alternative each key resolves
 * to, what a version lacking a field switches off, and the JDK 25 forms
 * of nmethod debug info, line tables (UNSIGNED5) and object headers
 * (compact headers). */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "runtimes/hotspot/hotspot_lines.h"
#include "runtimes/hotspot/hotspot_scopes.h"
#include "runtimes/hotspot/hotspot_vm.h"
#include "tests/unit/unit_helpers.h"

#define BASE 0x7f0000100000ULL /* target address of mem[0] */
#define MEM_LEN 65536
#define AT_MAJOR 0x10  /* Abstract_VM_Version::_vm_major_version (int) */
#define AT_KBASE 0x20  /* CompressedKlassPointers base (address) */
#define AT_KSHIFT 0x28 /* CompressedKlassPointers shift (int) */

static uint8_t mem[MEM_LEN];
static struct ut_mem tm = { BASE, mem, MEM_LEN };

static ssize_t mem_read(void *arg, uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	(void)pid;
	return ut_mem_read(arg, addr, buf, len) ? (ssize_t)len : -1;
}

static const struct os_hs_mem fake = { mem_read, NULL, &tm };

struct name {
	const char *name;
	uint64_t value;
	bool is_static;
	uint8_t width; /* of the declared type, as hs_layout_type_width gives it */
};

/* Names both tables share (the same on 17 and 25 where they are read). */
static const struct name common_names[] = {
	{ "Klass::_name", 24, false, 8 },
	{ "Klass::_layout_helper", 8, false, 4 },
	{ "Symbol::_length", 4, false, 2 },
	{ "Symbol::_body", 6, false, 0 },
	{ "Method::_constMethod", 8, false, 8 },
	{ "ConstMethod::_constants", 8, false, 8 },
	{ "ConstMethod::_constMethod_size", 24, false, 4 },
	{ "ConstMethod::_name_index", 36, false, 2 },
	{ "ConstantPool::_pool_holder", 24, false, 8 },
	{ "ConstantPool::_source_file_name_index", 54, false, 2 },
	{ "ConstantPool", 72, false, 0 },
	{ "oopDesc::_metadata._klass", 8, false, 8 },
	{ "oopDesc::_metadata._compressed_klass", 8, false, 4 },
	{ "CodeBlob::_name", 8, false, 8 },
	{ "PcDesc::_pc_offset", 0, false, 4 },
	{ "PcDesc::_scope_decode_offset", 4, false, 4 },
	{ "PcDesc", 16, false, 0 },
	{ "markWord::hash_bits", 31, false, 0 },
};

static const struct name jdk17_names[] = {
	{ "CollectedHeap::_is_gc_active", 48, false, 1 },
	{ "GenCollectedHeap::_young_gen", 96, false, 8 },
	{ "HeapRegionManager::_regions", 96, false, 0 },
	{ "HeapRegion::_type", 188, false, 0 },
	{ "HeapRegionType::_tag", 0, false, 0 },
	{ "HeapRegionType::YoungMask", 2, false, 0 },
	{ "HeapRegionType::HumongousMask", 4, false, 0 },
	{ "ConstMethod::_flags", 28, false, 2 },
	{ "ConstMethod::_code_size", 30, false, 2 },
	{ "ConstMethod", 48, false, 0 },
	{ "CompressedKlassPointers::_narrow_klass._base", BASE + AT_KBASE, true, 8 },
	{ "CompressedKlassPointers::_narrow_klass._shift", BASE + AT_KSHIFT, true, 4 },
	{ "CodeBlob::_code_begin", 32, false, 8 },
	{ "CodeBlob::_frame_complete_offset", 20, false, 4 },
	{ "CompiledMethod::_method", 112, false, 8 },
	{ "CompiledMethod::_scopes_data_begin", 120, false, 8 },
	{ "nmethod::_metadata_offset", 260, false, 4 },
	{ "nmethod::_scopes_pcs_offset", 268, false, 4 },
	{ "nmethod::_dependencies_offset", 272, false, 4 },
	{ "nmethod::_compile_id", 304, false, 4 },
	{ "markWord::hash_shift", 8, false, 0 },
};

static const struct name jdk25_names[] = {
	{ "CollectedHeap::_is_stw_gc_active", 64, false, 1 },
	{ "SerialHeap::_young_gen", 112, false, 8 },
	{ "G1HeapRegionManager::_regions", 88, false, 0 },
	{ "G1HeapRegion::_type", 52, false, 0 },
	{ "G1HeapRegionType::_tag", 0, false, 0 },
	{ "G1HeapRegionType::YoungMask", 2, false, 0 },
	{ "G1HeapRegionType::HumongousMask", 4, false, 0 },
	{ "ConstMethod::_flags._flags", 28, false, 4 },
	{ "ConstMethod::_code_size", 34, false, 2 },
	{ "ConstMethod", 56, false, 0 },
	{ "ConstMethodFlags::_misc_has_linenumber_table", 1, false, 0 },
	{ "InstanceKlass::_fieldinfo_stream", 176, false, 8 },
	{ "CompressedKlassPointers::_base", BASE + AT_KBASE, true, 8 },
	{ "CompressedKlassPointers::_shift", BASE + AT_KSHIFT, true, 4 },
	{ "CodeBlob::_code_offset", 36, false, 4 },
	{ "CodeBlob::_frame_complete_offset", 54, false, 2 },
	{ "CodeBlob::_mutable_data", 16, false, 8 },
	{ "CodeBlob::_relocation_size", 28, false, 4 },
	{ "CodeBlob::_mutable_data_size", 48, false, 4 },
	{ "nmethod::_method", 80, false, 8 },
	{ "nmethod::_immutable_data", 96, false, 8 },
	{ "nmethod::_immutable_data_size", 160, false, 4 },
	{ "nmethod::_scopes_pcs_offset", 196, false, 4 },
	{ "nmethod::_scopes_data_offset", 200, false, 4 },
	{ "nmethod::_compile_id", 212, false, 4 },
	{ "markWord::hash_shift", 11, false, 0 },
	{ "markWord::klass_shift", 42, false, 0 },
};

static struct os_hs_vm vm;

/* A vm of the names of one JDK (and `major` in the version field; 0: no
 * version field), with what replace[] says instead where a name matches
 * (a replacement with the value UINT64_MAX drops the name). */
static void load(const struct name *names, size_t n, int32_t major, const struct name *replace,
		 size_t nrep)
{
	uint64_t kbase = 0x48000000;
	int32_t kshift = 0;

	memset(mem, 0, sizeof(mem));
	memset(&vm, 0, sizeof(vm));
	memcpy(mem + AT_MAJOR, &major, 4);
	memcpy(mem + AT_KBASE, &kbase, 8);
	memcpy(mem + AT_KSHIFT, &kshift, 4);
	for (size_t i = 0; i < sizeof(common_names) / sizeof(common_names[0]); i++)
		cr_assert_eq(os_hs_vm_add_typed(&vm, common_names[i].name, common_names[i].value,
						common_names[i].is_static, common_names[i].width), 0);
	for (size_t i = 0; i < n; i++) {
		const struct name *e = &names[i];

		for (size_t k = 0; k < nrep; k++)
			if (!strcmp(replace[k].name, e->name))
				e = &replace[k];
		if (e->value == UINT64_MAX)
			continue;
		cr_assert_eq(os_hs_vm_add_typed(&vm, e->name, e->value, e->is_static, e->width), 0);
	}
	if (major)
		cr_assert_eq(os_hs_vm_add_typed(&vm, "Abstract_VM_Version::_vm_major_version",
						BASE + AT_MAJOR, true, 4), 0);
	cr_assert_eq(os_hs_vm_finish(&vm, &fake, 1), 0);
}

#define LOAD(names, major) load(names, sizeof(names) / sizeof(names[0]), major, NULL, 0)

static void fini(void)
{
	os_hs_vm_free(&vm);
}

TestSuite(hotspot_layout, .fini = fini);

static void expect_res(const char *key, const char *name, uint64_t value, uint8_t width)
{
	const struct os_hs_res *r = os_hs_vm_res(&vm, key);
	uint64_t v = 0;

	cr_assert_not_null(r, "%s not resolved", key);
	cr_expect_str_eq(r->name, name, "%s -> %s, want %s", key, r->name, name);
	cr_expect_eq(r->width, width, "%s: width %u, want %u", key, r->width, width);
	cr_expect_eq(os_hs_vm_get(&vm, key, &v), 0);
	cr_expect_eq(v, value, "%s = %llu, want %llu", key, (unsigned long long)v,
		     (unsigned long long)value);
}

Test(hotspot_layout, jdk17_names_resolve_to_themselves)
{
	char miss[256];

	LOAD(jdk17_names, 17);
	cr_expect_eq(vm.major, 17);
	expect_res("CollectedHeap::_is_gc_active", "CollectedHeap::_is_gc_active", 48, 1);
	expect_res("GenCollectedHeap::_young_gen", "GenCollectedHeap::_young_gen", 96, 8);
	expect_res("HeapRegion::_type", "HeapRegion::_type", 188, 0);
	expect_res("ConstMethod::_flags", "ConstMethod::_flags", 28, 2);
	expect_res("CodeBlob::_code_begin", "CodeBlob::_code_begin", 32, 8);
	cr_expect_eq(os_hs_vm_res(&vm, "CodeBlob::_code_begin")->how, HS_LA_PLAIN);
	expect_res("CodeBlob::_frame_complete_offset", "CodeBlob::_frame_complete_offset", 20, 4);
	cr_expect_null(os_hs_vm_res(&vm, "nmethod::_immutable_data@25"));
	cr_expect_eq(os_hs_vm_missing(&vm, miss, sizeof(miss)), 0, "missing: %s", miss);
	cr_expect_eq(vm.lay.heap_gc_active, 48);
	cr_expect_eq(vm.lay.mark_hash_top, 39);
	cr_expect_eq(vm.lay.mark_klass_shift, 0, "no class in the mark word before JDK 24");
	cr_expect_eq(vm.lay.narrow_klass_base, 0x48000000);
}

Test(hotspot_layout, jdk25_names_resolve_to_the_new_ones)
{
	char miss[256];

	LOAD(jdk25_names, 25);
	cr_expect_eq(vm.major, 25);
	expect_res("CollectedHeap::_is_gc_active", "CollectedHeap::_is_stw_gc_active", 64, 1);
	expect_res("GenCollectedHeap::_young_gen", "SerialHeap::_young_gen", 112, 8);
	expect_res("HeapRegionManager::_regions", "G1HeapRegionManager::_regions", 88, 0);
	expect_res("HeapRegion::_type", "G1HeapRegion::_type", 52, 0);
	expect_res("HeapRegionType::YoungMask", "G1HeapRegionType::YoungMask", 2, 0);
	expect_res("ConstMethod::_flags", "ConstMethod::_flags._flags", 28, 4);
	expect_res("CodeBlob::_code_begin", "CodeBlob::_code_offset", 36, 4);
	cr_expect_eq(os_hs_vm_res(&vm, "CodeBlob::_code_begin")->how, HS_LA_REL);
	expect_res("CodeBlob::_frame_complete_offset", "CodeBlob::_frame_complete_offset", 54, 2);
	expect_res("CompiledMethod::_method", "nmethod::_method", 80, 8);
	expect_res("nmethod::_scopes_pcs_offset@25", "nmethod::_scopes_pcs_offset", 196, 4);
	/* the same name in its JDK 17 meaning (offset from the blob) is not
	 * read on 25 */
	cr_expect_null(os_hs_vm_res(&vm, "nmethod::_scopes_pcs_offset"));
	cr_expect_eq(os_hs_vm_missing(&vm, miss, sizeof(miss)), 0, "missing: %s", miss);
	cr_expect_eq(vm.lay.heap_gc_active, 64);
	cr_expect_eq(vm.lay.mark_hash_top, 42);
	cr_expect_eq(vm.lay.mark_klass_shift, 42);
	cr_expect_eq(vm.lay.narrow_klass_base, 0x48000000);
}

/* A field the version needs that its tables lack, or declare with another
 * width, is missing: named with the feature it serves, never read with a
 * width the JVM does not have. */
Test(hotspot_layout, missing_or_wrong_width_fields_are_named)
{
	static const struct name wrong[] = {
		{ "CodeBlob::_frame_complete_offset", 54, false, 4 }, /* int, not int16_t */
		{ "CollectedHeap::_is_stw_gc_active", 64, false, 0 },  /* width unknown: kept */
		{ "SerialHeap::_young_gen", UINT64_MAX, false, 8 },    /* the field gone */
	};
	char miss[512];
	int n;

	load(jdk25_names, sizeof(jdk25_names) / sizeof(jdk25_names[0]), 25, wrong, 3);
	cr_expect_null(os_hs_vm_res(&vm, "CodeBlob::_frame_complete_offset"));
	cr_expect_not_null(os_hs_vm_res(&vm, "CollectedHeap::_is_gc_active"));
	cr_expect_null(os_hs_vm_res(&vm, "GenCollectedHeap::_young_gen"));
	n = os_hs_vm_missing(&vm, miss, sizeof(miss));
	cr_expect_eq(n, 2, "missing: %s", miss);
	cr_expect(strstr(miss, "CodeBlob::_frame_complete_offset (JIT frames walked by their "
			       "code blobs)") != NULL, "%s", miss);
	cr_expect(strstr(miss, "SerialHeap::_young_gen (the Serial collector's young "
			       "generation)") != NULL, "%s", miss);
}

/* JDK 25's names on a JVM claiming JDK 17: the ranged alternatives do not
 * hold, so the keys are missing rather than read in another meaning. */
Test(hotspot_layout, names_of_another_version_are_not_taken)
{
	char miss[1024];

	LOAD(jdk25_names, 17);
	cr_expect_null(os_hs_vm_res(&vm, "CollectedHeap::_is_gc_active"));
	cr_expect_null(os_hs_vm_res(&vm, "ConstMethod::_flags"));
	/* a name kept across versions resolves, but the layout needing it
	 * also needs fields of its own version: the debug info stays off */
	{
		struct os_hs_scope_layout l;

		os_hs_scope_layout(&l, &vm);
		cr_expect(!l.ok, "JDK 25's nmethod read as JDK 17's");
	}
	cr_expect_gt(os_hs_vm_missing(&vm, miss, sizeof(miss)), 5, "missing: %s", miss);
	cr_expect(strstr(miss, "CollectedHeap::_is_gc_active (the collector's state") != NULL,
		  "%s", miss);
}

Test(hotspot_layout, type_widths)
{
	cr_expect_eq(hs_layout_type_width("bool"), 1);
	cr_expect_eq(hs_layout_type_width("int16_t"), 2);
	cr_expect_eq(hs_layout_type_width("u2"), 2);
	cr_expect_eq(hs_layout_type_width("int"), 4);
	cr_expect_eq(hs_layout_type_width("u4"), 4);
	cr_expect_eq(hs_layout_type_width("unsigned int"), 4);
	cr_expect_eq(hs_layout_type_width("address"), 8);
	cr_expect_eq(hs_layout_type_width("DefNewGeneration*"), 8);
	cr_expect_eq(hs_layout_type_width("G1HeapRegionType"), 0);
	cr_expect_eq(hs_layout_type_width(NULL), 0);
	cr_expect_eq(hs_layout_key("CodeBlob", "_code_begin"),
		     hs_layout_key("CodeBlob::_code_begin", NULL));
	cr_expect_eq(hs_layout_key("CodeBlob", "_code_offset"), -1, "not a key: read as named");
}

/* UNSIGNED5 (HotSpot's unsigned5.hpp, as CompressedWriteStream writes it
 * from JDK 21): v into b at *at. */
static void u5(uint8_t *b, size_t *at, uint32_t v)
{
	uint32_t sum = v;

	for (int i = 0;; i++) {
		if (sum < 191 || i == 4) {
			b[(*at)++] = (uint8_t)(sum + 1);
			return;
		}
		sum -= 191;
		b[(*at)++] = (uint8_t)(192 + (sum % 64));
		sum >>= 6;
	}
}

static uint32_t zz(int32_t v)
{
	return ((uint32_t)v << 1) ^ (uint32_t)(v >> 31);
}

Test(hotspot_layout, unsigned5_ints_and_runs_of_zeros)
{
	static const uint32_t vals[] = { 0, 1, 190, 191, 192, 4000, 300000, 70000000, 0xffffffffu };
	uint8_t b[64];
	size_t at = 0, pos = 0;
	uint32_t v, zeros = 0;

	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
		u5(b, &at, vals[i]);
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		cr_assert(os_hs_read_u5(b, at, &pos, &v, &zeros), "value %zu", i);
		cr_expect_eq(v, vals[i], "value %zu: %u, want %u", i, v, vals[i]);
	}
	cr_expect_eq(pos, at);
	/* a run of three zeros (JDK 25's debug info), then 7 */
	at = pos = 0;
	b[at++] = 0;
	b[at++] = 3;
	u5(b, &at, 7);
	for (int i = 0; i < 3; i++) {
		cr_assert(os_hs_read_u5(b, at, &pos, &v, &zeros));
		cr_expect_eq(v, 0);
	}
	cr_assert(os_hs_read_u5(b, at, &pos, &v, &zeros));
	cr_expect_eq(v, 7);
	/* where no run can be (a line table's pair), a 0 byte is refused */
	pos = 0;
	cr_expect(!os_hs_read_u5(b, at, &pos, &v, NULL));
	/* cut inside a long number */
	at = pos = 0;
	u5(b, &at, 300000);
	cr_expect(!os_hs_read_u5(b, at - 1, &pos, &v, NULL));
}

/* A JDK 25 line table: the escaped pairs' ints in UNSIGNED5. */
Test(hotspot_layout, unsigned5_line_table)
{
	uint8_t tab[32];
	uint32_t pairs[8];
	size_t at = 0;
	int n;

	tab[at++] = 0xff; /* bci 0, line 120: the escape */
	u5(tab, &at, zz(0));
	u5(tab, &at, zz(120));
	tab[at++] = 3 << 3 | 2; /* bci +3, line +2 */
	tab[at++] = 0xff;       /* bci +40, line -5 */
	u5(tab, &at, zz(40));
	u5(tab, &at, zz(-5));
	tab[at++] = 0;
	n = os_hs_lines_decode_enc(tab, at, pairs, 8, true);
	cr_assert_eq(n, 3);
	cr_expect_eq(pairs[0], 0u << 16 | 120);
	cr_expect_eq(pairs[1], 3u << 16 | 122);
	cr_expect_eq(pairs[2], 43u << 16 | 117);
	/* the JDK 17 coding reads other numbers from the same bytes */
	n = os_hs_lines_decode_enc(tab, at, pairs, 8, false);
	cr_expect(n < 0 || pairs[0] != (0u << 16 | 120), "JDK 17 coding read the same table");
}

/* JDK 25's nmethod: PcDescs and scopes behind _immutable_data, the
 * metadata after the relocations behind CodeBlob::_mutable_data. */
#define NM 0x1000    /* the blob */
#define CODE 0x180   /* _code_offset */
#define IMM 0x3000   /* immutable data */
#define MUT 0x5000   /* mutable data */
#define RELOC 20     /* relocation bytes: the metadata at the next word */
#define M_OUTER 0x7f0000200010ULL
#define M_INNER 0x7f0000200080ULL

static void put32(uint32_t off, int32_t v)
{
	memcpy(mem + off, &v, 4);
}

static void put64(uint32_t off, uint64_t v)
{
	memcpy(mem + off, &v, 8);
}

Test(hotspot_layout, jdk25_nmethod_scopes)
{
	struct os_hs_scope_layout l;
	struct os_hs_nm nm;
	uint8_t data[64];
	size_t dlen = 0;
	uint32_t s_outer, s_inner, pcs_off = 16, data_off, imm_size, npcs = 2;
	uint64_t out[4];
	int32_t bci[4];

	LOAD(jdk25_names, 25);
	os_hs_scope_layout(&l, &vm);
	cr_assert(l.ok && l.mode == OS_HS_NM_SPLIT && l.u5, "layout: ok %d mode %d", l.ok, l.mode);
	/* scopes: outer (metadata index 1) at bci 7, inner (index 2) at 3 */
	data[dlen++] = 0xff; /* offset 0 is never a scope */
	s_outer = (uint32_t)dlen;
	u5(data, &dlen, 0);
	u5(data, &dlen, 1);
	u5(data, &dlen, 7 + 1);
	s_inner = (uint32_t)dlen;
	u5(data, &dlen, s_outer);
	u5(data, &dlen, 2);
	u5(data, &dlen, 3 + 1);
	data_off = pcs_off + 16 * npcs;
	imm_size = data_off + (uint32_t)dlen + 8;
	put32(IMM + pcs_off, 0x40);
	put32(IMM + pcs_off + 4, (int32_t)s_inner);
	put32(IMM + pcs_off + 16, 0x80);
	put32(IMM + pcs_off + 20, (int32_t)s_outer);
	memcpy(mem + IMM + data_off, data, dlen);
	put64(MUT + 24, M_OUTER); /* align_up(RELOC, 8) */
	put64(MUT + 32, M_INNER);
	/* the blob's header */
	memcpy(mem + 0x200, "nmethod", 8);
	put64(NM + 8, BASE + 0x200);
	put64(NM + 16, BASE + MUT);
	put32(NM + 28, RELOC);
	put32(NM + 36, CODE);
	put32(NM + 48, 24 + 16);
	put64(NM + 80, M_OUTER);
	put64(NM + 96, BASE + IMM);
	put32(NM + 160, (int32_t)imm_size);
	put32(NM + 196, (int32_t)pcs_off);
	put32(NM + 200, (int32_t)data_off);
	put32(NM + 212, 77);
	cr_assert_eq(os_hs_nm_read(&nm, &l, ut_mem_read, &tm, BASE + NM, BASE + NM + CODE), 0);
	cr_expect_eq(nm.npcs, 2);
	cr_expect_eq(nm.nmeta, 2);
	cr_expect_eq(nm.compile_id, 77);
	cr_assert_eq(os_hs_nm_expand(&nm, BASE + NM + CODE + 0x40, true, out, bci, 4), 2);
	cr_expect_eq(out[0], M_INNER);
	cr_expect_eq(bci[0], 3);
	cr_expect_eq(out[1], M_OUTER);
	cr_expect_eq(bci[1], 7);
	cr_expect(os_hs_nm_same(&nm, &l, ut_mem_read, &tm));
	/* the check that the outermost scope is the nmethod's method */
	put64(NM + 80, M_INNER);
	os_hs_nm_free(&nm);
	cr_assert_eq(os_hs_nm_read(&nm, &l, ut_mem_read, &tm, BASE + NM, BASE + NM + CODE), 0);
	cr_expect_eq(os_hs_nm_expand(&nm, BASE + NM + CODE + 0x40, true, out, bci, 4), 0);
	os_hs_nm_free(&nm);
	/* sections that do not fit are refused */
	put32(NM + 200, (int32_t)imm_size + 8);
	cr_expect_eq(os_hs_nm_read(&nm, &l, ut_mem_read, &tm, BASE + NM, BASE + NM + CODE),
		     -EINVAL);
}

Test(hotspot_layout, jdk17_scopes_layout_stays_the_blob_one)
{
	struct os_hs_scope_layout l;

	LOAD(jdk17_names, 17);
	os_hs_scope_layout(&l, &vm);
	cr_expect(l.ok && l.mode == OS_HS_NM_BLOB && !l.u5, "ok %d mode %d u5 %d", l.ok, l.mode,
		  l.u5);
}

/* Compact object headers (JDK 24+): the narrow class in the mark word at
 * markWord::klass_shift, an array's length in the next word; learnt from
 * an allocation's header and its class as the detour saw it. */
Test(hotspot_layout, compact_headers)
{
	struct os_hs_layout lay;
	uint64_t klass = 0x48000000 + 0x176468, mark = (0x176468ULL << 42) | 1;

	LOAD(jdk25_names, 25);
	lay = vm.lay;
	lay.compressed_klass = 2;
	cr_expect_eq(os_hs_decode_klass(&lay, mark), klass);
	cr_expect_eq(os_hs_decode_klass(&lay, mark & ~3ULL), klass, "fast-locked: class kept");
	cr_expect_eq(os_hs_decode_klass(&lay, (mark & ~3ULL) | 2), 0, "inflated: no class");
	cr_expect_eq(os_hs_decode_klass(&lay, (mark & ~3ULL) | 3), 0, "forwarded: no class");
	cr_expect_eq(os_hs_klass_word_offset(&lay), 0);
	cr_expect_eq(os_hs_array_length_offset(&lay), 8);
	/* learnt from a header: compact first */
	put64(0x8000, mark);
	put64(0x8008, 0x1234); /* the first field: not a class */
	cr_assert_eq(os_hs_learn_header(&vm, &fake, 1, BASE + 0x8000, klass), 0);
	cr_expect_eq(vm.lay.compressed_klass, 2);
	/* a JDK 25 object without compact headers: the narrow class at +8 */
	vm.lay.compressed_klass = -1;
	put64(0x8000, 1);
	put64(0x8008, 0x176468);
	cr_assert_eq(os_hs_learn_header(&vm, &fake, 1, BASE + 0x8000, klass), 0);
	cr_expect_eq(vm.lay.compressed_klass, 1);
	cr_expect_eq(os_hs_array_length_offset(&vm.lay), 12);
	/* a header that decodes to no known class teaches nothing */
	vm.lay.compressed_klass = -1;
	cr_expect_eq(os_hs_learn_header(&vm, &fake, 1, BASE + 0x8000, klass + 8), -EINVAL);
	cr_expect_eq(vm.lay.compressed_klass, -1);
}
