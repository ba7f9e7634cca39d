/* registry.c - the runtimes the collector knows (runtime.h os_runtimes):
 * adding a runtime is its folder under runtimes/ and one line here. The
 * order is the order in which runtimes are asked to claim an address space
 * (runtime.h op claim): specific runtimes first, catch-alls last.
 */
#include "runtimes/runtime.h"

#include "runtimes/generic/generic.h"
#include "runtimes/hotspot/hotspot.h"
#include "runtimes/zero/zero.h"

const struct os_runtime_factory os_runtimes[] = {
	/* HotSpot Zero before HotSpot: it claims the JVMs that said hello */
	{ .name = "zero", .create = os_zero_create, .launch_env = os_hotspot_launch_env,
	  .render_note = os_zero_render_note, .wanted = os_zero_wanted },
	{ .name = "hotspot", .create = os_hotspot_create, .launch_env = os_hotspot_launch_env,
	  .render_note = os_hotspot_render_note, .wanted = os_hotspot_wanted },
	/* the catch-all: any VM no adapter above claims */
	{ .name = "generic", .create = os_generic_create, .render_note = os_generic_render_note,
	  .wanted = os_generic_wanted, .shm_flags = os_generic_shm_flags },
};

const size_t os_nruntimes = sizeof(os_runtimes) / sizeof(os_runtimes[0]);
