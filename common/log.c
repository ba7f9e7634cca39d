#include "log.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int os_verbose;
static void (*progress_clear)(void);

void os_log_set_progress_clear(void (*clear)(void))
{
	progress_clear = clear;
}

void os_log_progress_clear(void)
{
	if (progress_clear)
		progress_clear();
}

/* Length of the valid UTF-8 sequence at p (a code point from U+00A0 on:
 * the C1 controls U+0080..U+009F are escaped too), 0 when there is none. */
static size_t utf8_len(const unsigned char *p)
{
	uint32_t cp;
	size_t n;

	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, cp = p[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80) /* the NUL ends it here too */
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if (cp < 0xa0 || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

size_t os_log_escape(const char *in, char *out, size_t outlen)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)in;
	size_t o = 0;

	if (!outlen)
		return 0;
	while (*p) {
		size_t n = *p >= 0x20 && *p < 0x7f ? 1 : utf8_len(p);

		if (n) {
			if (o + n >= outlen)
				break;
			memcpy(out + o, p, n);
			o += n;
			p += n;
			continue;
		}
		if (o + 4 >= outlen)
			break;
		out[o++] = '\\';
		out[o++] = 'x';
		out[o++] = hex[*p >> 4];
		out[o++] = hex[*p & 15];
		p++;
	}
	out[o] = 0;
	return o;
}

/* Every message goes out through os_log_escape: the text may come from the
 * target (a JVM's attach reply, dlerror, thread names, command lines, file
 * names), and an escape sequence must not reach the user's terminal. */
static void vlog(const char *prefix, const char *fmt, va_list ap)
{
	char buf[2048], out[4 * sizeof(buf)];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	os_log_escape(buf, out, sizeof(out));
	os_log_progress_clear();
	fprintf(stderr, "objscope: %s%s\n", prefix, out);
}

void os_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}

void os_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("warning: ", fmt, ap);
	va_end(ap);
}

void os_debug(const char *fmt, ...)
{
	va_list ap;

	if (os_verbose < 1)
		return;
	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}

void os_trace(const char *fmt, ...)
{
	va_list ap;

	if (os_verbose < 2)
		return;
	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}
