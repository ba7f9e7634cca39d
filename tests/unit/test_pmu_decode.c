/* The PMU decode path without a PMU: synthetic perf records (MMAP2, COMM,
 * samples with ADDR, WEIGHT, DATA_SRC and CPU, laid out as the kernel lays
 * them out for the attr the collector asks for) written into a memory ring
 * (os_perf_open_memory) and read by the collector as the kernel's are:
 * parsed, addressed, attributed to objects, the memory observers fed, the
 * profile built, written, read back. Two objects with planted answers: A's
 * accesses hit L1 in 5 cycles on node 0's pages, B's come from another
 * node's DRAM in 300 cycles with a data TLB miss, on node 1's pages (an
 * injected two-node topology). Also the data_src decoder alone. */
#include <criterion/criterion.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attacher/analyses/memsrc.h"
#include "attacher/cli/options.h"
#include "attacher/core/collector.h"
#include "attacher/sampling/data_src.h"
#include "attacher/sampling/sampler.h"
#include "common/clock.h"
#include "common/shm.h"
#include "report/report.h"
#include "unit_helpers.h"

#define PID 999999999u /* no such process: nothing is read from /proc */
#define TID 999999998u
#define HEAP 0x10000000ULL
#define A_ADDR (HEAP + 0x1000)    /* node 0 */
#define B_ADDR (HEAP + 0x800000)  /* node 1 */
#define OBJ_SIZE 0x10000
#define NA 40                    /* samples on A */
#define NB 25                    /* samples on B */

/* data_src values as the kernel builds them */
#define DS(op, lvl, tlb, lvlnum, remote)                                               \
	((uint64_t)(op) << PERF_MEM_OP_SHIFT | (uint64_t)(lvl) << PERF_MEM_LVL_SHIFT |   \
	 (uint64_t)(tlb) << PERF_MEM_TLB_SHIFT | (uint64_t)(lvlnum) << PERF_MEM_LVLNUM_SHIFT | \
	 (uint64_t)(remote) << PERF_MEM_REMOTE_SHIFT)
#define DS_L1_HIT                                                                       \
	DS(PERF_MEM_OP_LOAD, PERF_MEM_LVL_HIT | PERF_MEM_LVL_L1, PERF_MEM_TLB_HIT | PERF_MEM_TLB_L1, \
	   PERF_MEM_LVLNUM_L1, 0)
#define DS_REMOTE_RAM                                                                   \
	DS(PERF_MEM_OP_LOAD, PERF_MEM_LVL_HIT | PERF_MEM_LVL_REM_RAM1,                   \
	   PERF_MEM_TLB_MISS | PERF_MEM_TLB_WK, PERF_MEM_LVLNUM_RAM, 1)

Test(data_src, levels_misses_and_unknowns)
{
	struct os_mem_src m;

	os_data_src_decode(DS_L1_HIT, &m);
	cr_expect_eq(m.level, OS_LVL_L1);
	cr_expect_eq(m.flags, OS_MS_L1_KNOWN | OS_MS_TLB_KNOWN);
	os_data_src_decode(DS_REMOTE_RAM, &m);
	cr_expect_eq(m.level, OS_LVL_REMOTE_RAM);
	cr_expect_eq(m.flags, OS_MS_L1_KNOWN | OS_MS_L1_MISS | OS_MS_REMOTE | OS_MS_TLB_KNOWN |
				      OS_MS_TLB_MISS);
	/* older kernels: mem_lvl bits only */
	os_data_src_decode(DS(PERF_MEM_OP_LOAD, PERF_MEM_LVL_HIT | PERF_MEM_LVL_L3, PERF_MEM_TLB_NA,
			      0, 0), &m);
	cr_expect_eq(m.level, OS_LVL_L3);
	cr_expect_eq(m.flags, OS_MS_L1_KNOWN | OS_MS_L1_MISS, "TLB not said: unknown");
	os_data_src_decode(DS(PERF_MEM_OP_LOAD, PERF_MEM_LVL_HIT | PERF_MEM_LVL_LFB, 0, 0, 0), &m);
	cr_expect_eq(m.level, OS_LVL_LFB);
	cr_expect(m.flags & OS_MS_L1_MISS);
	/* precise stores (Skylake): only L1 hit or miss */
	os_data_src_decode(DS(PERF_MEM_OP_STORE, PERF_MEM_LVL_MISS | PERF_MEM_LVL_L1,
			      PERF_MEM_TLB_HIT | PERF_MEM_TLB_L1, 0, 0), &m);
	cr_expect_eq(m.level, OS_LVL_UNKNOWN);
	cr_expect_eq(m.flags, OS_MS_STORE | OS_MS_L1_KNOWN | OS_MS_L1_MISS | OS_MS_TLB_KNOWN);
	/* nothing said: nothing known, no miss and no hit */
	os_data_src_decode(DS(PERF_MEM_OP_NA, PERF_MEM_LVL_NA, PERF_MEM_TLB_NA, PERF_MEM_LVLNUM_NA,
			      0), &m);
	cr_expect_eq(m.level, OS_LVL_UNKNOWN);
	cr_expect_eq(m.flags, 0);
	os_data_src_decode(0, &m);
	cr_expect_eq(m.level, OS_LVL_UNKNOWN);
	cr_expect_eq(m.flags, 0);
}

