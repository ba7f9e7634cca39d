/* runtimes/hotspot/hotspot_lines.c: line tables in HotSpot's compressed form,
 * encoded here the way HotSpot writes them (CompressedLineNumberWriteStream),
 * decoded and looked up by HotSpot's rule, and a method's bytecode range,
 * table and source file read from synthetic target memory through the
 * vmStructs names the collector uses (JDK 17's offsets). */
#include "runtimes/hotspot/hotspot_lines.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "tests/unit/unit_helpers.h"

#define BASE 0x7f0000300000ULL /* target address of mem[0] */
#define MEM_LEN 16384
#define METHOD_AT 64           /* the Method */
#define CM_AT 256              /* its ConstMethod (48 bytes), bytecodes after */
#define CP_AT 8192             /* its ConstantPool (72 bytes), slots after */
#define SYM 0x7f0000400000ULL  /* a Symbol* (not read here) */

static uint8_t mem[MEM_LEN];
static uint8_t tab[4096];
static size_t tab_len;
static int last_bci, last_line;

static struct ut_mem tm = { BASE, mem, MEM_LEN };

static void put(uint32_t off, const void *v, size_t len)
{
	memcpy(mem + off, v, len);
}

static void write_int(uint32_t v)
{
	ut_write_int(tab, &tab_len, v);
}

static void write_signed(int32_t v)
{
	write_int(((uint32_t)v << 1) ^ (uint32_t)(v >> 31));
}

/* CompressedLineNumberWriteStream::write_pair */
static void pair(int bci, int line)
{
	int db = bci - last_bci, dl = line - last_line;

	last_bci = bci;
	last_line = line;
	if (db >= 0 && db < 32 && dl >= 0 && dl < 8 && ((db << 3) | dl) != 0xFF) {
		tab[tab_len++] = (uint8_t)(db << 3 | dl);
		return;
	}
	tab[tab_len++] = 0xFF;
	write_signed(db);
	write_signed(dl);
}

static void start(void)
{
	tab_len = 0;
	last_bci = last_line = 0;
}

/* A table with every kind of entry: one-byte pairs, the escape with
 * multi-byte and negative deltas, and a one-byte value that would be 0xFF. */
static void sample_table(void)
{
	start();
	pair(0, 10);      /* escape: line delta 10 > 7 */
	pair(4, 11);      /* one byte */
	pair(9, 14);      /* one byte */
	pair(40, 12);     /* escape: line goes back (a loop's condition) */
	pair(71, 19);     /* bci delta 31, line delta 7: 0xFF, so escaped */
	pair(5000, 3000); /* multi-byte numbers */
	tab[tab_len++] = 0;
}

Test(hotspot_lines, decodes_every_form_of_pair)
{
	uint32_t p[16];
	static const uint32_t want[][2] = { { 0, 10 }, { 4, 11 }, { 9, 14 }, { 40, 12 },
					    { 71, 19 }, { 5000, 3000 } };

	sample_table();
	cr_assert_eq(os_hs_lines_decode(tab, tab_len, p, 16), 6);
	for (int i = 0; i < 6; i++) {
		cr_expect_eq(p[i] >> 16, want[i][0], "pair %d bci", i);
		cr_expect_eq(p[i] & 0xffff, want[i][1], "pair %d line", i);
	}
}

Test(hotspot_lines, bad_tables_are_refused)
{
	uint32_t p[16];

	sample_table();
	cr_expect_eq(os_hs_lines_decode(tab, tab_len - 1, p, 16), -EINVAL, "no end");
	cr_expect_eq(os_hs_lines_decode(tab, 3, p, 16), -EINVAL, "cut inside an escape");
	cr_expect_eq(os_hs_lines_decode(tab, tab_len, p, 5), -EINVAL, "more pairs than room");
	start();
	pair(10, 5);
	pair(3, 1); /* fine: deltas may be negative */
	tab[tab_len++] = 0xFF;
	write_signed(-20); /* bci below 0 */
	write_signed(0);
	tab[tab_len++] = 0;
	cr_expect_eq(os_hs_lines_decode(tab, tab_len, p, 16), -EINVAL, "negative bci");
	tab[0] = 0;
	cr_expect_eq(os_hs_lines_decode(tab, tab_len, p, 16), 0, "empty table");
}

/* Method::line_number_from_bci: the entry at the bci, else the one with
 * the largest bci below it; the entry bci (-1) is bci 0. */
