/* helpers.c - running programs and reading objscope reports in end-to-end tests. */
#include "tests/e2e/helpers.h"

#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <ftw.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mount.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

char *e2e_path(const char *dir, const char *name)
{
	char *p = NULL;

	if (asprintf(&p, "%s/%s", dir, name) < 0)
		return NULL;
	return p;
}

char *e2e_tmpdir(void)
{
	const char *base = getenv("TMPDIR");
	char *tmpl = NULL;

	if (!base || !*base)
		base = "/tmp";
	if (asprintf(&tmpl, "%s/objscope-e2e-XXXXXX", base) < 0)
		return NULL;
	if (!mkdtemp(tmpl)) {
		free(tmpl);
		return NULL;
	}
	return tmpl;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) ? -errno : 0;
}

int e2e_rmtree(const char *dir)
{
	if (!dir)
		return -EINVAL;
	return nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Reads a whole file into a NUL-terminated malloc'd buffer. */
static int slurp(const char *path, char **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *data = NULL;
	size_t cap = 0, n = 0, got;
	int ret = 0;

	if (!f)
		return -errno;
	do {
		if (cap - n < 4096) {
			char *bigger = realloc(data, cap ? cap * 2 : 8192);

			if (!bigger) {
				ret = -ENOMEM;
				goto out;
			}
			data = bigger;
			cap = cap ? cap * 2 : 8192;
		}
		got = fread(data + n, 1, cap - n - 1, f);
		n += got;
	} while (got > 0);
	if (ferror(f)) {
		ret = -EIO;
		goto out;
	}
	data[n] = '\0';
	*buf = data;
	*len = n;
	data = NULL;
out:
	free(data);
	fclose(f);
	return ret;
}

extern char **environ;

pid_t e2e_spawn_logged(const char *dir, const char *name, const char *const argv[],
		       const char *cwd)
{
	posix_spawn_file_actions_t fa;
	char *out = NULL, *err = NULL;
	pid_t pid = -1;
	int ret;

	cr_assert(asprintf(&out, "%s/%s.out", dir, name) > 0 &&
		  asprintf(&err, "%s/%s.err", dir, name) > 0);
	posix_spawn_file_actions_init(&fa);
	if (cwd)
		posix_spawn_file_actions_addchdir_np(&fa, cwd);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ret = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	free(out);
	free(err);
	cr_assert_eq(ret, 0, "cannot start %s: %s", argv[0], strerror(ret));
	return pid;
}

int e2e_run(const char *dir, const char *const argv[], const char *input, struct e2e_result *res)
{
	char *out_path = e2e_path(dir, "stdout.txt"), *err_path = e2e_path(dir, "stderr.txt");
	int in_pipe[2] = { -1, -1 }, ret = 0, wstatus;
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_pipe;
	pid_t pid;

	memset(res, 0, sizeof(*res));
	if (!out_path || !err_path) {
		ret = -ENOMEM;
		goto out;
	}
	if (pipe2(in_pipe, O_CLOEXEC)) {
		ret = -errno;
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		goto out;
	}
	if (pid == 0) {
		int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (o < 0 || e < 0 || dup2(in_pipe[0], 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(126);
		close(o);
		close(e);
		execvp(argv[0], (char *const *)argv);
		_exit(errno == ENOENT ? 127 : 126);
	}
	close(in_pipe[0]);
	in_pipe[0] = -1;
	/* The child may exit without reading: do not die of SIGPIPE. */
	sigaction(SIGPIPE, &ign, &old_pipe);
	if (input) {
		size_t len = strlen(input), off = 0;

		while (off < len) {
			ssize_t w = write(in_pipe[1], input + off, len - off);

			if (w < 0) {
				if (errno == EINTR)
					continue;
				break; /* EPIPE: the child closed stdin; not an error here */
			}
			off += (size_t)w;
		}
	}
	close(in_pipe[1]);
	in_pipe[1] = -1;
	sigaction(SIGPIPE, &old_pipe, NULL);
	while (waitpid(pid, &wstatus, 0) < 0) {
		if (errno != EINTR) {
			ret = -errno;
			goto out;
		}
	}
	if (WIFSIGNALED(wstatus)) {
		res->signaled = 1;
		res->status = 128 + WTERMSIG(wstatus);
	} else {
		res->status = WEXITSTATUS(wstatus);
	}
	ret = slurp(out_path, &res->out, &res->out_len);
	if (!ret)
		ret = slurp(err_path, &res->err, &res->err_len);
	unlink(out_path);
	unlink(err_path);
out:
	if (in_pipe[0] >= 0)
		close(in_pipe[0]);
	if (in_pipe[1] >= 0)
		close(in_pipe[1]);
	free(out_path);
	free(err_path);
	if (ret)
		e2e_result_free(res);
	return ret;
}

void e2e_result_free(struct e2e_result *res)
{
	free(res->out);
	free(res->err);
	res->out = res->err = NULL;
	res->out_len = res->err_len = 0;
}

int e2e_record(const char *dir, const char *profile, const char *const opts[],
	       const char *const argv[], struct e2e_result *res)
{
	const char *full[64];
	size_t n = 0;

	full[n++] = E2E_OBJSCOPE;
	full[n++] = "record";
	for (size_t i = 0; opts && opts[i] && n < 40; i++)
		full[n++] = opts[i];
	full[n++] = "-o";
	full[n++] = profile;
	full[n++] = "--";
	for (size_t i = 0; argv[i]; i++) {
		if (n >= sizeof(full) / sizeof(full[0]) - 1)
			return -E2BIG;
		full[n++] = argv[i];
	}
	full[n] = NULL;
	return e2e_run(dir, full, NULL, res);
}

json_object *e2e_record_unchanged(const char *dir, const char *profile, const char *const opts[],
				  const char *const argv[], bool same_err)
{
	struct e2e_result plain, prof;
	json_object *report;
	char msg[512];

	cr_assert_eq(e2e_run(dir, argv, NULL, &plain), 0, "cannot run %s", argv[0]);
	cr_assert_eq(plain.status, 0, "%s %s exited %d: %s", argv[0], argv[1] ? argv[1] : "",
		     plain.status, plain.err);
	cr_assert_eq(e2e_record(dir, profile, opts, argv, &prof), 0, "cannot run objscope record");
	cr_assert_eq(prof.status, plain.status, "exit status %d under objscope, %d without; "
		     "stderr: %s", prof.status, plain.status, prof.err);
	cr_expect_str_eq(prof.out, plain.out, "stdout differs under objscope");
	if (same_err)
		cr_expect_str_eq(prof.err, plain.err, "stderr differs under objscope");
	e2e_result_free(&plain);
	e2e_result_free(&prof);
	report = e2e_report_json(dir, profile, msg, sizeof(msg));
	cr_assert_not_null(report, "%s", msg);
	return report;
}

json_object *e2e_report_json(const char *dir, const char *profile, char *msg, size_t msglen)
{
	const char *const one[] = { profile };

	return e2e_report_json_files(dir, one, 1, msg, msglen);
}

json_object *e2e_get(json_object *obj, const char *key)
{
	json_object *v = NULL;

	if (!obj || !json_object_object_get_ex(obj, key, &v))
		return NULL;
	return v;
}

int64_t e2e_get_int(json_object *obj, const char *key)
{
	json_object *v = e2e_get(obj, key);

	if (!v || !(json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
		return -1;
	return json_object_get_int64(v);
}

double e2e_get_double(json_object *obj, const char *key)
{
	json_object *v = e2e_get(obj, key);

	if (!v || !(json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
		return -1.0;
	return json_object_get_double(v);
}

const char *e2e_frame_text(json_object *stack, size_t i)
{
	json_object *f, *text;

	if (!stack || !json_object_is_type(stack, json_type_array) ||
	    i >= json_object_array_length(stack))
		return NULL;
	f = json_object_array_get_idx(stack, i);
	if (!json_object_object_get_ex(f, "text", &text) ||
	    !json_object_is_type(text, json_type_string))
		return NULL;
	return json_object_get_string(text);
}

int e2e_stack_has(json_object *obj, const char *fn, size_t depth)
{
	json_object *stack = e2e_get(obj, "alloc_stack");
	size_t n;

	if (!stack || !json_object_is_type(stack, json_type_array))
		return 0;
	n = json_object_array_length(stack);
	for (size_t i = 0; i < n && i < depth; i++) {
		const char *frame = e2e_frame_text(stack, i);

		if (frame && strstr(frame, fn))
			return 1;
	}
	return 0;
}

const char *e2e_stack_str(json_object *obj, char *buf, size_t buflen)
{
	json_object *stack = e2e_get(obj, "alloc_stack");
	size_t n, used = 0;

	buf[0] = '\0';
	if (!stack || !json_object_is_type(stack, json_type_array))
		return "(no alloc_stack)";
	n = json_object_array_length(stack);
	for (size_t i = 0; i < n && used + 1 < buflen; i++) {
		const char *frame = e2e_frame_text(stack, i);
		int w = snprintf(buf + used, buflen - used, "%s%s", i ? " <- " : "", frame ? frame : "?");

		if (w < 0)
			break;
		used += (size_t)w;
	}
	return buf;
}

size_t e2e_count_lines(const char *buf, size_t len)
{
	size_t lines = 0;

	for (size_t i = 0; i < len; i++)
		if (buf[i] == '\n')
			lines++;
	if (len > 0 && buf[len - 1] != '\n')
		lines++;
	return lines;
}

/* Length of the line starting at s (without its '\n'). */
static size_t line_len(const char *s)
{
	const char *nl = strchr(s, '\n');

	return nl ? (size_t)(nl - s) : strlen(s);
}

int e2e_lines_in_order(const char *sub, const char *text)
{
	const char *t = text;

	while (*sub) {
		size_t sl = line_len(sub);
		int found = 0;

		while (*t) {
			size_t tl = line_len(t);

			found = tl == sl && memcmp(t, sub, sl) == 0;
			t += tl + (t[tl] == '\n');
			if (found)
				break;
		}
		if (!found)
			return 0;
		sub += sl + (sub[sl] == '\n');
	}
	return 1;
}

int e2e_help_mentions(const char *dir, const char *const argv[], const char *word)
{
	struct e2e_result res;
	int found;

	if (e2e_run(dir, argv, NULL, &res))
		return 0;
	found = (res.out && strstr(res.out, word)) || (res.err && strstr(res.err, word));
	e2e_result_free(&res);
	return found;
}

char *e2e_suite_setup(void)
{
	char *dir;

	cr_assert(access(E2E_OBJSCOPE, X_OK) == 0, "%s is missing: run `make all fixtures` first",
		  E2E_OBJSCOPE);
	dir = e2e_tmpdir();
	cr_assert_not_null(dir, "mkdtemp failed");
	return dir;
}

void e2e_suite_teardown(char **dir)
{
	if (*dir)
		e2e_rmtree(*dir);
	free(*dir);
	*dir = NULL;
}

char *e2e_full_tmpfs(const char *dir)
{
	static char block[4096];
	char *mnt = e2e_path(dir, "mnt"), *fill;
	int fd;

	cr_assert_eq(mkdir(mnt, 0755), 0);
	if (mount("tmpfs", mnt, "tmpfs", 0, "size=64k") != 0) {
		int e = errno;

		free(mnt);
		cr_skip_test("cannot mount a tmpfs to fill (%s): needs root/CAP_SYS_ADMIN",
			     strerror(e));
	}
	fill = e2e_path(mnt, "fill");
	fd = open(fill, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	cr_assert_geq(fd, 0);
	while (write(fd, block, sizeof(block)) > 0)
		;
	close(fd);
	free(fill);
	return mnt;
}

const char *e2e_note(json_object *report, const char *text)
{
	json_object *notes = e2e_get(e2e_get(report, "meta"), "notes");

	for (size_t i = 0; notes && i < json_object_array_length(notes); i++) {
		const char *n = json_object_get_string(json_object_array_get_idx(notes, i));

		if (n && strstr(n, text))
			return n;
	}
	return NULL;
}

json_object *e2e_record_report(const char *dir, const char *name, const char *const opts[],
			       const char *const argv[])
{
	char *profile = e2e_path(dir, name), msg[512];
	struct e2e_result res;
	json_object *report;

	cr_assert_not_null(profile);
	cr_assert_eq(e2e_record(dir, profile, opts, argv, &res), 0, "cannot run objscope record");
	cr_assert_eq(res.status, 0, "objscope record exited %d; stderr: %s", res.status, res.err);
	e2e_result_free(&res);
	report = e2e_report_json(dir, profile, msg, sizeof(msg));
	cr_assert_not_null(report, "%s", msg);
	free(profile);
	return report;
}

const char *e2e_slurp(const char *dir, const char *name, const char *ext)
{
	static char buf[1 << 16];
	char path[PATH_MAX];
	ssize_t n = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/%s.%s", dir, name, ext);
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	buf[n > 0 ? n : 0] = 0;
	return buf;
}

bool e2e_wait_output(const char *dir, const char *name, pid_t pid, const char *what, int ms)
{
	for (int i = 0; i < ms / 10; i++) {
		if (strstr(e2e_slurp(dir, name, "out"), what))
			return true;
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return false;
		usleep(10000);
	}
	return strstr(e2e_slurp(dir, name, "out"), what) != NULL;
}

json_object *e2e_report_json_files(const char *dir, const char *const profiles[], size_t n,
				   char *msg, size_t msglen)
{
	const char *argv[72] = { E2E_OBJSCOPE, "report", "--format", "json" };
	enum json_tokener_error jerr = json_tokener_success;
	json_object *root = NULL;
	struct e2e_result res;
	size_t k = 4;
	int ret;

	if (n == 0 || n > sizeof(argv) / sizeof(argv[0]) - k - 1) {
		snprintf(msg, msglen, "%zu profiles to report", n);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		argv[k++] = profiles[i];
	argv[k] = NULL;
	ret = e2e_run(dir, argv, NULL, &res);
	if (ret) {
		snprintf(msg, msglen, "cannot run objscope report: %s", strerror(-ret));
		return NULL;
	}
	if (res.status != 0) {
		snprintf(msg, msglen, "objscope report exited %d: %.300s", res.status, res.err);
		goto out;
	}
	root = json_tokener_parse_verbose(res.out, &jerr);
	if (!root)
		snprintf(msg, msglen, "report is not JSON (%s): %.200s",
			 json_tokener_error_desc(jerr), res.out);
out:
	e2e_result_free(&res);
	return root;
}

#define E2E_GATHER_MAX 64

json_object *e2e_gather(const char *dir, struct e2e_gather *g)
{
	char *profiles[E2E_GATHER_MAX] = { 0 }, msg[512];
	json_object *report = NULL;
	int cap = g->max_runs;

	cr_assert(cap >= 1 && cap <= E2E_GATHER_MAX, "%s: a cap of %d runs", g->name, cap);
	cr_assert(g->need > 0, "%s: the counts needed are not known (%lld): the assertion's "
		  "true share is not above its bound", g->name, (long long)g->need);
	g->runs = 0;
	g->got = 0;
	while (g->runs < cap) {
		char leaf[256];
		int k = g->runs;

		snprintf(leaf, sizeof(leaf), "%s.%d", g->name, k + 1);
		profiles[k] = e2e_path(dir, leaf);
		cr_assert_not_null(profiles[k]);
		if (report)
			json_object_put(report);
		report = NULL;
		if (k == 0 && g->check_unchanged) {
			report = e2e_record_unchanged(dir, profiles[k], g->opts, g->argv,
						      g->same_err);
		} else {
			struct e2e_result res;

			cr_assert_eq(e2e_record(dir, profiles[k], g->opts, g->argv, &res), 0,
				     "cannot run objscope record");
			cr_assert_eq(res.status, 0, "objscope record (run %d) exited %d; stderr: %s",
				     k + 1, res.status, res.err);
			e2e_result_free(&res);
		}
		g->runs++;
		if (!report)
			report = e2e_report_json_files(dir, (const char *const *)profiles,
						       (size_t)g->runs, msg, sizeof(msg));
		cr_assert_not_null(report, "%s", msg);
		g->got = g->count(report, g->ctx);
		if (g->got >= g->need)
			break;
	}
	if (g->runs > 1 || g->got < g->need)
		e2e_diag("%s: %lld of the %lld counts needed after %d run(s)%s", g->name,
			 (long long)g->got, (long long)g->need, g->runs,
			 g->got < g->need ? " (the cap)" : "");
	for (int k = 0; k < g->runs; k++)
		free(profiles[k]);
	return report;
}

int e2e_reap_within_rss(pid_t pid, int ms, long *maxrss_kb)
{
	struct rusage ru;
	int st;

	for (int waited = 0; waited <= ms; waited += 10) {
		pid_t r = wait4(pid, &st, WNOHANG, &ru);

		cr_assert_geq(r, 0, "wait4: %s", strerror(errno));
		if (r == pid) {
			if (maxrss_kb)
				*maxrss_kb = ru.ru_maxrss;
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		}
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}
