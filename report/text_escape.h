/* text_escape.h - text from the profile made inert for a terminal.
 *
 * Every text output of `objscope report` (the text report, text --diff,
 * --format collapsed) writes free text that came from the target (command
 * arguments, frames, types, thread and host names, notes) through these:
 * printable ASCII and valid UTF-8 from U+00A0 as they are, every other byte
 * (C0 and C1 controls, DEL, bytes of no valid sequence) as \xNN, so that one
 * line stays one line and nothing reaches a terminal as a control sequence
 * (the rule of common/log.h's os_log_escape, for the messages). */
#ifndef OBJSCOPE_REPORT_TEXT_ESCAPE_H
#define OBJSCOPE_REPORT_TEXT_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The length of the valid UTF-8 sequence of 2 to 4 bytes at s, or 0 (an
 * invalid or overlong sequence, a surrogate, a C1 control character). */
size_t report_utf8_len(const unsigned char *s);
/* Whether s holds a control character or bytes that are not printable UTF-8. */
bool report_needs_escapes(const char *s);
/* s escaped, in pieces handed to put(ctx, bytes, n). */
void report_escape(const char *s, void (*put)(void *ctx, const char *b, size_t n), void *ctx);
/* s escaped onto out. */
void report_put_text(const char *s, FILE *out);

#endif
