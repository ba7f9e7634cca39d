/* test_decode.c - previous-instruction decoding and effective addresses.
 * Byte sequences were assembled with `as` (Intel syntax) at development
 * time; the disassembly is given next to each. */
#include <capstone/capstone.h>
#include <criterion/criterion.h>
#include <link.h>
#include <string.h>

#include "attacher/core/decode.h"
#include "tests/unit/unit_helpers.h"

#define CODE_ADDR 0x401000ULL

static struct os_decoder *dec;

static void setup(void)
{
	dec = os_decoder_new();
	cr_assert_not_null(dec);
}

static void teardown(void)
{
	os_decoder_free(dec);
}

TestSuite(decode, .init = setup, .fini = teardown);

/* Registers with distinct values: rax=0x1000, rbx=0x2000, ... */
static void fill_regs(uint64_t regs[OS_REG_COUNT])
{
	for (int i = 0; i < OS_REG_COUNT; i++)
		regs[i] = 0x1000ULL * (uint64_t)(i + 1);
}

/* Decodes the single instruction `b` placed at CODE_ADDR, ip at its end,
 * with CODE_ADDR as the boundary. */
static enum os_dec_status one(const uint8_t *b, size_t n, struct os_mem_insn *m)
{
	enum os_dec_status st = os_decode_prev(dec, b, n, CODE_ADDR, CODE_ADDR + n, CODE_ADDR, m);

	cr_assert_eq(m->status, st);
	return st;
}

#define ONE(m, ...) one((const uint8_t[]){ __VA_ARGS__ }, \
			sizeof((const uint8_t[]){ __VA_ARGS__ }), (m))

Test(decode, base_index_scale_disp)
{
	struct os_mem_insn m;
	uint64_t regs[OS_REG_COUNT];

	fill_regs(regs);
	regs[OS_REG_BX] = 0x7f0000001000ULL;
	regs[OS_REG_CX] = 3;
	/* mov rax, qword ptr [rbx+rcx*8+0x10] */
	cr_assert_eq(ONE(&m, 0x48, 0x8b, 0x44, 0xcb, 0x10), OS_DEC_OK);
	cr_assert_eq(m.insn_addr, CODE_ADDR);
	cr_assert_eq(m.insn_len, 5);
	cr_assert_eq(m.base, OS_REG_BX);
	cr_assert_eq(m.index, OS_REG_CX);
	cr_assert_eq(m.scale, 8);
	cr_assert_eq(m.disp, 0x10);
	cr_assert_eq(m.width, 8);
	cr_assert_not(m.is_write);
	cr_assert_not(m.rip_relative);
	cr_assert_not(m.base32);
	cr_assert_eq(os_decode_ea(&m, regs), 0x7f0000001000ULL + 3 * 8 + 0x10);
}

Test(decode, sse_load_and_plain_store)
{
	struct os_mem_insn m;
	uint64_t regs[OS_REG_COUNT];

	fill_regs(regs);
	/* movsd xmm0, qword ptr [rdi+rsi*8] */
	cr_assert_eq(ONE(&m, 0xf2, 0x0f, 0x10, 0x04, 0xf7), OS_DEC_OK);
	cr_assert_eq(m.width, 8);
	cr_assert_not(m.is_write);
	cr_assert_eq(os_decode_ea(&m, regs), regs[OS_REG_DI] + regs[OS_REG_SI] * 8);

	/* mov dword ptr [rdx], ecx */
	cr_assert_eq(ONE(&m, 0x89, 0x0a), OS_DEC_OK);
	cr_assert(m.is_write);
	cr_assert_eq(m.width, 4);
	cr_assert_eq(m.index, -1);
	cr_assert_eq(os_decode_ea(&m, regs), regs[OS_REG_DX]);
}

