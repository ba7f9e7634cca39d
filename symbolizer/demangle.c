#include "symbolizer/symbolizer.h"

#include <stdlib.h>
#include <string.h>

/* From libstdc++ (Itanium C++ ABI); linked through -lstdc++. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

const char *os_sym_demangle(const char *name, char *buf, unsigned long len)
{
	char *d;
	int status = 0;

	if (!name || name[0] != '_' || name[1] != 'Z' || !len)
		return name;
	d = __cxa_demangle(name, NULL, NULL, &status);
	if (!d)
		return name;   /* status != 0: not a valid mangled name */
	strncpy(buf, d, len - 1);
	buf[len - 1] = '\0';
	free(d);
	return buf;
}
