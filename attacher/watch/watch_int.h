/* watch_int.h - shared state of attacher/watch/watch*.c (not for other modules).
 *
 * watch.c keeps the book (watchpoints, threads, the hit queue, expiry, the
 * width of the trapping instruction) and calls one route: watch_perf.c or
 * watch_ptrace.c, through struct watch_route_ops.
 */
#ifndef OBJSCOPE_WATCH_INT_H
#define OBJSCOPE_WATCH_INT_H

#include "attacher/watch/watch.h"
#include "common/clock.h"

struct os_decoder;

/* One armed watchpoint. */
struct watch_wp {
	bool used;
	pid_t tid;
	uint64_t addr;
	unsigned len;
	uint64_t cookie;
	bool pair;              /* watch_arm_pair: the hit is the second access */
	uint64_t deadline_ns;   /* 0: none */
	int slot;               /* ptrace: debug register 0..3 */
	int fd;                 /* perf: event fd */
	void *ring;             /* perf: mmap'd ring (1 + WATCH_PERF_DATA_PAGES pages) */
	struct watch_thread *t;
};

/* One thread we hold watchpoints on. */
struct watch_thread {
	bool used;
	pid_t tid;
	uint8_t slots;          /* bit i: our watchpoint in slot i */
	uint8_t kernel_busy;    /* slots the kernel refused us (learned from ENOSPC) */
	/* ptrace */
	bool seized;
	bool stopped;           /* in a ptrace stop, waiting for us */
	int resume_sig;         /* signal to hand back when resuming */
	bool group_stop;        /* stopped in a group-stop: resume with PTRACE_LISTEN */
	uint64_t dr7;
	/* perf: idle breakpoint events kept for reuse (PERF_EVENT_IOC_MODIFY_
	 * ATTRIBUTES is cheaper than a new event, for the target too). A pooled
	 * event still holds one of the thread's debug-register slots. */
	uint8_t npool;
	struct watch_pooled {
		int fd;
		void *ring;
		uint64_t since_ns;  /* pooled since */
	} pool[WATCH_SLOTS];
};

#define WATCH_WIDTH_CACHE 512

struct watch_width_entry {
	uint64_t ip;            /* 0: empty */
	uint8_t width;
	bool is_write;
};

struct watch_route_ops;

struct watch_set {
	pid_t pid;
	enum watch_route route;
	const struct watch_route_ops *ops;
	bool target_is_child;   /* our child: its leader's exit status is not ours to reap */
	struct watch_stats st;
	struct watch_wp *wp;
	int nwp;                /* capacity */
	int narmed;
	struct watch_thread *thr;
	int nthr;               /* capacity */
	struct watch_hit *q;    /* queued hits (FIFO) */
	int qhead, qlen, qcap;
	struct os_decoder *dec;
	struct watch_width_entry wcache[WATCH_WIDTH_CACHE];
	size_t page;
};

struct watch_route_ops {
	/* Arms wp (filled: tid, addr, len, cookie; t: the thread record). */
	int (*arm)(struct watch_set *w, struct watch_wp *wp);
	/* Disarms the given watchpoints, all on thread t (n >= 1); their pending
	 * hits are dropped. Does not free the records (watch.c does). */
	void (*disarm)(struct watch_set *w, struct watch_thread *t, struct watch_wp **wps, int n);
	/* Collects what happened (hits through watch_hit_push, thread exits
	 * through watch_thread_gone); timeout_ms 0: do not block. */
	int (*poll)(struct watch_set *w, int timeout_ms);
	/* Optional: moves wp to wp->addr (already set) in place; 0 / -errno. */
	int (*move)(struct watch_set *w, struct watch_wp *wp);
	/* Everything down (watch.c then frees the records). */
	void (*close)(struct watch_set *w);
};

extern const struct watch_route_ops watch_perf_ops;
extern const struct watch_route_ops watch_ptrace_ops;

struct watch_thread *watch_thread_find(struct watch_set *w, pid_t tid);
/* Frees a wp record (narmed--); frees its thread record when it was the last. */
void watch_wp_release(struct watch_set *w, struct watch_wp *wp);
/* Queues a hit for wp (value read now unless value_known), releases wp. */
void watch_hit_push(struct watch_set *w, struct watch_wp *wp, pid_t tid, uint64_t ip,
		    uint64_t time_ns, bool value_known, uint64_t value);
/* A pair's hit: the first access (its time, address, IP) and the CPU time
 * between the two; queued as watch_hit_push does with the second. */
void watch_hit_push_pair(struct watch_set *w, struct watch_wp *wp, pid_t tid, uint64_t ip,
			 uint64_t time_ns, uint64_t addr, const uint64_t first[3],
			 uint64_t run_ns);
/* Thread tid exited: its watchpoints are counted thread_gone and released. */
void watch_thread_gone(struct watch_set *w, struct watch_thread *t);
/* Reads len bytes at addr of the target into *value; 0 or -errno. */
int watch_read_value(struct watch_set *w, uint64_t addr, unsigned len, uint64_t *value);
/* Access width of the instruction that ends at ip (0 unknown). */
unsigned watch_insn_width(struct watch_set *w, uint64_t ip, bool *is_write);

#endif