Test(decode, rmw_zero_extend_and_negative_disp)
{
	struct os_mem_insn m;
	uint64_t regs[OS_REG_COUNT];

	fill_regs(regs);
	/* add qword ptr [r12+8], 1: read-modify-write */
	cr_assert_eq(ONE(&m, 0x49, 0x83, 0x44, 0x24, 0x08, 0x01), OS_DEC_OK);
	cr_assert(m.is_write);
	cr_assert_eq(m.width, 8);
	cr_assert_eq(os_decode_ea(&m, regs), regs[OS_REG_R12] + 8);

	/* movzx eax, byte ptr [r9+r10]: writes eax, reads a byte */
	cr_assert_eq(ONE(&m, 0x43, 0x0f, 0xb6, 0x04, 0x11), OS_DEC_OK);
	cr_assert_eq(m.width, 1);
	cr_assert_eq(m.scale, 1);
	cr_assert_eq(os_decode_ea(&m, regs), regs[OS_REG_R9] + regs[OS_REG_R10]);

	/* cmp dword ptr [rbp-0x14], 0 */
	cr_assert_eq(ONE(&m, 0x83, 0x7d, 0xec, 0x00), OS_DEC_OK);
	cr_assert_not(m.is_write);
	cr_assert_eq(m.width, 4);
	cr_assert_eq(m.disp, -0x14);
	cr_assert_eq(os_decode_ea(&m, regs), regs[OS_REG_BP] - 0x14);
}

Test(decode, stack_pointer_base_is_fine)
{
	struct os_mem_insn m;
	uint64_t regs[OS_REG_COUNT];

	fill_regs(regs);
	/* mov rcx, qword ptr [rsp+8] */
	cr_assert_eq(ONE(&m, 0x48, 0x8b, 0x4c, 0x24, 0x08), OS_DEC_OK);
	cr_assert_eq(os_decode_ea(&m, regs), regs[OS_REG_SP] + 8);
	/* push qword ptr [rbx]: moves rsp, but its operand is [rbx] */
	cr_assert_eq(ONE(&m, 0xff, 0x33), OS_DEC_OK);
	cr_assert_eq(m.base, OS_REG_BX);
	cr_assert_eq(os_decode_ea(&m, regs), regs[OS_REG_BX]);
	/* xchg qword ptr [rdi], rax: writes rax, address uses rdi */
	cr_assert_eq(ONE(&m, 0x48, 0x87, 0x07), OS_DEC_OK);
	cr_assert(m.is_write);
}

Test(decode, clobbered_address_registers)
{
	struct os_mem_insn m;

	/* mov rax, qword ptr [rax+8] */
	cr_assert_eq(ONE(&m, 0x48, 0x8b, 0x40, 0x08), OS_DEC_CLOBBERED);
	cr_assert_eq(m.insn_len, 4);
	/* mov rdi, qword ptr [rdi] */
	cr_assert_eq(ONE(&m, 0x48, 0x8b, 0x3f), OS_DEC_CLOBBERED);
	/* pop rbx: reads [rsp], moves rsp */
	cr_assert_eq(ONE(&m, 0x5b), OS_DEC_CLOBBERED);
	/* push rax */
	cr_assert_eq(ONE(&m, 0x50), OS_DEC_CLOBBERED);
	/* leave */
	cr_assert_eq(ONE(&m, 0xc9), OS_DEC_CLOBBERED);
	/* mov eax, dword ptr [rax]: a 32-bit write clobbers rax */
	cr_assert_eq(ONE(&m, 0x8b, 0x00), OS_DEC_CLOBBERED);
	/* mov al, byte ptr [rax]; mov ah, byte ptr [rax] */
	cr_assert_eq(ONE(&m, 0x8a, 0x00), OS_DEC_CLOBBERED);
	cr_assert_eq(ONE(&m, 0x8a, 0x20), OS_DEC_CLOBBERED);
	/* index clobbered: mov rcx, qword ptr [rbx+rcx*8+0x10] */
	cr_assert_eq(ONE(&m, 0x48, 0x8b, 0x4c, 0xcb, 0x10), OS_DEC_CLOBBERED);
	/* cmpxchg qword ptr [rax], rcx: implicit rax write (capstone 4 omits it) */
	cr_assert_eq(ONE(&m, 0x48, 0x0f, 0xb1, 0x08), OS_DEC_CLOBBERED);
}

Test(decode, string_instructions_clobber)
{
	struct os_mem_insn m;

	/* movsq qword ptr [rdi], qword ptr [rsi] */
	cr_assert_eq(ONE(&m, 0x48, 0xa5), OS_DEC_CLOBBERED);
	/* rep stosb byte ptr [rdi], al */
	cr_assert_eq(ONE(&m, 0xf3, 0xaa), OS_DEC_CLOBBERED);
	/* cmpsb */
	cr_assert_eq(ONE(&m, 0xa6), OS_DEC_CLOBBERED);
	/* lodsq */
	cr_assert_eq(ONE(&m, 0x48, 0xad), OS_DEC_CLOBBERED);
}

