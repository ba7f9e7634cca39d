/* pmu_event.c - PMU address-sampling events: user names to perf_event_attr
 * through libpfm4, and the kernel's PMUs from sysfs (pmu_event.h). */
#include "attacher/sampling/pmu_event.h"

#include <errno.h>
#include <perfmon/pfmlib_perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Default sample periods, in event units: loads above the latency
 * threshold are a small share of all loads, stores and ops are not.
 * Primes, so that a period does not beat against a loop's trip count. */
#define PERIOD_LOADS 2003
#define PERIOD_STORES 20011
#define PERIOD_IBS 100003
#define DEFAULT_LDLAT 30 /* as perf mem */

static bool sysfs_has(const char *root, const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/bus/event_source/devices/%s", root, rel);
	return access(path, F_OK) == 0;
}

void os_pmu_kernel(const char *root, struct os_pmu_kernel *k)
{
	char path[512];
	FILE *f;
	unsigned t;

	memset(k, 0, sizeof(*k));
	k->cpu = sysfs_has(root, "cpu/type") || sysfs_has(root, "cpu_core/type");
	snprintf(path, sizeof(path), "%s/bus/event_source/devices/ibs_op/type", root);
	f = fopen(path, "re");
	if (f) {
		if (fscanf(f, "%u", &t) == 1) {
			k->ibs_op = true;
			k->ibs_op_type = t;
		}
		fclose(f);
	}
	k->ibs_cnt_ctl = sysfs_has(root, "ibs_op/format/cnt_ctl");
}

bool os_pmu_is_event(const char *name)
{
	return strcmp(name, "soft") && strcmp(name, "task-clock") && strcmp(name, "auto");
}

/* libpfm4 once per process (LIBPFM_FORCE_PMU is read here). */
static int pfm_ready(char *err, size_t errlen)
{
	static int rc = 1;

	if (rc == 1)
		rc = pfm_initialize();
	if (rc != PFM_SUCCESS) {
		snprintf(err, errlen, "libpfm4 cannot start: %s", pfm_strerror(rc));
		return -ENODEV;
	}
	return 0;
}

/* The processor's core PMU as libpfm4 knows it (or is forced to). */
static int host_pmu(char *name, size_t len, bool *amd, char *err, size_t errlen)
{
	pfm_pmu_info_t pi;

	for (int i = PFM_PMU_NONE + 1; i < PFM_PMU_MAX; i++) {
		memset(&pi, 0, sizeof(pi));
		pi.size = sizeof(pi);
		if (pfm_get_pmu_info((pfm_pmu_t)i, &pi) != PFM_SUCCESS || !pi.is_present ||
		    pi.type != PFM_PMU_TYPE_CORE)
			continue;
		snprintf(name, len, "%s", pi.name);
		*amd = !strncmp(pi.name, "amd64", 5);
		return 0;
	}
	snprintf(err, errlen, "libpfm4 knows no core PMU for this processor");
	return -ENODEV;
}

/* libpfm4's encoding of `spec` for perf_event_open; *evname: the event's
 * name without its PMU (e.g. MEM_TRANS_RETIRED). */
