/* sampler.c - picks the sampling source named by -e. */
#include "attacher/sampling/sampler.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int os_sampler_create(struct os_sampler *s, const struct os_opts *o, char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	if (!strcmp(o->event, "soft") || !strcmp(o->event, "task-clock")) {
		s->ops = &os_sampler_soft_ops;
	} else {
		snprintf(err, errlen,
			 "event '%s': PMU address sampling (PEBS/IBS) is not available in this "
			 "build — use -e soft (the software sampler)",
			 o->event);
		return -ENOTSUP;
	}
	return s->ops->init(s, o, err, errlen);
}

void os_sampler_destroy(struct os_sampler *s)
{
	if (s->ops && s->ops->destroy)
		s->ops->destroy(s);
	s->ops = NULL;
}