Test(decode, rip_relative)
{
	struct os_mem_insn m;
	uint64_t regs[OS_REG_COUNT];

	fill_regs(regs);
	/* mov rax, qword ptr [rip+0x1234] */
	cr_assert_eq(ONE(&m, 0x48, 0x8b, 0x05, 0x34, 0x12, 0x00, 0x00), OS_DEC_OK);
	cr_assert(m.rip_relative);
	cr_assert_eq(m.base, -1);
	cr_assert_eq(os_decode_ea(&m, regs), CODE_ADDR + 7 + 0x1234);
}

Test(decode, address_size_32_wraps)
{
	struct os_mem_insn m;
	uint64_t regs[OS_REG_COUNT];

	fill_regs(regs);
	regs[OS_REG_BX] = 0x12fffffff0ULL;      /* upper half ignored */
	regs[OS_REG_CX] = 0x10;
	/* mov eax, dword ptr [ebx+ecx*2+4] (0x67 prefix) */
	cr_assert_eq(ONE(&m, 0x67, 0x8b, 0x44, 0x4b, 0x04), OS_DEC_OK);
	cr_assert(m.base32);
	cr_assert_eq(m.base, OS_REG_BX);
	cr_assert_eq(m.index, OS_REG_CX);
	cr_assert_eq(os_decode_ea(&m, regs), (0xfffffff0ULL + 0x20 + 4) & 0xffffffffULL);
}

Test(decode, no_memory_access)
{
	struct os_mem_insn m;

	/* lea rax, [rbx+rcx*4] */
	cr_assert_eq(ONE(&m, 0x48, 0x8d, 0x04, 0x8b), OS_DEC_NOMEM);
	/* nop dword ptr [rax+rax] */
	cr_assert_eq(ONE(&m, 0x0f, 0x1f, 0x04, 0x00), OS_DEC_NOMEM);
	/* prefetcht0 byte ptr [rdi] */
	cr_assert_eq(ONE(&m, 0x0f, 0x18, 0x0f), OS_DEC_NOMEM);
	/* ret */
	cr_assert_eq(ONE(&m, 0xc3), OS_DEC_NOMEM);
	/* jmp . */
	cr_assert_eq(ONE(&m, 0xeb, 0xfe), OS_DEC_NOMEM);
	/* jmp qword ptr [rax*8+0x1000]: control transfer */
	cr_assert_eq(ONE(&m, 0xff, 0x24, 0xc5, 0x00, 0x10, 0x00, 0x00), OS_DEC_NOMEM);
	/* call qword ptr [rax+8] */
	cr_assert_eq(ONE(&m, 0xff, 0x50, 0x08), OS_DEC_NOMEM);
	/* add rdi, 1 */
	cr_assert_eq(ONE(&m, 0x48, 0x83, 0xc7, 0x01), OS_DEC_NOMEM);
	cr_assert_eq(m.insn_addr, CODE_ADDR);
}

Test(decode, unsupported_addressing)
{
	struct os_mem_insn m;

	/* mov rax, qword ptr fs:[0x28] */
	cr_assert_eq(ONE(&m, 0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0x00, 0x00, 0x00),
		     OS_DEC_UNSUPPORTED);
	/* mov rax, qword ptr gs:[rbx] */
	cr_assert_eq(ONE(&m, 0x65, 0x48, 0x8b, 0x03), OS_DEC_UNSUPPORTED);
	/* vpgatherdd xmm0, dword ptr [rax+xmm1*4], xmm2 */
	cr_assert_eq(ONE(&m, 0xc4, 0xe2, 0x69, 0x90, 0x04, 0x88), OS_DEC_UNSUPPORTED);
}

