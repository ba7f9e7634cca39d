/* insn_len.c - x86-64 instruction lengths for the common encodings (see
 * insn_len.h). Opcode facts from the Intel SDM, volume 2, appendix A. */
#include "attacher/core/insn_len.h"

#include <stdbool.h>

#define MAX_INSN 15

/* What follows an opcode. */
enum {
	F_MODRM = 1,    /* a ModRM byte (and SIB/displacement as it says) */
	F_I8 = 2,       /* imm8 / rel8 */
	F_IZ = 4,       /* imm16 with 0x66 (no REX.W), else imm32 (also rel32) */
	F_IV = 8,       /* imm64 with REX.W, imm16 with 0x66, else imm32 */
	F_I16 = 16,     /* imm16 */
	F_BAD = 128,    /* not handled here */
};

/* Mandatory-prefix classes of an SSE opcode: which of none/66/F3/F2 make a
 * valid instruction. */
enum { PX_NONE = 1, PX_66 = 2, PX_F3 = 4, PX_F2 = 8, PX_ALL = 15 };

struct pfx {
	bool p66, p67, rep, repne, rexw;
};

static unsigned one_byte(uint8_t op, uint8_t modrm_reg, uint8_t modrm_mod, bool have_modrm)
{
	switch (op) {
	case 0x00 ... 0x03: case 0x08 ... 0x0b: case 0x10 ... 0x13: case 0x18 ... 0x1b:
	case 0x20 ... 0x23: case 0x28 ... 0x2b: case 0x30 ... 0x33: case 0x38 ... 0x3b:
		return F_MODRM;
	case 0x04: case 0x0c: case 0x14: case 0x1c: case 0x24: case 0x2c: case 0x34: case 0x3c:
		return F_I8;
	case 0x05: case 0x0d: case 0x15: case 0x1d: case 0x25: case 0x2d: case 0x35: case 0x3d:
		return F_IZ;
	case 0x50 ... 0x5f:
		return 0;
	case 0x63:
		return F_MODRM;
	case 0x68:
		return F_IZ;
	case 0x69:
		return F_MODRM | F_IZ;
	case 0x6a:
		return F_I8;
	case 0x6b:
		return F_MODRM | F_I8;
	case 0x70 ... 0x7f:
		return F_I8;
	case 0x80: case 0x83:
		return F_MODRM | F_I8;
	case 0x81:
		return F_MODRM | F_IZ;
	case 0x84 ... 0x8b:
		return F_MODRM;
	case 0x8d: /* lea needs a memory operand */
		return have_modrm && modrm_mod != 3 ? F_MODRM : F_BAD;
	case 0x8f: /* pop r/m; other reg fields are XOP on AMD */
		return have_modrm && modrm_reg == 0 ? F_MODRM : F_BAD;
	case 0x90 ... 0x99: case 0x9b: case 0x9c: case 0x9d: case 0x9e: case 0x9f:
		return 0;
	case 0xa4 ... 0xa7: case 0xaa ... 0xaf:
		return 0;
	case 0xa8:
		return F_I8;
	case 0xa9:
		return F_IZ;
	case 0xb0 ... 0xb7:
		return F_I8;
	case 0xb8 ... 0xbf:
		return F_IV;
	case 0xc0: case 0xc1:
		return F_MODRM | F_I8;
	case 0xc2:
		return F_I16;
	case 0xc3: case 0xc9: case 0xcc:
		return 0;
	case 0xc6:
		return have_modrm && modrm_reg == 0 ? F_MODRM | F_I8 : F_BAD;
	case 0xc7:
		return have_modrm && modrm_reg == 0 ? F_MODRM | F_IZ : F_BAD;
	case 0xcd:
		return F_I8;
	case 0xd0 ... 0xd3:
		return have_modrm && modrm_reg != 6 ? F_MODRM : F_BAD;
	case 0xe8: case 0xe9:
		return F_IZ;
	case 0xeb:
		return F_I8;
	case 0xf4:
		return 0;
	case 0xf6:
		if (!have_modrm || modrm_reg == 1)
			return F_BAD;
		return modrm_reg == 0 ? F_MODRM | F_I8 : F_MODRM;
	case 0xf7:
		if (!have_modrm || modrm_reg == 1)
			return F_BAD;
		return modrm_reg == 0 ? F_MODRM | F_IZ : F_MODRM;
	case 0xfe:
		return have_modrm && modrm_reg <= 1 ? F_MODRM : F_BAD;
	case 0xff: /* /3 and /5 are far call/jmp, /7 is undefined */
		return have_modrm && modrm_reg != 7 && modrm_reg != 3 && modrm_reg != 5 ? F_MODRM
										       : F_BAD;
	default:
		return F_BAD;
	}
}

