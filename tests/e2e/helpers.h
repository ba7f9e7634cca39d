/* helpers.h - running programs and reading objscope reports in end-to-end tests.
 *
 * The end-to-end tests run from the repository root against build/objscope
 * and build/fixtures/NAME. Each test makes its own scratch directory with
 * e2e_tmpdir() and removes it with e2e_rmtree().
 *
 * Return convention: functions returning int give 0 on success and -errno on
 * failure unless stated otherwise; functions returning pointers give NULL on
 * failure (errno set).
 */
#ifndef OBJSCOPE_TESTS_E2E_HELPERS_H
#define OBJSCOPE_TESTS_E2E_HELPERS_H

#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "attacher/watch/watch.h"

/* A diagnostic line in the test's output, shown with or without --verbose.
 * Not cr_log_warn: Criterion's exit status is 1 when a test has logged a
 * warning, though every test passed (CI failed so on a logged retry). */
#define e2e_diag(...)                                                    \
	do {                                                             \
		fprintf(stderr, "[NOTE] ");                              \
		fprintf(stderr, __VA_ARGS__);                            \
		fputc('\n', stderr);                                     \
	} while (0)

/* --replicas and --reuse need hardware breakpoints that fire; on a machine
 * where they are accepted and never trap (attacher/watch/watch.h
 * watch_fires) objscope refuses those options up front: the test is
 * skipped with the reason. */
#define e2e_skip_unless_watchpoints_fire()                                           \
	do {                                                                         \
		if (watch_fires() == -EIO)                                           \
			cr_skip_test("%s", WATCH_NO_FIRE_REASON);                    \
	} while (0)

#define E2E_OBJSCOPE "build/objscope"
#define E2E_FIXTURE(name) ("build/fixtures/" name)

/* What a finished child left behind. */
struct e2e_result {
	int status;      /* exit status; 128 + N when killed by signal N */
	int signaled;    /* 1 when killed by a signal */
	char *out;       /* stdout, NUL-terminated (length in out_len) */
	size_t out_len;
	char *err;       /* stderr, NUL-terminated */
	size_t err_len;
};

/* Runs argv[0] (looked up in PATH) with argv, feeding `input` (may be NULL:
 * empty stdin) through a pipe, capturing stdout and stderr in files under
 * `dir`. Fills *res; free it with e2e_result_free(). */
int e2e_run(const char *dir, const char *const argv[], const char *input, struct e2e_result *res);
void e2e_result_free(struct e2e_result *res);

/* Starts argv in the background (argv[0] looked up in PATH when it has no
 * '/') with stdin from /dev/null and stdout and stderr in DIR/NAME.out and
 * DIR/NAME.err (created or truncated); in working directory cwd when it is
 * not NULL (a relative argv[0] is then taken from cwd). Fails the calling
 * test when argv cannot be started; returns its pid, for the caller to wait
 * for. */
pid_t e2e_spawn_logged(const char *dir, const char *name, const char *const argv[],
		       const char *cwd);

/* Contents of dir/NAME.EXT (static buffer, "" when missing). */
const char *e2e_slurp(const char *dir, const char *name, const char *ext);

/* Waits up to ms for dir/NAME.out (a process spawned by e2e_spawn_logged)
 * to contain what: true then; false when pid ended first or the time is up. */
bool e2e_wait_output(const char *dir, const char *name, pid_t pid, const char *what, int ms);

/* Suite .init shared by the end-to-end files: asserts that build/objscope
 * exists and returns a fresh scratch directory (malloc'd). */
char *e2e_suite_setup(void);
/* Suite .fini: removes *dir with everything below it and frees it. */
void e2e_suite_teardown(char **dir);

/* mkdtemp() under $TMPDIR or /tmp; returns a malloc'd path. */
char *e2e_tmpdir(void);
/* Removes dir and everything below it. */
int e2e_rmtree(const char *dir);
/* malloc'd "dir/name". */
char *e2e_path(const char *dir, const char *name);
/* A full disk: mounts a 64 KiB tmpfs on DIR/mnt and fills it (file "fill");
 * returns the mount point (free it, umount2 it with MNT_DETACH). Skips the
 * calling test when no tmpfs can be mounted (needs CAP_SYS_ADMIN). */
