/* report.c - `objscope report`: options, loading and merging the profiles,
 * choosing the format, writing the output (atomically with -o). */
#include "report/report.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/profile.h"
#include "common/safefs.h"
#include "report/formats.h"
#include "report/view.h"
#include "report/debug_dir.h"
#include "report/diff.h"
#include "report/maker.h"
#include "runtimes/runtime.h"

#define DEFAULT_INPUT "objscope.data"
#define DEFAULT_TOP 20

enum { EXIT_FAIL = 1, EXIT_USAGE = 2 };

/* Formats named by docs/INTERFACE.md; render NULL = not implemented yet. */
static const struct {
	const char *name;
	report_render_fn render;
} formats[] = {
	{ "text", report_render_text },
	{ "json", report_render_json },
	{ "html", report_render_html },
	{ "collapsed", report_render_collapsed },
	{ "pprof", report_render_pprof },
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: objscope report [--format text|json|html|collapsed|pprof] [-o OUT]\n"
		"                       [--top N] [--no-lines] [-v] [FILE...]\n"
		"\n"
		"Shows which objects the sampled memory accesses touched. Several FILEs\n"
		"(default: " DEFAULT_INPUT ") are merged into one report.\n"
		"\n"
		"  --format FMT   output format (default text; without it, -o NAME.json,\n"
		"                 .html, .pb.gz/.pprof, .collapsed/.folded or .txt chooses;\n"
		"                 an extension naming another format is refused)\n"
		"  -o, --output OUT\n"
		"                 write to OUT instead of standard output\n"
		"  --top N        objects shown (text default %d; json shows all unless\n"
		"                 given; 0 = all)\n"
		"  --no-lines     frames without source lines or addresses (Class.method,\n"
		"                 function): contexts and access paths that differ only\n"
		"                 by lines are merged\n"
		"  -v, --verbose  text: every header line and note; text, html and\n"
		"                 json --tables: the objects without samples too\n"
		"  --alloc-wrapper NAME\n"
		"                 a function of the program that allocates for its callers:\n"
		"                 objects are named by the frame above it, as by xcalloc,\n"
		"                 os::malloc or _PyObject_ArenaMmap (NAME* matches a prefix)\n"
		"  --tables       json: frames and stacks once, in tables (\"frames\",\n"
		"                 \"stacks\"; objects refer to them by index), objects\n"
		"                 without samples left out unless -v (html always)\n"
		"  --diff OLD NEW objects whose share of the samples grew or shrank from\n"
		"                 profile OLD to NEW (text, json or html)\n"
		"  --tid TID[,TID]  only the samples of these threads\n"
		"  --comm NAME    only the samples of the threads named NAME\n"
		"  --time FROM,TO only the samples taken FROM to TO seconds from the start\n"
		"  --include REGEX, --exclude REGEX\n"
		"                 only / not the samples whose allocation or access path has\n"
		"                 a frame matching REGEX (extended, as the text report\n"
		"                 writes frames); shares are of the samples that remain\n"
		"  --sort samples|bytes|allocations\n"
		"                 object order (default samples)\n"
		"  --per-thread   each object's samples by thread\n"
		"  --debug-dir DIR, --symfs DIR\n"
		"                 name frames of stripped modules from the debug files in\n"
		"                 DIR (.build-id/xx/rest.debug, or a copy of the target's root)\n"
		"  -h, --help     this help\n",
		DEFAULT_TOP);
}

static bool diff_mode; /* --diff OLD NEW (report/diff.h) */
static bool format_given; /* --format given (else -o's extension may choose) */

/* The format an output name's extension says, NULL for none known. */
static const char *format_of_name(const char *path)
{
	static const struct {
		const char *ext, *format;
	} exts[] = {
		{ ".json", "json" }, { ".html", "html" }, { ".htm", "html" },
		{ ".pb.gz", "pprof" }, { ".pb", "pprof" }, { ".pprof", "pprof" },
		{ ".collapsed", "collapsed" }, { ".folded", "collapsed" }, { ".txt", "text" },
	};
	size_t n = strlen(path);

	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		size_t e = strlen(exts[i].ext);

		if (n > e && strcasecmp(path + n - e, exts[i].ext) == 0)
			return exts[i].format;
	}
	return NULL;
}

/* -o NAME.EXT: without --format the extension chooses the format; with a
 * --format it contradicts, refused (a page named r.html holding text helps
 * no one). 0, or -EINVAL after one error line. */
static int format_from_output(struct report_opts *o)
{
	const char *f = o->output ? format_of_name(o->output) : NULL;

	if (!f)
		return 0;
	if (!format_given) {
		o->format = f;
		return 0;
	}
	if (strcmp(f, o->format) == 0)
		return 0;
	os_err("report: -o %s names a %s file, but --format is %s — drop --format (the "
	       "extension chooses) or name the file for %s", o->output, f, o->format, o->format);
	return -EINVAL;
}

