/* Tests of PMU event encoding (libpfm4 under LIBPFM_FORCE_PMU: an Intel
 * and an AMD model on any machine) and of the sampler choice (-e auto,
 * explicit events) against sysfs trees made here. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attacher/sampling/pmu_event.h"
#include "attacher/sampling/sampler.h"
#include "unit_helpers.h"

/* libpfm4 reads LIBPFM_FORCE_PMU when it starts: once per test process */
static void force(const char *pmu)
{
	setenv("LIBPFM_FORCE_PMU", pmu, 1);
}

/* A sysfs tree under dir with the named event sources ("cpu", "ibs_op"). */
static void fake_sysfs(const char *dir, bool cpu, bool ibs)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/bus", dir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/bus/event_source", dir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/bus/event_source/devices", dir);
	mkdir(p, 0755);
	if (cpu) {
		snprintf(p, sizeof(p), "%s/bus/event_source/devices/cpu", dir);
		mkdir(p, 0755);
		snprintf(p, sizeof(p), "%s/bus/event_source/devices/cpu/type", dir);
		f = fopen(p, "w");
		cr_assert(f);
		fputs("4\n", f);
		fclose(f);
	}
	if (ibs) {
		snprintf(p, sizeof(p), "%s/bus/event_source/devices/ibs_op", dir);
		mkdir(p, 0755);
		snprintf(p, sizeof(p), "%s/bus/event_source/devices/ibs_op/format", dir);
		mkdir(p, 0755);
		snprintf(p, sizeof(p), "%s/bus/event_source/devices/ibs_op/format/cnt_ctl", dir);
		f = fopen(p, "w");
		cr_assert(f);
		fputs("config:19\n", f);
		fclose(f);
		snprintf(p, sizeof(p), "%s/bus/event_source/devices/ibs_op/type", dir);
		f = fopen(p, "w");
		cr_assert(f);
		fputs("11\n", f);
		fclose(f);
	}
}

static const struct os_pmu_kernel intel_k = { .cpu = true };
static const struct os_pmu_kernel amd_k = { .cpu = true, .ibs_op = true, .ibs_op_type = 11,
					    .ibs_cnt_ctl = true };

