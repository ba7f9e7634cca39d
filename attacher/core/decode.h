/* decode.h - effective address of the memory access behind a software sample.
 *
 * A task-clock sample's IP is the instruction *after* the one that was
 * executing (stalled on memory). We find the instruction that ends exactly
 * at IP (sweeping forward from a known boundary such as the function start,
 * or, without one, a backward resynchronising sweep whose candidates must
 * agree), decode it with capstone and compute its data address from the
 * sampled user registers. If that instruction wrote a register used in its
 * address (mov rax,[rax+8]; pop; rep movs), the registers no longer hold the
 * address it used: the sample is discarded, never guessed.
 *
 * Pure functions of (code bytes, registers): unit-testable without a target.
 * Return convention: enum os_dec_status.
 */
#ifndef OBJSCOPE_DECODE_H
#define OBJSCOPE_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Register indexes as in the kernel's perf_regs (x86_64):
 * AX BX CX DX SI DI BP SP IP FLAGS CS SS DS ES FS GS R8..R15 */
enum os_reg {
	OS_REG_AX, OS_REG_BX, OS_REG_CX, OS_REG_DX, OS_REG_SI, OS_REG_DI, OS_REG_BP, OS_REG_SP,
	OS_REG_IP, OS_REG_FLAGS, OS_REG_CS, OS_REG_SS, OS_REG_DS, OS_REG_ES, OS_REG_FS, OS_REG_GS,
	OS_REG_R8, OS_REG_R9, OS_REG_R10, OS_REG_R11, OS_REG_R12, OS_REG_R13, OS_REG_R14, OS_REG_R15,
	OS_REG_COUNT
};
/* sample_regs_user mask the collector asks for (no DS/ES/FS/GS). */
#define OS_REGS_MASK 0xff0fffULL

enum os_dec_status {
	OS_DEC_OK = 0,          /* address computed */
	OS_DEC_NOMEM,           /* previous instruction does not access memory (incl. lea, nop) */
	OS_DEC_CLOBBERED,       /* it overwrote a register of its own address */
	OS_DEC_UNDECODABLE,     /* no consistent instruction boundary / invalid bytes */
	OS_DEC_UNSUPPORTED,     /* segment-relative (fs/gs), vector index (gather) ... */
};

/* Backward sweep (no boundary): candidate starts up to OS_DEC_BACK_MAX bytes
 * before ip; those at least OS_DEC_BACK_MIN_DIST bytes back vote, and the
 * last-instruction start must be agreed by >= OS_DEC_BACK_MIN_AGREE voters,
 * by a third of all voters and by twice as many as any other start (see
 * decode.c). A buffer with fewer than OS_DEC_BACK_MIN_DIST +
 * OS_DEC_BACK_MIN_AGREE - 1 bytes before ip can therefore only be decoded
 * with a boundary. */
#define OS_DEC_BACK_MAX 64
#define OS_DEC_BACK_MIN_DIST 16
#define OS_DEC_BACK_MIN_AGREE 4

/* Classification of the instruction ending at ip:
 * - lea, nop (incl. multi-byte nop with a ModRM operand), prefetch* (an
 *   access hint that never stalls the pipeline on data): OS_DEC_NOMEM.
 * - Control transfers (jmp, call, ret, iret, int): OS_DEC_NOMEM, even with a
 *   memory operand (jmp [rax*8+tbl], call [rax+8], ret's [rsp]). Execution
 *   cannot fall through from jmp/ret to ip, and after a call, ip is reached
 *   by the callee's ret: the instruction executed just before ip was not the
 *   linear predecessor.
 * - push/pop/leave/enter without an explicit memory operand access [rsp]
 *   and move rsp: OS_DEC_CLOBBERED. With one (push [rbx]) that operand is
 *   used, rsp does not take part in its address.
 * - fs/gs segment override (TLS), vector index (VSIB gather/scatter), a
 *   non-GPR base: OS_DEC_UNSUPPORTED.
 * - Two memory operands: the first explicit one. String instructions (movs,
 *   cmps, stos, lods, scas) always write rsi/rdi (rcx with rep), so they are
 *   OS_DEC_CLOBBERED by the clobber check.
 * - Clobber check: any register the instruction writes, explicitly or
 *   implicitly, compared as its full 64-bit register (writing eax, ax, al or
 *   ah clobbers rax), equal to the base or index: OS_DEC_CLOBBERED.
 * is_write: the instruction writes the memory operand (it may also read it,
 * add [m],1). width: the operand size in bytes (0 when unknown). */