Test(data_src, latency_buckets)
{
	uint64_t h[OS_LAT_BUCKETS] = { 0 };

	cr_expect_eq(os_lat_bucket(1), 0);
	cr_expect_eq(os_lat_bucket(5), 2);
	cr_expect_eq(os_lat_bucket(300), 8);
	cr_expect_eq(os_lat_bucket(1ULL << 40), OS_LAT_BUCKETS - 1);
	cr_expect_eq(os_lat_quantile_max(h, 0.5), 0, "empty");
	h[2] = 90;
	h[8] = 10;
	cr_expect_eq(os_lat_quantile_max(h, 0.5), 7);
	cr_expect_eq(os_lat_quantile_max(h, 0.9), 7);
	cr_expect_eq(os_lat_quantile_max(h, 0.99), 511);
}

/* The injected topology: CPUs 0, 2 on node 0, 1, 3 on node 1; the heap's
 * first 4 MiB on node 0, the rest on node 1; pages above the heap absent. */
static int fake_cpu_node(void *arg, uint32_t cpu)
{
	(void)arg;
	return (int)(cpu % 2);
}

static int page_queries;

static int fake_page_node(void *arg, pid_t pid, uint64_t page)
{
	(void)arg;
	cr_expect_eq(pid, (pid_t)PID, "pages are read in the target");
	page_queries++;
	if (page < HEAP || page >= HEAP + 0x1000000)
		return -ENOENT;
	return page < HEAP + 0x400000 ? 0 : 1;
}

static const struct os_numa_topo two_nodes = { 2, fake_cpu_node, fake_page_node, NULL };

/* Records into the memory ring, laid out for the attr the collector made. */
static struct perf_event_attr attr_seen;

static int open_ring(struct os_perf **out, pid_t pid, struct perf_event_attr *attr,
		     unsigned pages, char *err, size_t errlen)
{
	attr_seen = *attr;
	return os_perf_open_memory(out, pid, attr, pages, err, errlen);
}

struct rec {
	uint64_t w[256];
	size_t n;
};

static void put(struct rec *r, uint64_t v)
{
	cr_assert_lt(r->n, 256);
	r->w[r->n++] = v;
}

/* sample_id_all trailer of side-band records */
static void trailer(struct rec *r, uint64_t time)
{
	uint64_t t = attr_seen.sample_type;

	if (t & PERF_SAMPLE_TID)
		put(r, (uint64_t)TID << 32 | PID);
	if (t & PERF_SAMPLE_TIME)
		put(r, time);
	cr_assert(!(t & (PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_IDENTIFIER)));
	if (t & PERF_SAMPLE_CPU)
		put(r, 0);
}

static void emit(struct os_perf *p, struct rec *r, uint32_t type)
{
	struct perf_event_header h = { type, 0, (uint16_t)(8 + 8 * r->n) };
	uint8_t buf[8 + sizeof(r->w)];

	memcpy(buf, &h, 8);
	memcpy(buf + 8, r->w, 8 * r->n);
	cr_assert_eq(os_perf_memory_write(p, buf, 8 + 8 * r->n), 0);
}

static void put_str(struct rec *r, const char *s)
{
	uint64_t w[8] = { 0 };
	size_t n = strlen(s) + 1;

	memcpy(w, s, n);
	for (size_t i = 0; i < (n + 7) / 8; i++)
		put(r, w[i]);
}

