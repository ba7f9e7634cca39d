/* fuzz_repair.h - makes a mutated profile pass the reader's outer checks:
 * its version, header file size, END section header and CRC-32 are set to
 * what the reader expects, so that mutations reach the section decoders
 * and, past them, the reports instead of stopping at the checksum. */
#ifndef OBJSCOPE_FUZZ_REPAIR_H
#define OBJSCOPE_FUZZ_REPAIR_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

#include "common/profile.h"

#define FZ_HEADER 24
#define FZ_END 20

static inline void fz_put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void fz_put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Whether buf (size bytes) can be repaired: it starts with the magic and
 * holds a header and an END section. */
static inline int fz_repairable(const uint8_t *buf, size_t size)
{
	return size >= FZ_HEADER + FZ_END && memcmp(buf, OS_PROFILE_MAGIC, 8) == 0;
}

/* Repairs buf in place (fz_repairable must hold). */
static inline void fz_repair(uint8_t *buf, size_t size)
{
	size_t end = size - FZ_END;

	fz_put_le32(buf + 8, OS_PROFILE_VERSION);
	fz_put_le64(buf + 16, size);
	fz_put_le32(buf + end, OS_SEC_END);
	fz_put_le32(buf + end + 4, 0);
	fz_put_le64(buf + end + 8, 4);
	fz_put_le32(buf + end + 16, (uint32_t)crc32_z(crc32(0L, NULL, 0), buf, end));
}

#endif
