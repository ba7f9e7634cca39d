/* session.c - shared by cmd_record.c and cmd_attach.c. */
#include "attacher/cli/session.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "report/filter.h"

int os_session_find_preload(char *out, size_t len)
{
	const char *env = getenv("OBJSCOPE_LIB");
	char exe[PATH_MAX], cand[PATH_MAX * 2], *dir;
	ssize_t n;

	if (len < PATH_MAX)
		return -EINVAL;
	if (env && *env)
		return realpath(env, out) ? 0 : -errno;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return -errno;
	exe[n] = 0;
	dir = dirname(exe);
	snprintf(cand, sizeof(cand), "%s/libobjscope.so", dir);
	if (realpath(cand, out))
		return 0;
	snprintf(cand, sizeof(cand), "%s/../lib/objscope/libobjscope.so", dir);
	return realpath(cand, out) ? 0 : -ENOENT;
}

void os_session_replicas_in_target(struct os_collector *c, const struct os_opts *o)
{
	const char *e = getenv("OBJSCOPE_REPLICAS_IN_TARGET");

	if (o->replicas && !(e && strcmp(e, "0") == 0))
		c->shm.hdr->flags |= OS_SHM_F_REPLICAS;
}

int os_session_write_profile(struct os_collector *c, const struct os_opts *o, const char *mode,
			     int argc, char *const argv[])
{
	return os_session_write_profile_notes(c, o, mode, argc, argv, NULL, 0);
}

/* -I / -X (async-profiler's include / exclude): the profile keeps only the
 * samples whose allocation or access path has (-I) / has not (-X) a frame
 * matching, as `report --include/--exclude` would show it, and says so in
 * a note. 0, or -errno after one error line. */
static int apply_path_filter(struct os_profile *p, const struct os_opts *o, const char *mode)
{
	struct report_filter f = { 0 };
	char err[256], note[700];
	int rc = 0;

	if (o->include)
		rc = report_filter_regex(&f, true, o->include, err, sizeof(err));
	if (rc == 0 && o->exclude)
		rc = report_filter_regex(&f, false, o->exclude, err, sizeof(err));
	if (rc == 0)
		rc = report_filter_apply(p, &f, err, sizeof(err));
	if (rc) {
		os_err("%s: -I/-X: %s", mode, err);
	} else {
		snprintf(note, sizeof(note), "recorded with %s%s%s%s%s: only the samples whose "
			 "allocation or access path %s were kept",
			 o->include ? "-I " : "", o->include ? o->include : "",
			 o->include && o->exclude ? " " : "", o->exclude ? "-X " : "",
			 o->exclude ? o->exclude : "",
			 o->include && o->exclude ? "has a frame matching -I and none matching -X"
			 : o->include ? "has a frame matching it" : "has no frame matching it");
		rc = os_profile_add_note(p, note);
		if (rc < 0)
			os_err("%s: out of memory while building the profile", mode);
	}
	report_filter_free(&f);
	return rc < 0 ? rc : 0;
}

int os_session_write_profile_notes(struct os_collector *c, const struct os_opts *o,
				   const char *mode, int argc, char *const argv[],
				   const char *const notes[], size_t nnotes)
{
	char err[512] = "", ckpt_note[256];
	/* a checkpoint still being written must not rename over this one; the
	 * first checkpoint kept the file that was there as FILE.old */
	bool replaces_checkpoint = os_ckpt_end(c);
	struct os_profile *p = os_collector_profile(c, mode, argc, argv);
	int rc = 0;

	if (!p) {
		os_err("%s: out of memory while building the profile", mode);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nnotes && rc == 0; i++)
		if (notes[i] && notes[i][0])
			rc = os_profile_add_note(p, notes[i]);
	os_ckpt_note(c, ckpt_note, sizeof(ckpt_note));
	if (rc == 0 && ckpt_note[0])
		rc = os_profile_add_note(p, ckpt_note);
	if (rc < 0) {
		os_err("%s: out of memory while building the profile", mode);
		os_profile_free(p);
		return rc;
	}
	if ((o->include || o->exclude) && (rc = apply_path_filter(p, o, mode)) < 0) {
		os_profile_free(p);
		return rc;
	}
	rc = os_profile_write_keep(p, o->output, !replaces_checkpoint, err, sizeof(err));
	if (rc < 0)
		os_err("%s: %s", mode, err[0] ? err : strerror(-rc));
	else if (err[0])
		os_warn("%s: %s", mode, err); /* written; FILE.old could not be kept */
	if (rc == 0 && !o->quiet) {
		char jit[64] = "";

		if (p->c.samples_jit)
			snprintf(jit, sizeof(jit), " (%llu of JIT compiler threads, not decoded)",
				 (unsigned long long)p->c.samples_jit);
		fprintf(stderr,
			"objscope: wrote %s: %llu samples%s, %llu addressed, %llu attributed to %u "
			"objects' contexts, %u process%s, %llu lost, %llu events dropped\n",
			o->output, (unsigned long long)p->c.samples_total, jit,
			(unsigned long long)p->c.samples_addressed,
			(unsigned long long)p->c.samples_attributed, p->ncontexts, p->meta.npids,
			p->meta.npids == 1 ? "" : "es", (unsigned long long)p->c.lost,
			(unsigned long long)p->c.dropped_events);
	}
	os_profile_free(p);
	return rc;
}
