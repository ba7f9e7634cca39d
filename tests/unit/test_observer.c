/* Tests of the analyses as observers of the collection loop
 * (attacher/core/observer.h): the registration table and the slices
 * observer from attributed samples to the profile's SLICES. */
#include <criterion/criterion.h>
#include <string.h>
#include <sys/mman.h>

#include "attacher/analyses/memsrc.h"
#include "attacher/analyses/replica.h"
#include "attacher/cli/options.h"
#include "attacher/core/collector.h"
#include "attacher/core/slices.h"

#define PID 999999999u /* no such process: nothing is read from /proc */

/* Options decide the observers, in the table's order; their sample data
 * fits the queued sample. */
Test(observer, table_enables_by_option)
{
	const struct os_observer_ops *ops[OS_OBS_MAX];
	struct os_opts o;
	unsigned data = 0;
	size_t n;

	memset(&o, 0, sizeof(o));
	n = os_observers_enabled(&o, false, ops, OS_OBS_MAX);
	cr_assert_eq(n, 1, "the software sampler: no data-source observer");
	cr_assert_eq(ops[0], &os_slices_observer);
	cr_assert(!ops[0]->eager, "slices leave the apply cadence alone");
	n = os_observers_enabled(&o, true, ops, OS_OBS_MAX);
	cr_assert_eq(n, 2);
	cr_assert_eq(ops[1], &os_memsrc_observer, "PMU data sources: with a PMU sampler");

	o.replicas = true;
	o.numa = true;
	n = os_observers_enabled(&o, true, ops, OS_OBS_MAX);
	cr_assert_eq(n, 4);
	cr_assert_eq(ops[0], &os_slices_observer);
	cr_assert_eq(ops[1], &os_replica_observer);
	cr_assert(ops[1]->eager, "replicas: every round applied");
	cr_assert_eq(ops[2], &os_memsrc_observer);
	cr_assert_eq(ops[3], &os_numa_observer);
	for (size_t i = 0; i < n; i++)
		data += (ops[i]->sample_data + 7) & ~7u;
	cr_assert_leq(data, OS_OBS_SAMPLE_DATA);
	cr_assert_eq(os_observers_enabled(&o, true, ops, 1), 1, "max respected");
}

/* The slices observer: samples given in time order (as the collector's
 * apply step gives them) become the profile's SLICES, mapped to the
 * profile's contexts, accesses and threads. */
Test(observer, slices_observer_writes_the_section)
{
	const struct os_observer_ops *ops = &os_slices_observer;
	struct os_collector c;
	struct os_aspace *as;
	struct os_obj_event oe;
	struct os_obs_sample s;
	struct os_profile *p;
	struct os_context pc;
	struct os_access pa;
	struct os_thread pt;
	uint64_t site = 0x400200, leaf = 0x400500;
	uint32_t ctxmap[1] = { 0 }, accmap[1] = { 0 }, acc;
	void *self = NULL;
	char err[128];

	memset(&c, 0, sizeof(c));
	os_tasks_init(&c.tasks, NULL);
	cr_assert_eq(os_attrib_init(&c.attrib, &c.tasks), 0);
	os_tasks_mmap(&c.tasks, PID, 0x10000000, 0x1000000, 0, PROT_READ | PROT_WRITE, "//anon");
	as = os_tasks_aspace(&c.tasks, PID);
	cr_assert_not_null(as);
	cr_assert_not_null(os_tasks_thread(&c.tasks, PID, 7, "worker"));
	memset(&oe, 0, sizeof(oe));
	oe.type = OS_EV_ALLOC;
	oe.addr = 0x10001000;
	oe.size = 4096;
	oe.asid = as->id;
	oe.node = os_attrib_path(&c.attrib, as->id, &site, 1);
	os_attrib_event(&c.attrib, &oe);

	cr_assert_eq(ops->start(&self, &c, err, sizeof(err)), 0);
	memset(&s, 0, sizeof(s));
	s.asid = as->id;
	s.pid = PID;
	s.tid = 7;
	s.access_node = os_attrib_path(&c.attrib, as->id, &leaf, 1);
	for (int i = 0; i < 3; i++) { /* 2 in bucket 0, 1 in bucket 2 */
		s.since_ns = i < 2 ? 50000000 : 250000000;
		s.ctx = os_attrib_charge(&c.attrib, as->id, 0x10001010, 0x70000000, s.access_node,
					 &acc);
		s.acc = acc;
		cr_assert_eq(s.ctx, 0);
		cr_assert_eq(s.acc, 0);
		ops->sample(self, &s);
	}
	/* not attributed: counted nowhere */
	s.ctx = os_attrib_charge(&c.attrib, as->id, 0x10008000, 0x70000000, s.access_node, &acc);
	s.acc = acc;
	cr_assert_eq(s.ctx, OS_NONE);
	ops->sample(self, &s);

	p = os_profile_new();
	cr_assert_not_null(p);
	memset(&pc, 0, sizeof(pc));
	pc.stack = pc.type = OS_NONE;
	cr_assert_eq(os_profile_add_context(p, &pc), 0);
	memset(&pa, 0, sizeof(pa));
	pa.context = 0;
	pa.stack = OS_NONE;
	cr_assert_eq(os_profile_add_access(p, &pa), 0);
	memset(&pt, 0, sizeof(pt));
	pt.pid = PID;
	pt.tid = 7;
	pt.name = OS_NONE;
	cr_assert_eq(os_profile_add_thread(p, &pt), 0);
	{
		struct os_obs_build b = { &c, p, ctxmap, accmap };

		cr_assert_eq(ops->profile_sections(self, &b), 0);
	}
	cr_assert(p->analyses & OS_AN_SLICES);
	cr_assert_eq(p->slice_ms, OS_SLICE_MS);
	cr_assert_eq(p->nslices, 2);
	cr_assert_eq(p->slices[0].context, 0);
	cr_assert_eq(p->slices[0].access, 0);
	cr_assert_eq(p->slices[0].thread, 0);
	cr_assert_eq(p->slices[0].bucket, 0);
	cr_assert_eq(p->slices[0].samples, 2);
	cr_assert_eq(p->slices[1].bucket, 2);
	cr_assert_eq(p->slices[1].samples, 1);
	ops->destroy(self);
	os_profile_free(p);
	os_attrib_destroy(&c.attrib);
	os_tasks_destroy(&c.tasks);
}
