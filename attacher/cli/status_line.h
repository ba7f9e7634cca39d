/* status_line.h - the live status line of `record` and `attach`: elapsed
 * time, samples and their rate, objects, GCs and lost samples of a
 * collection, redrawn at most twice a second on stderr while it runs (on a
 * terminal, or always with --progress), and taken away at the end. */
#ifndef OBJSCOPE_STATUS_LINE_H
#define OBJSCOPE_STATUS_LINE_H

#include <stdbool.h>

#include "attacher/core/collector.h"

/* Draws c's status (rate limited), or clears it for good when final. */
void os_status_line(struct os_collector *c, bool final);

#endif
