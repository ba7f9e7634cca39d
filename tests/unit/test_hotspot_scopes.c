/* runtimes/hotspot/hotspot_scopes.c: an nmethod's debug info read from synthetic
 * target memory, and its scope chains decoded into inlined methods. The
 * field offsets are JDK 17's (vmStructs of the JDK on the test machine),
 * given through the same names the collector looks up. */
#include "runtimes/hotspot/hotspot_scopes.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "tests/unit/unit_helpers.h"

#define BASE 0x7f0000100000ULL /* target address of mem[0]: the blob */
#define MEM_LEN 8192
#define NAME_AT 7000           /* the blob's name string */
#define META_AT 600            /* nmethod::_metadata_offset */
#define DATA_AT 1000           /* scopes data */
#define PCS_AT 3000            /* nmethod::_scopes_pcs_offset */
#define CODE 400               /* code_begin - blob: PcDesc offsets count from it */

#define M_OUTER 0x7f0000200010ULL /* the compiled method */
#define M_MID 0x7f0000200040ULL
#define M_INNER 0x7f0000200080ULL

static uint8_t mem[MEM_LEN];
static struct os_hs_vm vm;
static struct os_hs_scope_layout lay;
static size_t data_len;

static struct ut_mem tm = { BASE, mem, MEM_LEN };

static void put(uint32_t off, const void *v, size_t len)
{
	memcpy(mem + off, v, len);
}

static void put32(uint32_t off, int32_t v)
{
	put(off, &v, 4);
}

static void put64(uint32_t off, uint64_t v)
{
	put(off, &v, 8);
}

static void write_int(uint32_t v)
{
	ut_write_int(mem + DATA_AT, &data_len, v);
}

/* A scope: its decode offset. */
static uint32_t scope(uint32_t sender, uint32_t meta_index, uint32_t bci)
{
	uint32_t at = (uint32_t)data_len;

	write_int(sender);
	write_int(meta_index);
	write_int(bci + 1); /* read_bci: the value + InvocationEntryBci (-1) */
	write_int(0);       /* locals, expressions, monitors: not read */
	write_int(0);
	write_int(0);
	return at;
}

static uint32_t npcs;

static void pcdesc(int32_t pc, int32_t scope_off)
{
	uint32_t at = PCS_AT + 16 * npcs++;

	put32(at, pc);
	put32(at + 4, scope_off);
	put32(at + 8, 0);
	put32(at + 12, 0);
	put32(272, (int32_t)(PCS_AT + 16 * npcs)); /* _dependencies_offset: the end */
}

static uint32_t s_outer, s_mid, s_inner, s_foreign, s_loop;

static void setup(void)
{
	static const struct {
		const char *name;
		uint64_t v;
	} names[] = {
		{ "CodeBlob::_name", 96 },
		{ "CompiledMethod::_method", 112 },
		{ "CompiledMethod::_scopes_data_begin", 120 },
		{ "nmethod::_metadata_offset", 260 },
		{ "nmethod::_scopes_pcs_offset", 268 },
		{ "nmethod::_dependencies_offset", 272 },
		{ "nmethod::_compile_id", 304 },
		{ "PcDesc::_pc_offset", 0 },
		{ "PcDesc::_scope_decode_offset", 4 },
		{ "PcDesc::_obj_decode_offset", 8 },
		{ "PcDesc", 16 },
	};

	memset(mem, 0, sizeof(mem));
	memset(&vm, 0, sizeof(vm));
	data_len = 0;
	npcs = 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		cr_assert_eq(os_hs_vm_add(&vm, names[i].name, names[i].v, false), 0);
	/* sorts the names; -EINVAL for the class-name fields not given here */
	os_hs_vm_finish(&vm, NULL, 1);
	os_hs_scope_layout(&lay, &vm);
	cr_assert(lay.ok, "layout not resolved");

	put64(96, BASE + NAME_AT);
	put(NAME_AT, "nmethod", 8);
	put64(112, M_OUTER);
	put64(120, BASE + DATA_AT);
	put32(260, META_AT);
	put32(268, PCS_AT);
	put32(304, 42);
	/* metadata: index 1 = outer, 2 = mid, 3 = inner */
	put64(META_AT, M_OUTER);
	put64(META_AT + 8, M_MID);
	put64(META_AT + 16, M_INNER);
	for (uint32_t i = 3; i < (DATA_AT - META_AT) / 8; i++)
		put64(META_AT + 8 * i, 0);
	/* offset 0 is never a scope (HotSpot writes a first byte); then
	 * filler so that later offsets need two-byte numbers */
	mem[DATA_AT + data_len++] = 0xff;
	while (data_len < 250)
		mem[DATA_AT + data_len++] = 0;
	s_outer = scope(0, 1, 17);
	s_mid = scope(s_outer, 2, 3);
	s_inner = scope(s_mid, 3, 0);
	s_foreign = scope(0, 2, 1);    /* outermost is not the compiled method */
	s_loop = scope(5000, 1, 0);    /* a sender after itself */
	cr_assert(s_mid >= 192 && s_inner >= 192, "offsets too small to test long numbers");
	cr_assert(DATA_AT + data_len <= PCS_AT);
	while (data_len < PCS_AT - DATA_AT)
		mem[DATA_AT + data_len++] = 0;
	pcdesc(-1, 0);        /* lower sentinel */
	pcdesc(10, (int32_t)s_inner);
	pcdesc(20, (int32_t)s_outer);
	pcdesc(30, (int32_t)s_foreign);
	pcdesc(40, (int32_t)s_loop);
	pcdesc(50, 0);        /* no scope recorded */
	pcdesc(60, (int32_t)s_mid);
}

static void teardown(void)
{
	os_hs_vm_free(&vm);
}

TestSuite(hotspot_scopes, .init = setup, .fini = teardown);

static void read_nm(struct os_hs_nm *nm)
{
	cr_assert_eq(os_hs_nm_read(nm, &lay, ut_mem_read, &tm, BASE, BASE + CODE), 0);
}

Test(hotspot_scopes, reads_the_sections)
{
	struct os_hs_nm nm;

	read_nm(&nm);
	cr_expect_eq(nm.method, M_OUTER);
	cr_expect_eq(nm.compile_id, 42);
	cr_expect_eq(nm.npcs, 7);
	cr_expect_eq(nm.nmeta, (DATA_AT - META_AT) / 8);
	cr_expect_eq(nm.ndata, PCS_AT - DATA_AT);
	os_hs_nm_free(&nm);
}

Test(hotspot_scopes, return_address_expands_to_inlined_methods)
{
	struct os_hs_nm nm;
	uint64_t out[8];

	int32_t bci[8];

	read_nm(&nm);
	cr_assert_eq(os_hs_nm_expand(&nm, BASE + CODE + 10, true, out, bci, 8), 3);
	cr_expect_eq(out[0], M_INNER);
	cr_expect_eq(out[1], M_MID);
	cr_expect_eq(out[2], M_OUTER);
	/* each scope's bytecode index: where the inlined call (or the pc) is */
	cr_expect_eq(bci[0], 0);
	cr_expect_eq(bci[1], 3);
	cr_expect_eq(bci[2], 17);
	cr_assert_eq(os_hs_nm_expand(&nm, BASE + CODE + 60, true, out, NULL, 8), 2);
	cr_expect_eq(out[0], M_MID);
	cr_expect_eq(out[1], M_OUTER);
	cr_assert_eq(os_hs_nm_expand(&nm, BASE + CODE + 20, true, out, NULL, 8), 1);
	cr_expect_eq(out[0], M_OUTER);
	/* a return address has its own PcDesc: none at 11 */
	cr_expect_eq(os_hs_nm_expand(&nm, BASE + CODE + 11, true, out, NULL, 8), 0);
	os_hs_nm_free(&nm);
}

/* An interrupted pc takes the next PcDesc at or after it (HotSpot's
 * approximate lookup). */
Test(hotspot_scopes, interrupted_pc_takes_the_next_pcdesc)
{
	struct os_hs_nm nm;
	uint64_t out[8];

	read_nm(&nm);
	cr_expect_eq(os_hs_nm_expand(&nm, BASE + CODE + 3, false, out, NULL, 8), 3);
	cr_assert_eq(os_hs_nm_expand(&nm, BASE + CODE + 11, false, out, NULL, 8), 1);
	cr_expect_eq(out[0], M_OUTER);
	cr_expect_eq(os_hs_nm_expand(&nm, BASE + CODE + 61, false, out, NULL, 8), 0, "past the last");
	cr_expect_eq(os_hs_nm_expand(&nm, BASE + CODE - 1, false, out, NULL, 8), 0, "before the code");
	os_hs_nm_free(&nm);
}

/* Chains that do not decode to the compiled method, loop, or lack a scope
 * are not trusted; nor is a chain cut by the caller's room. */
Test(hotspot_scopes, bad_chains_expand_to_nothing)
{
	struct os_hs_nm nm;
	uint64_t out[8];

	read_nm(&nm);
	cr_expect_eq(os_hs_nm_expand(&nm, BASE + CODE + 30, true, out, NULL, 8), 0, "foreign root");
	cr_expect_eq(os_hs_nm_expand(&nm, BASE + CODE + 40, true, out, NULL, 8), 0, "loop");
	cr_expect_eq(os_hs_nm_expand(&nm, BASE + CODE + 50, true, out, NULL, 8), 0, "no scope");
	cr_expect_eq(os_hs_nm_expand(&nm, BASE + CODE + 10, true, out, NULL, 2), 0, "no room");
	os_hs_nm_free(&nm);
	/* a method index past the metadata */
	mem[DATA_AT + s_outer + 1] = 120; /* one byte: 120 > nmeta (50) */
	read_nm(&nm);
	cr_expect_eq(os_hs_nm_expand(&nm, BASE + CODE + 20, true, out, NULL, 8), 0, "bad index");
	os_hs_nm_free(&nm);
}

