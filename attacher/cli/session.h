/* session.h - what `record` and `attach` share around the collector:
 * finding the preload library and writing the profile with its summary.
 * Return convention: 0 on success, -errno on failure (after printing one
 * line for os_session_write_profile). */
#ifndef OBJSCOPE_SESSION_H
#define OBJSCOPE_SESSION_H

#include <stddef.h>

#include "attacher/core/collector.h"

/* Absolute real path of libobjscope.so: $OBJSCOPE_LIB, else next to this
 * executable, else ../lib/objscope/ relative to it (installed layout).
 * out must hold PATH_MAX bytes. */
int os_session_find_preload(char *out, size_t len);
/* --replicas: the allocation hooks arm comparisons in the target
 * (docs/REPLICAS.md, "Routes"), unless OBJSCOPE_REPLICAS_IN_TARGET=0 leaves
 * them to the collector (a diagnostic: the cost and figures of each part).
 * Sets OS_SHM_F_REPLICAS in c's shared header; call before the target
 * reads its flags. */
void os_session_replicas_in_target(struct os_collector *c, const struct os_opts *o);

/* Builds the profile of collector c, writes it to o->output atomically and,
 * unless -q, prints the one-line summary on stderr. `mode` is "record" or
 * "attach" (also the prefix of error messages). */
int os_session_write_profile(struct os_collector *c, const struct os_opts *o, const char *mode,
			     int argc, char *const argv[]);

/* The same, with `nnotes` notes added to the profile (shown by every report
 * format: what the user must know about this run, e.g. how the target of an
 * attach ended). */
int os_session_write_profile_notes(struct os_collector *c, const struct os_opts *o,
				   const char *mode, int argc, char *const argv[],
				   const char *const notes[], size_t nnotes);

#endif
