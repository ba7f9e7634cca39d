/* registry.c - the runtimes the collector knows (runtime.h os_runtimes):
 * adding a runtime is its folder under runtimes/ and one line here. The
 * order is the order in which runtimes are asked to claim an address space
 * (runtime.h op claim): specific runtimes first, catch-alls last.
 */
#include "runtimes/runtime.h"

#include "runtimes/hotspot/hotspot.h"

const struct os_runtime_factory os_runtimes[] = {
	{ .name = "hotspot", .create = os_hotspot_create, .launch_env = os_hotspot_launch_env,
	  .render_note = os_hotspot_render_note },
};

const size_t os_nruntimes = sizeof(os_runtimes) / sizeof(os_runtimes[0]);
