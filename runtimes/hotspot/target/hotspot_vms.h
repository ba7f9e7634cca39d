/* hotspot_vms.h - reads HotSpot's vmStructs tables in-process: the exported
 * gHotSpotVM* variables of libjvm.so give the table addresses and their
 * entry layouts, so no JVM offset is hard-coded. Used once, when the JVM is
 * up (after JNI_CreateJavaVM); plain loads and strcmp, no allocation.
 * Return convention: 0 on success, -ENOENT when an entry is missing. */
#ifndef OBJSCOPE_PRELOAD_HOTSPOT_VMS_H
#define OBJSCOPE_PRELOAD_HOTSPOT_VMS_H

#include <stdint.h>

#include "runtimes/hotspot/hotspot_abi.h"

struct osp_vms {
	struct os_jvm_table t[OS_JVM_NTABLES];
	uint32_t major;  /* Abstract_VM_Version::_vm_major_version, 0 unknown */
};

/* Fills the table descriptions from libjvm (a dlopen handle) and reads the
 * JVM's major version. Names that are keys of runtimes/hotspot/hs_layout.h
 * are looked up through their alternatives for that version (the widths
 * declared there checked against the JVM's type strings). */
int osp_vms_open(struct osp_vms *v, void *libjvm);

/* A non-static field's offset, the width its value is read with and how
 * (HS_LA_*: hs_layout.h). */
int osp_vms_field(const struct osp_vms *v, const char *type, const char *field, uint64_t *off,
		  uint8_t *width, uint8_t *how);

/* Offset of a non-static field. */
int osp_vms_offset(const struct osp_vms *v, const char *type, const char *field, uint64_t *off);
/* Address of a static field. */
int osp_vms_static(const struct osp_vms *v, const char *type, const char *field, void **addr);
/* Size of a type. */
int osp_vms_type_size(const struct osp_vms *v, const char *type, uint64_t *size);
/* Value of an int constant (gHotSpotVMIntConstants). */
int osp_vms_int(const struct osp_vms *v, const char *name, int32_t *val);
/* Address of the value of a -XX flag (JVMFlag::flags table). */
int osp_vms_flag(const struct osp_vms *v, const char *name, void **addr);

#endif
