/* debug_dir.h - `objscope report --debug-dir DIR` (alias --symfs): names the
 * frames a stripped module left unnamed from the debug files in DIR, by the
 * build-ids the profile keeps (symbolizer/offline.h). */
#ifndef OBJSCOPE_REPORT_DEBUG_DIR_H
#define OBJSCOPE_REPORT_DEBUG_DIR_H

#include <stdbool.h>

struct os_profile;

/* Replaces *p by the profile with those frames named (a note says how many,
 * and which modules had no file in dir). 0, or -errno after a one-line
 * error (dir not a directory, out of memory). */
int report_debug_dir(struct os_profile **p, const char *dir, bool lines);

#endif
