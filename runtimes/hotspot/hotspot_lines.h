/* hotspot_lines.h - source lines of Java methods in a HotSpot JVM.
 *
 * A frame of an interpreted or compiled Java method stands at a bytecode
 * index (bci): interpreted frames keep their bytecode pointer (bcp) in the
 * frame, compiled frames have it in their scopes (hotspot_scopes.h). The
 * line is the method's LineNumberTable entry for that bci, as HotSpot's
 * Method::line_number_from_bci picks it: the entry at the bci itself, else
 * the nearest one before it.
 *
 * HotSpot keeps the table compressed right after the method's bytecodes
 * (ConstMethod + sizeof(ConstMethod) + _code_size) when the ConstMethod's
 * _flags has bit 0x1 (_has_linenumber_table). Pairs (bci, line) are deltas
 * from the previous pair, starting at (0, 0): one byte (bci delta << 3 |
 * line delta) when the bci delta fits 5 bits and the line delta 3 bits;
 * else the byte 0xFF and two signed numbers (zigzag: (v << 1) ^ (v >> 31),
 * in HotSpot's compressed int form, hotspot_scopes.h); a 0 byte ends the
 * table. The source file is the Symbol at ConstantPool index
 * ConstantPool::_source_file_name_index (0: no SourceFile attribute).
 *
 * Everything is read through vmStructs names (no hard-coded offsets), once
 * per method. Return convention: 0 / -errno, counts.
 */
#ifndef OBJSCOPE_HOTSPOT_LINES_H
#define OBJSCOPE_HOTSPOT_LINES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtimes/hotspot/hotspot_scopes.h"
#include "runtimes/hotspot/hotspot_vm.h"

#define OS_HS_LINES_MAX 65536u /* pairs of one method believed */

struct os_hs_line_layout {
	int64_t method_const;  /* Method::_constMethod */
	int64_t constants;     /* ConstMethod::_constants */
	int64_t cm_size;       /* ConstMethod::_constMethod_size (int, words) */
	int64_t flags;         /* ConstMethod::_flags (u2; JDK 21+ _flags._flags, u4) */
	uint32_t flags_width;  /* 2 or 4 (hs_layout.h) */
	bool u5;               /* escaped pairs in UNSIGNED5 (JDK 21+) */
	uint32_t line_bit;     /* the flag of a line number table (JDK 21+:
				* ConstMethodFlags::_misc_has_linenumber_table) */
	int64_t code_size;     /* ConstMethod::_code_size (u2) */
	int64_t cp_source;     /* ConstantPool::_source_file_name_index (u2) */
	uint32_t cm_sizeof;    /* sizeof(ConstMethod): the bytecodes follow */
	uint32_t cp_sizeof;    /* sizeof(ConstantPool): the slots follow */
	bool ok;
};

void os_hs_line_layout(struct os_hs_line_layout *l, const struct os_hs_vm *vm);

/* One method's bytecodes and line table as read. */
struct os_hs_mlines {
	uint64_t code_base;   /* its bytecode 0 */
	uint32_t code_size;
	uint32_t npairs;
	uint32_t *pairs;      /* bci << 16 | line, in table order (malloc'd) */
	uint64_t cpool;       /* its ConstantPool (the source file is the class's) */
};

/* Decodes a compressed line table of len bytes into pairs (at most max):
 * the number of pairs, or -EINVAL (no end within len, more than max pairs,
 * a bci or line outside 0..65535). */
int os_hs_lines_decode(const uint8_t *p, size_t len, uint32_t *pairs, uint32_t max);
/* ... with u5: the escaped pairs' ints in UNSIGNED5 (JDK 21+). */
int os_hs_lines_decode_enc(const uint8_t *p, size_t len, uint32_t *pairs, uint32_t max, bool u5);

/* Sorts decoded pairs by bci, stably (entries of one bci keep their table
 * order), for os_hs_line_at. */
void os_hs_lines_sort(uint32_t *pairs, uint32_t n);

/* The line of bci (-1, the method's entry, counts as 0) in pairs sorted by
 * os_hs_lines_sort, by HotSpot's rule (Method::line_number_from_bci: the
 * first entry at bci in table order, else the last of those with the
 * largest bci below it), or 0 when none (no table, or nothing at or before
 * bci). A binary search: it runs for every Java frame of every sample. */
uint32_t os_hs_line_at(const uint32_t *pairs, uint32_t n, int32_t bci);

/* Reads method's bytecode range and line table: 0; -EFAULT unreadable;
 * -EINVAL implausible; -ENOMEM. npairs 0 when it has no table. */
int os_hs_mlines_read(struct os_hs_mlines *ml, const struct os_hs_line_layout *l,
		      os_hs_read_fn rd, void *arg, uint64_t method);
void os_hs_mlines_free(struct os_hs_mlines *ml);

/* The Symbol* naming the source file of the class of cpool, 0 when it has
 * none. -EFAULT when unreadable. */
int os_hs_source_symbol(const struct os_hs_line_layout *l, os_hs_read_fn rd, void *arg,
			uint64_t cpool, uint64_t *sym);

/* The bytecode index a bcp stands for in ml: -1 when it lies outside the
 * method. low13: only bcp's 13 low bits are known (the preload's
 * allocation paths): the bci is then certain for methods of at most 8 KiB
 * of bytecodes only. */
int32_t os_hs_bci_of(const struct os_hs_mlines *ml, uint64_t bcp, bool low13);

#endif