/* ut_walk_code (unit_helpers.c): a gcc -O2 hash-chain walk, listing there. */
static const uint8_t walk_starts[] = {
	0x00, 0x03, 0x06, 0x08, 0x0a, 0x0e, 0x10, 0x13, 0x16, 0x1a, 0x1f, 0x23,
	0x27, 0x2a, 0x2c, 0x30, 0x33, 0x35, 0x3a, 0x3f, 0x43, 0x47, 0x4b, 0x4e,
	0x50, 0x54, 0x59, 0x5c, 0x5e, 0x62, 0x63, 0x67, 0x6b, 0x6c, /* end */
};
#define WALK_NSTARTS (sizeof(walk_starts) / sizeof(walk_starts[0]))

static bool walk_is_start(unsigned off)
{
	return memchr(walk_starts, (int)off, WALK_NSTARTS) != NULL;
}

/* Specific samples inside the loop body, without a boundary hint. */
Test(decode, backward_sweep_loop_body)
{
	struct os_mem_insn m;
	uint64_t regs[OS_REG_COUNT];

	fill_regs(regs);
	/* ip = 0x3f, after mulsd xmm0, qword ptr [r8] */
	cr_assert_eq(os_decode_prev(dec, ut_walk_code, sizeof(ut_walk_code), CODE_ADDR,
				    CODE_ADDR + 0x3f, 0, &m), OS_DEC_OK);
	cr_assert_eq(m.insn_addr, CODE_ADDR + 0x3a);
	cr_assert_eq(m.insn_len, 5);
	cr_assert_eq(os_decode_ea(&m, regs), regs[OS_REG_R8]);
	/* ip = 0x43, after add dword ptr [rax+0x18], 1 */
	cr_assert_eq(os_decode_prev(dec, ut_walk_code, sizeof(ut_walk_code), CODE_ADDR,
				    CODE_ADDR + 0x43, 0, &m), OS_DEC_OK);
	cr_assert_eq(m.insn_addr, CODE_ADDR + 0x3f);
	cr_assert(m.is_write);
	cr_assert_eq(m.width, 4);
	cr_assert_eq(os_decode_ea(&m, regs), regs[OS_REG_AX] + 0x18);
	/* ip = 0x4b, after mov rax, qword ptr [rax+0x10] */
	cr_assert_eq(os_decode_prev(dec, ut_walk_code, sizeof(ut_walk_code), CODE_ADDR,
				    CODE_ADDR + 0x4b, 0, &m), OS_DEC_CLOBBERED);
	cr_assert_eq(m.insn_addr, CODE_ADDR + 0x47);
	/* ip = 0x59, after movsd qword ptr [r8], xmm1 */
	cr_assert_eq(os_decode_prev(dec, ut_walk_code, sizeof(ut_walk_code), CODE_ADDR,
				    CODE_ADDR + 0x59, 0, &m), OS_DEC_OK);
	cr_assert_eq(m.insn_addr, CODE_ADDR + 0x54);
	cr_assert(m.is_write);
}

/* Every boundary of the function: with the function start as boundary the
 * previous instruction is always found; without, it is found or refused,
 * never wrong, and found for most boundaries with enough bytes before. */
Test(decode, backward_sweep_every_boundary)
{
	struct os_mem_insn m;
	unsigned found = 0, eligible = 0;

	for (size_t i = 1; i < WALK_NSTARTS; i++) {
		uint64_t ip = CODE_ADDR + walk_starts[i];
		uint64_t prev = CODE_ADDR + walk_starts[i - 1];
		enum os_dec_status st;

		st = os_decode_prev(dec, ut_walk_code, sizeof(ut_walk_code), CODE_ADDR, ip, CODE_ADDR, &m);
		cr_assert_neq(st, OS_DEC_UNDECODABLE, "ip +%#x with boundary", walk_starts[i]);
		cr_assert_eq(m.insn_addr, prev, "ip +%#x with boundary", walk_starts[i]);
		cr_assert_eq(m.insn_addr + m.insn_len, ip);

		st = os_decode_prev(dec, ut_walk_code, sizeof(ut_walk_code), CODE_ADDR, ip, 0, &m);
		if (walk_starts[i] < OS_DEC_BACK_MIN_DIST + OS_DEC_BACK_MIN_AGREE - 1) {
			cr_assert_eq(st, OS_DEC_UNDECODABLE, "ip +%#x: too little code before",
				     walk_starts[i]);
			continue;
		}
		eligible++;
		if (st == OS_DEC_UNDECODABLE)
			continue;
		cr_assert_eq(m.insn_addr, prev, "ip +%#x without boundary", walk_starts[i]);
		found++;
	}
	cr_assert_geq(found * 10, eligible * 9, "found %u of %u", found, eligible);
}