static void side_records(struct os_perf *p, uint64_t time)
{
	struct rec r = { .n = 0 };

	put(&r, (uint64_t)TID << 32 | PID); /* COMM */
	put_str(&r, "worker");
	trailer(&r, time);
	emit(p, &r, PERF_RECORD_COMM);
	r.n = 0; /* MMAP2 of the heap */
	put(&r, (uint64_t)TID << 32 | PID);
	put(&r, HEAP);
	put(&r, 0x1000000);
	put(&r, 0);
	put(&r, 0);          /* maj, min */
	put(&r, 0);          /* ino */
	put(&r, 0);          /* ino generation */
	put(&r, (uint64_t)MAP_PRIVATE << 32 | (PROT_READ | PROT_WRITE));
	put_str(&r, "//anon");
	trailer(&r, time);
	emit(p, &r, PERF_RECORD_MMAP2);
}

/* One sample in the kernel's order for attr_seen.sample_type. */
static void sample(struct os_perf *p, uint64_t time, uint32_t cpu, uint64_t ip, uint64_t addr,
		   uint64_t weight, uint64_t data_src)
{
	uint64_t t = attr_seen.sample_type;
	struct rec r = { .n = 0 };

	cr_assert_eq(t & ~(uint64_t)(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				     PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU | PERF_SAMPLE_CALLCHAIN |
				     PERF_SAMPLE_REGS_USER | PERF_SAMPLE_WEIGHT |
				     PERF_SAMPLE_DATA_SRC), 0,
		     "sample_type %#llx has fields this test does not lay out",
		     (unsigned long long)t);
	put(&r, ip);
	put(&r, (uint64_t)TID << 32 | PID);
	put(&r, time);
	put(&r, addr);
	put(&r, cpu);
	put(&r, 2);          /* callchain: the leaf and a caller */
	put(&r, ip);
	put(&r, 0x400900);
	put(&r, PERF_SAMPLE_REGS_ABI_64);
	for (int b = 0; b < 64; b++)
		if (attr_seen.sample_regs_user & (1ULL << b))
			put(&r, b == 7 ? 0x7ffd0000 : 0); /* sp */
	put(&r, weight);
	put(&r, data_src);
	emit(p, &r, PERF_RECORD_SAMPLE);
}

static void alloc(struct os_collector *c, uint64_t addr, uint64_t site)
{
	struct os_aspace *as = os_tasks_aspace(&c->tasks, PID);
	struct os_obj_event oe;

	cr_assert_not_null(as, "the MMAP2 record made the address space");
	memset(&oe, 0, sizeof(oe));
	oe.type = OS_EV_ALLOC;
	oe.addr = addr;
	oe.size = OBJ_SIZE;
	oe.asid = as->id;
	oe.node = os_attrib_path(&c->attrib, as->id, &site, 1);
	os_attrib_event(&c->attrib, &oe);
}

static const struct os_context *by_bytes_at(const struct os_profile *p, uint64_t site)
{
	for (uint32_t i = 0; i < p->ncontexts; i++) {
		const struct os_stack *s = &p->stacks[p->contexts[i].stack];

		if (p->contexts[i].stack != OS_NONE && s->nframes &&
		    p->frames[s->frames[0]].addr == site)
			return &p->contexts[i];
	}
	return NULL;
}

static json_object *get(json_object *o, const char *k)
{
	json_object *v = NULL;

	cr_assert(json_object_object_get_ex(o, k, &v), "no '%s'", k);
	return v;
}