Test(hotspot_lines, line_of_a_bci_follows_hotspot)
{
	uint32_t p[16];
	int n;

	sample_table();
	n = os_hs_lines_decode(tab, tab_len, p, 16);
	cr_assert_eq(n, 6);
	os_hs_lines_sort(p, (uint32_t)n);
	cr_expect_eq(os_hs_line_at(p, (uint32_t)n, 0), 10);
	cr_expect_eq(os_hs_line_at(p, (uint32_t)n, -1), 10);
	cr_expect_eq(os_hs_line_at(p, (uint32_t)n, 9), 14);
	cr_expect_eq(os_hs_line_at(p, (uint32_t)n, 39), 14);
	cr_expect_eq(os_hs_line_at(p, (uint32_t)n, 40), 12);
	cr_expect_eq(os_hs_line_at(p, (uint32_t)n, 4999), 19);
	cr_expect_eq(os_hs_line_at(p, (uint32_t)n, 6000), 3000);
	cr_expect_eq(os_hs_line_at(p, (uint32_t)n, -2), 0, "not a bci");
	cr_expect_eq(os_hs_line_at(p, 0, 5), 0, "no table");
	/* out of order, and two entries at one bci (a line split by the
	 * compiler): as HotSpot's scan of the table, the first at the bci
	 * itself, else the last of those at the largest bci below */
	p[0] = 20u << 16 | 7;
	p[1] = 2u << 16 | 3;
	p[2] = 9u << 16 | 30;
	p[3] = 9u << 16 | 31;
	p[4] = 0u << 16 | 1;
	os_hs_lines_sort(p, 5);
	cr_expect_eq(p[0], 0u << 16 | 1);
	cr_expect_eq(p[4], 20u << 16 | 7);
	cr_expect_eq(os_hs_line_at(p, 5, 10), 31, "last of the ties below");
	cr_expect_eq(os_hs_line_at(p, 5, 9), 30, "first of the ties at the bci");
	cr_expect_eq(os_hs_line_at(p, 5, 5), 3);
	cr_expect_eq(os_hs_line_at(p, 5, 25), 7);
	cr_expect_eq(os_hs_line_at(p, 4, 0), 1);
	p[0] = 4u << 16 | 1;
	cr_expect_eq(os_hs_line_at(p, 1, 2), 0, "nothing at or before the bci");
}

static struct os_hs_vm vm;
static struct os_hs_line_layout lay;

static const struct {
	const char *name;
	uint64_t v;
} names[] = {
	{ "Method::_constMethod", 8 },
	{ "ConstMethod::_constants", 8 },
	{ "ConstMethod::_constMethod_size", 24 },
	{ "ConstMethod::_flags", 28 },
	{ "ConstMethod::_code_size", 32 },
	{ "ConstantPool::_source_file_name_index", 54 },
	{ "ConstMethod", 48 },
	{ "ConstantPool", 72 },
};

static void setup(void)
{
	uint64_t cm = BASE + CM_AT, cp = BASE + CP_AT, sym = SYM;
	uint16_t code = 100, flags = 0x1, src = 5;
	int32_t words;

	memset(mem, 0, sizeof(mem));
	memset(&vm, 0, sizeof(vm));
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		cr_assert_eq(os_hs_vm_add(&vm, names[i].name, names[i].v, false), 0);
	os_hs_vm_finish(&vm, NULL, 1);
	os_hs_line_layout(&lay, &vm);
	cr_assert(lay.ok, "layout not resolved");
	sample_table();
	put(METHOD_AT + 8, &cm, 8);
	put(CM_AT + 8, &cp, 8);
	put(CM_AT + 28, &flags, 2);
	put(CM_AT + 32, &code, 2);
	memset(mem + CM_AT + 48, 0xb6, code); /* bytecodes: nothing reads them */
	put(CM_AT + 48 + code, tab, tab_len);
	/* the ConstMethod ends after its table and a few words of other tables */
	words = (int32_t)((48 + code + tab_len + 7) / 8 + 3);
	put(CM_AT + 24, &words, 4);
	put(CP_AT + 54, &src, 2);
	put(CP_AT + 72 + 5 * 8, &sym, 8);
}

static void teardown(void)
{
	os_hs_vm_free(&vm);
}

Test(hotspot_lines, reads_a_methods_table_and_file, .init = setup, .fini = teardown)
{
	struct os_hs_mlines ml;
	uint64_t sym = 0;

	cr_assert_eq(os_hs_mlines_read(&ml, &lay, ut_mem_read, &tm, BASE + METHOD_AT), 0);
	cr_expect_eq(ml.code_base, BASE + CM_AT + 48);
	cr_expect_eq(ml.code_size, 100);
	cr_expect_eq(ml.cpool, BASE + CP_AT);
	cr_assert_eq(ml.npairs, 6);
	cr_expect_eq(os_hs_line_at(ml.pairs, ml.npairs, 41), 12);
	cr_expect_eq(os_hs_source_symbol(&lay, ut_mem_read, &tm, ml.cpool, &sym), 0);
	cr_expect_eq(sym, SYM);
	os_hs_mlines_free(&ml);
	/* no SourceFile attribute: index 0 */
	memset(mem + CP_AT + 54, 0, 2);
	cr_expect_eq(os_hs_source_symbol(&lay, ut_mem_read, &tm, BASE + CP_AT, &sym), 0);
	cr_expect_eq(sym, 0);
}

