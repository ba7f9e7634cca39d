/* decode.c - find the instruction that ends at a sampled IP and describe its
 * memory operand (see decode.h for the classification rules). */
#include "attacher/core/decode.h"

#include <capstone/capstone.h>

#include "attacher/core/insn_len.h"
#include "common/hashmap.h"
#include <stdlib.h>
#include <string.h>

/* Longest x86 instruction. */
#define X86_MAX_INSN 15

/* Lengths capstone found, keyed by the bytes themselves (an x86-64 length
 * depends on nothing else; JIT code may change under an address, its bytes
 * then miss). The backward sweep meets the same bytes again on every miss
 * near an earlier one, and its odd offsets are where os_insn_len gives up. */
#define LEN_CACHE 4096

struct len_ent {
	uint8_t key[16];        /* the min(avail, 15) bytes, zero padded; key[15] = that count */
	uint8_t len;
};

struct os_decoder {
	csh cs;
	cs_insn *insn;          /* cs_malloc'd with detail, reused by every decode */
	struct len_ent lens[LEN_CACHE];
	struct os_dec_counts counts;
	unsigned npath;         /* valid entries of path (0: last sweep failed) */
	uint64_t path[OS_DEC_PATH_MAX];
};

struct os_decoder *os_decoder_new(void)
{
	struct os_decoder *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &d->cs) != CS_ERR_OK)
		goto fail;
	/* Detail is left on for sweeps too: turning it off for them (with a
	 * second, detail-less insn) made no measurable difference. */
	if (cs_option(d->cs, CS_OPT_DETAIL, CS_OPT_ON) != CS_ERR_OK)
		goto fail_close;
	d->insn = cs_malloc(d->cs);
	if (!d->insn)
		goto fail_close;
	return d;

fail_close:
	cs_close(&d->cs);
fail:
	free(d);
	return NULL;
}

void os_decoder_free(struct os_decoder *d)
{
	if (!d)
		return;
	cs_free(d->insn, 1);
	cs_close(&d->cs);
	free(d);
}

const char *os_dec_status_str(enum os_dec_status st)
{
	switch (st) {
	case OS_DEC_OK:
		return "ok";
	case OS_DEC_NOMEM:
		return "no memory access";
	case OS_DEC_CLOBBERED:
		return "address register overwritten";
	case OS_DEC_UNDECODABLE:
		return "undecodable";
	case OS_DEC_UNSUPPORTED:
		return "unsupported addressing";
	}
	return "unknown";
}

/* Decodes one instruction at `addr` from at most `avail` bytes into d->insn;
 * returns its length, or 0 when the bytes are not a valid instruction. */
static unsigned decode_one(struct os_decoder *d, const uint8_t *p, size_t avail, uint64_t addr)
{
	const uint8_t *code = p;
	size_t size = avail < X86_MAX_INSN ? avail : X86_MAX_INSN;
	uint64_t a = addr;

	if (!cs_disasm_iter(d->cs, &code, &size, &a, d->insn))
		return 0;
	return d->insn->size;
}

/* The length of the instruction at `addr` (0: not a valid instruction):
 * os_insn_len for the common encodings, capstone for the rest. The sweeps
 * need only lengths, and capstone formats every instruction's text. */
static unsigned insn_len(struct os_decoder *d, const uint8_t *p, size_t avail, uint64_t addr)
{
	unsigned n = os_insn_len(p, avail);
	size_t size = avail < X86_MAX_INSN ? avail : X86_MAX_INSN;
	uint8_t key[16] = { 0 };
	uint64_t w[2];
	struct len_ent *e;

	if (n)
		return n;
	d->counts.cs_lens++;
	if (!size)
		return 0;
	memcpy(key, p, size);
	key[15] = (uint8_t)size;
	memcpy(w, key, 16);
	e = &d->lens[os_hash64(w[0] ^ os_hash64(w[1])) & (LEN_CACHE - 1)];
	if (memcmp(e->key, key, 16) == 0)
		return e->len;
	n = decode_one(d, p, avail, addr);
	d->counts.cs_decodes++;
	memcpy(e->key, key, 16);
	e->len = (uint8_t)n;
	return n;
}

