/* status_line.c - the live status line of `record` and `attach` on stderr
 * (see status_line.h). */
#include "attacher/cli/status_line.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"

/* The live status line. On a terminal of known size it lives on the bottom
 * row, below a scroll region that holds everything else: the target shares
 * the terminal and writes when it likes, and its lines must neither land
 * after the status text nor be overwritten by the next redraw (a plain \r
 * redraw does both). Elsewhere (--progress to a file or pipe, a terminal of
 * unknown size) it is one line redrawn with \r and erase-to-end-of-line, taken
 * off before any objscope message (os_log_set_progress_clear). Either way it
 * is gone when profiling ends, and the scroll region is given back then, at
 * exit, or before a message; the terminal is left as it was found. */
enum { ST_NONE, ST_LINE, ST_REGION };
static struct {
	int mode;
	int rows, cols;  /* ST_REGION: the terminal's size the region was set for */
	bool drawn;      /* ST_LINE: status text on the current line */
	bool atexit_set;
} st;

static bool term_size(int *rows, int *cols)
{
	struct winsize ws;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) < 0 || ws.ws_row < 3 || ws.ws_col < 20)
		return false;
	*rows = ws.ws_row;
	*cols = ws.ws_col;
	return true;
}

/* Scroll region rows 1..rows-1; the cursor stays where the output goes on
 * (DECSTBM homes it, hence the save and restore). The newline and the move
 * up first make sure the bottom row is free and the cursor inside the region
 * (a cursor below a region would not scroll). */
static void region_set(int rows)
{
	fprintf(stderr, "\r\n\033[1A\0337\033[1;%dr\0338", rows - 1);
}

static void status_end(void)
{
	if (st.mode == ST_REGION)
		fprintf(stderr, "\0337\033[%d;1H\033[2K\033[r\0338", st.rows);
	else if (st.mode == ST_LINE && st.drawn)
		fprintf(stderr, "\r\033[K");
	st.mode = ST_NONE;
	st.drawn = false;
	os_log_set_progress_clear(NULL);
	fflush(stderr);
}

/* Before an objscope message: in line mode the message must not follow the
 * status text; the bottom row needs nothing (messages scroll in the region). */
static void status_log_clear(void)
{
	if (st.mode == ST_LINE && st.drawn) {
		fprintf(stderr, "\r\033[K");
		st.drawn = false;
	}
}

static void status_begin(void)
{
	if (isatty(STDERR_FILENO) && term_size(&st.rows, &st.cols)) {
		st.mode = ST_REGION;
		region_set(st.rows);
		if (!st.atexit_set) /* an error path that never reaches the final call */
			st.atexit_set = atexit(status_end) == 0;
	} else {
		st.mode = ST_LINE;
	}
	os_log_set_progress_clear(status_log_clear);
}

void os_status_line(struct os_collector *c, bool final)
{
	uint64_t now = os_now_ns();
	char line[256];
	double el;
	int n;

	if (!c->status_line)
		return;
	if (final) {
		status_end();
		return;
	}
	if (now - c->last_status_ns < 500000000ULL)
		return;
	c->last_status_ns = now;
	if (st.mode == ST_NONE)
		status_begin();
	el = (double)(now - c->start_ns) / 1e9;
	n = snprintf(line, sizeof(line),
		     "objscope: %.1fs  %llu samples (%.0f/s)  %llu objects  %llu GCs  %llu lost",
		     el, (unsigned long long)c->samples_total,
		     el > 0 ? (double)c->samples_total / el : 0.0,
		     (unsigned long long)c->attrib.c.objects_seen,
		     (unsigned long long)c->attrib.c.gc_count, (unsigned long long)c->lost);
	if (n < 0)
		return;
	if (st.mode == ST_REGION) {
		int rows, cols;

		if (term_size(&rows, &cols)) {
			if (rows != st.rows) { /* resized: the old row is no status row now */
				fprintf(stderr, "\0337\033[%d;1H\033[2K\033[1;%dr\0338",
					st.rows < rows ? st.rows : rows, rows - 1);
				st.rows = rows;
			}
			st.cols = cols;
		}
		/* one row, never wrapped into the region */
		fprintf(stderr, "\0337\033[%d;1H\r\033[K%.*s\0338", st.rows, st.cols - 1, line);
	} else {
		fprintf(stderr, "\r\033[K%s", line);
		st.drawn = true;
	}
	fflush(stderr);
}
