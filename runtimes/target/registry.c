/* registry.c - the in-target side of the runtimes (linked into
 * libobjscope.so): a library the process loads is shown to each of
 * osp_runtime_loads, and the attach of a running process asks each of
 * osp_runtime_attaches, in this order (preload/adapter.h). A runtime that
 * builds on another comes before it (Zero before HotSpot). A new runtime
 * with an in-target side adds its lines here, next to its line in
 * runtimes/registry.c.
 */
#include "preload/adapter.h"

#include "runtimes/generic/target/generic_attach.h"
#include "runtimes/hotspot/target/hotspot_attach.h"
#include "runtimes/zero/target/zero.h"

const struct osp_runtime_load *const osp_runtime_loads[] = {
	&osp_zero_load,
	&osp_hs_load,
};

const size_t osp_nruntime_loads = sizeof(osp_runtime_loads) / sizeof(osp_runtime_loads[0]);

const struct osp_runtime_attach *const osp_runtime_attaches[] = {
	&osp_zero_attach,
	&osp_hs_attach,
	&osp_gen_attach,
};

const size_t osp_nruntime_attaches = sizeof(osp_runtime_attaches) /
				     sizeof(osp_runtime_attaches[0]);
