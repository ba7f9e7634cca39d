/* unit_helpers.h - what several unit-test files share: a scratch directory
 * per suite and a frame builder for hand-made profiles. */
#ifndef OBJSCOPE_TESTS_UNIT_HELPERS_H
#define OBJSCOPE_TESTS_UNIT_HELPERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/profile.h"

/* mkdtemp of "/tmp/objscope-test-NAME-XXXXXX" into dir (len >= 64);
 * asserts on failure. */
void ut_mkdtemp(char *dir, size_t len, const char *name);
/* Removes dir and everything below it; expects success. */
void ut_rmtree(const char *dir);
/* "dir/name" in one of 8 rotating static buffers. */
char *ut_path(const char *dir, const char *name);
/* Interns a frame into p (NULL strings become OS_NONE). */
uint32_t ut_frame(struct os_profile *p, uint32_t kind, const char *name, const char *module,
		  const char *file, uint32_t line, uint64_t addr);
/* ut_frame with a column (DWARF) of line. */
uint32_t ut_frame_col(struct os_profile *p, uint32_t kind, const char *name, const char *module,
		      const char *file, uint32_t line, uint32_t column, uint64_t addr);

/* The notes of p, those kept as counters rendered by the runtimes
 * (os_runtimes_render_note, asserted), joined by '\n' (malloc'd). */
char *ut_notes_text(struct os_profile *p);

/* A gcc -O2 hash-chain loop (x86-64 machine code, listing in unit_helpers.c)
 * shared by the decoder and sampler tests. */
#define UT_WALK_CODE_LEN 108
extern const uint8_t ut_walk_code[UT_WALK_CODE_LEN];

/* Synthetic target memory: buf's len bytes stand for the target's
 * [base, base + len). */
struct ut_mem {
	uint64_t base;
	uint8_t *buf;
	size_t len;
};
/* A reader of the collector's kind (os_hs_read_fn): n bytes at addr of the
 * struct ut_mem at arg into out; false when they are not all inside it. */
bool ut_mem_read(void *arg, uint64_t addr, void *out, size_t n);
/* HotSpot's CompressedWriteStream::write_int: v into buf at *at, advanced.
 * Values below 192 take one byte; above, each byte carries 6 bits as
 * 192 + digit, the last one below 192 (or the fifth). */
void ut_write_int(uint8_t *buf, size_t *at, uint32_t v);

/* One ring event of process pid fed through prepare + apply, as the
 * collector does: type, addr, size, aux, aux2, and when site is non-zero the
 * two-frame path site <- 0x400100 (main). */
struct os_attrib;
void ut_attrib_event(struct os_attrib *at, uint32_t pid, uint16_t type, uint64_t addr,
		     uint64_t size, uint64_t aux, uint64_t aux2, uint64_t site);

#endif
