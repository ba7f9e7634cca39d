/* debug_dir.c - report --debug-dir: frames named from a directory of debug
 * files (debug_dir.h). */
#include "report/debug_dir.h"

#include "common/log.h"
#include "symbolizer/offline.h"

#include <errno.h>
#include <string.h>

int report_debug_dir(struct os_profile **p, const char *dir, bool lines)
{
	struct os_offline_stats st;
	int ret = os_sym_name_from_dir(p, dir, lines, &st);

	if (ret == -ENOENT || ret == -ENOTDIR)
		os_err("report: --debug-dir %s: %s — name a directory of debug files "
		       "(.build-id/xx/rest.debug, or a copy of the target's root)",
		       dir, strerror(-ret));
	else if (ret)
		os_err("report: --debug-dir %s: %s", dir, strerror(-ret));
	return ret;
}
