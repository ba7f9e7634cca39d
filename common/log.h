/* log.h - messages of the objscope tools (never used inside the target).
 * Errors: one line "objscope: <what failed>: <why> — <what to do>" on stderr.
 * os_debug() prints only with -v (level >= 1), -vv for os_trace(). */
#ifndef OBJSCOPE_LOG_H
#define OBJSCOPE_LOG_H

extern int os_verbose;

void os_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void os_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void os_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void os_trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
