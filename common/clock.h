/* clock.h - the monotonic clock of objscope: os_now_ns(), nanoseconds of
 * CLOCK_MONOTONIC (the clock the perf events and the target's ring events
 * are stamped with, so times of either compare with it). Header only, no
 * allocation: usable on both sides (collector and preload). */
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