Test(hotspot_scopes, other_blobs_and_bad_sections_are_refused)
{
	struct os_hs_nm nm;

	put(NAME_AT, "Stub  \0", 8);
	cr_expect_eq(os_hs_nm_read(&nm, &lay, ut_mem_read, &tm, BASE, BASE + CODE), -ENOENT);
	put(NAME_AT, "nmethod", 8);
	/* the name "nmethod" is read once per pointer: another blob's name
	 * pointer is read and checked again */
	cr_assert_eq(os_hs_nm_read(&nm, &lay, ut_mem_read, &tm, BASE, BASE + CODE), 0);
	os_hs_nm_free(&nm);
	cr_expect_eq(lay.name_seen, BASE + NAME_AT);
	put(NAME_AT + 16, "Stub  \0", 8);
	put64(96, BASE + NAME_AT + 16);
	cr_expect_eq(os_hs_nm_read(&nm, &lay, ut_mem_read, &tm, BASE, BASE + CODE), -ENOENT);
	put64(96, BASE + NAME_AT);
	put32(PCS_AT + 16 * 2, 5); /* PcDescs out of order */
	cr_expect_eq(os_hs_nm_read(&nm, &lay, ut_mem_read, &tm, BASE, BASE + CODE), -EINVAL);
	put32(PCS_AT + 16 * 2, 20);
	put32(272, PCS_AT + 8); /* not a whole PcDesc */
	cr_expect_eq(os_hs_nm_read(&nm, &lay, ut_mem_read, &tm, BASE, BASE + CODE), -EINVAL);
	put32(272, PCS_AT + 16 * 7);
	put64(120, BASE + MEM_LEN + 4096); /* scopes data outside readable memory */
	put32(268, MEM_LEN + 8192);
	put32(272, MEM_LEN + 8192);
	cr_expect_eq(os_hs_nm_read(&nm, &lay, ut_mem_read, &tm, BASE, BASE + CODE), -EFAULT);
	cr_expect_eq(os_hs_nm_read(&nm, &lay, ut_mem_read, &tm, BASE + MEM_LEN, BASE), -EFAULT);
}

/* A cached nmethod is the same while its compile id, method and scopes
 * stay; code freed and reused for another compilation is not. */
Test(hotspot_scopes, replaced_nmethod_is_noticed)
{
	struct os_hs_nm nm;

	read_nm(&nm);
	cr_expect(os_hs_nm_same(&nm, &lay, ut_mem_read, &tm));
	put32(304, 43);
	cr_expect(!os_hs_nm_same(&nm, &lay, ut_mem_read, &tm));
	put32(304, 42);
	put64(112, M_MID);
	cr_expect(!os_hs_nm_same(&nm, &lay, ut_mem_read, &tm));
	os_hs_nm_free(&nm);
}

Test(hotspot_scopes, missing_names_leave_the_layout_unresolved)
{
	struct os_hs_vm v;
	struct os_hs_scope_layout l;

	memset(&v, 0, sizeof(v));
	cr_assert_eq(os_hs_vm_add(&v, "CodeBlob::_name", 96, false), 0);
	os_hs_vm_finish(&v, NULL, 1);
	os_hs_scope_layout(&l, &v);
	cr_expect(!l.ok);
	os_hs_vm_free(&v);
}

/* Any one field offset or size of the target's tables out of range: no
 * layout (a header offset that passed would index the collector's copy of
 * the header). */
Test(hotspot_scopes, absurd_offsets_leave_the_layout_unresolved)
{
	static const char *const fields[] = {
		"CodeBlob::_name", "CompiledMethod::_method", "CompiledMethod::_scopes_data_begin",
		"nmethod::_metadata_offset", "nmethod::_scopes_pcs_offset",
		"nmethod::_dependencies_offset", "nmethod::_compile_id", "PcDesc::_pc_offset",
		"PcDesc::_scope_decode_offset", "PcDesc",
	};
	static const uint64_t absurd[] = { (uint64_t)INT64_MIN, (uint64_t)-8, (uint64_t)-1,
					   1ULL << 40, UINT64_MAX - 3, 4097 };

	for (size_t k = 0; k < sizeof(fields) / sizeof(fields[0]); k++) {
		for (size_t a = 0; a < sizeof(absurd) / sizeof(absurd[0]); a++) {
			struct os_hs_scope_layout l;
			struct os_hs_vm v;
			uint64_t keep = 0;

			/* the suite's tables, one value replaced */
			cr_assert_eq(os_hs_vm_get(&vm, fields[k], &keep), 0);
			memset(&v, 0, sizeof(v));
			for (size_t i = 0; i < vm.n; i++)
				cr_assert_eq(os_hs_vm_add(&v, vm.e[i].name,
							  strcmp(vm.e[i].name, fields[k])
								  ? vm.e[i].value
								  : absurd[a],
							  false),
					     0);
			os_hs_vm_finish(&v, NULL, 1);
			os_hs_scope_layout(&l, &v);
			cr_expect(!l.ok, "%s = %#llx", fields[k], (unsigned long long)absurd[a]);
			os_hs_vm_free(&v);
		}
	}
}
