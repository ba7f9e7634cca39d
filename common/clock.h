/* clock.h - the one monotonic clock of objscope: nanoseconds of
 * CLOCK_MONOTONIC. Static inline, so that the in-target library (preload/,
 * runtimes/hotspot/target/) uses it as well without a new object. */
#ifndef OBJSCOPE_CLOCK_H
#define OBJSCOPE_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t os_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif
