/* pmu.c - end-to-end tests of PMU address sampling (PEBS / IBS
 * through libpfm4) and --numa.
 *
 * The PMU tests need a kernel with a PMU driver (an event source "cpu" or
 * "ibs_op" in sysfs); where there is none (the VMs this project is built
 * on: "no PMU driver, software events only") they skip with the reason and
 * the decode path is covered by tests/unit/test_pmu_decode.c with
 * synthetic records. docs/PMU.md says how to run them on a machine with a
 * PMU. --numa runs everywhere: a one-node machine reports "1 node: all
 * local". */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/e2e/helpers.h"

#define STACK_DEPTH 3

static char *tmp;

static void setup(void)
{
	tmp = e2e_suite_setup();
}

static void teardown(void)
{
	e2e_suite_teardown(&tmp);
}

TestSuite(e2e_pmu, .init = setup, .fini = teardown, .timeout = 180);

static bool kernel_has_pmu(void)
{
	return !access("/sys/bus/event_source/devices/cpu", F_OK) ||
	       !access("/sys/bus/event_source/devices/cpu_core", F_OK) ||
	       !access("/sys/bus/event_source/devices/ibs_op", F_OK);
}

#define NEED_PMU()                                                                        \
	do {                                                                              \
		if (!kernel_has_pmu())                                                    \
			cr_skip_test("the kernel has no PMU driver here (no "               \
				     "/sys/bus/event_source/devices/cpu, cpu_core or ibs_op): " \
				     "run on a machine with one (docs/PMU.md)");           \
	} while (0)

/* NUMA nodes of this machine, from sysfs. */
static int machine_nodes(void)
{
	char p[64];
	int n = 0;

	for (int i = 0; i < 1024; i++) {
		snprintf(p, sizeof(p), "/sys/devices/system/node/node%d", i);
		if (!access(p, F_OK))
			n++;
	}
	return n ? n : 1;
}

static json_object *record(const char *name, const char *const opts[], const char *const argv[])
{
	return e2e_record_report(tmp, name, opts, argv);
}

static json_object *top(json_object *r, const char *fn)
{
	json_object *objs = e2e_get(r, "objects"), *o;
	char buf[1024];

	cr_assert(objs && json_object_array_length(objs) > 0, "no objects");
	o = json_object_array_get_idx(objs, 0);
	cr_assert(e2e_stack_has(o, fn, STACK_DEPTH), "top object is not from %s: %s", fn,
		  e2e_stack_str(o, buf, sizeof(buf)));
	return o;
}

/* --numa on this machine, PMU or not: the planted object's samples are
 * all placed (local + remote + unknown = samples); on one node none is
 * remote and the report says "1 node: all local". Without --numa: null. */
Test(e2e_pmu, numa_pages_per_object)
{
	const char *argv[] = { E2E_FIXTURE("three_sites"), NULL };
	const char *opts[] = { "--numa", "-e", "soft", NULL };
	json_object *r = record("numa.data", opts, argv), *o = top(r, "alloc_random_block");
	json_object *numa = e2e_get(o, "numa");
	int64_t samples = e2e_get_int(o, "samples"), local, remote, unknown;
	int nodes = machine_nodes();
	char *profile = e2e_path(tmp, "numa.data");
	const char *targv[] = { E2E_OBJSCOPE, "report", profile, NULL };
	struct e2e_result res;

	cr_assert_not_null(numa, "objects[0].numa is null with --numa");
	cr_assert_gt(samples, 100, "too few samples to judge: %lld", (long long)samples);
	local = e2e_get_int(numa, "local");
	remote = e2e_get_int(numa, "remote");
	unknown = e2e_get_int(numa, "unknown");
	cr_expect_eq(e2e_get_int(numa, "machine_nodes"), nodes);
	cr_expect_eq(local + remote + unknown, samples, "%lld + %lld + %lld != %lld", (long long)local,
		     (long long)remote, (long long)unknown, (long long)samples);
	/* its 64 MiB are written before they are read: present pages */
	cr_expect_leq(unknown, samples / 20, "%lld of %lld samples on pages of no known node",
		      (long long)unknown, (long long)samples);
	cr_expect_gt(json_object_array_length(e2e_get(numa, "nodes")), 0);
	if (nodes == 1) {
		cr_expect_eq(remote, 0, "one node, yet %lld remote", (long long)remote);
		cr_expect_not_null(e2e_note(r, "1 node: all local"));
		cr_assert_eq(e2e_run(tmp, targv, NULL, &res), 0);
		cr_expect(strstr(res.out, "numa: 1 node: all local"), "%.2000s", res.out);
		e2e_result_free(&res);
	}
	json_object_put(r);
	free(profile);
	/* without --numa nothing is claimed */
	r = record("nonuma.data", NULL, argv);
	cr_expect(!e2e_get(top(r, "alloc_random_block"), "numa"), "numa measured without --numa");
	json_object_put(r);
}

/* -e auto (the default): the software sampler where there is no PMU, with
 * no PMU figure claimed; a PMU sampler (or a note saying why not) where
 * there is one. */