/* A linear sweep that fails (invalid bytes at the claimed boundary) falls
 * back to the backward sweep. */
Test(decode, boundary_sweep_falls_back)
{
	uint8_t buf[8 + sizeof(ut_walk_code)];
	struct os_mem_insn m;

	memset(buf, 0x06, 8);                   /* 0x06 is invalid in 64-bit mode */
	memcpy(buf + 8, ut_walk_code, sizeof(ut_walk_code));
	cr_assert_eq(os_decode_prev(dec, buf, sizeof(buf), CODE_ADDR, CODE_ADDR + 8 + 0x3f,
				    CODE_ADDR, &m), OS_DEC_OK);
	cr_assert_eq(m.insn_addr, CODE_ADDR + 8 + 0x3a);
}

/* ip inside an instruction: the sweep from the boundary straddles it and the
 * backward sweep refuses it. */
Test(decode, mid_instruction_ip)
{
	struct os_mem_insn m;

	/* inside mulsd xmm0, [r8] (0x3a..0x3f) */
	cr_assert_eq(os_decode_prev(dec, ut_walk_code, sizeof(ut_walk_code), CODE_ADDR,
				    CODE_ADDR + 0x3c, CODE_ADDR, &m), OS_DEC_UNDECODABLE);
	/* inside mov rax, [r9+rax*8] (0x23..0x27) */
	cr_assert_eq(os_decode_prev(dec, ut_walk_code, sizeof(ut_walk_code), CODE_ADDR,
				    CODE_ADDR + 0x25, CODE_ADDR, &m), OS_DEC_UNDECODABLE);
	/* any non-boundary ip: never an answer that claims a boundary there */
	for (unsigned off = 1; off < sizeof(ut_walk_code); off++) {
		if (walk_is_start(off))
			continue;
		cr_assert_eq(os_decode_prev(dec, ut_walk_code, sizeof(ut_walk_code), CODE_ADDR,
					    CODE_ADDR + off, CODE_ADDR, &m), OS_DEC_UNDECODABLE,
			     "ip +%#x", off);
	}
}

Test(decode, garbage_is_undecodable)
{
	uint8_t junk[128];
	struct os_mem_insn m;
	uint32_t x = 0x2545f491;

	/* bytes that are invalid opcodes in 64-bit mode */
	static const uint8_t invalid[] = { 0x06, 0x07, 0x0e, 0x16, 0x17, 0x1e, 0x1f, 0x27,
					   0x2f, 0x37, 0x3f, 0x60, 0x61, 0xd4, 0xd5, 0xd6 };
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = invalid[i % sizeof(invalid)];
	for (unsigned off = 1; off <= sizeof(junk); off++) {
		cr_assert_eq(os_decode_prev(dec, junk, sizeof(junk), CODE_ADDR, CODE_ADDR + off,
					    0, &m), OS_DEC_UNDECODABLE, "ip +%u", off);
		cr_assert_eq(os_decode_prev(dec, junk, sizeof(junk), CODE_ADDR, CODE_ADDR + off,
					    CODE_ADDR, &m), OS_DEC_UNDECODABLE, "ip +%u", off);
	}

	/* pseudo-random bytes: whatever is claimed ends exactly at ip */
	for (size_t i = 0; i < sizeof(junk); i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		junk[i] = (uint8_t)x;
	}
	for (unsigned off = 1; off <= sizeof(junk); off++) {
		enum os_dec_status st = os_decode_prev(dec, junk, sizeof(junk), CODE_ADDR,
						       CODE_ADDR + off, 0, &m);
		if (st != OS_DEC_UNDECODABLE)
			cr_assert_eq(m.insn_addr + m.insn_len, CODE_ADDR + off);
	}
}

/* A short run of code after invalid bytes: the few voters that land agree,
 * but most voters fail, so without a boundary the answer is refused; with
 * the boundary it is found. */