/* Maps any width of a general-purpose register (rax/eax/ax/al/ah, r8..r8b,
 * rsp/esp/sp/spl ...) to its full 64-bit enum os_reg; -1 for others. */
static int gpr_of(unsigned r)
{
	switch (r) {
	case X86_REG_RAX: case X86_REG_EAX: case X86_REG_AX: case X86_REG_AL: case X86_REG_AH:
		return OS_REG_AX;
	case X86_REG_RBX: case X86_REG_EBX: case X86_REG_BX: case X86_REG_BL: case X86_REG_BH:
		return OS_REG_BX;
	case X86_REG_RCX: case X86_REG_ECX: case X86_REG_CX: case X86_REG_CL: case X86_REG_CH:
		return OS_REG_CX;
	case X86_REG_RDX: case X86_REG_EDX: case X86_REG_DX: case X86_REG_DL: case X86_REG_DH:
		return OS_REG_DX;
	case X86_REG_RSI: case X86_REG_ESI: case X86_REG_SI: case X86_REG_SIL:
		return OS_REG_SI;
	case X86_REG_RDI: case X86_REG_EDI: case X86_REG_DI: case X86_REG_DIL:
		return OS_REG_DI;
	case X86_REG_RBP: case X86_REG_EBP: case X86_REG_BP: case X86_REG_BPL:
		return OS_REG_BP;
	case X86_REG_RSP: case X86_REG_ESP: case X86_REG_SP: case X86_REG_SPL:
		return OS_REG_SP;
	case X86_REG_R8: case X86_REG_R8D: case X86_REG_R8W: case X86_REG_R8B:
		return OS_REG_R8;
	case X86_REG_R9: case X86_REG_R9D: case X86_REG_R9W: case X86_REG_R9B:
		return OS_REG_R9;
	case X86_REG_R10: case X86_REG_R10D: case X86_REG_R10W: case X86_REG_R10B:
		return OS_REG_R10;
	case X86_REG_R11: case X86_REG_R11D: case X86_REG_R11W: case X86_REG_R11B:
		return OS_REG_R11;
	case X86_REG_R12: case X86_REG_R12D: case X86_REG_R12W: case X86_REG_R12B:
		return OS_REG_R12;
	case X86_REG_R13: case X86_REG_R13D: case X86_REG_R13W: case X86_REG_R13B:
		return OS_REG_R13;
	case X86_REG_R14: case X86_REG_R14D: case X86_REG_R14W: case X86_REG_R14B:
		return OS_REG_R14;
	case X86_REG_R15: case X86_REG_R15D: case X86_REG_R15W: case X86_REG_R15B:
		return OS_REG_R15;
	default:
		return -1;
	}
}

/* Linear sweep from `start` (an instruction boundary). Returns the start of
 * the instruction ending exactly at ip; 0 when an instruction spans ip or
 * decoding fails first. */
static uint64_t sweep_forward(struct os_decoder *d, const uint8_t *code, size_t len,
			      uint64_t code_addr, uint64_t start, uint64_t ip)
{
	const uint8_t *p = code + (start - code_addr);
	size_t size = len - (start - code_addr);
	uint64_t addr = start;
	unsigned np = 0;

	d->counts.fwd_sweeps++;
	while (addr < ip) {
		uint64_t at = addr;
		unsigned n = insn_len(d, p, size, addr);

		d->counts.fwd_insns++;
		if (!n)
			return 0;
		if (np < OS_DEC_PATH_MAX)
			d->path[np++] = at;
		p += n;
		size -= n;
		addr += n;
		if (addr == ip) {
			d->npath = np;
			return at;
		}
		if (addr > ip)
			return 0;
	}
	return 0;
}

