/* shm_host.c - create, drain and recycle the shared rings. */
#include "attacher/core/shm_host.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/log.h"

/* The rings' file may be cut short under the mapping by whoever can open it
 * (attach mode: the target's user owns it), and the collector's next access
 * past the new end would take SIGBUS. The handler puts zero pages from the
 * faulting page to the end of the mapping instead: the access is made again
 * and reads zeros (empty rings, free slots); the drain says so once. Faults
 * anywhere else go to the handler that was there before. */
#define BUS_HOSTS 4

static struct os_shm_host *_Atomic bus_hosts[BUS_HOSTS];
static struct sigaction bus_old;
static _Atomic int bus_installed;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	uintptr_t a = (uintptr_t)si->si_addr;

	for (int i = 0; i < BUS_HOSTS; i++) {
		struct os_shm_host *h = atomic_load(&bus_hosts[i]);
		uintptr_t lo = h ? (uintptr_t)h->hdr : 0, page = a & ~(uintptr_t)4095;

		if (!lo || a < lo || a >= lo + h->size)
			continue;
		if (mmap((void *)page, lo + h->size - page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) {
			h->cut = 1;
			return;
		}
	}
	/* not ours: as before (the fault happens again on return) */
	if (bus_old.sa_flags & SA_SIGINFO && bus_old.sa_sigaction) {
		bus_old.sa_sigaction(sig, si, uc);
		return;
	}
	sigaction(SIGBUS, &bus_old, NULL);
}

static void bus_watch(struct os_shm_host *h, bool on)
{
	for (int i = 0; i < BUS_HOSTS; i++) {
		struct os_shm_host *want = on ? NULL : h;

		if (atomic_compare_exchange_strong(&bus_hosts[i], &want, on ? h : NULL))
			break;
	}
	if (on && !atomic_exchange(&bus_installed, 1)) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_sigbus;
		sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGBUS, &sa, &bus_old);
	}
}

int os_shm_host_create(struct os_shm_host *h, uint32_t nslots, uint64_t ring_bytes,
		       uint64_t min_size, uint32_t flags)
{
	int rc;

	memset(h, 0, sizeof(*h));
	h->fd = -1;
	if (!nslots || ring_bytes < 64 || (ring_bytes & (ring_bytes - 1)) ||
	    ring_bytes > (1ULL << 30))
		return -EINVAL;
	h->fd = memfd_create("objscope-rings", MFD_CLOEXEC);
	if (h->fd < 0)
		return -errno;
	h->nslots = nslots;
	h->ring_bytes = ring_bytes;
	h->size = os_shm_size(nslots, ring_bytes);
	if (ftruncate(h->fd, (off_t)h->size) < 0) {
		rc = -errno;
		goto out;
	}
	h->hdr = mmap(NULL, h->size, PROT_READ | PROT_WRITE, MAP_SHARED, h->fd, 0);
	if (h->hdr == MAP_FAILED) {
		h->hdr = NULL;
		rc = -errno;
		goto out;
	}
	h->hdr->version = OS_SHM_VERSION;
	h->hdr->nslots = nslots;
	h->hdr->ring_bytes = ring_bytes;
	h->hdr->total_bytes = h->size;
	h->hdr->min_size = min_size;
	h->hdr->flags = flags;
	h->hdr->collector_pid = (uint32_t)getpid();
	atomic_thread_fence(memory_order_release);
	h->hdr->magic = OS_SHM_MAGIC;
	snprintf(h->path, sizeof(h->path), "/proc/%d/fd/%d", (int)getpid(), h->fd);
	bus_watch(h, true);
	return 0;
out:
	os_shm_host_destroy(h);
	return rc;
}

void os_shm_host_destroy(struct os_shm_host *h)
{
	bus_watch(h, false);
	if (h->hdr)
		munmap(h->hdr, h->size);
	if (h->fd > 0)
		close(h->fd);
	h->hdr = NULL;
	h->fd = -1;
}

/* Slot i, from the geometry kept here (os_shm_slot would read the header's). */
static struct os_slot *slot_at(const struct os_shm_host *h, uint32_t i)
{
	return (struct os_slot *)((uint8_t *)h->hdr + OS_SHM_HDR +
				  (size_t)i * (OS_SLOT_HDR + h->ring_bytes));
}

/* Slots to visit: the target-writable slots_hwm, clamped to our nslots. */
static uint32_t slots_used(const struct os_shm_host *h)
{
	uint32_t n = atomic_load_explicit(&h->hdr->slots_hwm, memory_order_acquire);

	return n < h->nslots ? n : h->nslots;
}