Test(decode, mostly_invalid_context)
{
	uint8_t buf[41 + 0x17];
	struct os_mem_insn m;
	uint64_t tail = CODE_ADDR + 41;

	memset(buf, 0x06, 41);
	memcpy(buf + 41, ut_walk_code + 0x2c, 0x17);      /* nop .. add [rax+0x18],1 */
	cr_assert_eq(os_decode_prev(dec, buf, sizeof(buf), CODE_ADDR, tail + 0x17, 0, &m),
		     OS_DEC_UNDECODABLE);
	cr_assert_eq(os_decode_prev(dec, buf, sizeof(buf), CODE_ADDR, tail + 0x17, tail, &m),
		     OS_DEC_OK);
	cr_assert_eq(m.insn_addr, tail + 0x13);
}

/* 04 04 ... 04 90: `add al, 4` pairs never resynchronise, so half the
 * candidates end with `nop` (start ip-1) and half with `add al, 0x90`
 * (start ip-2). Without a boundary that is ambiguous; the boundary decides. */
Test(decode, ambiguous_decoding_refused)
{
	uint8_t buf[81];
	struct os_mem_insn m;
	uint64_t ip = CODE_ADDR + sizeof(buf);

	memset(buf, 0x04, sizeof(buf) - 1);
	buf[sizeof(buf) - 1] = 0x90;
	cr_assert_eq(os_decode_prev(dec, buf, sizeof(buf), CODE_ADDR, ip, 0, &m),
		     OS_DEC_UNDECODABLE);
	/* from an even start: 40 x `add al, 4`, then nop */
	cr_assert_eq(os_decode_prev(dec, buf, sizeof(buf), CODE_ADDR, ip, CODE_ADDR, &m),
		     OS_DEC_NOMEM);
	cr_assert_eq(m.insn_addr, ip - 1);
	/* from an odd start: 39 x `add al, 4`, then add al, 0x90 */
	cr_assert_eq(os_decode_prev(dec, buf, sizeof(buf), CODE_ADDR, ip, CODE_ADDR + 1, &m),
		     OS_DEC_NOMEM);
	cr_assert_eq(m.insn_addr, ip - 2);
}

Test(decode, ip_outside_buffer)
{
	static const uint8_t b[] = { 0x48, 0x8b, 0x03 };        /* mov rax, [rbx] */
	struct os_mem_insn m;

	cr_assert_eq(os_decode_prev(dec, b, sizeof(b), CODE_ADDR, CODE_ADDR, CODE_ADDR, &m),
		     OS_DEC_UNDECODABLE);
	cr_assert_eq(os_decode_prev(dec, b, sizeof(b), CODE_ADDR, CODE_ADDR + 4, CODE_ADDR, &m),
		     OS_DEC_UNDECODABLE);
	cr_assert_eq(os_decode_prev(dec, b, sizeof(b), CODE_ADDR, CODE_ADDR + 3, CODE_ADDR, &m),
		     OS_DEC_OK);
	/* a single instruction without boundary: too little code to vote */
	cr_assert_eq(os_decode_prev(dec, b, sizeof(b), CODE_ADDR, CODE_ADDR + 3, 0, &m),
		     OS_DEC_UNDECODABLE);
}

Test(decode, status_strings)
{
	cr_assert_str_eq(os_dec_status_str(OS_DEC_OK), "ok");
	cr_assert_str_eq(os_dec_status_str(OS_DEC_CLOBBERED), "address register overwritten");
	cr_assert_str_eq(os_dec_status_str((enum os_dec_status)99), "unknown");
}

/* The sweeps remember capstone's lengths by the instruction bytes: a decoder
 * that has seen much code answers exactly as a fresh one, also where the
 * bytes under an address change (JIT code rewritten) and where the buffer
 * ends inside an instruction. */
