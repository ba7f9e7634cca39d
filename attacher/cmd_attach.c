/* cmd_attach.c - `objscope attach PID` (ptrace injection: not yet built). */
#include "attacher/commands.h"
#include "attacher/options.h"
#include "common/log.h"

int cmd_attach(int argc, char **argv)
{
	struct os_opts o;
	int idx = os_opts_parse(&o, "attach", argc, argv);

	if (idx == -2)
		return 0;
	if (idx < 0)
		return OS_EXIT_USAGE;
	os_err("attach: attaching to a running process is not available in this version yet — "
	       "launch the program with 'objscope record -- COMMAND' instead");
	return OS_EXIT_USAGE;
}