static void intel_model(const char *model)
{
	struct os_pmu_event ev;
	char err[256] = "";

	force(model);
	/* perf's mem-loads: load latency above 30 cycles, event 0xcd umask 0x01 */
	cr_assert_eq(os_pmu_encode("mem-loads", &intel_k, &ev, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(ev.kind, OS_PMU_PEBS_LOAD);
	cr_expect_str_eq(ev.pmu, model);
	cr_expect_eq(ev.type, PERF_TYPE_RAW);
	cr_expect_eq(ev.config, 0x1cd, "config %#llx", (unsigned long long)ev.config);
	cr_expect_eq(ev.config1, 30);
	cr_expect_eq(ev.ldlat, 30);
	cr_expect_eq(ev.precise, 2);
	cr_expect_gt(ev.period, 0);
	cr_expect(strstr(ev.desc, "MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=30"), "%s", ev.desc);
	cr_expect(strstr(ev.desc, "precise=2"), "%s", ev.desc);
	/* precise stores: MEM_INST_RETIRED.ALL_STORES, event 0xd0 umask 0x82 */
	cr_assert_eq(os_pmu_encode("mem-stores", &intel_k, &ev, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(ev.kind, OS_PMU_PEBS_STORE);
	cr_expect_eq(ev.config, 0x82d0, "config %#llx", (unsigned long long)ev.config);
	cr_expect_eq(ev.precise, 2);
	/* a libpfm4 name with its own threshold, period and precise level */
	cr_assert_eq(os_pmu_encode("MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=64:period=5000:precise=3",
				   &intel_k, &ev, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(ev.kind, OS_PMU_PEBS_LOAD);
	cr_expect_eq(ev.config1, 64);
	cr_expect_eq(ev.period, 5000);
	cr_expect_eq(ev.precise, 3);
	cr_expect(strstr(ev.desc, "precise=3"), "%s", ev.desc);
	/* events without a data address, and names that are no events */
	cr_expect_eq(os_pmu_encode("BR_INST_RETIRED:ALL_BRANCHES", &intel_k, &ev, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "gives no data address"), "%s", err);
	cr_expect_eq(os_pmu_encode("NO_SUCH_EVENT", &intel_k, &ev, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "libpfm4 cannot encode 'NO_SUCH_EVENT:precise=2'"), "%s", err);
	cr_expect_eq(os_pmu_encode("ibs_op", &intel_k, &ev, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "IBS is AMD's"), "%s", err);
	cr_expect_eq(os_pmu_encode("MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=30:precise=0", &intel_k,
				   &ev, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "precise=0"), "%s", err);
}

Test(pmu, intel_skylake_encodings)
{
	intel_model("skl");
}

Test(pmu, intel_icelake_encodings)
{
	intel_model("icl");
}

Test(pmu, amd_zen2_is_ibs)
{
	struct os_pmu_event ev;
	char err[256] = "";

	force("amd64_fam17h_zen2");
	cr_assert_eq(os_pmu_encode("mem-loads", &amd_k, &ev, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(ev.kind, OS_PMU_IBS_OP);
	cr_expect_str_eq(ev.pmu, "amd64_fam17h_zen2");
	cr_expect_eq(ev.type, 11, "the ibs_op type from sysfs");
	cr_expect_eq(ev.config, 1ULL << 19, "cnt_ctl: count ops");
	cr_expect_eq(ev.precise, 0);
	cr_expect(ev.needs_ibs_type);
	cr_expect(strstr(ev.desc, "ibs_op"), "%s", ev.desc);
	cr_assert_eq(os_pmu_encode("ibs_op", &amd_k, &ev, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(ev.kind, OS_PMU_IBS_OP);
	/* libpfm4 knows Zen 2's core events (RETIRED_INSTRUCTIONS is 0xc0)
	 * but they carry no address: refused, naming IBS */
	cr_expect_eq(os_pmu_encode("RETIRED_INSTRUCTIONS", &amd_k, &ev, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "AMD core events carry no data address"), "%s", err);
	cr_expect_eq(os_pmu_encode("NO_SUCH_EVENT", &amd_k, &ev, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "libpfm4 cannot encode"), "%s", err);
}

Test(pmu, amd_zen3_is_ibs)
{
	struct os_pmu_event ev;
	char err[256] = "";

	force("amd64_fam19h_zen3");
	cr_assert_eq(os_pmu_encode("mem-stores", &amd_k, &ev, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(ev.kind, OS_PMU_IBS_OP);
	cr_expect_str_eq(ev.pmu, "amd64_fam19h_zen3");
}

Test(pmu, kernel_pmus_from_sysfs)
{
	char dir[128];
	struct os_pmu_kernel k;

	ut_mkdtemp(dir, sizeof(dir), "pmu");
	os_pmu_kernel(dir, &k);
	cr_expect(!k.cpu && !k.ibs_op, "an empty tree has no PMU");
	fake_sysfs(dir, true, true);
	os_pmu_kernel(dir, &k);
	cr_expect(k.cpu);
	cr_expect(k.ibs_op);
	cr_expect_eq(k.ibs_op_type, 11);
	cr_expect(k.ibs_cnt_ctl);
	ut_rmtree(dir);
}

static struct os_opts opts_for(const char *event)
{
	struct os_opts o;

	memset(&o, 0, sizeof(o));
	o.event = event;
	o.freq = 1000;
	return o;
}

Test(pmu, no_pmu_auto_is_soft_explicit_is_one_line_error)
{
	char dir[128], err[256] = "";
	struct os_sampler s;
	struct os_opts o = opts_for("auto");

	force("skl"); /* libpfm4 would know the processor: the kernel decides */
	ut_mkdtemp(dir, sizeof(dir), "pmu");
	fake_sysfs(dir, false, false);
	os_sampler_sysfs = dir;
	cr_assert_eq(os_sampler_create(&s, &o, err, sizeof(err)), 0, "%s", err);
	cr_expect_str_eq(s.ops->name, "soft");
	cr_expect_str_eq(s.event, "task-clock");
	cr_expect(!s.pmu);
	cr_expect_str_eq(s.note, "", "no PMU is the usual case here: no note");
	os_sampler_destroy(&s);
	o = opts_for("mem-loads");
	cr_expect_eq(os_sampler_create(&s, &o, err, sizeof(err)), -ENODEV);
	cr_expect(strstr(err, "needs a hardware PMU") && strstr(err, "no PMU driver"), "%s", err);
	cr_expect(!strchr(err, '\n'), "one line: %s", err);
	cr_expect_eq(os_sampler_check("MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=30", err, sizeof(err)),
		     -ENODEV);
	cr_expect_eq(os_sampler_check("soft", err, sizeof(err)), 0);
	cr_expect_eq(os_sampler_check("auto", err, sizeof(err)), 0);
	ut_rmtree(dir);
}

Test(pmu, intel_pmu_auto_is_pebs_loads)
{
	char dir[128], err[256] = "";
	struct os_sampler s;
	struct os_opts o = opts_for("auto");
	struct perf_event_attr a;

	force("skl");
	ut_mkdtemp(dir, sizeof(dir), "pmu");
	fake_sysfs(dir, true, false);
	os_sampler_sysfs = dir;
	cr_assert_eq(os_sampler_create(&s, &o, err, sizeof(err)), 0, "%s", err);
	cr_expect_str_eq(s.ops->name, "pebs-load");
	cr_expect(s.pmu && s.chosen_auto);
	cr_expect(strstr(s.event, "mem-loads: MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=30 (skl, "
				  "precise=2)"), "%s", s.event);
	memset(&a, 0, sizeof(a));
	s.ops->setup(&s, &a);
	cr_expect_eq(a.type, PERF_TYPE_RAW);
	cr_expect_eq(a.config, 0x1cd);
	cr_expect_eq(a.config1, 30);
	cr_expect_eq(a.precise_ip, 2);
	cr_expect_eq(a.sample_period, s.period);
	cr_expect_eq(a.sample_type & (PERF_SAMPLE_ADDR | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC |
				      PERF_SAMPLE_CPU),
		     PERF_SAMPLE_ADDR | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_CPU);
	/* the kernel refuses the event (a virtual PMU without PEBS): auto
	 * falls back to the software sampler and says why */
	cr_assert_eq(os_sampler_fallback(&s, &o, "perf_event_open: Operation not supported", err,
					 sizeof(err)), 0);
	cr_expect_str_eq(s.ops->name, "soft");
	cr_expect(strstr(s.note, "pebs-load") && strstr(s.note, "Operation not supported"), "%s",
		  s.note);
	os_sampler_destroy(&s);
	ut_rmtree(dir);
}

Test(pmu, amd_pmu_auto_is_ibs_and_no_ibs_is_soft)
{
	char dir[128], err[256] = "";
	struct os_sampler s;
	struct os_opts o = opts_for("auto");

	force("amd64_fam17h_zen2");
	ut_mkdtemp(dir, sizeof(dir), "pmu");
	fake_sysfs(dir, true, false);
	os_sampler_sysfs = dir;
	/* a core PMU without IBS: auto takes the software sampler */
	cr_assert_eq(os_sampler_create(&s, &o, err, sizeof(err)), 0, "%s", err);
	cr_expect_str_eq(s.ops->name, "soft");
	os_sampler_destroy(&s);
	o = opts_for("mem-loads");
	cr_expect_eq(os_sampler_create(&s, &o, err, sizeof(err)), -ENODEV);
	cr_expect(strstr(err, "no IBS op PMU"), "%s", err);
	fake_sysfs(dir, true, true);
	o = opts_for("auto");
	cr_assert_eq(os_sampler_create(&s, &o, err, sizeof(err)), 0, "%s", err);
	cr_expect_str_eq(s.ops->name, "ibs-op");
	cr_expect_eq(s.period, 100003);
	os_sampler_destroy(&s);
	ut_rmtree(dir);
}