/* The memory operand of one decoded instruction (cacheable per IP: it does
 * not depend on register values). */
struct os_mem_insn {
	uint64_t insn_addr;     /* address of the accessing instruction */
	uint8_t insn_len;
	uint8_t width;          /* access width in bytes */
	int8_t base;            /* enum os_reg, or -1 */
	int8_t index;           /* enum os_reg, or -1 */
	uint8_t scale;
	bool rip_relative;      /* base is RIP: address = insn end + disp */
	bool is_write;
	bool base32;            /* 32-bit address size (zero-extend) */
	int64_t disp;
	uint8_t status;         /* enum os_dec_status for this IP */
};

struct os_decoder;

/* One capstone handle and one reusable instruction buffer; NULL on failure. */
struct os_decoder *os_decoder_new(void);
void os_decoder_free(struct os_decoder *d);

/* Analyses the instruction ending exactly at `ip`. `code` holds the bytes of
 * [code_addr, code_addr + len) and must include [start, ip) where start is
 * `boundary` when non-zero (an address known to begin an instruction, e.g.
 * the function start, <= ip) or else ip - 64 at most (backward sweep).
 * When the linear sweep from `boundary` fails (invalid bytes, or an
 * instruction straddling ip) the backward sweep decides.
 * Fills *m (m->status == return value; insn_addr/insn_len are set whenever
 * the instruction was found). `d` is not thread-safe: one per thread. */
enum os_dec_status os_decode_prev(struct os_decoder *d, const uint8_t *code, size_t len,
				  uint64_t code_addr, uint64_t ip, uint64_t boundary,
				  struct os_mem_insn *m);

/* The data address given registers indexed by enum os_reg (meaningful only
 * for m->status == OS_DEC_OK). */
uint64_t os_decode_ea(const struct os_mem_insn *m, const uint64_t regs[OS_REG_COUNT]);

const char *os_dec_status_str(enum os_dec_status st);

/* Certain boundaries. When the forward sweep of the last os_decode_prev
 * call ended exactly at ip, the instruction starts it stepped on, from
 * `boundary` (first) up to the start of the instruction ending at ip (last),
 * at most OS_DEC_PATH_MAX of them (the first ones): each is an instruction
 * boundary if `boundary` is one. Returns their number, 0 when there was no
 * forward sweep or it failed (the backward sweep decided, or nothing did).
 * Valid until the next call with `d`. */
#define OS_DEC_PATH_MAX 4096
unsigned os_decoder_path(const struct os_decoder *d, const uint64_t **starts);

/* Work done by `d` since it was created (tests, tuning). */
struct os_dec_counts {
	uint64_t calls;         /* os_decode_prev calls */
	uint64_t fwd_sweeps;    /* forward sweeps (from a boundary) */
	uint64_t fwd_insns;     /* instructions stepped by forward sweeps */
	uint64_t back_sweeps;   /* backward sweeps */
	uint64_t back_insns;    /* candidate starts decoded by backward sweeps */
	uint64_t cs_lens;       /* sweep lengths os_insn_len left to capstone */
	uint64_t cs_decodes;    /* of those, not in the length cache: capstone ran */
};
void os_decoder_counts(const struct os_decoder *d, struct os_dec_counts *c);

#endif