static char *slurp(const char *path)
{
	static char buf[1 << 16];
	FILE *f = fopen(path, "r");
	size_t n;

	cr_assert_not_null(f, "%s", path);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

/* The reports of the profile: JSON (and its schema where the validator
 * can run), text, pprof. */
static void check_reports(const char *profile, const char *dir)
{
	char *json = strdup(ut_path(dir, "r.json")), *txt = strdup(ut_path(dir, "r.txt"));
	char *pb = strdup(ut_path(dir, "r.pb.gz")), *text, cmd[1024];
	char *jargv[] = { "report", "--format", "json", "-o", json, (char *)profile, NULL };
	char *targv[] = { "report", "-o", txt, (char *)profile, NULL };
	char *pargv[] = { "report", "--format", "pprof", "-o", pb, (char *)profile, NULL };
	json_object *r, *objs, *meta;
	int seen = 0;

	cr_assert_eq(cmd_report(6, jargv), 0);
	r = json_object_from_file(json);
	cr_assert_not_null(r);
	meta = get(r, "meta");
	cr_expect_str_eq(json_object_get_string(get(meta, "sampler")), "pebs-load");
	cr_expect_eq(json_object_array_length(get(meta, "metrics_measured")), 3);
	objs = get(r, "objects");
	for (size_t i = 0; i < json_object_array_length(objs); i++) {
		json_object *o = json_object_array_get_idx(objs, i), *mem = get(o, "memory");
		json_object *numa = get(o, "numa"), *lv = get(mem, "levels");

		cr_expect_eq(json_object_get_int(get(numa, "machine_nodes")), 2);
		if (json_object_get_int64(get(o, "samples")) == NB) {
			seen++;
			cr_expect_eq(json_object_get_int64(get(lv, "remote_ram")), NB);
			cr_expect_eq(json_object_get_int64(get(lv, "l1")), 0);
			cr_expect_eq(json_object_get_int64(get(mem, "tlb_miss")), NB);
			cr_expect_eq(json_object_get_double(get(mem, "latency_mean_cycles")), 300.0);
			cr_expect_eq(json_object_get_int64(get(mem, "latency_p99_max_cycles")), 511);
			cr_expect_eq(json_object_get_int64(get(numa, "remote")), NB);
			cr_expect_eq(json_object_get_int64(get(numa, "local")), 0);
			cr_expect_eq(json_object_get_int(json_object_array_get_idx(
					     get(numa, "nodes"), 0)), 1);
			cr_expect_eq(json_object_get_int64(get(get(o, "metrics"), "remote")), NB);
		} else if (json_object_get_int64(get(o, "samples")) == NA) {
			seen++;
			cr_expect_eq(json_object_get_int64(get(lv, "l1")), NA);
			cr_expect_eq(json_object_get_double(get(mem, "latency_mean_cycles")), 5.0);
			cr_expect_eq(json_object_get_int64(get(numa, "local")), NA);
		}
	}
	cr_expect_eq(seen, 2, "both planted objects in the JSON report");
	json_object_put(r);
	/* closed schema check, where the repository's validator is at hand */
	if (!access("tests/schema/validate_report.py", R_OK) && !system("python3 -c 'import jsonschema' 2>/dev/null")) {
		snprintf(cmd, sizeof(cmd),
			 "python3 tests/schema/validate_report.py docs/report.schema.json %s", json);
		cr_expect_eq(system(cmd), 0, "the JSON report does not match the schema");
	}
	cr_assert_eq(cmd_report(4, targv), 0);
	text = slurp(txt);
	cr_expect(strstr(text, "sampler:     pebs-load, event mem-loads: "
			       "MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=30 (skl, precise=2), period"),
		  "%s", text);
	cr_expect(strstr(text, "memory: remote RAM 100%; L1 misses 25; remote 25; TLB misses 25 of "
			       "25; latency mean 300 cycles, p99 <= 511"), "%s", text);
	cr_expect(strstr(text, "memory: L1 100%; L1 misses 0; remote 0; TLB misses 0 of 40; "
			       "latency mean 5 cycles, p99 <= 7"), "%s", text);
	cr_expect(strstr(text, "numa: 0 local, 25 remote, 0 unknown; pages on node 1"), "%s", text);
	cr_expect(strstr(text, "numa: 40 local, 0 remote, 0 unknown; pages on node 0"), "%s", text);
	cr_expect(!strstr(text, "samples/s per thread requested"), "a PMU samples by period");
	cr_assert_eq(cmd_report(6, pargv), 0);
	free(json);
	free(txt);
	free(pb);
}

/* A sysfs tree under dir whose kernel lists a core PMU ("cpu", type 4),
 * made the one os_sampler_create reads. */
static void fake_cpu_pmu(const char *dir)
{
	FILE *f;

	mkdir(ut_path(dir, "bus"), 0755);
	mkdir(ut_path(dir, "bus/event_source"), 0755);
	mkdir(ut_path(dir, "bus/event_source/devices"), 0755);
	mkdir(ut_path(dir, "bus/event_source/devices/cpu"), 0755);
	f = fopen(ut_path(dir, "bus/event_source/devices/cpu/type"), "w");
	cr_assert_not_null(f);
	fputs("4\n", f);
	fclose(f);
	os_sampler_sysfs = dir;
}

Test(pmu_decode, synthetic_pebs_records_to_profile)
{
	char dir[128], err[256] = "", *argv[] = { "record", "-q", "-e", "mem-loads", "--numa",
						   "--call-graph", "fp", "--", "x", NULL };
	struct os_opts o;
	struct os_collector c;
	struct os_profile *p, *back;
	const struct os_context *a, *b;
	uint64_t now;

	/* a Skylake with a PMU driver, two NUMA nodes */
	setenv("LIBPFM_FORCE_PMU", "skl", 1);
	ut_mkdtemp(dir, sizeof(dir), "pmu-decode");
	fake_cpu_pmu(dir);
	os_numa_topo_override = &two_nodes;
	cr_assert_eq(os_opts_parse(&o, "record", 9, argv), 8);
	o.output = ut_path(dir, "p.data");

	cr_assert_eq(os_collector_init(&c, &o, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(c.sampler.ops->name, "pebs-load");
	cr_assert_eq(os_collector_open_with(&c, PID, open_ring, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(attr_seen.precise_ip, 2);
	cr_assert_eq(attr_seen.config, 0x1cd);
	now = os_now_ns();
	side_records(c.perf, now);
	os_collector_round(&c, false); /* the address space, from MMAP2 */
	alloc(&c, A_ADDR, 0x400100);
	alloc(&c, B_ADDR, 0x400200);
	for (int i = 0; i < NA; i++) /* CPU 0 (node 0), A's pages on node 0 */
		sample(c.perf, now + 1000 + (uint64_t)i, 0, 0x400500, A_ADDR + 64 * (uint64_t)i, 5,
		       DS_L1_HIT);
	for (int i = 0; i < NB; i++) /* CPU 2 (node 0), B's pages on node 1 */
		sample(c.perf, now + 2000 + (uint64_t)i, 2, 0x400600, B_ADDR + 2048 * (uint64_t)i,
		       300, DS_REMOTE_RAM);
	sample(c.perf, now + 3000, 0, 0x400700, 0, 7, DS_L1_HIT); /* no address: counted */
	os_collector_round(&c, true);
	os_collector_stop(&c);
	p = os_collector_profile(&c, "record", 1, (char *const[]){ "x", NULL });
	cr_assert_not_null(p);
	cr_expect_eq(p->c.samples_total, NA + NB + 1);
	cr_expect_eq(p->c.samples_addressed, NA + NB);
	cr_expect_eq(p->c.unaddressed_undecodable, 1, "the sample without an address");
	cr_expect_eq(p->c.samples_attributed, NA + NB);
	cr_expect_eq(os_profile_metrics(p), OS_M_ALL, "pebs-load measures all three");
	cr_expect(strstr(os_profile_str(p, p->meta.event), "precise=2"), "%s",
		  os_profile_str(p, p->meta.event));
	cr_expect(p->analyses & OS_AN_MEMSRC);
	cr_expect(p->analyses & OS_AN_NUMA);
	cr_expect_eq(p->numa_nodes, 2);
	cr_expect_gt(page_queries, 0);

	/* written and read back: what the report reads */
	cr_assert_eq(os_profile_write(p, o.output, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(os_profile_read(o.output, &back, err, sizeof(err)), 0, "%s", err);
	for (int round = 0; round < 2; round++) {
		const struct os_profile *q = round ? back : p;

		a = by_bytes_at(q, 0x400100);
		b = by_bytes_at(q, 0x400200);
		cr_assert_not_null(a);
		cr_assert_not_null(b);
		cr_expect_eq(a->samples, NA);
		cr_expect_eq(a->metrics[OS_M_LATENCY], 5 * NA);
		cr_expect_eq(a->metrics[OS_M_L1_MISS], 0);
		cr_expect_eq(a->metrics[OS_M_REMOTE], 0);
		cr_expect_eq(a->mem.level[OS_LVL_L1], NA);
		cr_expect_eq(a->mem.tlb_known, NA);
		cr_expect_eq(a->mem.tlb_miss, 0);
		cr_expect_eq(a->mem.lat_hist[2], NA);
		cr_expect_eq(a->mem.numa_local, NA);
		cr_expect_eq(a->mem.numa_remote, 0);
		cr_expect_eq(a->mem.numa_nodes, 1);
		cr_expect_eq(b->samples, NB);
		cr_expect_eq(b->metrics[OS_M_LATENCY], 300 * NB);
		cr_expect_eq(b->metrics[OS_M_L1_MISS], NB);
		cr_expect_eq(b->metrics[OS_M_REMOTE], NB);
		cr_expect_eq(b->mem.level[OS_LVL_REMOTE_RAM], NB);
		cr_expect_eq(b->mem.tlb_miss, NB);
		cr_expect_eq(b->mem.lat_hist[8], NB);
		cr_expect_eq(b->mem.numa_remote, NB);
		cr_expect_eq(b->mem.numa_local, 0);
		cr_expect_eq(b->mem.numa_nodes, 2, "node 1's bit");
		cr_expect(q->analyses & OS_AN_NUMA);
		cr_expect_eq(q->numa_nodes, 2);
	}
	os_profile_free(back);
	os_profile_free(p);
	os_collector_destroy(&c);
	check_reports(o.output, dir);
	ut_rmtree(dir);
}

/* The fields PMU samplers add, in the kernel's order: WEIGHT_STRUCT's
 * latency is its low 32 bits; TRANSACTION skipped; PHYS_ADDR last. */
Test(pmu_decode, weight_struct_transaction_phys_addr)
{
	uint64_t t = PERF_SAMPLE_IP | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU | PERF_SAMPLE_WEIGHT_STRUCT |
		     PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_TRANSACTION | PERF_SAMPLE_PHYS_ADDR;
	uint64_t rec[] = { 0x401000, 0x7f0000002000, 3, (uint64_t)0x00090007 << 32 | 250,
			   DS_REMOTE_RAM, 0x1234, 0x12345000 };
	struct os_perf_sample s;

	cr_assert_eq(os_perf_parse_sample(rec, sizeof(rec), t, 0, &s), 0);
	cr_expect_eq(s.addr, 0x7f0000002000);
	cr_expect_eq(s.cpu, 3);
	cr_expect_eq(s.weight, 250, "the latency, not the other weights");
	cr_expect_eq(s.data_src, DS_REMOTE_RAM);
	cr_expect_eq(s.phys_addr, 0x12345000);
	cr_expect_eq(s.has & (OS_PS_ADDR | OS_PS_CPU | OS_PS_WEIGHT | OS_PS_DATA_SRC | OS_PS_PHYS),
		     OS_PS_ADDR | OS_PS_CPU | OS_PS_WEIGHT | OS_PS_DATA_SRC | OS_PS_PHYS);
	cr_expect_eq(os_perf_parse_sample(rec, sizeof(rec) - 8, t, 0, &s), -EPROTO, "truncated");
}

/* The kernel lists a PMU but refuses the event (a virtual PMU without
 * PEBS): -e auto opens the software sampler instead and the profile says
 * why; an explicit event would have failed instead. */
static int refuse_raw(struct os_perf **out, pid_t pid, struct perf_event_attr *attr,
		      unsigned pages, char *err, size_t errlen)
{
	if (attr->type == PERF_TYPE_RAW) {
		snprintf(err, errlen, "perf_event_open (cpu 0): Operation not supported");
		return -EOPNOTSUPP;
	}
	return open_ring(out, pid, attr, pages, err, errlen);
}

Test(pmu_decode, auto_falls_back_when_the_event_is_refused)
{
	char dir[128], err[256] = "", *argv[] = { "record", "-q", "--", "x", NULL };
	struct os_opts o;
	struct os_collector c;
	struct os_profile *p;
	bool noted = false;

	setenv("LIBPFM_FORCE_PMU", "skl", 1);
	ut_mkdtemp(dir, sizeof(dir), "pmu-auto");
	fake_cpu_pmu(dir);
	cr_assert_eq(os_opts_parse(&o, "record", 4, argv), 3);
	cr_assert_str_eq(o.event, "auto");
	cr_assert_eq(os_collector_init(&c, &o, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(c.sampler.ops->name, "pebs-load", "auto takes the PMU the kernel lists");
	cr_assert_eq(os_collector_open_with(&c, PID, refuse_raw, err, sizeof(err)), 0, "%s", err);
	cr_expect_str_eq(c.sampler.ops->name, "soft");
	cr_expect_eq(attr_seen.type, PERF_TYPE_SOFTWARE);
	os_collector_round(&c, true);
	os_collector_stop(&c);
	p = os_collector_profile(&c, "record", 1, (char *const[]){ "x", NULL });
	cr_assert_not_null(p);
	cr_expect_str_eq(os_profile_str(p, p->meta.sampler), "soft");
	cr_expect_eq(os_profile_metrics(p), 0);
	cr_expect(!(p->analyses & OS_AN_MEMSRC));
	for (uint32_t i = 0; i < p->meta.nnotes; i++) {
		const char *n = os_profile_str(p, p->meta.notes[i]);

		noted |= strstr(n, "-e auto: the PMU sampler (pebs-load) could not be opened") &&
			 strstr(n, "Operation not supported");
	}
	cr_expect(noted, "no note says why the software sampler was used");
	os_profile_free(p);
	os_collector_destroy(&c);
	ut_rmtree(dir);
}
