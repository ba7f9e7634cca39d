/* unwind.h - DWARF unwinding of access samples (CFI through libdwfl).
 *
 * A software sample carries the user registers and a copy of the top of the
 * user stack (PERF_SAMPLE_STACK_USER). With the .eh_frame/.debug_frame of
 * the mapped ELF files this gives complete access paths for -O2 code built
 * without frame pointers, where the kernel's frame-pointer chain stops at
 * the sampled function. One Dwfl per address space; modules are reported
 * lazily as frames reach them. Return convention: frame counts.
 */
#ifndef OBJSCOPE_UNWIND_H
#define OBJSCOPE_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attacher/core/decode.h"
#include "symbolizer/symbolizer.h"

struct os_unwinder;

struct os_unwinder *os_unwinder_new(struct os_symbolizer *sym);
void os_unwinder_free(struct os_unwinder *u);

/* Unwinds the sample of thread tid in address space asid (mappings known to
 * sym under that id). regs are indexed by enum os_reg; stack holds len
 * bytes copied from regs[OS_REG_SP]. frames[0] = the sampled IP, then
 * return addresses. Returns the number of frames (0 when even the first
 * frame's module is unknown). */
uint32_t os_unwind(struct os_unwinder *u, uint32_t asid, uint32_t tid,
		   const uint64_t regs[OS_REG_COUNT], const uint8_t *stack, size_t len,
		   uint64_t *frames, uint32_t max);
/* After os_unwind: when it stopped at a frame whose caller it could not
 * compute because the frame's pc lies in no ELF module (JIT code), that
 * frame's stack pointer (the caller's CFA) and frame pointer: true and
 * *sp, *fp; false otherwise. The frame is the last one os_unwind gave. */
bool os_unwind_stopped(const struct os_unwinder *u, uint64_t *sp, uint64_t *fp);

#endif
