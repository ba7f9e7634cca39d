/* checkpoint.c - the profile written while recording (checkpoint.h). */
#include "attacher/core/checkpoint.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attacher/core/collector.h"
#include "common/log.h"

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t tv_ns(const struct timeval *t)
{
	return (uint64_t)t->tv_sec * 1000000000ULL + (uint64_t)t->tv_usec * 1000ULL;
}

static void decide(struct os_ckpt *k, const struct os_opts *o)
{
	const char *e = getenv("OBJSCOPE_CHECKPOINT"), *s = getenv("OBJSCOPE_CHECKPOINT_S");
	struct stat st;

	k->decided = true;
	k->min_s = OS_CKPT_MIN_S;
	if (s) {
		char *end;
		double v = strtod(s, &end);

		if (end != s && !*end && v >= 0.1 && v <= 3600)
			k->min_s = v;
	}
	/* a special file at the output is written in place, once: a FIFO or
	 * a terminal would get every checkpoint one after the other */
	k->off = (e && !strcmp(e, "0")) || !o->output ||
		 (stat(o->output, &st) == 0 && !S_ISREG(st.st_mode));
	if (k->off)
		os_debug("checkpoints: off");
}

/* The child: the profile as it stands, unfinished, then exit. */
static void __attribute__((noreturn)) write_checkpoint(struct os_collector *c,
							const struct os_opts *o,
							const char *mode, int argc,
							char *const argv[], bool keep_old)
{
	struct os_profile *p;
	char note[256], err[512];
	int rc;

	/* the terminal's ^C, a hang-up or a stop signal are the parent's to
	 * act on (it kills this child before its final write) */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	c->in_checkpoint = true;
	p = os_collector_profile(c, mode, argc, argv);
	if (!p)
		_exit(2);
	snprintf(note, sizeof(note),
		 "unfinished: a checkpoint written %.1f s into the run (checkpoints every %.0f s "
		 "or more); objscope ended before its final profile, so what came after is missing",
		 (double)(os_now_ns() - c->start_ns) / 1e9, c->ckpt.min_s);
	p->unfinished = true;
	rc = os_profile_add_note(p, note);
	if (!rc)
		rc = os_profile_write_keep(p, o->output, keep_old, err, sizeof(err));
	/* no atexit handlers, no stdio flush: the parent's buffers are its own */
	_exit(rc ? 1 : 0);
}

/* Reaps the child when it has ended (or waits, `block`); its CPU, charged
 * to objscope (overhead.h: reaped, it is in RUSAGE_CHILDREN, which would
 * otherwise count as the target's). Returns that CPU (ns), 0 if not reaped. */
static uint64_t reap(struct os_collector *c, bool block)
{
	struct os_ckpt *k = &c->ckpt;
	struct rusage ru;
	uint64_t ns;
	int status;
	pid_t w;

	if (!k->child)
		return 0;
	do
		w = wait4(k->child, &status, block ? 0 : WNOHANG, &ru);
	while (w < 0 && errno == EINTR);
	if (w == 0)
		return 0;
	k->child = 0;
	if (w < 0) {
		k->failed++;
		return 0;
	}
	ns = tv_ns(&ru.ru_utime) + tv_ns(&ru.ru_stime);
	k->cpu_ns += ns;
	os_overhead_checkpoint(c, ns);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		k->written++;
	else
		k->failed++;
	return ns;
}

void os_ckpt_poll(struct os_collector *c, const struct os_opts *o, const char *mode, int argc,
		  char *const argv[])
{
	struct os_ckpt *k = &c->ckpt;
	uint64_t now = os_now_ns(), cost, t0;
	double wait_s;
	pid_t pid;

	if (!k->decided)
		decide(k, o);
	if (k->off)
		return;
	if (k->child) {
		cost = reap(c, false);
		if (k->child)
			return;
		/* its cost sets when the next one is due */
		cost += k->fork_ns;
		wait_s = OS_CKPT_COST_FACTOR * (double)cost / 1e9;
		if (wait_s < k->min_s)
			wait_s = k->min_s;
		k->next_ns = k->started_ns + (uint64_t)(wait_s * 1e9);
		os_debug("checkpoint: %.1f ms of CPU (fork %.1f ms); the next in %.1f s",
			 (double)cost / 1e6, (double)k->fork_ns / 1e6, wait_s);
		return;
	}
	if (!k->next_ns)
		k->next_ns = now + (uint64_t)(k->min_s * 1e9);
	if (now < k->next_ns)
		return;
	fflush(NULL); /* nothing buffered is written twice */
	t0 = cpu_ns();
	pid = fork();
	if (pid == 0)
		write_checkpoint(c, o, mode, argc, argv, k->written == 0);
	k->fork_ns = cpu_ns() - t0; /* in objscope's own CPU already */
	k->cpu_ns += k->fork_ns;
	if (pid < 0) {
		k->failed++;
		k->next_ns = now + (uint64_t)(k->min_s * 1e9);
		os_debug("checkpoint: fork: %s", strerror(errno));
		return;
	}
	k->child = pid;
	k->started_ns = now;
}

bool os_ckpt_end(struct os_collector *c)
{
	struct os_ckpt *k = &c->ckpt;

	if (k->child) {
		kill(k->child, SIGKILL);
		reap(c, true);
	}
	return k->written > 0;
}

void os_ckpt_note(const struct os_collector *c, char *buf, size_t len)
{
	const struct os_ckpt *k = &c->ckpt;

	buf[0] = 0;
	if (!k->written && !k->failed)
		return;
	snprintf(buf, len,
		 "checkpoints: %u written while recording (each the profile as it stood, marked "
		 "unfinished, replaced by this one), %u not completed; %.3f s of objscope's CPU "
		 "in all (among its fixed costs)",
		 k->written, k->failed, (double)k->cpu_ns / 1e9);
}
