/* log.h - messages of the objscope tools (never used inside the target).
 * Errors: one line "objscope: <what failed>: <why> — <what to do>" on stderr.
 * os_debug() prints only with -v (level >= 1), -vv for os_trace().
 * Every message is escaped (os_log_escape): text from the target cannot
 * put control characters or escape sequences on the terminal. */
#ifndef OBJSCOPE_LOG_H
#define OBJSCOPE_LOG_H

#include <stddef.h>

extern int os_verbose;

void os_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void os_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void os_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void os_trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A live status line (attacher/core/collector.c) registers how to take itself off
 * the current line; every message calls it first, so that the message starts
 * on a line of its own. NULL: none. os_log_progress_clear() calls it now. */
void os_log_set_progress_clear(void (*clear)(void));
void os_log_progress_clear(void);

/* in into out (outlen bytes, NUL-terminated, cut at a whole character):
 * printable ASCII and valid UTF-8 from U+00A0 as they are, every other byte
 * (C0 and C1 controls, DEL, bytes of no valid sequence) as \xNN. Returns the
 * length written. */
size_t os_log_escape(const char *in, char *out, size_t outlen);

#endif
