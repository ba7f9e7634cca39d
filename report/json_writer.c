/* json_writer.c - see json_writer.h. */
#include "report/json_writer.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void jw_init(struct json_writer *w, FILE *out, bool html_safe)
{
	w->out = out;
	w->html_safe = html_safe;
	w->err = 0;
	w->depth = 0;
	w->flat_depth = 0;
	w->has_items[0] = false;
	w->n = 0;
}

static void flush(struct json_writer *w)
{
	if (!w->out) { /* a scratch writer (jw_escape_only) overflowing */
		if (!w->err)
			w->err = -EOVERFLOW;
	} else if (w->n && !w->err && fwrite(w->buf, 1, w->n, w->out) != w->n)
		w->err = errno ? -errno : -EIO;
	w->n = 0;
}

int jw_finish(struct json_writer *w)
{
	flush(w);
	return w->err;
}

static void put(struct json_writer *w, const char *s, size_t len)
{
	while (len) {
		size_t k;

		if (w->n == sizeof(w->buf))
			flush(w);
		k = sizeof(w->buf) - w->n;
		if (k > len)
			k = len;
		memcpy(w->buf + w->n, s, k);
		w->n += k;
		s += k;
		len -= k;
	}
}

static inline void putc1(struct json_writer *w, char c)
{
	if (w->n == sizeof(w->buf))
		flush(w);
	w->buf[w->n++] = c;
}

static void indent(struct json_writer *w, uint32_t level)
{
	static const char spaces[] = "                                ";

	for (level *= 2; level; ) {
		uint32_t k = level < sizeof(spaces) - 1 ? level : (uint32_t)sizeof(spaces) - 1;

		put(w, spaces, k);
		level -= k;
	}
}

/* Length of the valid UTF-8 sequence at s (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF), 0 when it is not one. s[0] >= 0x80. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];

	if (c >= 0xc2 && c <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		unsigned char lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;

		return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 ? 3 : 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		unsigned char lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;

		return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 &&
		       (s[3] & 0xc0) == 0x80 ? 4 : 0;
	}
	return 0;
}

/* The string body between its quotes. */
static void escape(struct json_writer *w, const char *str)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str, *run = s;

	for (;;) {
		unsigned char c = *s;
		char e[6];
		size_t k;

		/* plain printable ASCII is copied in runs */
		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\' && !(c == '<' && w->html_safe)) {
			s++;
			continue;
		}
		put(w, (const char *)run, (size_t)(s - run));
		if (!c)
			return;
		if (c >= 0x80) {
			k = utf8_len(s);
			if (k)
				put(w, (const char *)s, k);
			else
				put(w, "\xef\xbf\xbd", 3); /* U+FFFD for a stray byte */
			s += k ? k : 1;
			run = s;
			continue;
		}
		e[0] = '\\';
		switch (c) {
		case '"': e[1] = '"'; k = 2; break;
		case '\\': e[1] = '\\'; k = 2; break;
		case '\b': e[1] = 'b'; k = 2; break;
		case '\f': e[1] = 'f'; k = 2; break;
		case '\n': e[1] = 'n'; k = 2; break;
		case '\r': e[1] = 'r'; k = 2; break;
		case '\t': e[1] = 't'; k = 2; break;
		default: /* other control characters and '<' (html_safe) */
			memcpy(e + 1, "u00", 3);
			e[4] = hex[c >> 4];
			e[5] = hex[c & 15];
			k = 6;
		}
		put(w, e, k);
		run = ++s;
	}
}

/* Separator, indentation and key before a value in the current container. */
static void member(struct json_writer *w, const char *key)
{
	if (w->flat_depth && w->depth >= w->flat_depth) { /* one line: "a": 1, "b": 2 */
		if (w->has_items[w->depth])
			put(w, ", ", 2);
		w->has_items[w->depth] = true;
	} else if (w->depth) {
		if (w->has_items[w->depth])
			putc1(w, ',');
		w->has_items[w->depth] = true;
		putc1(w, '\n');
		indent(w, w->depth);
	}
	if (key) {
		putc1(w, '"');
		escape(w, key);
		put(w, "\": ", 3);
	}
}

