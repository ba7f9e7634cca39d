/* hotspot_vms.c - in-process vmStructs lookups. See hotspot_vms.h. */
#include <dlfcn.h>
#include <errno.h>
#include <string.h>

#include "runtimes/hotspot/hs_layout.h"
#include "runtimes/hotspot/target/hotspot_vms.h"

#define HV_GET(h, name) ((const uint64_t *)dlsym((h), (name)))

static int hv_table(struct os_jvm_table *t, void *h, const char *table, const char *stride,
		    const char *const *offs)
{
	const uint64_t *p = HV_GET(h, table), *s = HV_GET(h, stride);

	if (!p || !s || !*p || !*s)
		return -ENOENT;
	t->addr = *p; /* the variable holds the table's address */
	t->stride = *s;
	for (int i = 0; i < 6; i++) {
		const uint64_t *o = offs[i] ? HV_GET(h, offs[i]) : NULL;

		if (offs[i] && !o)
			return -ENOENT;
		t->off[i] = o ? *o : 0;
	}
	return 0;
}

int osp_vms_open(struct osp_vms *v, void *h)
{
	static const char *const s[6] = {
		"gHotSpotVMStructEntryTypeNameOffset", "gHotSpotVMStructEntryFieldNameOffset",
		"gHotSpotVMStructEntryTypeStringOffset", "gHotSpotVMStructEntryIsStaticOffset",
		"gHotSpotVMStructEntryOffsetOffset", "gHotSpotVMStructEntryAddressOffset",
	};
	static const char *const t[6] = {
		"gHotSpotVMTypeEntryTypeNameOffset", "gHotSpotVMTypeEntrySuperclassNameOffset",
		"gHotSpotVMTypeEntryIsOopTypeOffset", "gHotSpotVMTypeEntryIsIntegerTypeOffset",
		"gHotSpotVMTypeEntryIsUnsignedOffset", "gHotSpotVMTypeEntrySizeOffset",
	};
	static const char *const ic[6] = {
		"gHotSpotVMIntConstantEntryNameOffset", "gHotSpotVMIntConstantEntryValueOffset",
	};
	static const char *const lc[6] = {
		"gHotSpotVMLongConstantEntryNameOffset", "gHotSpotVMLongConstantEntryValueOffset",
	};

	if (hv_table(&v->t[OS_JVM_STRUCTS], h, "gHotSpotVMStructs",
		     "gHotSpotVMStructEntryArrayStride", s) ||
	    hv_table(&v->t[OS_JVM_TYPES], h, "gHotSpotVMTypes", "gHotSpotVMTypeEntryArrayStride",
		     t) ||
	    hv_table(&v->t[OS_JVM_INTS], h, "gHotSpotVMIntConstants",
		     "gHotSpotVMIntConstantEntryArrayStride", ic) ||
	    hv_table(&v->t[OS_JVM_LONGS], h, "gHotSpotVMLongConstants",
		     "gHotSpotVMLongConstantEntryArrayStride", lc))
		return -ENOENT;
	/* the version, before any name is resolved through hs_layout.h (0
	 * until the JVM has set it: names alone decide then) */
	v->major = 0;
	{
		void *p;

		if (osp_vms_static(v, "Abstract_VM_Version", "_vm_major_version", &p) == 0) {
			int32_t m = *(const int32_t *)p;

			if (m >= 8 && m <= 1000)
				v->major = (uint32_t)m;
		}
	}
	return 0;
}

static const char *hv_str(const uint8_t *e, uint64_t off)
{
	return *(const char *const *)(e + off);
}

/* The struct entry for type.field as named, or NULL. The tables end with a
 * NULL name. */
static const uint8_t *hv_struct_raw(const struct osp_vms *v, const char *type, const char *field)
{
	const struct os_jvm_table *t = &v->t[OS_JVM_STRUCTS];

	for (const uint8_t *e = (const uint8_t *)(uintptr_t)t->addr;; e += t->stride) {
		const char *tn = hv_str(e, t->off[0]), *fn = hv_str(e, t->off[1]);

		if (!tn)
			return NULL;
		if (fn && strcmp(tn, type) == 0 && strcmp(fn, field) == 0)
			return e;
	}
}

/* "Type::field" split at its "::" into type (len bytes at most). */
static const char *hv_split(const char *name, char *type, size_t len)
{
	const char *c = strstr(name, "::");
	size_t n = c ? (size_t)(c - name) : 0;

	if (!c || n >= len)
		return NULL;
	memcpy(type, name, n);
	type[n] = 0;
	return c + 2;
}

/* The entry for type.field: through hs_layout.h's alternatives when it is
 * a key there (NULL when none holds for this JVM), else as named. */
