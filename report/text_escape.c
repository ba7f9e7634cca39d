/* text_escape.c - text from the profile made inert (text_escape.h). */
#include "report/text_escape.h"

#include <stdio.h>
#include <string.h>

size_t report_utf8_len(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (*s >= 0xc2 && *s <= 0xdf)
		n = 2;
	else if (*s >= 0xe0 && *s <= 0xef)
		n = 3;
	else if (*s >= 0xf0 && *s <= 0xf4)
		n = 4;
	else
		return 0;
	if (*s == 0xc2)
		lo = 0xa0; /* U+0080-U+009F: terminal controls */
	else if (*s == 0xe0)
		lo = 0xa0;
	else if (*s == 0xed)
		hi = 0x9f;
	else if (*s == 0xf0)
		lo = 0x90;
	else if (*s == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

bool report_needs_escapes(const char *text)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t n;

	while (*s) {
		if (*s < 0x20 || *s == 0x7f)
			return true;
		if (*s < 0x80) {
			s++;
			continue;
		}
		n = report_utf8_len(s);
		if (!n)
			return true;
		s += n;
	}
	return false;
}

void report_escape(const char *text, void (*put)(void *ctx, const char *b, size_t n), void *ctx)
{
	const unsigned char *c = (const unsigned char *)text, *run = c;
	char hex[5];
	size_t n;

	while (*c) {
		if (*c >= 0x20 && *c < 0x7f) {
			c++;
			continue;
		}
		if (*c >= 0x80 && (n = report_utf8_len(c))) {
			c += n;
			continue;
		}
		if (c > run)
			put(ctx, (const char *)run, (size_t)(c - run));
		snprintf(hex, sizeof(hex), "\\x%02x", *c++);
		put(ctx, hex, 4);
		run = c;
	}
	if (c > run)
		put(ctx, (const char *)run, (size_t)(c - run));
}

static void put_file(void *ctx, const char *b, size_t n)
{
	fwrite(b, 1, n, ctx);
}

void report_put_text(const char *text, FILE *out)
{
	if (!report_needs_escapes(text))
		fputs(text, out);
	else
		report_escape(text, put_file, out);
}