static void add_stats(struct os_slot_stats_total *t, struct os_slot_stats *s)
{
	t->events += atomic_load(&s->events);
	t->dropped += atomic_load(&s->dropped);
	t->small_allocs += atomic_load(&s->small_allocs);
	t->small_bytes += atomic_load(&s->small_bytes);
	t->tracked_allocs += atomic_load(&s->tracked_allocs);
	t->tracked_bytes += atomic_load(&s->tracked_bytes);
	t->reentered += atomic_load(&s->reentered);
	t->truncated += atomic_load(&s->truncated);
	t->hook_ticks += atomic_load(&s->hook_ticks);
	t->hook_calls += atomic_load(&s->hook_calls);
	t->hook_cpu_ns += atomic_load(&s->hook_cpu_ns);
	t->hook_clipped += atomic_load(&s->hook_clipped);
	t->small_outside_tlab += atomic_load(&s->small_outside_tlab);
}

/* Gives the pages of consumed ring bytes back (FALLOC_FL_PUNCH_HOLE on the
 * memfd): they leave the target's resident set and fault in again, zeroed,
 * when the producer wraps around to them. Only whole pages, and only in
 * batches of RELEASE_MIN bytes, to keep the syscalls rare. */
#define RELEASE_MIN (64u << 10)

static void release_pages(struct os_slot *s, uint64_t off, uint64_t len, void *arg)
{
	struct os_shm_host *h = arg;
	uint64_t page = 4096, base = (uint64_t)((uint8_t *)os_slot_data(s) - (uint8_t *)h->hdr);
	uint64_t lo = (off + page - 1) & ~(page - 1), hi = (off + len) & ~(page - 1);

	if (hi <= lo || hi - lo < RELEASE_MIN || h->no_punch)
		return;
	if (fallocate(h->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)(base + lo),
		      (off_t)(hi - lo)) < 0)
		h->no_punch = true; /* not supported: keep the pages */
}

uint64_t os_shm_host_drain(struct os_shm_host *h, os_ring_fn fn, void *arg)
{
	uint64_t n = 0;
	uint32_t used = slots_used(h); /* slots above were never claimed */

	for (uint32_t i = 0; i < used; i++) {
		struct os_slot *s = slot_at(h, i);
		uint32_t st = atomic_load_explicit(&s->state, memory_order_acquire);

		if (st == OS_SLOT_FREE)
			continue;
		n += os_ring_drain_ex(s, h->ring_bytes, fn, arg, &h->bad_bytes,
				      h->fd >= 0 ? release_pages : NULL, h, &h->copy);
		if (st == OS_SLOT_EXITED) {
			/* the producer is gone: fold its counters and free the slot */
			add_stats(&h->recycled, &s->stats);
			memset(&s->stats, 0, sizeof(s->stats));
			atomic_store(&s->head, 0);
			atomic_store(&s->tail, 0);
			atomic_store_explicit(&s->state, OS_SLOT_FREE, memory_order_release);
		}
	}
	if (h->cut && !h->cut_said) {
		h->cut_said = true;
		os_warn("the shared event rings were cut short by someone else (the target?): "
			"the events not yet read there are lost");
	}
	return n;
}

void os_shm_host_thread_gone(struct os_shm_host *h, uint32_t pid, uint32_t tid)
{
	uint32_t used = slots_used(h);

	for (uint32_t i = 0; i < used; i++) {
		struct os_slot *s = slot_at(h, i);
		uint32_t st = OS_SLOT_ACTIVE;

		if (s->pid != pid || (tid && s->tid != tid))
			continue;
		atomic_compare_exchange_strong(&s->state, &st, OS_SLOT_EXITED);
	}
}

int os_shm_host_quiet_thread(struct os_shm_host *h, uint32_t pid, uint32_t tid)
{
	uint32_t used = slots_used(h);
	int found = 0;

	for (uint32_t i = 0; i < used; i++) {
		struct os_slot *s = slot_at(h, i);
		uint32_t gen = __atomic_load_n(&s->generation, __ATOMIC_ACQUIRE);

		if (atomic_load(&s->state) != OS_SLOT_ACTIVE || s->pid != pid || s->tid != tid)
			continue;
		/* a claim made meanwhile has another generation: not quiet */
		atomic_store_explicit(&s->quiet, gen, memory_order_release);
		found = 1;
	}
	return found;
}

void os_shm_host_totals(const struct os_shm_host *h, struct os_slot_stats_total *t)
{
	uint32_t used = slots_used(h);

	*t = h->recycled;
	for (uint32_t i = 0; i < used; i++)
		add_stats(t, &slot_at(h, i)->stats);
}
