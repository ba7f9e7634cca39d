/* insn_len.h - length of one x86-64 instruction, for the common encodings
 * only: the fast path of decode.c's sweeps.
 *
 * capstone 4 formats every instruction it decodes (mnemonic and operand
 * text), about 1 us per instruction on the machines here; the sweeps that
 * find the instruction ending at a sampled IP only need lengths. This
 * decoder knows the legacy prefixes, REX, most of the one-byte opcode map
 * and a whitelist of two-byte (0F) opcodes checked against their mandatory
 * prefixes: 98.8% of the instructions of libjvm.so and libc.so.6. For
 * anything else (VEX, EVEX, 3DNow!, XOP, lock prefixes, rarely used or
 * prefix-dependent opcodes, bytes that are invalid in 64-bit mode) it
 * answers 0 and the caller asks capstone. Whenever it answers, capstone
 * decodes the same bytes to an instruction of the same length (checked by
 * the unit tests on real code and on random bytes). VEX is left out on
 * purpose: capstone rejects many VEX forms by their vvvv/L/W fields, and
 * they are 0.2% of that code.
 *
 * Return: the length (1..15), or 0 for "ask capstone" (also when fewer than
 * the instruction's bytes are available). */
#ifndef OBJSCOPE_INSN_LEN_H
#define OBJSCOPE_INSN_LEN_H

#include <stddef.h>
#include <stdint.h>

unsigned os_insn_len(const uint8_t *p, size_t avail);

#endif