/* --tid, --comm, --time, --include, --exclude, --sort, --per-thread. */
static int filter_option(int c, const char *arg, struct report_opts *o)
{
	struct report_filter *f = &o->filter;
	enum report_sort sort;
	char err[256];
	int ret = 0;

	switch (c) {
	case 0x100:
		ret = report_filter_tids(f, arg, err, sizeof(err));
		break;
	case 0x101:
		report_filter_comm(f, arg);
		break;
	case 0x102:
		ret = report_filter_time(f, arg, err, sizeof(err));
		break;
	case 0x103:
	case 0x104:
		ret = report_filter_regex(f, c == 0x103, arg, err, sizeof(err));
		break;
	case 0x105:
		ret = report_sort_parse(arg, &sort);
		if (ret)
			snprintf(err, sizeof(err),
				 "--sort wants samples, bytes or allocations, not '%s'", arg);
		o->sort = arg;
		break;
	case 0x106:
		o->per_thread = true;
		break;
	}
	if (ret)
		os_err("report: %s", err);
	return ret;
}

static int parse_args(int argc, char **argv, struct report_opts *o)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "top", required_argument, NULL, 't' },
		{ "no-lines", no_argument, NULL, 'L' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "debug-dir", required_argument, NULL, 'D' },
		{ "symfs", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ "diff", no_argument, NULL, 'd' },
		/* report/filter.h, --sort, --per-thread */
		{ "tid", required_argument, NULL, 0x100 },
		{ "comm", required_argument, NULL, 0x101 },
		{ "time", required_argument, NULL, 0x102 },
		{ "include", required_argument, NULL, 0x103 },
		{ "exclude", required_argument, NULL, 0x104 },
		{ "sort", required_argument, NULL, 0x105 },
		{ "per-thread", no_argument, NULL, 0x106 },
		{ "tables", no_argument, NULL, 'T' },
		{ "alloc-wrapper", required_argument, NULL, 'W' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	long v;
	int c;

	o->format = "text";
	o->top = DEFAULT_TOP;
	diff_mode = false;
	format_given = false;
	optind = 0; /* full re-initialisation: cmd_report may run more than once */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:hv", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			o->format = optarg;
			format_given = true;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 't':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || v < 0 || v > UINT32_MAX) {
				os_err("report: --top wants a number of objects, not '%s'", optarg);
				return -EINVAL;
			}
			o->top = (uint32_t)v;
			o->top_set = true;
			break;
		case 'L':
			o->no_lines = true;
			break;
		case 'T':
			o->tables = true;
			break;
		case 'W':
			if (report_maker_add_wrapper(optarg)) {
				os_err("report: too many --alloc-wrapper names");
				return -EINVAL;
			}
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'D':
			o->debug_dir = optarg;
			break;
		case 'd':
			diff_mode = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case 0x100: /* filters, --sort, --per-thread */
		case 0x101:
		case 0x102:
		case 0x103:
		case 0x104:
		case 0x105:
		case 0x106:
			if (filter_option(c, optarg, o))
				return -EINVAL;
			break;
		default:
			if (optopt)
				os_err("report: option -%c is unknown or lacks its value — see"
				       " 'objscope report --help'",
				       optopt);
			else
				os_err("report: option '%s' is unknown or lacks its value — see"
				       " 'objscope report --help'",
				       argv[optind - 1]);
			return -EINVAL;
		}
	}
	return 0;
}

/* --no-lines: named frames lose their source file, line, column and address, so
 * that the merge folds frames, stacks and contexts that differed only by
 * them (a frame without a name keeps its address: it is all it has). */
static void strip_lines(struct os_profile *p)
{
	for (uint32_t i = 0; i < p->nframes; i++) {
		struct os_frame *f = &p->frames[i];

		if (f->name == OS_NONE || f->kind == OS_FRAME_UNKNOWN)
			continue;
		f->file = OS_NONE;
		f->line = 0;
		f->column = 0;
		f->addr = 0;
	}
}

/* Reads every input and merges it into a fresh profile (which also folds
 * duplicate contexts within one file). */