char *e2e_full_tmpfs(const char *dir);

/* Runs `objscope record -o PROFILE -- argv...`; extra options (NULL-terminated
 * list, may be NULL) go before -o. */
int e2e_record(const char *dir, const char *profile, const char *const opts[],
	       const char *const argv[], struct e2e_result *res);

/* Runs argv alone (it must exit 0), then under `objscope record opts -o
 * PROFILE`: the same exit status and stdout (and stderr with same_err),
 * asserted; returns the JSON report of PROFILE (a new reference). */
json_object *e2e_record_unchanged(const char *dir, const char *profile, const char *const opts[],
				  const char *const argv[], bool same_err);

/* Runs `objscope report --format json PROFILE` and parses its stdout.
 * Returns a new reference, or NULL with the reason in msg (size msglen). */
json_object *e2e_report_json(const char *dir, const char *profile, char *msg, size_t msglen);

/* Records argv into dir/NAME with opts (NULL-terminated, may be NULL),
 * asserts that record succeeded, returns the JSON report (a new reference). */
json_object *e2e_record_report(const char *dir, const char *name, const char *const opts[],
			       const char *const argv[]);

/* Count-driven gathering for statistical assertions (tests/README.md,
 * "Statistical assertions"): records argv under `objscope record opts` into
 * DIR/NAME.1, DIR/NAME.2, ... and reports the profiles merged (`objscope
 * report A B ...`) until count(report, ctx) reaches need, or max_runs runs:
 * the cap, never what decides (a test that reaches it asserts on the counts
 * it has and fails with them, a design fault to fix, not to retry). The
 * first run is checked as e2e_record_unchanged (same exit status and
 * stdout, and stderr with same_err) when check_unchanged; the later runs
 * must exit 0. Returns the report (a new reference): the one run's own when
 * one sufficed, else the merge; runs and got say how many runs were made
 * and what count said last. */
struct e2e_gather {
	const char *name;
	const char *const *opts;
	const char *const *argv;
	bool check_unchanged, same_err;
	int64_t (*count)(json_object *report, void *ctx);
	void *ctx;
	int64_t need;
	int max_runs;
	int runs;    /* out */
	int64_t got; /* out */
};
json_object *e2e_gather(const char *dir, struct e2e_gather *g);

/* Runs `objscope report --format json` over the n profiles (merged when
 * n > 1); as e2e_report_json otherwise. */
json_object *e2e_report_json_files(const char *dir, const char *const profiles[], size_t n,
				   char *msg, size_t msglen);

/* Field helpers: missing fields read as -1 (ints), -1.0 (doubles), NULL. */
int64_t e2e_get_int(json_object *obj, const char *key);
double e2e_get_double(json_object *obj, const char *key);
json_object *e2e_get(json_object *obj, const char *key);

/* Frame i of a JSON stack as the text report prints it (the frame object's
 * "text"), NULL when there is none. */
const char *e2e_frame_text(json_object *stack, size_t i);
/* 1 when one of the first `depth` frames of obj.alloc_stack contains fn. */
int e2e_stack_has(json_object *obj, const char *fn, size_t depth);
/* alloc_stack joined with " <- " into buf, for assertion messages. */
const char *e2e_stack_str(json_object *obj, char *buf, size_t buflen);
/* The first of the report's meta.notes that contains text, or NULL. */
const char *e2e_note(json_object *report, const char *text);

/* Number of '\n'-terminated lines in buf (a last unterminated line counts). */
size_t e2e_count_lines(const char *buf, size_t len);
/* 1 when every line of `sub` appears, whole and in order, among the lines
 * of `text` (other lines may be interleaved). */
int e2e_lines_in_order(const char *sub, const char *text);
/* 1 when `prog --help` (stdout or stderr) mentions `word`. */
int e2e_help_mentions(const char *dir, const char *const argv[], const char *word);

/* Exit status of pid (128 + N when killed by signal N), or -1 when it did
 * not end within ms (it is then killed); its peak memory in *maxrss_kb
 * (when not NULL). Fails the calling test when wait4 fails. */
int e2e_reap_within_rss(pid_t pid, int ms, long *maxrss_kb);

#endif