/* Backward resynchronising sweep.
 *
 * Every offset c in [ip - OS_DEC_BACK_MAX, ip - 1] (clipped to the buffer) is
 * a candidate instruction start. Decoding forward from c either lands
 * exactly on ip (its last instruction start is recorded), passes over ip, or
 * hits invalid bytes. The path from c continues at c + len, so each offset is
 * decoded once, nearest first, and reuses the result of the offset it steps
 * to (paths that meet stay merged: x86 decoding is deterministic).
 *
 * Consistency rule. Only candidates at least OS_DEC_BACK_MIN_DIST bytes back
 * vote (nearer ones have had no room to resynchronise). Let V be the number
 * of voters, k the number of voters landing on ip with the most common
 * last-instruction start L, and k2 the count of the runner-up start. L is
 * accepted only if k >= OS_DEC_BACK_MIN_AGREE, 3k >= V (a third of *all*
 * voters, counting those that passed over ip or hit invalid bytes) and
 * k >= 2 * k2. Real code resynchronises within a few instructions, so when ip
 * is a true boundary most voters land on it with the same L; when ip is
 * mid-instruction or the bytes are not code, most voters pass over it or
 * fail, and the sweep answers OS_DEC_UNDECODABLE instead of guessing.
 * Measured on every instruction boundary of Debian 12's libc .text: 97% are
 * found, 1 of 48,000 wrong, the rest undecodable; a strict majority of all
 * voters instead finds 92% (long [rbp-disp32] runs keep some paths out of
 * sync). Of mid-instruction IPs, 0.07% are (wrongly) accepted. */
enum { BACK_LAND = 1, BACK_OVER, BACK_FAIL };

/* res[dist] (and last[dist] when it lands) of candidate ip - dist, decoding
 * the candidates its path steps on that are not decoded yet (res 0). */
static void back_path(struct os_decoder *d, const uint8_t *code, uint64_t code_addr, size_t len,
		      uint64_t ip, unsigned dist, uint8_t *res, uint8_t *last)
{
	uint8_t chain[OS_DEC_BACK_MAX];
	unsigned nc = 0;

	for (;;) {
		uint64_t c = ip - dist;
		size_t off = c - code_addr;
		unsigned n = insn_len(d, code + off, len - off, c);

		d->counts.back_insns++;
		if (n == 0) {
			res[dist] = BACK_FAIL;
			break;
		} else if (n == dist) {
			res[dist] = BACK_LAND;
			last[dist] = (uint8_t)dist;
			break;
		} else if (n > dist) {
			res[dist] = BACK_OVER;
			break;
		}
		chain[nc++] = (uint8_t)dist;    /* continues at dist - n */
		dist -= n;
		if (res[dist])
			break;
	}
	while (nc--) {
		res[chain[nc]] = res[dist];
		last[chain[nc]] = last[dist];
	}
}

/* Work. Each candidate's outcome is a pure function of the bytes, so the
 * nearer ones (which do not vote) are decoded only when a voter's path
 * steps on them: in real code the paths meet on the true boundaries and
 * the odd offsets between them near ip (where os_insn_len most often
 * leaves the length to capstone) are never needed. And the sweep stops as
 * soon as the remaining voters cannot change its answer: the leader already
 * has a third of all voters and at least twice what the runner-up could
 * reach (accepted), or no start can reach a third of them (refused). */
