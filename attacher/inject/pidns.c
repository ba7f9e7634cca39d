/* pidns.c - id translation for targets in another PID namespace. */
#include "attacher/inject/pidns.h"
#include "common/grow.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The innermost id of the NSpid line of a status file; 0 when absent. */
static uint32_t ns_id(pid_t pid, uint32_t tid, uint32_t *outer)
{
	char path[96], line[256];
	uint32_t inner = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%u/status", (int)pid, tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *p = line + 6, *end;

		if (strncmp(line, "NSpid:", 6) != 0)
			continue;
		*outer = (uint32_t)strtoul(p, &end, 10);
		for (p = end; *p && *p != '\n'; p = end) {
			unsigned long v = strtoul(p, &end, 10);

			if (end == p)
				break;
			inner = (uint32_t)v;
		}
		break;
	}
	fclose(f);
	return inner;
}

static int add(struct os_pidns *m, uint32_t host, uint32_t ns)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->tids[i].host == host) {
			m->tids[i].ns = ns;
			return 0;
		}
	struct os_pidns_tid *t = os_grow(m->tids, &m->cap, m->n + 1, sizeof(*t), 64);

	if (!t)
		return -ENOMEM;
	m->tids = t;
	m->tids[m->n++] = (struct os_pidns_tid){ host, ns };
	return 0;
}

static void rescan(struct os_pidns *m)
{
	char path[64];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%u/task", m->host_pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		uint32_t tid = (uint32_t)atoi(de->d_name), outer = 0, inner;

		if (!tid)
			continue;
		inner = ns_id((pid_t)m->host_pid, tid, &outer);
		if (inner)
			add(m, tid, inner);
	}
	closedir(d);
}

int os_pidns_init(struct os_pidns *m, pid_t host_pid)
{
	uint32_t outer = 0;

	memset(m, 0, sizeof(*m));
	m->host_pid = (uint32_t)host_pid;
	m->ns_pid = ns_id(host_pid, (uint32_t)host_pid, &outer);
	if (!m->ns_pid)
		return -ENOENT;
	if (m->ns_pid == m->host_pid)
		return -EINVAL;
	rescan(m);
	return 0;
}

void os_pidns_destroy(struct os_pidns *m)
{
	free(m->tids);
	memset(m, 0, sizeof(*m));
}

uint32_t os_pidns_host_tid(struct os_pidns *m, uint32_t ns_tid)
{
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < m->n; i++)
			if (m->tids[i].ns == ns_tid)
				return m->tids[i].host;
		if (pass == 0)
			rescan(m);
	}
	return 0;
}

uint32_t os_pidns_ns_tid(const struct os_pidns *m, uint32_t host_tid)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->tids[i].host == host_tid)
			return m->tids[i].ns;
	return 0;
}