Test(e2e_pmu, auto_picks_the_sampler)
{
	const char *argv[] = { E2E_FIXTURE("three_sites"), NULL };
	json_object *r = record("auto.data", NULL, argv), *meta = e2e_get(r, "meta");
	const char *sampler = json_object_get_string(e2e_get(meta, "sampler"));
	json_object *o = top(r, "alloc_random_block");

	if (!kernel_has_pmu()) {
		cr_expect_str_eq(sampler, "soft");
		cr_expect_eq(json_object_array_length(e2e_get(meta, "metrics_measured")), 0);
		cr_expect(!e2e_get(o, "memory"), "PMU figures without a PMU");
		cr_expect(!e2e_get(e2e_get(o, "metrics"), "latency_cycles"), "latency not null");
	} else {
		cr_expect(strcmp(sampler, "soft") || e2e_note(r, "-e auto:"),
			  "a PMU, yet the software sampler and no note why");
	}
	json_object_put(r);
}

/* PEBS load latency / IBS op on a PMU: the planted object (64 MiB read at
 * random: mostly beyond L1) has addresses, latencies and data sources. */
Test(e2e_pmu, mem_loads_measure_latency_and_sources)
{
	const char *argv[] = { E2E_FIXTURE("three_sites"), NULL };
	const char *opts[] = { "-e", "mem-loads", "--numa", NULL };
	json_object *r, *meta, *o, *mem, *lv;
	int64_t l1, beyond = 0;
	static const char *const far[] = { "lfb", "l2", "l3", "ram", "remote_ram", "remote_cache" };

	NEED_PMU();
	r = record("loads.data", opts, argv);
	meta = e2e_get(r, "meta");
	cr_expect(!strcmp(json_object_get_string(e2e_get(meta, "sampler")), "pebs-load") ||
		  !strcmp(json_object_get_string(e2e_get(meta, "sampler")), "ibs-op"));
	cr_expect(strstr(json_object_get_string(e2e_get(meta, "event")), "mem-loads"));
	cr_expect_gt(json_object_array_length(e2e_get(meta, "metrics_measured")), 0);
	o = top(r, "alloc_random_block");
	mem = e2e_get(o, "memory");
	cr_assert_not_null(mem, "no memory figures from a PMU sampler");
	cr_expect_gt(e2e_get_int(mem, "latency_samples"), 0);
	cr_expect_gt(e2e_get_int(e2e_get(o, "metrics"), "latency_cycles"), 0);
	lv = e2e_get(mem, "levels");
	l1 = e2e_get_int(lv, "l1");
	for (size_t i = 0; i < sizeof(far) / sizeof(far[0]); i++)
		beyond += e2e_get_int(lv, far[i]);
	cr_expect_gt(beyond, l1, "random reads of 64 MiB: %lld beyond L1, %lld in L1",
		     (long long)beyond, (long long)l1);
	cr_expect_not_null(e2e_get(o, "numa"));
	json_object_put(r);
}

/* Precise stores: addresses and L1 hit/miss, no latency claimed. */
Test(e2e_pmu, mem_stores_claim_no_latency)
{
	const char *argv[] = { E2E_FIXTURE("three_sites"), NULL };
	const char *opts[] = { "-e", "mem-stores", NULL };
	json_object *r, *meta;

	NEED_PMU();
	r = record("stores.data", opts, argv);
	meta = e2e_get(r, "meta");
	if (!strcmp(json_object_get_string(e2e_get(meta, "sampler")), "pebs-store"))
		cr_expect(!e2e_get(e2e_get(top(r, "alloc_random_block"), "metrics"),
				   "latency_cycles"), "stores: latency must be null");
	json_object_put(r);
}

/* attach with a PMU event: one event per thread of the target (threads
 * started later followed through inherit), the planted object first. */
Test(e2e_pmu, attach_with_mem_loads)
{
	const char *targv[] = { E2E_FIXTURE("attach_target"), "6", NULL };
	char *profile = e2e_path(tmp, "attach.data"), spid[16], out[1024], buf[256] = "", msg[512];
	const char *argv[] = { E2E_OBJSCOPE, "attach", "-q", "-e", "mem-loads", "-d", "3", "-o",
			       profile, spid, NULL };
	struct e2e_result res;
	json_object *r;
	pid_t pid;
	int st, fd;

	NEED_PMU();
	pid = e2e_spawn_logged(tmp, "target", targv, NULL);
	snprintf(out, sizeof(out), "%s/target.out", tmp);
	for (int i = 0; i < 500 && !strstr(buf, "ready"); i++) {
		usleep(10000);
		fd = open(out, O_RDONLY);
		if (fd >= 0) {
			ssize_t n = read(fd, buf, sizeof(buf) - 1);

			buf[n > 0 ? n : 0] = 0;
			close(fd);
		}
	}
	cr_assert(strstr(buf, "ready"), "the target did not start");
	snprintf(spid, sizeof(spid), "%d", (int)pid);
	cr_assert_eq(e2e_run(tmp, argv, NULL, &res), 0);
	cr_expect_eq(res.status, 0, "attach exited %d: %s", res.status, res.err);
	e2e_result_free(&res);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the target failed after the attach");
	r = e2e_report_json(tmp, profile, msg, sizeof(msg));
	cr_assert_not_null(r, "%s", msg);
	top(r, "planted_block");
	cr_expect_not_null(e2e_get(json_object_array_get_idx(e2e_get(r, "objects"), 0), "memory"));
	json_object_put(r);
	free(profile);
}