/* Two-byte map (0F xx): flags, and *px the prefixes it is valid with. */
static unsigned two_byte(uint8_t op, unsigned *px)
{
	*px = PX_ALL;
	switch (op) {
	case 0x05: case 0x0b: case 0x31: case 0xa2:
		*px = PX_NONE;
		return 0;
	case 0x1f:
		*px = PX_NONE | PX_66;
		return F_MODRM;
	case 0x10: case 0x11: case 0x51: case 0x58: case 0x59: case 0x5a: case 0x5c: case 0x5d:
	case 0x5e: case 0x5f:
		return F_MODRM;
	case 0x2a: case 0x2c: case 0x2d:
		return F_MODRM;
	case 0x28: case 0x29: case 0x2e: case 0x2f: case 0x54 ... 0x57: case 0x14: case 0x15:
		*px = PX_NONE | PX_66;
		return F_MODRM;
	case 0x6e: case 0xef: case 0xd4: case 0xfb: case 0xfe: case 0xfa:
		*px = PX_NONE | PX_66;
		return F_MODRM;
	case 0x6f: case 0x7f:
		*px = PX_NONE | PX_66 | PX_F3;
		return F_MODRM;
	case 0x7e:
		*px = PX_NONE | PX_66 | PX_F3;
		return F_MODRM;
	case 0x5b:
		*px = PX_NONE | PX_66 | PX_F3;
		return F_MODRM;
	case 0xd6:
		*px = PX_66;
		return F_MODRM;
	case 0x40 ... 0x4f: case 0x90 ... 0x9f: case 0xa3: case 0xa5: case 0xab: case 0xad:
	case 0xaf: case 0xb0: case 0xb1: case 0xb3: case 0xb6: case 0xb7: case 0xbb: case 0xbe:
	case 0xbf: case 0xc0: case 0xc1:
		*px = PX_NONE | PX_66;
		return F_MODRM;
	case 0xbc: case 0xbd: /* bsf/bsr, tzcnt/lzcnt */
		*px = PX_NONE | PX_66 | PX_F3;
		return F_MODRM;
	case 0xa4: case 0xac:
		*px = PX_NONE | PX_66;
		return F_MODRM | F_I8;
	case 0x80 ... 0x8f:
		*px = PX_NONE;
		return F_IZ;
	case 0xc8 ... 0xcf:
		*px = PX_NONE;
		return 0;
	default:
		return F_BAD;
	}
}

/* Two-byte opcodes that need a memory operand (ModRM.mod != 3). */
static bool have_reg3(unsigned f, const uint8_t *p, size_t avail, uint8_t op)
{
	(void)f;
	if (avail < 1)
		return false;
	return (p[0] >> 6) == 3 && (op == 0x0d || op == 0x18 || op == 0x1f);
}

/* Bytes of ModRM + SIB + displacement starting at p (64-bit addressing;
 * 0x67 changes only the register width, not the form); 0 if not available. */
static unsigned modrm_len(const uint8_t *p, size_t avail)
{
	unsigned mod, rm, n = 1;

	if (avail < 1)
		return 0;
	mod = p[0] >> 6;
	rm = p[0] & 7;
	if (mod == 3)
		return 1;
	if (rm == 4) {
		if (avail < 2)
			return 0;
		n++;
		if (mod == 0 && (p[1] & 7) == 5)
			n += 4;
	} else if (mod == 0 && rm == 5) {
		n += 4;
	}
	if (mod == 1)
		n += 1;
	else if (mod == 2)
		n += 4;
	return n;
}

static unsigned imm_len(unsigned f, const struct pfx *x)
{
	unsigned n = 0;

	if (f & F_I8)
		n += 1;
	if (f & F_I16)
		n += 2;
	if (f & F_IZ)
		n += x->p66 && !x->rexw ? 2 : 4; /* REX.W overrides 0x66 */
	if (f & F_IV)
		n += x->rexw ? 8 : x->p66 ? 2 : 4;
	return n;
}

unsigned os_insn_len(const uint8_t *p, size_t avail)
{
	struct pfx x = { false, false, false, false, false };
	size_t i = 0, end;
	unsigned f, px, mlen;
	uint8_t op;

	if (avail > MAX_INSN)
		avail = MAX_INSN;
	/* legacy prefixes (no lock: capstone rejects it on most opcodes) */
	for (; i < avail; i++) {
		uint8_t b = p[i];

		if (b == 0x66)
			x.p66 = true;
		else if (b == 0x67)
			x.p67 = true;
		else if (b == 0xf3)
			x.rep = true;
		else if (b == 0xf2)
			x.repne = true;
		else if (b == 0x2e || b == 0x3e || b == 0x26 || b == 0x36 || b == 0x64 || b == 0x65)
			continue;
		else
			break;
		if (i >= 4)
			return 0; /* long prefix runs: leave them to capstone */
	}
	if (i >= avail)
		return 0;
	if ((p[i] & 0xf0) == 0x40) {
		x.rexw = (p[i] & 8) != 0;
		if (++i >= avail)
			return 0;
	}
	op = p[i++];
	if (x.rep && x.repne)
		return 0;
	if (op == 0x0f) {
		unsigned want;

		if (i >= avail)
			return 0;
		op = p[i++];
		f = two_byte(op, &px);
		if (f & F_BAD)
			return 0;
		/* 66 with F2/F3: which one is mandatory is not simple */
		if ((x.rep || x.repne) && x.p66)
			return 0;
		want = x.rep ? PX_F3 : x.repne ? PX_F2 : x.p66 ? PX_66 : PX_NONE;
		if (!(px & want))
			return 0;
		/* only jcc rel32 has an immediate here, and 66 would change it */
		if ((f & F_IZ) && x.p66)
			return 0;
		if (have_reg3(f, p + i, avail - i, op))
			return 0;
	} else {
		bool have = i < avail;

		if (x.rep || x.repne) {
			/* rep/repne only on string instructions and ret */
			if (!((op >= 0xa4 && op <= 0xa7) || (op >= 0xaa && op <= 0xaf) || op == 0xc3))
				return 0;
		}
		if (x.p66 && (op == 0xe8 || op == 0xe9 || op == 0xc2 || op == 0x68 || op == 0xeb ||
			      (op >= 0x70 && op <= 0x7f)))
			return 0; /* Intel and AMD disagree on 0x66 with branches */
		f = one_byte(op, have ? (p[i] >> 3) & 7 : 0, have ? p[i] >> 6 : 0, have);
		if (f & F_BAD)
			return 0;
	}
	end = i;
	if (f & F_MODRM) {
		mlen = modrm_len(p + i, avail - i);
		if (!mlen)
			return 0;
		end += mlen;
	}
	end += imm_len(f, &x);
	if (end > avail)
		return 0;
	return (unsigned)end;
}