static const uint8_t *hv_struct_how(const struct osp_vms *v, const char *type, const char *field,
				    uint8_t *width, uint8_t *how)
{
	const struct os_jvm_table *t = &v->t[OS_JVM_STRUCTS];
	int k = hs_layout_key(type, field);

	*width = 0;
	*how = HS_LA_PLAIN;
	if (k < 0)
		return hv_struct_raw(v, type, field);
	for (int a = 0; a < HS_LAYOUT_ALTS && hs_layout[k].alt[a].name; a++) {
		const struct hs_lalt *al = &hs_layout[k].alt[a];
		char ty[128];
		const char *fi = hv_split(al->name, ty, sizeof(ty));
		const uint8_t *e;
		uint8_t w;

		if (!fi || (v->major && !hs_layout_in_range(al, v->major)))
			continue;
		e = hv_struct_raw(v, ty, fi);
		if (!e)
			continue;
		w = hs_layout_type_width(hv_str(e, t->off[2]));
		if (al->width && w && w != al->width)
			continue;
		*width = al->width ? al->width : w;
		*how = al->how;
		return e;
	}
	return NULL;
}

static const uint8_t *hv_struct(const struct osp_vms *v, const char *type, const char *field)
{
	uint8_t w, how;

	return hv_struct_how(v, type, field, &w, &how);
}

int osp_vms_field(const struct osp_vms *v, const char *type, const char *field, uint64_t *off,
		  uint8_t *width, uint8_t *how)
{
	const struct os_jvm_table *t = &v->t[OS_JVM_STRUCTS];
	const uint8_t *e = hv_struct_how(v, type, field, width, how);

	if (!e || *(const int32_t *)(e + t->off[3]))
		return -ENOENT;
	*off = *(const uint64_t *)(e + t->off[4]);
	return 0;
}

int osp_vms_offset(const struct osp_vms *v, const char *type, const char *field, uint64_t *off)
{
	uint8_t w, how;

	return osp_vms_field(v, type, field, off, &w, &how);
}

int osp_vms_static(const struct osp_vms *v, const char *type, const char *field, void **addr)
{
	const struct os_jvm_table *t = &v->t[OS_JVM_STRUCTS];
	const uint8_t *e = hv_struct(v, type, field);

	if (!e || !*(const int32_t *)(e + t->off[3]))
		return -ENOENT;
	*addr = *(void *const *)(e + t->off[5]);
	return *addr ? 0 : -ENOENT;
}

int osp_vms_type_size(const struct osp_vms *v, const char *type, uint64_t *size)
{
	const struct os_jvm_table *t = &v->t[OS_JVM_TYPES];

	for (const uint8_t *e = (const uint8_t *)(uintptr_t)t->addr;; e += t->stride) {
		const char *tn = hv_str(e, t->off[0]);

		if (!tn)
			return -ENOENT;
		if (strcmp(tn, type) == 0) {
			*size = *(const uint64_t *)(e + t->off[5]);
			return 0;
		}
	}
}

static int hv_int_raw(const struct osp_vms *v, const char *name, int32_t *val);

int osp_vms_int(const struct osp_vms *v, const char *name, int32_t *val)
{
	int k = hs_layout_key(name, NULL);

	if (k < 0)
		return hv_int_raw(v, name, val);
	for (int a = 0; a < HS_LAYOUT_ALTS && hs_layout[k].alt[a].name; a++) {
		const struct hs_lalt *al = &hs_layout[k].alt[a];

		if ((!v->major || hs_layout_in_range(al, v->major)) &&
		    hv_int_raw(v, al->name, val) == 0)
			return 0;
	}
	return -ENOENT;
}

static int hv_int_raw(const struct osp_vms *v, const char *name, int32_t *val)
{
	const struct os_jvm_table *t = &v->t[OS_JVM_INTS];

	for (const uint8_t *e = (const uint8_t *)(uintptr_t)t->addr;; e += t->stride) {
		const char *n = hv_str(e, t->off[0]);

		if (!n)
			return -ENOENT;
		if (strcmp(n, name) == 0) {
			*val = *(const int32_t *)(e + t->off[1]);
			return 0;
		}
	}
}

int osp_vms_flag(const struct osp_vms *v, const char *name, void **addr)
{
	uint64_t size, o_name, o_addr;
	void *flags_p, *num_p;
	const uint8_t *flags;
	size_t num;

	if (osp_vms_static(v, "JVMFlag", "flags", &flags_p) ||
	    osp_vms_static(v, "JVMFlag", "numFlags", &num_p) ||
	    osp_vms_type_size(v, "JVMFlag", &size) ||
	    osp_vms_offset(v, "JVMFlag", "_name", &o_name) ||
	    osp_vms_offset(v, "JVMFlag", "_addr", &o_addr))
		return -ENOENT;
	flags = *(const uint8_t *const *)flags_p;
	num = *(const size_t *)num_p;
	for (size_t i = 0; flags && i < num; i++) {
		const uint8_t *f = flags + i * size;
		const char *n = hv_str(f, o_name);

		if (n && strcmp(n, name) == 0) {
			*addr = *(void *const *)(f + o_addr);
			return *addr ? 0 : -ENOENT;
		}
	}
	return -ENOENT;
}
