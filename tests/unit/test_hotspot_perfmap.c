/* The JVM's perf map read at the end of a run (hotspot.c,
 * hs_before_symbolize) is the target's file in a directory its user can
 * write: a FIFO, a symlink or another user's file is refused at
 * once, with a note in the profile, and never removed; the map objscope
 * asked for is read and removed. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attacher/core/attrib.h"
#include "runtimes/hotspot/hotspot.h"
#include "common/profile.h"
#include "common/shm.h"
#include "symbolizer/symbolizer.h"
#include "tests/unit/unit_helpers.h"

struct pm_env {
	struct os_tasks tasks;
	struct os_attrib a;
	struct os_symbolizer *sym;
	char map[64];
};

/* A JVM (this process) known to the HotSpot adapter, its map at
 * /tmp/perf-<our pid>.map written only for objscope (OS_JVM_F_MAP_OURS). */
static void pm_begin(struct pm_env *e)
{
	struct os_jvm_info info;
	uint32_t nwords = (sizeof(info) + 7) / 8;
	struct os_event *ev = calloc(1, OS_EVENT_FIXED + nwords * 8);
	struct os_obj_event oe;

	memset(e, 0, sizeof(*e));
	snprintf(e->map, sizeof(e->map), "/tmp/perf-%d.map", (int)getpid());
	unlink(e->map);
	e->sym = os_sym_new();
	os_tasks_init(&e->tasks, NULL);
	cr_assert_eq(os_attrib_init(&e->a, &e->tasks), 0);
	e->a.rt = os_hotspot_new(&e->a, e->sym, NULL);
	cr_assert_not_null(e->a.rt);
	memset(&info, 0, sizeof(info));
	info.mode = OS_JVM_MODE_EXACT;
	info.flags = OS_JVM_F_MAP_OURS;
	ev->type = OS_EV_JVM;
	ev->nframes = (uint16_t)nwords;
	ev->len = OS_EVENT_FIXED + nwords * 8;
	ev->pid = ev->tid = (uint32_t)getpid();
	memcpy(ev->frames, &info, sizeof(info));
	if (os_attrib_prepare(&e->a, ev, &oe))
		os_attrib_event(&e->a, &oe);
	free(ev);
}

/* Runs the end step; returns the profile notes joined by '\n'. */
static char *pm_end_step(struct pm_env *e)
{
	struct os_profile *p = os_profile_new();
	char *all;

	e->a.rt->ops->before_symbolize(e->a.rt);
	e->a.rt->ops->notes(e->a.rt, p);
	/* the notes kept as counters, as the report renders them */
	all = ut_notes_text(p);
	os_profile_free(p);
	return all;
}

static void pm_finish(struct pm_env *e)
{
	e->a.rt->ops->destroy(e->a.rt);
	e->a.rt = NULL;
	os_attrib_destroy(&e->a);
	os_tasks_destroy(&e->tasks);
	os_sym_free(e->sym);
	unlink(e->map);
}

static void put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

Test(hotspot_perfmap, fifo_refused_without_hang, .timeout = 10)
{
	struct pm_env e;
	struct stat st;
	char *notes;

	pm_begin(&e);
	cr_assert_eq(mkfifo(e.map, 0666), 0);
	notes = pm_end_step(&e);
	cr_expect(strstr(notes, "is not a regular file") && strstr(notes, "JIT frames unnamed"),
		  "notes:\n%s", notes);
	cr_expect_eq(lstat(e.map, &st), 0, "the FIFO was removed");
	free(notes);
	pm_finish(&e);
}

Test(hotspot_perfmap, symlink_not_followed_nor_removed)
{
	char victim[] = "/tmp/objscope-pmvictim-XXXXXX", *notes;
	struct os_sym_result r;
	struct pm_env e;
	struct stat st;
	int fd;

	pm_begin(&e);
	fd = mkstemp(victim);
	cr_assert_geq(fd, 0);
	close(fd);
	put(victim, "0x7f0000001000 0x100 Secret::method\n");
	cr_assert_eq(symlink(victim, e.map), 0);
	notes = pm_end_step(&e);
	cr_expect(strstr(notes, "is a symbolic link") != NULL, "notes:\n%s", notes);
	r.func = NULL;
	os_sym_resolve(e.sym, os_tasks_aspace(&e.tasks, (uint32_t)getpid())->id, 0x7f0000001010,
		       &r);
	cr_expect(!r.func || strcmp(r.func, "Secret::method"), "the link's target was read");
	cr_expect_eq(lstat(e.map, &st), 0, "the link was removed");
	cr_expect_eq(stat(victim, &st), 0, "the link's target was removed");
	unlink(victim);
	free(notes);
	pm_finish(&e);
}

Test(hotspot_perfmap, other_users_map_refused)
{
	struct pm_env e;
	struct stat st;
	char *notes;

	if (geteuid() != 0)
		cr_skip_test("needs root to give the map to another user");
	pm_begin(&e);
	put(e.map, "0x7f0000001000 0x100 Planted::name\n");
	cr_assert_eq(chown(e.map, 65534, 65534), 0);
	notes = pm_end_step(&e);
	cr_expect(strstr(notes, "owned by another user") && strstr(notes, "uid 65534"),
		  "notes:\n%s", notes);
	cr_expect_eq(stat(e.map, &st), 0, "another user's map was removed");
	free(notes);
	pm_finish(&e);
}

Test(hotspot_perfmap, own_map_read_and_removed)
{
	struct os_sym_result r;
	struct pm_env e;
	struct stat st;
	char *notes;

	pm_begin(&e);
	put(e.map, "0x7f0000001000 0x100 Good::name\n");
	notes = pm_end_step(&e);
	cr_expect(strstr(notes, "perf map") == NULL || strstr(notes, "not read") == NULL,
		  "notes:\n%s", notes);
	cr_expect_neq(stat(e.map, &st), 0, "the map written for objscope was left behind");
	cr_assert_eq(os_sym_resolve(e.sym, os_tasks_aspace(&e.tasks, (uint32_t)getpid())->id,
				    0x7f0000001010, &r), 0);
	cr_expect_str_eq(r.func ? r.func : "(none)", "Good::name");
	free(notes);
	pm_finish(&e);
}