Test(hotspot_lines, methods_without_or_with_bad_tables, .init = setup, .fini = teardown)
{
	struct os_hs_mlines ml;
	uint16_t flags = 0x4; /* a local variable table, no line table */
	int32_t words = 4;     /* smaller than the header and bytecodes */

	put(CM_AT + 28, &flags, 2);
	cr_assert_eq(os_hs_mlines_read(&ml, &lay, ut_mem_read, &tm, BASE + METHOD_AT), 0);
	cr_expect_eq(ml.npairs, 0, "no line table");
	cr_expect_eq(ml.code_size, 100, "the bytecode range is still known");
	os_hs_mlines_free(&ml);
	flags = 0x1;
	put(CM_AT + 28, &flags, 2);
	put(CM_AT + 24, &words, 4);
	cr_expect_eq(os_hs_mlines_read(&ml, &lay, ut_mem_read, &tm, BASE + METHOD_AT), -EINVAL);
	words = 1 << 20; /* past the memory: the table cannot be read */
	put(CM_AT + 24, &words, 4);
	cr_expect_eq(os_hs_mlines_read(&ml, &lay, ut_mem_read, &tm, BASE + METHOD_AT), -EINVAL,
		     "a table region larger than any is believed");
	cr_expect_eq(os_hs_mlines_read(&ml, &lay, ut_mem_read, &tm, BASE + MEM_LEN + 64), -EFAULT);
	cr_expect_eq(ml.pairs, NULL, "nothing kept on failure");
}

/* A bcp to a bci: the whole pointer (a frame read by the collector), or its
 * 13 low bits (the preload's allocation paths), which are certain only for
 * methods of at most 8 KiB of bytecodes. */
Test(hotspot_lines, bytecode_pointer_to_index)
{
	struct os_hs_mlines ml = { .code_base = 0x7f0000011ff0ULL, .code_size = 300 };

	cr_expect_eq(os_hs_bci_of(&ml, ml.code_base + 17, false), 17);
	cr_expect_eq(os_hs_bci_of(&ml, ml.code_base + 300, false), -1, "past the bytecodes");
	cr_expect_eq(os_hs_bci_of(&ml, ml.code_base - 1, false), -1, "before them");
	/* the low bits wrap within 8 KiB: base ends in 0x1ff0, bci 40 at 0x2018 */
	cr_expect_eq(os_hs_bci_of(&ml, (ml.code_base + 40) & 0x1fff, true), 40);
	cr_expect_eq(os_hs_bci_of(&ml, (ml.code_base + 299) & 0x1fff, true), 299);
	cr_expect_eq(os_hs_bci_of(&ml, (ml.code_base + 300) & 0x1fff, true), -1);
	ml.code_size = 0x2001;
	cr_expect_eq(os_hs_bci_of(&ml, (ml.code_base + 40) & 0x1fff, true), -1,
		     "ambiguous in a method over 8 KiB");
	cr_expect_eq(os_hs_bci_of(&ml, ml.code_base + 0x2000, false), 0x2000);
}

/* Any one field offset or size of the target's tables out of range (negative
 * ones that would pass a signed bounds check, huge ones): no layout, so no
 * line is read at all. */
Test(hotspot_lines, absurd_offsets_leave_the_layout_unresolved)
{
	static const uint64_t absurd[] = { (uint64_t)INT64_MIN, (uint64_t)-8, (uint64_t)-1,
					   1ULL << 40, UINT64_MAX - 3, 4097 };
	const size_t nn = sizeof(names) / sizeof(names[0]);

	for (size_t k = 0; k < nn; k++) {
		for (size_t a = 0; a < sizeof(absurd) / sizeof(absurd[0]); a++) {
			struct os_hs_line_layout l;
			struct os_hs_vm v;

			memset(&v, 0, sizeof(v));
			for (size_t i = 0; i < nn; i++)
				cr_assert_eq(os_hs_vm_add(&v, names[i].name,
							  i == k ? absurd[a] : names[i].v, false),
					     0);
			os_hs_vm_finish(&v, NULL, 1);
			os_hs_line_layout(&l, &v);
			cr_expect(!l.ok, "%s = %#llx", names[k].name,
				  (unsigned long long)absurd[a]);
			os_hs_vm_free(&v);
		}
	}
}
