/* runtimes/hotspot/target/hotspot_vms.c (the in-target vmStructs lookups)
 * on the real tables of the JDKs installed here: libjvm.so dlopen'ed
 * without starting a JVM (its tables are static data), the names of
 * runtimes/hotspot/hs_layout.h resolved for each version, and refused for
 * another. Each test is skipped when its JDK is not installed. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>

#include "runtimes/hotspot/hs_layout.h"
#include "runtimes/hotspot/target/hotspot_vms.c"
#include "tests/e2e/jdk.h"

static void *open_jvm(int major, struct osp_vms *v)
{
	char java[600], lib[700];
	void *h;

	if (!e2e_find_jdk(major, java, sizeof(java)))
		cr_skip_test("no JDK %d found (set OBJSCOPE_JDK%d to a JDK's home)", major, major);
	/* .../bin/java -> .../lib/server/libjvm.so */
	snprintf(lib, sizeof(lib), "%.*s/lib/server/libjvm.so", (int)(strlen(java) - 9), java);
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	cr_assert_not_null(h, "dlopen %s: %s", lib, dlerror());
	cr_assert_eq(osp_vms_open(v, h), 0);
	/* the version is the JDK's, or 0 where the JVM sets it only when it
	 * starts (names alone decide then) */
	cr_expect(v->major == 0 || (int)v->major == major, "major %u, want %d", v->major, major);
	v->major = 0;
	return h;
}

static void expect_field(const struct osp_vms *v, const char *type, const char *field,
			 uint8_t width, uint8_t how)
{
	uint64_t off;
	uint8_t w, h;

	cr_assert_eq(osp_vms_field(v, type, field, &off, &w, &h), 0, "%s::%s", type, field);
	cr_expect_eq(w, width, "%s::%s: width %u, want %u", type, field, w, width);
	cr_expect_eq(h, how, "%s::%s: how %u, want %u", type, field, h, how);
}

static void check_common(const struct osp_vms *v)
{
	uint64_t off;
	int32_t mask;
	void *p;

	cr_expect_eq(osp_vms_offset(v, "CollectedHeap", "_is_gc_active", &off), 0);
	cr_expect_eq(osp_vms_offset(v, "GenCollectedHeap", "_young_gen", &off), 0);
	cr_expect_eq(osp_vms_offset(v, "HeapRegion", "_type", &off), 0);
	cr_expect_eq(osp_vms_int(v, "HeapRegionType::YoungMask", &mask), 0);
	cr_expect_eq(mask, 2);
	cr_expect_eq(osp_vms_static(v, "CompressedKlassPointers", "_narrow_klass._base", &p), 0);
	cr_expect_eq(osp_vms_offset(v, "CodeBlob", "_frame_size", &off), 0, "a name not in the "
		     "table is read as named");
}

Test(hotspot_vms, jdk17_tables)
{
	struct osp_vms v;
	uint64_t off;
	uint8_t w, how;

	open_jvm(17, &v);
	check_common(&v);
	expect_field(&v, "CodeBlob", "_code_begin", 8, HS_LA_PLAIN);
	expect_field(&v, "CodeBlob", "_frame_complete_offset", 4, HS_LA_PLAIN);
	expect_field(&v, "ConstMethod", "_flags", 2, HS_LA_PLAIN);
	v.major = 17;
	expect_field(&v, "CodeBlob", "_code_begin", 8, HS_LA_PLAIN);
	/* JDK 25's reading of these tables: refused, not read another way */
	v.major = 25;
	cr_expect_eq(osp_vms_field(&v, "CodeBlob", "_code_begin", &off, &w, &how), -ENOENT);
	cr_expect_eq(osp_vms_offset(&v, "CollectedHeap", "_is_gc_active", &off), -ENOENT);
}

Test(hotspot_vms, jdk25_tables)
{
	struct osp_vms v;
	uint64_t off;
	uint8_t w, how;

	open_jvm(25, &v);
	check_common(&v);
	expect_field(&v, "CodeBlob", "_code_begin", 4, HS_LA_REL);
	expect_field(&v, "CodeBlob", "_frame_complete_offset", 2, HS_LA_PLAIN);
	expect_field(&v, "ConstMethod", "_flags", 4, HS_LA_PLAIN);
	v.major = 25;
	expect_field(&v, "CodeBlob", "_code_begin", 4, HS_LA_REL);
	expect_field(&v, "CodeBlob", "_frame_complete_offset", 2, HS_LA_PLAIN);
	v.major = 17;
	cr_expect_eq(osp_vms_field(&v, "CodeBlob", "_code_begin", &off, &w, &how), -ENOENT);
	cr_expect_eq(osp_vms_field(&v, "CodeBlob", "_frame_complete_offset", &off, &w, &how),
		     -ENOENT, "JDK 25's int16_t read as JDK 17's int");
}
