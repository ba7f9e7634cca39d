/* main.c - `objscope COMMAND ...`: dispatches to cmd_<name>(). */
#include <stdio.h>
#include <string.h>

#include "attacher/cli/commands.h"
#include "common/log.h"
#include "report/report.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "record", cmd_record, "launch a command with objscope preloaded and profile it" },
	{ "attach", cmd_attach, "profile a running process by PID, then detach" },
	{ "report", cmd_report, "read profile files and show objects, accesses, threads" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: objscope COMMAND [options] ...\n\n"
		   "objscope finds which objects (named by the call path that allocated them)\n"
		   "take the memory accesses of a program, and from which code.\n\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "  %-8s %s\n  %-8s %s\n", "help", "this text", "version",
		"objscope's version");
	fprintf(f, "\n  objscope record [options] [-o FILE] [-d SECONDS] -- COMMAND [ARGS...]\n"
		   "  objscope attach [options] [-o FILE] [-d SECONDS] PID\n"
		   "  objscope report [--format text|json|html|pprof|collapsed] [-o OUT] [FILE...]\n\n"
		   "'objscope COMMAND --help' lists a command's options.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return OS_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("objscope %s\n", OS_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	os_err("unknown command '%s' — try 'objscope --help'", argv[1]);
	return OS_EXIT_USAGE;
}