Test(decode, length_cache_same_answers)
{
	uint8_t buf[160];
	uint32_t x = 0x9e3779b9;
	unsigned checked = 0, decoded = 0;

	for (int round = 0; round < 40; round++) {
		/* half the rounds mutate a few bytes of the previous buffer */
		for (size_t i = 0; i < sizeof(buf); i++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			if (round % 2 == 0 || x % 16 == 0)
				buf[i] = round % 4 == 0 ? ut_walk_code[(i + x % 7) % sizeof(ut_walk_code)]
							: (uint8_t)(x >> 8);
		}
		for (unsigned off = 1; off <= sizeof(buf); off += 1 + x % 3) {
			struct os_decoder *fresh = os_decoder_new();
			struct os_mem_insn a, b;
			enum os_dec_status sa, sb;
			size_t len = off + (x % 2 ? 0 : 5) < sizeof(buf) ? off + (x % 2 ? 0 : 5)
									  : sizeof(buf);

			cr_assert_not_null(fresh);
			memset(&a, 0, sizeof(a));
			memset(&b, 0, sizeof(b));
			sa = os_decode_prev(dec, buf, len, CODE_ADDR, CODE_ADDR + off, 0, &a);
			sb = os_decode_prev(fresh, buf, len, CODE_ADDR, CODE_ADDR + off, 0, &b);
			os_decoder_free(fresh);
			cr_assert_eq(sa, sb, "round %d ip +%u", round, off);
			cr_assert(a.insn_addr == b.insn_addr && a.insn_len == b.insn_len &&
					  a.width == b.width && a.base == b.base && a.index == b.index &&
					  a.scale == b.scale && a.disp == b.disp &&
					  a.is_write == b.is_write && a.status == b.status,
				  "round %d ip +%u", round, off);
			checked++;
			decoded += sa != OS_DEC_UNDECODABLE;
		}
	}
	cr_assert_gt(checked, 1000);
	cr_assert_gt(decoded, 50, "real code among the bytes (%u decoded)", decoded);
}

/* The forward sweep's path: the instruction starts from the boundary to the
 * instruction ending at ip, only when it landed there; its instructions are
 * counted. */
Test(decode, forward_sweep_path)
{
	struct os_mem_insn m;
	struct os_dec_counts c0, c1;
	const uint64_t *path;
	unsigned n;

	os_decoder_counts(dec, &c0);
	/* ip = 0x3f from 0x10: 0x10 0x13 0x16 0x1a 0x1f 0x23 0x27 0x2a 0x2c 0x30 0x33 0x35 0x3a */
	cr_assert_eq(os_decode_prev(dec, ut_walk_code, sizeof(ut_walk_code), CODE_ADDR,
				    CODE_ADDR + 0x3f, CODE_ADDR + 0x10, &m), OS_DEC_OK);
	os_decoder_counts(dec, &c1);
	n = os_decoder_path(dec, &path);
	cr_assert_eq(n, 13);
	for (unsigned i = 0; i < n; i++)
		cr_expect_eq(path[i], CODE_ADDR + walk_starts[6 + i], "path[%u] = %#lx", i,
			     (unsigned long)path[i]);
	cr_expect_eq(path[n - 1], m.insn_addr);
	cr_expect_eq(c1.calls - c0.calls, 1);
	cr_expect_eq(c1.fwd_sweeps - c0.fwd_sweeps, 1);
	cr_expect_eq(c1.fwd_insns - c0.fwd_insns, 13);
	cr_expect_eq(c1.back_sweeps, c0.back_sweeps);

	/* no forward sweep: no path */
	cr_assert_eq(os_decode_prev(dec, ut_walk_code, sizeof(ut_walk_code), CODE_ADDR,
				    CODE_ADDR + 0x3f, 0, &m), OS_DEC_OK);
	cr_expect_eq(os_decoder_path(dec, &path), 0);
	/* a sweep that straddles ip (the backward sweep then refuses) */
	os_decode_prev(dec, ut_walk_code, sizeof(ut_walk_code), CODE_ADDR, CODE_ADDR + 0x3e,
		       CODE_ADDR, &m);
	cr_expect_eq(os_decoder_path(dec, &path), 0);
}

/* The backward sweep as it was first written: every candidate decoded
 * (capstone lengths), then the vote of decode.c. */