static int load(char **files, int nfiles, bool no_lines, struct os_profile **out)
{
	static char *const dflt[] = { DEFAULT_INPUT };
	struct os_profile *all = os_profile_new(), *p;
	char err[512];
	int i, ret = 0;

	*out = NULL;
	if (!all) {
		os_err("report: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	if (!nfiles) {
		files = (char **)dflt;
		nfiles = 1;
	}
	for (i = 0; i < nfiles; i++) {
		ret = os_profile_read(files[i], &p, err, sizeof(err));
		if (ret) {
			if (ret == -ENOENT && files == dflt)
				os_err("%s — record one with 'objscope record -- COMMAND' or name"
				       " the profile to read",
				       err);
			else
				os_err("%s", err);
			goto out;
		}
		/* the runtimes' notes kept as counters, as sentences where
		 * they stood among the notes */
		ret = os_profile_render_notes(p, os_runtimes_render_note);
		if (ret) {
			os_profile_free(p);
			os_err("%s: %s", files[i], strerror(-ret));
			goto out;
		}
		if (no_lines)
			strip_lines(p);
		ret = os_profile_merge(all, p);
		all->unfinished |= p->unfinished; /* said by the report's header */
		os_profile_free(p);
		if (ret) {
			os_err("%s: cannot merge profile: %s", files[i], strerror(-ret));
			goto out;
		}
	}
	*out = all;
	all = NULL;
out:
	os_profile_free(all);
	return ret;
}

/* The output stream writes through out_write(), which keeps the errno of the
 * first failed write(2): stdio itself only keeps an error flag, and by the
 * time the caller looks errno may say anything ("Input/output error" for a
 * full disk). */
struct out_sink {
	int fd;
	bool owned; /* close fd with the stream (-o), not stdout */
	int err;    /* errno of the first failed write, 0 if none */
};

static ssize_t out_write(void *cookie, const char *buf, size_t len)
{
	struct out_sink *s = cookie;
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(s->fd, buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!s->err)
				s->err = n < 0 ? errno : EIO;
			/* fopencookie: the bytes written, 0 on error, never negative
			 * (-1 left glibc's stream inconsistent: a later fwrite of
			 * the pprof gzip chunks read past its buffer, SIGSEGV) */
			return (ssize_t)done;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static int out_close(void *cookie)
{
	struct out_sink *s = cookie;

	if (s->owned && close(s->fd) < 0) {
		if (!s->err)
			s->err = errno;
		return -1;
	}
	return 0;
}

/* The error of the output: the first failed write's, else errno, else EIO. */
static int out_error(const struct out_sink *s)
{
	return s->err ? -s->err : errno ? -errno : -EIO;
}

/* Renders into a new file of OUT's directory that only we can have created
 * (O_TMPFILE, else an O_EXCL|O_NOFOLLOW random name), fsyncs it and renames
 * it to OUT (a symbolic link there is replaced, never written through), or
 * to stdout. Mode 0666 & ~umask, as any file a user's command creates: a
 * report is meant to be shared, and the umask says how far. An OUT that
 * exists and is a FIFO, /dev/null or a terminal is written in place
 * (renaming a file over it would replace it); other special files are
 * refused (common/safefs.h, os_out_open). */
static int emit(const struct report_view *v, const struct report_opts *o,
		report_render_fn render)
{
	static const cookie_io_functions_t io = { .write = out_write, .close = out_close };
	struct out_sink sink = { .fd = STDOUT_FILENO };
	const char *name = o->output ? o->output : "the output";
	struct os_outfile of = { .fd = -1, .dirfd = -1 };
	char err[512] = "";
	FILE *f = NULL;
	int ret;

	if (o->output) {
		ret = os_out_open(&of, o->output, 0666, err, sizeof(err));
		if (ret) {
			os_err("report: %s", err);
			return ret;
		}
		sink.fd = of.fd; /* closed by os_out_commit / os_out_abort */
	} else if (fflush(stdout) == EOF) {
		ret = -errno;
		os_err("report: cannot write the output: %s", strerror(-ret));
		return ret;
	}
	f = fopencookie(&sink, "w", io);
	if (!f) {
		ret = -ENOMEM;
		os_err("report: %s", strerror(ENOMEM));
		goto done;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 16);
	/* only this thread writes it: no lock per fputc (2.5x faster) */
	__fsetlocking(f, FSETLOCKING_BYCALLER);
	ret = render(v, o, f);
	if (ret && !ferror(f) && !sink.err) {
		os_err("report: cannot render the %s report: %s", o->format, strerror(-ret));
		goto close;
	}
	errno = 0;
	if (ret || fflush(f) == EOF || ferror(f) || sink.err) {
		ret = out_error(&sink);
		os_err("report: cannot write %s: %s", name, strerror(-ret));
		goto close;
	}
close:
	errno = 0;
	if (fclose(f) == EOF && !ret) {
		ret = out_error(&sink);
		os_err("report: cannot write %s: %s", name, strerror(-ret));
	}
done:
	if (o->output) {
		if (ret) {
			os_out_abort(&of);
		} else {
			ret = os_out_commit(&of, false, err, sizeof(err));
			if (ret)
				os_err("report: %s", err);
		}
	}
	return ret;
}

/* report/filter.h on the merged profile; --per-thread needs its slices too. */
static int apply_filters(struct os_profile *p, const struct report_opts *o)
{
	char err[256];
	int ret;

	if (o->per_thread && !(p->analyses & OS_AN_SLICES)) {
		os_err("report: --per-thread: this profile has no per-sample threads/times"
		       " (recorded by an older objscope)");
		return -ENOTSUP;
	}
	if (!report_filter_active(&o->filter))
		return 0;
	ret = report_filter_apply(p, &o->filter, err, sizeof(err));
	if (ret)
		os_err("report: %s: %s", o->filter.desc, err);
	return ret;
}

/* Binary formats (pprof: gzip protobuf) are not written to a terminal, as
 * gzip refuses: the bytes would garble it and help no one. */
static bool binary_to_terminal(const struct report_opts *o)
{
	if (o->output || strcmp(o->format, "pprof") != 0 || !isatty(STDOUT_FILENO))
		return false;
	os_err("report: %s output is binary: use -o FILE or a pipe", o->format);
	return true;
}

/* --diff OLD NEW: each side loaded as a report loads its files, then
 * report/diff.c matches their objects. */
static int cmd_diff(char **files, int nfiles, const struct report_opts *o)
{
	struct os_profile *p[2] = { NULL, NULL };
	struct report_diff d = { 0 };
	int ret = EXIT_FAIL, i;

	if (nfiles != 2 || (strcmp(o->format, "text") && strcmp(o->format, "json") &&
			    strcmp(o->format, "html"))) {
		os_err(nfiles != 2 ? "report: --diff wants two profiles, OLD and NEW"
				   : "report: --diff writes text, json or html");
		return EXIT_USAGE;
	}
	for (i = 0; i < 2; i++)
		if (load(files + i, 1, o->no_lines, &p[i]) ||
		    (o->debug_dir && report_debug_dir(&p[i], o->debug_dir, !o->no_lines)))
			goto out;
	if (report_diff_build(&d, p[0], files[0], p[1], files[1])) {
		os_err("report: %s", strerror(ENOMEM));
		goto out;
	}
	ret = emit(&d.view, o, report_diff_render) ? EXIT_FAIL : 0;
out:
	report_diff_free(&d);
	os_profile_free(p[0]);
	os_profile_free(p[1]);
	return ret;
}

int cmd_report(int argc, char **argv)
{
	struct report_opts opts = { 0 };
	struct report_view view = { 0 };
	struct os_profile *p = NULL;
	report_render_fn render = NULL;
	enum report_sort sort = REPORT_SORT_SAMPLES;
	size_t i;
	int ret;

	ret = parse_args(argc, argv, &opts);
	if (ret) {
		report_filter_free(&opts.filter);
		return ret > 0 ? 0 : EXIT_USAGE;
	}
	if (format_from_output(&opts)) {
		report_filter_free(&opts.filter);
		return EXIT_USAGE;
	}
	if (opts.sort)
		report_sort_parse(opts.sort, &sort);
	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (strcmp(formats[i].name, opts.format) == 0)
			break;
	if (i == sizeof(formats) / sizeof(formats[0])) {
		os_err("report: unknown format '%s' — use text, json, html, collapsed or pprof",
		       opts.format);
		ret = EXIT_USAGE;
		goto done;
	}
	render = formats[i].render;
	if (!render) {
		os_err("report: format %s is not implemented yet — use text or json", opts.format);
		ret = EXIT_USAGE;
		goto done;
	}
	if (binary_to_terminal(&opts)) {
		ret = EXIT_USAGE;
		goto done;
	}
	if (opts.output) { /* before loading: a wrong -o should not cost the wait */
		char err[512];

		ret = os_out_check(opts.output, err, sizeof(err));
		if (ret) {
			os_err("report: %s", err);
			ret = EXIT_FAIL;
			goto done;
		}
	}
	if (diff_mode) {
		ret = cmd_diff(argv + optind, argc - optind, &opts);
		goto done;
	}
	if (load(argv + optind, argc - optind, opts.no_lines, &p) ||
	    (opts.debug_dir && report_debug_dir(&p, opts.debug_dir, !opts.no_lines))) {
		ret = -EINVAL;
		goto out;
	}
	ret = apply_filters(p, &opts);
	if (ret)
		goto out;
	ret = report_view_build_sorted(&view, p, sort);
	if (ret) {
		os_err("report: %s", strerror(-ret));
		goto out;
	}
	ret = emit(&view, &opts, render);
out:
	report_view_free(&view);
	os_profile_free(p);
	ret = ret ? EXIT_FAIL : 0;
done: /* every way out frees the filters (their regexes) */
	report_filter_free(&opts.filter);
	return ret;
}