static void begin(struct json_writer *w, const char *key, char open)
{
	member(w, key);
	putc1(w, open);
	if (w->depth >= JW_MAX_DEPTH) {
		if (!w->err)
			w->err = -EINVAL;
		return;
	}
	w->has_items[++w->depth] = false;
}

static void end(struct json_writer *w, char close)
{
	/* json-c's layout: an empty container still gets its line break */
	if (w->flat_depth && w->depth >= w->flat_depth) {
		if (w->depth == w->flat_depth)
			w->flat_depth = 0;
	} else if (w->depth) {
		putc1(w, '\n');
		indent(w, w->depth - 1);
	}
	if (w->depth)
		w->depth--;
	putc1(w, close);
}

void jw_begin_object(struct json_writer *w, const char *key)
{
	begin(w, key, '{');
}

void jw_begin_object_flat(struct json_writer *w, const char *key)
{
	begin(w, key, '{');
	if (!w->flat_depth)
		w->flat_depth = w->depth;
}

void jw_end_object(struct json_writer *w)
{
	end(w, '}');
}

void jw_begin_array(struct json_writer *w, const char *key)
{
	begin(w, key, '[');
}

void jw_end_array(struct json_writer *w)
{
	end(w, ']');
}

void jw_string(struct json_writer *w, const char *key, const char *s)
{
	member(w, key);
	putc1(w, '"');
	escape(w, s ? s : "");
	putc1(w, '"');
}

static void put_u64(struct json_writer *w, uint64_t v)
{
	char d[20];
	size_t i = sizeof(d);

	do {
		d[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put(w, d + i, sizeof(d) - i);
}

void jw_u64(struct json_writer *w, const char *key, uint64_t v)
{
	member(w, key);
	put_u64(w, v);
}

void jw_i64(struct json_writer *w, const char *key, int64_t v)
{
	member(w, key);
	if (v < 0) {
		putc1(w, '-');
		put_u64(w, -(uint64_t)v);
	} else {
		put_u64(w, (uint64_t)v);
	}
}

void jw_double(struct json_writer *w, const char *key, double v)
{
	char d[40];
	int prec, len = 0;

	member(w, key);
	if (!isfinite(v)) {
		put(w, "null", 4);
		return;
	}
	/* The shortest of %.15g..%.17g that reads back exactly (17 always does). */
	for (prec = 15; prec <= 17; prec++) {
		len = snprintf(d, sizeof(d), "%.*g", prec, v);
		if (prec == 17 || strtod(d, NULL) == v)
			break;
	}
	put(w, d, (size_t)len);
	if (!strpbrk(d, ".eE"))
		put(w, ".0", 2);
}

void jw_null(struct json_writer *w, const char *key)
{
	member(w, key);
	put(w, "null", 4);
}

void jw_bool(struct json_writer *w, const char *key, bool v)
{
	member(w, key);
	put(w, v ? "true" : "false", v ? 4 : 5);
}

void jw_raw(struct json_writer *w, const char *s, size_t len)
{
	put(w, s, len);
}

size_t jw_escape_only(struct json_writer *scratch, const char *s)
{
	scratch->n = 0;
	escape(scratch, s);
	return scratch->n;
}

void jw_string_escaped(struct json_writer *w, const char *key, const char *body, size_t len)
{
	member(w, key);
	putc1(w, '"');
	put(w, body, len);
	putc1(w, '"');
}

void jw_fragment_begin(struct json_writer *scratch)
{
	scratch->n = 0;
	scratch->err = 0;
	scratch->depth = 0;
	scratch->flat_depth = 0;
	scratch->has_items[0] = false;
}

const char *jw_fragment_end(struct json_writer *scratch, size_t *len)
{
	if (scratch->err || scratch->depth)
		return NULL;
	*len = scratch->n;
	return scratch->buf;
}

void jw_value_raw(struct json_writer *w, const char *key, const char *text, size_t len)
{
	member(w, key);
	put(w, text, len);
}
