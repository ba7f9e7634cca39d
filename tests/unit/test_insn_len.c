/* test_insn_len.c - the fast instruction-length decoder must agree with
 * capstone whenever it answers: on the code loaded in this process (libc,
 * libcapstone, the test binary) and on random bytes. */
#include <capstone/capstone.h>
#include <criterion/criterion.h>
#include <elf.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include "attacher/core/insn_len.h"

static csh cs;
static cs_insn *insn;

static void setup(void)
{
	cr_assert_eq(cs_open(CS_ARCH_X86, CS_MODE_64, &cs), CS_ERR_OK);
	insn = cs_malloc(cs);
	cr_assert_not_null(insn);
}

static void teardown(void)
{
	cs_free(insn, 1);
	cs_close(&cs);
}

TestSuite(insn_len, .init = setup, .fini = teardown);

/* capstone's length for the instruction at p (0: invalid) */
static unsigned cs_len(const uint8_t *p, size_t avail, uint64_t addr)
{
	const uint8_t *code = p;
	size_t size = avail < 15 ? avail : 15;

	if (!cs_disasm_iter(cs, &code, &size, &addr, insn))
		return 0;
	return insn->size;
}

Test(insn_len, known_encodings)
{
	static const struct {
		uint8_t b[15];
		size_t n;
		unsigned len;
	} t[] = {
		{ { 0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8 }, 10, 10 },      /* movabs rax, imm64 */
		{ { 0x66, 0xb8, 1, 2 }, 4, 4 },                          /* mov ax, imm16 */
		{ { 0xb8, 1, 2, 3, 4 }, 5, 5 },                          /* mov eax, imm32 */
		{ { 0xe8, 0, 0, 0, 0 }, 5, 5 },                          /* call rel32 */
		{ { 0x0f, 0x84, 0, 0, 0, 0 }, 6, 6 },                    /* je rel32 */
		{ { 0x8b, 0x44, 0x24, 0x08 }, 4, 4 },                    /* mov eax, [rsp+8] */
		{ { 0x48, 0x8b, 0x05, 1, 2, 3, 4 }, 7, 7 },              /* mov rax, [rip+d32] */
		{ { 0x8b, 0x04, 0x25, 1, 2, 3, 4 }, 7, 7 },              /* mov eax, [d32] (SIB) */
		{ { 0x48, 0x81, 0x84, 0xc8, 1, 2, 3, 4, 5, 6, 7, 8 }, 12, 12 }, /* add [..+d32], i32 */
		{ { 0x66, 0x48, 0x69, 0xc0, 1, 2, 3, 4 }, 8, 8 },        /* imul rax, rax, i32 (W wins) */
		{ { 0xf3, 0x0f, 0x10, 0x47, 0x08 }, 5, 5 },              /* movss xmm0, [rdi+8] */
		{ { 0xf3, 0x48, 0xab }, 3, 3 },                          /* rep stosq */
		{ { 0xc4, 0xe2, 0x7d, 0x58, 0xc0 }, 5, 0 },              /* VEX: capstone's */
		{ { 0xf0, 0x48, 0x0f, 0xb1, 0x0a }, 5, 0 },              /* lock: capstone's */
		{ { 0x48, 0x8d, 0xc0 }, 3, 0 },                          /* lea rax, rax: invalid */
		{ { 0x06 }, 1, 0 },                                      /* push es: invalid in 64-bit */
		{ { 0xe8, 0, 0 }, 3, 0 },                                /* truncated */
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		cr_expect_eq(os_insn_len(t[i].b, t[i].n), t[i].len, "case %zu: %u, want %u", i,
			     os_insn_len(t[i].b, t[i].n), t[i].len);
		if (t[i].len)
			cr_expect_eq(cs_len(t[i].b, t[i].n, 0x1000), t[i].len, "capstone, case %zu", i);
	}
}

struct sweep_stats {
	unsigned long insns, answered, wrong;
};

/* Linear capstone sweep of every executable segment of every loaded object. */
static int sweep_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct sweep_stats *st = arg;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p;
		size_t n, off = 0;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || !info->dlpi_name)
			continue;
		if (strstr(info->dlpi_name, "vdso") || strstr(info->dlpi_name, "linux-gate"))
			continue;
		p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		n = ph->p_filesz;
		while (off < n) {
			unsigned want = cs_len(p + off, n - off, (uint64_t)(uintptr_t)(p + off));
			unsigned got;

			if (!want) {
				off++;
				continue;
			}
			got = os_insn_len(p + off, n - off);
			st->insns++;
			if (got) {
				st->answered++;
				if (got != want)
					st->wrong++;
			}
			off += want;
		}
	}
	return 0;
}

Test(insn_len, agrees_with_capstone_on_loaded_code, .timeout = 120)
{
	struct sweep_stats st = { 0, 0, 0 };

	dl_iterate_phdr(sweep_object, &st);
	cr_assert_gt(st.insns, 100000, "too little code swept (%lu)", st.insns);
	cr_expect_eq(st.wrong, 0, "%lu of %lu lengths differ from capstone's", st.wrong, st.answered);
	/* the point of it: nearly everything is answered without capstone */
	cr_expect_gt(st.answered, st.insns * 9 / 10, "answered only %lu of %lu", st.answered,
		     st.insns);
}

Test(insn_len, agrees_with_capstone_on_random_bytes, .timeout = 120)
{
	unsigned long answered = 0, wrong = 0;
	unsigned seed = 12345;

	for (long t = 0; t < 400000; t++) {
		uint8_t b[15];
		unsigned got, want;

		for (int k = 0; k < 15; k++)
			b[k] = (uint8_t)(rand_r(&seed) >> 7);
		switch (t % 6) { /* steer into the interesting parts of the maps */
		case 1:
			b[0] = 0x0f;
			break;
		case 2:
			b[0] = (uint8_t)(0x48 | (b[0] & 7));
			break;
		case 3:
			b[0] = 0x66;
			b[1] = 0x0f;
			break;
		case 4:
			b[0] = 0xf3;
			b[1] = 0x0f;
			break;
		case 5:
			b[0] = 0xf2;
			break;
		}
		got = os_insn_len(b, sizeof(b));
		if (!got)
			continue;
		answered++;
		want = cs_len(b, sizeof(b), 0x1000);
		if (got != want && wrong++ < 5)
			cr_log_error("%02x %02x %02x %02x: %u, capstone %u", b[0], b[1], b[2], b[3],
				     got, want);
	}
	cr_assert_gt(answered, 100000);
	cr_expect_eq(wrong, 0, "%lu of %lu differ", wrong, answered);
}
