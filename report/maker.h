/* maker.h - which frame of an allocation path names the object: the first
 * frame outside the allocator and its wrappers (xcalloc, a runtime's own
 * malloc, an arena's refill), so that a report does not call every object
 * of a program "xcalloc". The full path stays in every format.
 *
 * A frame is a wrapper when its function is in the documented list
 * (report/maker.c, docs/INTERFACE.md "Makers"), was named with
 * `report --alloc-wrapper NAME`, or is found automatically: the allocation
 * paths that share the path's first frames up to it go on through at least
 * REPORT_MAKER_CALLERS distinct callers (a function called from many sites
 * to allocate for them), directly or through frames each called from one
 * place only (an arena refill below its allocator). At least one frame
 * always names the object. */
#ifndef OBJSCOPE_REPORT_MAKER_H
#define OBJSCOPE_REPORT_MAKER_H

#include <stdint.h>

#include "common/profile.h"

#define REPORT_MAKER_CALLERS 3

/* --alloc-wrapper NAME: one more function skipped (its name as a frame
 * shows it without the parameters; a trailing '*' matches any rest). The
 * name must outlive the reports. 0, or -ENOMEM. */
int report_maker_add_wrapper(const char *name);

/* Per context of p, the index in its allocation stack of the frame that
 * names it (0: the leaf). malloc'd (ncontexts entries), NULL on -ENOMEM. */
uint32_t *report_makers_find(const struct os_profile *p);

#endif
