/* report.h - `objscope report`: load, merge and render profiles.
 *
 *   objscope report [--format text|json|html|collapsed|pprof] [-o OUT]
 *                   [--top N] [--no-lines] [-v] [FILE...]
 *
 * Returns the process exit status: 0 on success, 1 when a profile cannot be
 * read or the output cannot be written, 2 on a usage error (unknown option or
 * format, a format not implemented yet). Errors are one line on stderr. */
#ifndef OBJSCOPE_REPORT_H
#define OBJSCOPE_REPORT_H

/* argv[0] is "report". */
int cmd_report(int argc, char **argv);

#endif
