/* registry.c - the in-target side of the runtimes (linked into
 * libobjscope.so): the attach of a running process asks each in this order
 * (preload/adapter.h osp_runtime_attaches). A new runtime with an in-target
 * attach adds one line here, next to its line in runtimes/registry.c.
 */
#include "preload/adapter.h"

#include "runtimes/generic/target/generic_attach.h"
#include "runtimes/hotspot/target/hotspot_attach.h"

const struct osp_runtime_attach *const osp_runtime_attaches[] = {
	&osp_hs_attach,
	&osp_gen_attach,
};

const size_t osp_nruntime_attaches = sizeof(osp_runtime_attaches) /
				     sizeof(osp_runtime_attaches[0]);
