/* json_writer.h - a small streaming JSON writer: values are written to a
 * FILE through a fixed buffer as they are produced, never held as a tree.
 *
 * Layout: the one of json-c's JSON_C_TO_STRING_PRETTY | _SPACED (two-space
 * indentation, "key": value, one member per line, the closing bracket of
 * every container, even an empty one, on a line of its own), but for the
 * objects opened with jw_begin_object_flat(), on one line. Strings are escaped per RFC 8259 ('"', '\\', control characters;
 * '/' is left as is); bytes that are not valid UTF-8 become U+FFFD, so the
 * output is always valid UTF-8 JSON. With `html_safe`, '<' is written as
 * \u003c as well (JSON embedded in a <script> element). Unsigned integers
 * are printed exactly; doubles with the fewest digits that read back to the
 * same value (".0" added to integral ones), non-finite ones as null.
 *
 * Every function takes the member's key when the enclosing container is an
 * object, NULL inside an array or at the top level. Write errors are sticky:
 * after the first failed fwrite nothing more is written and jw_finish()
 * returns -errno (-EIO when the stream set none); the caller may also check
 * ferror() on the FILE. Nesting is limited to JW_MAX_DEPTH (deeper opens are
 * a programming error: jw_finish() returns -EINVAL). */
#ifndef OBJSCOPE_REPORT_JSON_WRITER_H
#define OBJSCOPE_REPORT_JSON_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JW_MAX_DEPTH 32
#define JW_BUF 65536

struct json_writer {
	FILE *out;
	bool html_safe;
	int err;                     /* first error, -errno */
	uint32_t depth;
	uint32_t flat_depth;         /* depth of the open flat object, 0 when none */
	bool has_items[JW_MAX_DEPTH + 1]; /* per open container: a member written */
	size_t n;
	char buf[JW_BUF];
};

void jw_init(struct json_writer *w, FILE *out, bool html_safe);
/* Flushes the buffer to the FILE; 0 or the sticky error. */
int jw_finish(struct json_writer *w);

void jw_begin_object(struct json_writer *w, const char *key);
void jw_end_object(struct json_writer *w);
void jw_begin_array(struct json_writer *w, const char *key);
void jw_end_array(struct json_writer *w);

void jw_string(struct json_writer *w, const char *key, const char *s);
void jw_u64(struct json_writer *w, const char *key, uint64_t v);
void jw_i64(struct json_writer *w, const char *key, int64_t v);
void jw_double(struct json_writer *w, const char *key, double v);
void jw_null(struct json_writer *w, const char *key);
void jw_bool(struct json_writer *w, const char *key, bool v);

/* Raw bytes as they are (the caller guarantees they are valid JSON text). */
void jw_raw(struct json_writer *w, const char *s, size_t len);

/* For callers that cache escaped strings: `scratch` is a writer made with
 * jw_init(scratch, NULL, html_safe) and used for nothing else. Escapes s
 * (at most JW_ESCAPE_MAX bytes; longer ones set scratch's error and are
 * cut) into scratch->buf and returns the escaped length. */
#define JW_ESCAPE_MAX (JW_BUF / 6)
size_t jw_escape_only(struct json_writer *scratch, const char *s);
/* A string value given as its escaped body (without the quotes). */
void jw_string_escaped(struct json_writer *w, const char *key, const char *body, size_t len);

/* An object written on one line, `{"a": 1, "b": {"c": null}}`, whatever it
 * holds (for small records repeated many times, such as stack frames). */
void jw_begin_object_flat(struct json_writer *w, const char *key);

/* For callers that cache whole values: jw_fragment_begin() readies
 * `scratch` (as above) to write one value that holds no line breaks (a
 * scalar, or a jw_begin_object_flat() object); jw_fragment_end() returns
 * its text in *len (NULL when it overflowed scratch's buffer: write the
 * value directly then). jw_value_raw() writes such a text as a member of
 * w's current container. */
void jw_fragment_begin(struct json_writer *scratch);
const char *jw_fragment_end(struct json_writer *scratch, size_t *len);
void jw_value_raw(struct json_writer *w, const char *key, const char *text, size_t len);

#endif
