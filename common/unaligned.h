/* unaligned.h - little-endian reads of fixed-width values at any byte
 * offset of a buffer (memcpy: no alignment trap, no aliasing trouble), for
 * the parsers of bytes copied out of a target (HotSpot's nmethod scopes and
 * line tables). x86-64 only, like the rest of objscope: host order is the
 * target's. Header only. */
#ifndef OBJSCOPE_UNALIGNED_H
#define OBJSCOPE_UNALIGNED_H

#include <stdint.h>
#include <string.h>

static inline uint16_t os_u16_at(const uint8_t *b, int64_t off)
{
	uint16_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

static inline int32_t os_i32_at(const uint8_t *b, int64_t off)
{
	int32_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

static inline uint64_t os_u64_at(const uint8_t *b, int64_t off)
{
	uint64_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

#endif