static int pfm_encode(const char *spec, struct perf_event_attr *a, char *evname, size_t evlen,
		      char *err, size_t errlen)
{
	pfm_perf_encode_arg_t arg;
	pfm_event_info_t ei;
	int rc;

	memset(a, 0, sizeof(*a));
	memset(&arg, 0, sizeof(arg));
	arg.attr = a;
	arg.size = sizeof(arg);
	rc = pfm_get_os_event_encoding(spec, PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
	if (rc != PFM_SUCCESS) {
		snprintf(err, errlen, "libpfm4 cannot encode '%s': %s", spec, pfm_strerror(rc));
		return -EINVAL;
	}
	memset(&ei, 0, sizeof(ei));
	ei.size = sizeof(ei);
	if (pfm_get_event_info(arg.idx, PFM_OS_PERF_EVENT_EXT, &ei) == PFM_SUCCESS && ei.name)
		snprintf(evname, evlen, "%s", ei.name);
	else
		evname[0] = 0;
	return 0;
}

static void ibs(const char *name, const char *pmu, const struct os_pmu_kernel *k,
		struct os_pmu_event *ev)
{
	bool ops = k && k->ibs_cnt_ctl;

	ev->kind = OS_PMU_IBS_OP;
	ev->type = k ? k->ibs_op_type : 0;
	ev->needs_ibs_type = true;
	/* cnt_ctl (bit 19 of IbsOpCtl): count dispatched ops, not cycles */
	ev->config = ops ? 1ULL << 19 : 0;
	ev->period = PERIOD_IBS;
	ev->precise = 0; /* IBS tags the op itself: exact by construction */
	snprintf(ev->desc, sizeof(ev->desc), "%s: ibs_op (%s, counting %s, precise: IBS)", name,
		 pmu, ops ? "ops" : "cycles");
}

int os_pmu_encode(const char *name, const struct os_pmu_kernel *k, struct os_pmu_event *ev,
		  char *err, size_t errlen)
{
	char spec[160], evname[64], alt[160];
	struct perf_event_attr a;
	bool amd, alias;
	int rc;

	memset(ev, 0, sizeof(*ev));
	rc = pfm_ready(err, errlen);
	if (rc < 0)
		return rc;
	rc = host_pmu(ev->pmu, sizeof(ev->pmu), &amd, err, errlen);
	if (rc < 0)
		return rc;
	if (amd) {
		if (!strcmp(name, "mem-loads") || !strcmp(name, "mem-stores") ||
		    !strcmp(name, "ibs_op") || !strcmp(name, "ibs-op")) {
			ibs(name, ev->pmu, k, ev);
			return 0;
		}
		if (pfm_encode(name, &a, evname, sizeof(evname), err, errlen) < 0)
			return -EINVAL;
		snprintf(err, errlen,
			 "event '%s': AMD core events carry no data address — address sampling "
			 "on %s is IBS: -e mem-loads (ibs_op)", name, ev->pmu);
		return -EINVAL;
	}
	if (!strcmp(name, "ibs_op") || !strcmp(name, "ibs-op")) {
		snprintf(err, errlen, "event '%s': IBS is AMD's; this processor (%s) has PEBS: "
			 "-e mem-loads or -e mem-stores", name, ev->pmu);
		return -EINVAL;
	}
	/* perf's names, as perf mem records them on Intel */
	alias = true;
	alt[0] = 0;
	if (!strcmp(name, "mem-loads")) {
		snprintf(spec, sizeof(spec), "MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=%d:precise=2",
			 DEFAULT_LDLAT);
	} else if (!strcmp(name, "mem-stores")) {
		snprintf(spec, sizeof(spec), "MEM_INST_RETIRED:ALL_STORES:precise=2");
		snprintf(alt, sizeof(alt), "MEM_UOPS_RETIRED:ALL_STORES:precise=2"); /* before Skylake */
	} else {
		alias = false;
		snprintf(spec, sizeof(spec), "%s%s", name,
			 strstr(name, "precise=") ? "" : ":precise=2");
	}
	rc = pfm_encode(spec, &a, evname, sizeof(evname), err, errlen);
	if (rc < 0 && alt[0])
		rc = pfm_encode(alt, &a, evname, sizeof(evname), err, errlen);
	if (rc < 0)
		return rc;
	if (!a.precise_ip) {
		snprintf(err, errlen, "event '%s': precise=0 gives no data address (PEBS needs "
			 "precise >= 1)", name);
		return -EINVAL;
	}
	if (!strcmp(evname, "MEM_TRANS_RETIRED") && a.config1) {
		ev->kind = OS_PMU_PEBS_LOAD;
		ev->ldlat = (unsigned)(a.config1 & 0xffff);
	} else if (!strncmp(evname, "MEM_", 4) && strstr(alias ? spec : name, "STORE")) {
		ev->kind = OS_PMU_PEBS_STORE;
	} else if (!strncmp(evname, "MEM_", 4)) {
		ev->kind = OS_PMU_PEBS_MEM;
	} else {
		snprintf(err, errlen,
			 "event '%s' (%s::%s) gives no data address — use a PEBS memory event: "
			 "mem-loads, mem-stores, MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=N, "
			 "MEM_INST_RETIRED:ALL_STORES", name, ev->pmu, evname);
		return -EINVAL;
	}
	ev->type = a.type;
	ev->config = a.config;
	ev->config1 = a.config1;
	ev->precise = a.precise_ip;
	ev->period = a.sample_period ? a.sample_period
		     : ev->kind == OS_PMU_PEBS_LOAD ? PERIOD_LOADS : PERIOD_STORES;
	{
		char shown[160];

		snprintf(shown, sizeof(shown), "%s", alias ? spec : name);
		/* the precise level is stated on its own */
		char *pr = strstr(shown, ":precise=");

		if (pr)
			*pr = 0;
		if (alias)
			snprintf(ev->desc, sizeof(ev->desc), "%s: %s (%s, precise=%u)", name, shown,
				 ev->pmu, ev->precise);
		else
			snprintf(ev->desc, sizeof(ev->desc), "%s (%s, precise=%u)", shown, ev->pmu,
				 ev->precise);
	}
	return 0;
}

const char *os_pmu_auto(const struct os_pmu_kernel *k, char *why, size_t whylen)
{
	char pmu[48];
	bool amd = false;

	if (!k->cpu && !k->ibs_op) {
		snprintf(why, whylen, "the kernel has no PMU driver (software events only)");
		return NULL;
	}
	if (pfm_ready(why, whylen) < 0 || host_pmu(pmu, sizeof(pmu), &amd, why, whylen) < 0)
		return NULL;
	if (amd && !k->ibs_op) {
		snprintf(why, whylen, "the kernel offers no IBS op PMU (ibs_op) on this AMD "
			 "processor (%s)", pmu);
		return NULL;
	}
	if (!amd && !k->cpu) {
		snprintf(why, whylen, "the kernel has no core PMU driver");
		return NULL;
	}
	return "mem-loads";
}
