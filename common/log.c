#include "log.h"

#include <stdarg.h>
#include <stdio.h>

int os_verbose;

static void vlog(const char *prefix, const char *fmt, va_list ap)
{
	char buf[2048];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	fprintf(stderr, "objscope: %s%s\n", prefix, buf);
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
