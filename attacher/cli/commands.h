/* commands.h - the subcommands of `objscope`, dispatched from main.c.
 * Each returns the process exit status. */
#ifndef OBJSCOPE_COMMANDS_H
#define OBJSCOPE_COMMANDS_H

int cmd_record(int argc, char **argv);
int cmd_attach(int argc, char **argv);

#define OS_VERSION "0.1.0"

/* Exit statuses of objscope itself (record otherwise exits with COMMAND's). */
#define OS_EXIT_USAGE 2         /* bad options */
#define OS_EXIT_FAIL 1          /* objscope could not do its job */
#define OS_EXIT_NOTFOUND 127    /* COMMAND not found */
#define OS_EXIT_NOEXEC 126      /* COMMAND not executable */

#endif