static uint64_t sweep_backward(struct os_decoder *d, const uint8_t *code, uint64_t code_addr,
			       size_t len, uint64_t ip)
{
	uint8_t res[OS_DEC_BACK_MAX + 1];
	uint8_t last[OS_DEC_BACK_MAX + 1];      /* distance ip - start of last insn */
	unsigned votes[OS_DEC_BACK_MAX + 1];
	unsigned back_max = ip - code_addr < OS_DEC_BACK_MAX ? ip - code_addr : OS_DEC_BACK_MAX;
	unsigned voters, best = 0, second = 0, dist, lead = 0, lead_n = 0, other_n = 0;

	if (back_max < OS_DEC_BACK_MIN_DIST)
		return 0;
	voters = back_max - OS_DEC_BACK_MIN_DIST + 1;
	d->counts.back_sweeps++;
	memset(votes, 0, sizeof(votes));
	memset(res, 0, sizeof(res));
	for (dist = OS_DEC_BACK_MIN_DIST; dist <= back_max; dist++) {
		unsigned rest = back_max - dist;        /* voters still to come */

		if (!res[dist])
			back_path(d, code, code_addr, len, ip, dist, res, last);
		if (res[dist] == BACK_LAND) {
			unsigned l = last[dist];

			votes[l]++;
			if (l == lead) {
				lead_n++;
			} else if (votes[l] > lead_n) {
				other_n = lead_n;
				lead = l;
				lead_n = votes[l];
			} else if (votes[l] > other_n) {
				other_n = votes[l];
			}
		}
		if (lead_n >= OS_DEC_BACK_MIN_AGREE && 3 * lead_n >= voters &&
		    lead_n >= 2 * (other_n + rest))
			break;
		if (3 * (lead_n + rest) < voters || lead_n + rest < OS_DEC_BACK_MIN_AGREE)
			return 0;
	}
	for (dist = 1; dist <= back_max; dist++) {
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

static bool is_control_transfer(struct os_decoder *d, const cs_insn *insn)
{
	return cs_insn_group(d->cs, insn, X86_GRP_JUMP) || cs_insn_group(d->cs, insn, X86_GRP_CALL) ||
	       cs_insn_group(d->cs, insn, X86_GRP_RET) || cs_insn_group(d->cs, insn, X86_GRP_IRET) ||
	       cs_insn_group(d->cs, insn, X86_GRP_INT);
}

/* Instructions whose memory operand is not a data access. */
static bool is_nomem_insn(unsigned id)
{
	switch (id) {
	case X86_INS_LEA:
	case X86_INS_NOP:               /* multi-byte nop has a ModRM "operand" */
	case X86_INS_PREFETCH:
	case X86_INS_PREFETCHNTA:
	case X86_INS_PREFETCHT0:
	case X86_INS_PREFETCHT1:
	case X86_INS_PREFETCHT2:
	case X86_INS_PREFETCHW:
		return true;
	default:
		return false;
	}
}

/* Registers capstone 4 omits from cmpxchg's implicit writes (w holds a
 * cs_regs array of 64 entries). */
static void add_missed_writes(unsigned id, uint16_t *w, uint8_t *nw)
{
	if (*nw > 64 - 2)
		return;
	switch (id) {
	case X86_INS_CMPXCHG:
		w[(*nw)++] = X86_REG_RAX;
		break;
	case X86_INS_CMPXCHG8B:
	case X86_INS_CMPXCHG16B:
		w[(*nw)++] = X86_REG_RAX;
		w[(*nw)++] = X86_REG_RDX;
		break;
	default:
		break;
	}
}

/* Fills m from the instruction in d->insn (decoded with detail). */
static enum os_dec_status analyse(struct os_decoder *d, struct os_mem_insn *m)
{
	const cs_insn *insn = d->insn;
	const cs_x86 *x = &insn->detail->x86;
	const cs_x86_op *mem = NULL;
	cs_regs rd, wr;
	uint8_t nrd = 0, nwr = 0;
	int i;

	if (is_control_transfer(d, insn) || is_nomem_insn(insn->id))
		return OS_DEC_NOMEM;
	for (i = 0; i < x->op_count; i++) {
		if (x->operands[i].type == X86_OP_MEM) {
			mem = &x->operands[i];
			break;
		}
	}
	if (cs_regs_access(d->cs, insn, rd, &nrd, wr, &nwr) != CS_ERR_OK)
		return OS_DEC_UNDECODABLE;
	add_missed_writes(insn->id, wr, &nwr);

	if (!mem) {
		/* push/pop/leave/enter access the stack through rsp and move it:
		 * the sampled rsp is not the one they used. */
		for (i = 0; i < insn->detail->regs_write_count; i++)
			if (gpr_of(insn->detail->regs_write[i]) == OS_REG_SP)
				return OS_DEC_CLOBBERED;
		return OS_DEC_NOMEM;
	}

	if (mem->mem.segment == X86_REG_FS || mem->mem.segment == X86_REG_GS ||
	    x->prefix[1] == X86_PREFIX_FS || x->prefix[1] == X86_PREFIX_GS)
		return OS_DEC_UNSUPPORTED;

	m->base = -1;
	m->index = -1;
	m->rip_relative = false;
	if (mem->mem.base == X86_REG_RIP || mem->mem.base == X86_REG_EIP) {
		m->rip_relative = true;
	} else if (mem->mem.base != X86_REG_INVALID) {
		m->base = gpr_of(mem->mem.base);
		if (m->base < 0)
			return OS_DEC_UNSUPPORTED;
	}
	if (mem->mem.index != X86_REG_INVALID) {
		m->index = gpr_of(mem->mem.index); /* xmm/ymm/zmm: VSIB gather */
		if (m->index < 0 || m->rip_relative)
			return OS_DEC_UNSUPPORTED;
	}
	m->scale = m->index >= 0 ? (uint8_t)mem->mem.scale : 0;
	m->disp = mem->mem.disp;
	m->base32 = x->addr_size == 4;
	m->width = mem->size;
	m->is_write = (mem->access & CS_AC_WRITE) || insn->id == X86_INS_CMPXCHG ||
		      insn->id == X86_INS_CMPXCHG8B || insn->id == X86_INS_CMPXCHG16B;

	for (i = 0; i < nwr; i++) {
		int r = gpr_of(wr[i]);

		if (r >= 0 && (r == m->base || r == m->index))
			return OS_DEC_CLOBBERED;
	}
	return OS_DEC_OK;
}

enum os_dec_status os_decode_prev(struct os_decoder *d, const uint8_t *code, size_t len,
				  uint64_t code_addr, uint64_t ip, uint64_t boundary,
				  struct os_mem_insn *m)
{
	enum os_dec_status st = OS_DEC_UNDECODABLE;
	uint64_t start = 0;

	d->counts.calls++;
	d->npath = 0;
	memset(m, 0, sizeof(*m));
	m->base = -1;
	m->index = -1;
	if (ip <= code_addr || ip - code_addr > len)
		goto out;

	if (boundary && boundary >= code_addr && boundary < ip) {
		/* On a straddle or invalid bytes the sweep may have lost sync
		 * (data in code): the backward sweep decides, and its
		 * consistency rule rejects an ip really inside an instruction. */
		start = sweep_forward(d, code, len, code_addr, boundary, ip);
	}
	if (!start)
		start = sweep_backward(d, code, code_addr, len, ip);
	if (!start)
		goto out;

	if (decode_one(d, code + (start - code_addr), ip - start, start) != ip - start)
		goto out;
	m->insn_addr = start;
	m->insn_len = (uint8_t)(ip - start);
	st = analyse(d, m);
out:
	m->status = (uint8_t)st;
	return st;
}

unsigned os_decoder_path(const struct os_decoder *d, const uint64_t **starts)
{
	*starts = d->path;
	return d->npath;
}

void os_decoder_counts(const struct os_decoder *d, struct os_dec_counts *c)
{
	*c = d->counts;
}

uint64_t os_decode_ea(const struct os_mem_insn *m, const uint64_t regs[OS_REG_COUNT])
{
	uint64_t ea = (uint64_t)m->disp;

	if (m->rip_relative)
		ea += m->insn_addr + m->insn_len;
	if (m->base >= 0)
		ea += regs[m->base];
	if (m->index >= 0)
		ea += regs[m->index] * m->scale;
	if (m->base32)
		ea &= 0xffffffffULL;
	return ea;
}