static uint64_t ref_backward(csh cs, cs_insn *insn, const uint8_t *code, uint64_t code_addr,
			     size_t len, uint64_t ip)
{
	enum { LAND = 1, OVER, FAIL };
	uint8_t res[OS_DEC_BACK_MAX + 1], last[OS_DEC_BACK_MAX + 1];
	unsigned votes[OS_DEC_BACK_MAX + 1] = { 0 };
	unsigned back_max = ip - code_addr < OS_DEC_BACK_MAX ? ip - code_addr : OS_DEC_BACK_MAX;
	unsigned voters = 0, best = 0, second = 0;

	for (unsigned dist = 1; dist <= back_max; dist++) {
		size_t off = ip - dist - code_addr, size = len - off < 15 ? len - off : 15;
		const uint8_t *p = code + off;
		uint64_t a = ip - dist;
		unsigned n = cs_disasm_iter(cs, &p, &size, &a, insn) ? insn->size : 0;

		if (n == 0) {
			res[dist] = FAIL;
		} else if (n == dist) {
			res[dist] = LAND;
			last[dist] = (uint8_t)dist;
		} else if (n > dist) {
			res[dist] = OVER;
		} else {
			res[dist] = res[dist - n];
			last[dist] = last[dist - n];
		}
		if (dist < OS_DEC_BACK_MIN_DIST)
			continue;
		voters++;
		if (res[dist] == LAND)
			votes[last[dist]]++;
	}
	for (unsigned dist = 1; dist <= back_max; dist++) {
		if (votes[dist] > votes[best]) {
			second = votes[best];
			best = dist;
		} else if (votes[dist] > second) {
			second = votes[dist];
		}
	}
	if (best == 0 || votes[best] < OS_DEC_BACK_MIN_AGREE || 3 * votes[best] < voters ||
	    votes[best] < 2 * second)
		return 0;
	return ip - best;
}

struct back_check {
	csh cs;
	cs_insn *insn;
	unsigned long ips, found, differ;
};

static int back_check_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct back_check *bc = arg;

	(void)size;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "libc.so"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *text;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		text = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		/* every 61st byte: instruction boundaries and mid-instruction IPs */
		for (size_t off = OS_DEC_BACK_MAX; off < ph->p_filesz; off += 61) {
			uint64_t ip = (uint64_t)(uintptr_t)(text + off);
			uint64_t from = ip - OS_DEC_BACK_MAX;
			const uint8_t *code = text + off - OS_DEC_BACK_MAX;
			uint64_t want = ref_backward(bc->cs, bc->insn, code, from, OS_DEC_BACK_MAX,
						     ip);
			struct os_mem_insn m;
			enum os_dec_status st;

			st = os_decode_prev(dec, code, OS_DEC_BACK_MAX, from, ip, 0, &m);
			bc->ips++;
			if (want)
				bc->found++;
			if (want ? m.insn_addr != want || st == OS_DEC_UNDECODABLE
				 : m.insn_addr != 0 || st != OS_DEC_UNDECODABLE)
				bc->differ++;
		}
	}
	return 0;
}

/* The backward sweep decodes the non-voting candidates only where a voter's
 * path needs them and stops once the vote is decided: on libc's code it
 * answers exactly as the exhaustive sweep, with fewer decodes. */
Test(decode, backward_sweep_lazy_same_as_exhaustive, .timeout = 60)
{
	struct back_check bc;
	struct os_dec_counts c0, c1;

	memset(&bc, 0, sizeof(bc));
	cr_assert_eq(cs_open(CS_ARCH_X86, CS_MODE_64, &bc.cs), CS_ERR_OK);
	cr_assert_eq(cs_option(bc.cs, CS_OPT_DETAIL, CS_OPT_ON), CS_ERR_OK);
	bc.insn = cs_malloc(bc.cs);
	cr_assert_not_null(bc.insn);
	os_decoder_counts(dec, &c0);
	dl_iterate_phdr(back_check_object, &bc);
	os_decoder_counts(dec, &c1);
	cs_free(bc.insn, 1);
	cs_close(&bc.cs);
	cr_assert_gt(bc.ips, 10000, "libc's code not found (%lu IPs)", bc.ips);
	cr_assert_gt(bc.found, bc.ips / 10, "%lu of %lu", bc.found, bc.ips);
	cr_expect_eq(bc.differ, 0, "%lu of %lu IPs differ", bc.differ, bc.ips);
	cr_expect_eq(c1.back_sweeps - c0.back_sweeps, bc.ips);
	cr_expect_lt((c1.back_insns - c0.back_insns) * 4, bc.ips * OS_DEC_BACK_MAX * 3,
		     "%.1f decodes per sweep",
		     (double)(c1.back_insns - c0.back_insns) / (double)bc.ips);
	cr_log_info("%lu IPs, %lu found, %.1f decodes per sweep", bc.ips, bc.found,
		    (double)(c1.back_insns - c0.back_insns) / (double)bc.ips);
}
