#include "common/procmaps.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DELETED_SUFFIX " (deleted)"

/* Parses an unsigned number in `base` at *p, which must be followed by
 * `stop` (or, for stop == ' ', any blank). Advances *p past the stop char. */
static int parse_num(char **p, int base, char stop, uint64_t *out)
{
	char *end;

	/* strtoull would also accept blanks and signs: insist on a digit. */
	if (base == 16 ? !isxdigit((unsigned char)**p) : !isdigit((unsigned char)**p))
		return -EINVAL;
	errno = 0;
	*out = strtoull(*p, &end, base);
	if (errno || end == *p)
		return -EINVAL;
	if (stop == ' ') {
		if (*end != ' ' && *end != '\t' && *end != '\0' && *end != '\n')
			return -EINVAL;
	} else if (*end != stop) {
		return -EINVAL;
	}
	*p = *end ? end + 1 : end;
	return 0;
}

static void skip_blanks(char **p)
{
	while (**p == ' ' || **p == '\t')
		(*p)++;
}

int os_maps_parse_line(char *line, struct os_maps_entry *e)
{
	uint64_t major, minor;
	char *p = line;
	size_t len;

	memset(e, 0, sizeof(*e));
	skip_blanks(&p);
	if (parse_num(&p, 16, '-', &e->start) || parse_num(&p, 16, ' ', &e->end) ||
	    e->end < e->start)
		return -EINVAL;
	skip_blanks(&p);
	if (strlen(p) < 4 || (p[4] != ' ' && p[4] != '\t'))
		return -EINVAL;
	memcpy(e->perms, p, 4);
	e->perms[4] = '\0';
	p += 5;
	skip_blanks(&p);
	if (parse_num(&p, 16, ' ', &e->offset))
		return -EINVAL;
	skip_blanks(&p);
	if (parse_num(&p, 16, ':', &major) || parse_num(&p, 16, ' ', &minor))
		return -EINVAL;
	e->dev_major = (uint32_t)major;
	e->dev_minor = (uint32_t)minor;
	skip_blanks(&p);
	if (parse_num(&p, 10, ' ', &e->inode))
		return -EINVAL;
	skip_blanks(&p);

	len = strlen(p);
	while (len && (p[len - 1] == '\n' || p[len - 1] == '\r'))
		p[--len] = '\0';
	if (len >= sizeof(DELETED_SUFFIX) - 1 &&
	    !strcmp(p + len - (sizeof(DELETED_SUFFIX) - 1), DELETED_SUFFIX)) {
		len -= sizeof(DELETED_SUFFIX) - 1;
		p[len] = '\0';
		e->deleted = true;
	}
	e->path = p;
	return 0;
}

int os_maps_foreach_text(const char *text, os_maps_cb cb, void *arg)
{
	struct os_maps_entry e;
	char *buf = NULL;
	size_t cap = 0;
	int ret = 0;

	while (*text) {
		const char *nl = strchr(text, '\n');
		size_t len = nl ? (size_t)(nl - text) : strlen(text);

		if (len + 1 > cap) {
			char *nb = realloc(buf, len + 1);

			if (!nb) {
				ret = -ENOMEM;
				goto out;
			}
			buf = nb;
			cap = len + 1;
		}
		memcpy(buf, text, len);
		buf[len] = '\0';
		text += len + (nl ? 1 : 0);
		if (len == 0)
			continue;
		ret = os_maps_parse_line(buf, &e);
		if (ret)
			goto out;
		ret = cb(&e, arg);
		if (ret)
			goto out;
	}
out:
	free(buf);
	return ret;
}

int os_maps_foreach_pid(pid_t pid, os_maps_cb cb, void *arg)
{
	struct os_maps_entry e;
	char path[64];
	char *line = NULL;
	size_t cap = 0;
	FILE *f;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		ret = os_maps_parse_line(line, &e);
		if (ret)
			goto out;
		ret = cb(&e, arg);
		if (ret)
			goto out;
	}
	if (ferror(f))
		ret = -EIO;
out:
	free(line);
	fclose(f);
	return ret;
}
