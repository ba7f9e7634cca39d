/* sampler.c - picks the sampling source named by -e (sampler.h). */
#include "attacher/sampling/sampler.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

const char *os_sampler_sysfs = "/sys";

static int soft(struct os_sampler *s, const struct os_opts *o, char *err, size_t errlen)
{
	s->ops = &os_sampler_soft_ops;
	return s->ops->init(s, o, err, errlen);
}

/* The encoding of PMU event `name` for this processor and kernel. */
static int pmu_event(const char *name, const struct os_pmu_kernel *k, struct os_pmu_event *ev,
		     char *err, size_t errlen)
{
	int rc = os_pmu_encode(name, k, ev, err, errlen);

	if (rc < 0)
		return rc;
	if (ev->needs_ibs_type && !k->ibs_op) {
		snprintf(err, errlen, "event '%s': the kernel offers no IBS op PMU (ibs_op) — "
			 "use -e soft", name);
		return -ENODEV;
	}
	if (!ev->needs_ibs_type && !k->cpu) {
		snprintf(err, errlen, "event '%s': the kernel has no core PMU driver (%s)", name,
			 ev->pmu);
		return -ENODEV;
	}
	return 0;
}

/* An explicit PMU event: where there is no PMU, that is the error. */
static int explicit_event(const char *name, const struct os_pmu_kernel *k,
			  struct os_pmu_event *ev, char *err, size_t errlen)
{
	if (!k->cpu && !k->ibs_op) {
		snprintf(err, errlen, "event '%s' needs a hardware PMU, and this kernel has no PMU "
			 "driver (software events only) — use -e soft or -e auto", name);
		return -ENODEV;
	}
	return pmu_event(name, k, ev, err, errlen);
}

static int pmu(struct os_sampler *s, const struct os_pmu_event *ev, char *err, size_t errlen)
{
	s->ops = os_sampler_pmu_ops(ev->kind);
	s->pmu = true;
	return os_sampler_pmu_init(s, ev, err, errlen);
}

int os_sampler_check(const char *event, char *err, size_t errlen)
{
	struct os_pmu_kernel k;
	struct os_pmu_event ev;

	if (!os_pmu_is_event(event))
		return 0;
	os_pmu_kernel(os_sampler_sysfs, &k);
	return explicit_event(event, &k, &ev, err, errlen);
}

int os_sampler_create(struct os_sampler *s, const struct os_opts *o, char *err, size_t errlen)
{
	struct os_pmu_kernel k;
	struct os_pmu_event pe;
	const char *ev;
	char why[200];
	int rc;

	memset(s, 0, sizeof(*s));
	if (!strcmp(o->event, "soft") || !strcmp(o->event, "task-clock"))
		return soft(s, o, err, errlen);
	os_pmu_kernel(os_sampler_sysfs, &k);
	if (strcmp(o->event, "auto")) {
		rc = explicit_event(o->event, &k, &pe, err, errlen);
		return rc < 0 ? rc : pmu(s, &pe, err, errlen);
	}
	ev = os_pmu_auto(&k, why, sizeof(why));
	if (!ev)
		return soft(s, o, err, errlen); /* the usual case without a PMU: no note */
	rc = pmu_event(ev, &k, &pe, why, sizeof(why));
	if (rc == 0)
		rc = pmu(s, &pe, why, sizeof(why));
	if (rc == 0) {
		s->chosen_auto = true;
		return 0;
	}
	os_sampler_destroy(s);
	memset(s, 0, sizeof(*s));
	snprintf(s->note, sizeof(s->note), "-e auto: %s; the software sampler was used", why);
	return soft(s, o, err, errlen);
}

int os_sampler_fallback(struct os_sampler *s, const struct os_opts *o, const char *why,
			char *err, size_t errlen)
{
	char ev[64];

	snprintf(ev, sizeof(ev), "%s", s->ops ? s->ops->name : "?");
	os_sampler_destroy(s);
	memset(s, 0, sizeof(*s));
	snprintf(s->note, sizeof(s->note),
		 "-e auto: the PMU sampler (%s) could not be opened (%s); the software sampler "
		 "was used", ev, why);
	return soft(s, o, err, errlen);
}

void os_sampler_destroy(struct os_sampler *s)
{
	if (s->ops && s->ops->destroy)
		s->ops->destroy(s);
	s->ops = NULL;
}
