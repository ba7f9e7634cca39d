/* perf.h - perf_event plumbing shared by every sampling source.
 *
 * Opens one event per online CPU on a task with `inherit` (so every thread
 * and child process created later is followed without ptrace), maps each
 * event's ring buffer, and parses records: samples (whatever sample_type the
 * source asked for) and the side-band records needed to follow the process
 * tree (COMM, FORK, EXIT, MMAP2, LOST). sample_id_all is required.
 *
 * Return convention: 0 on success, -errno on failure (err gets one line).
 */
#ifndef OBJSCOPE_PERF_H
#define OBJSCOPE_PERF_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "attacher/core/decode.h"

enum {
	OS_PS_ADDR = 1 << 0,     /* addr from the PMU */
	OS_PS_REGS = 1 << 1,     /* user registers valid */
	OS_PS_WEIGHT = 1 << 2,
	OS_PS_DATA_SRC = 1 << 3,
	OS_PS_IN_RING = 1 << 4,  /* stack points into the ring: valid until os_perf_release */
	OS_PS_CPU = 1 << 5,      /* cpu valid */
	OS_PS_PHYS = 1 << 6,     /* phys_addr from the PMU */
};

/* A mapped file's identity as an MMAP2 record gives it. */
struct os_file_id {
	uint32_t maj, min;
	uint64_t ino;
};

struct os_perf_sample {
	uint32_t pid, tid, cpu;
	uint32_t has;            /* OS_PS_* */
	uint64_t time;           /* CLOCK_MONOTONIC ns */
	uint64_t ip;
	uint64_t addr;
	uint64_t period;
	uint64_t weight;
	uint64_t data_src;       /* union perf_mem_data_src */
	uint64_t phys_addr;
	uint32_t nchain;         /* user call chain, context markers removed */
	const uint64_t *chain;   /* chain[0] == ip normally */
	uint64_t regs[OS_REG_COUNT];
	const uint8_t *stack;    /* PERF_SAMPLE_STACK_USER copy, starting at regs[SP] */
	uint64_t stack_len;
};

struct os_perf_cb {
	void (*sample)(void *arg, const struct os_perf_sample *s);
	void (*comm)(void *arg, uint32_t pid, uint32_t tid, const char *comm, bool exec,
		     uint64_t time);
	void (*fork)(void *arg, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid,
		     uint64_t time);
	void (*exit)(void *arg, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid,
		     uint64_t time);
	/* id: the mapped file's device and inode (MMAP2 without build ids);
	 * ino 0 when the record carries none */
	void (*mmap)(void *arg, uint32_t pid, uint32_t tid, uint64_t addr, uint64_t len,
		     uint64_t pgoff, uint32_t prot, uint32_t flags, const char *file,
		     const struct os_file_id *id, uint64_t time);
	void (*lost)(void *arg, uint64_t n);
};

struct os_perf;

/* attr must set sample_id_all; inherit/disabled/enable_on_exec are the
 * caller's choice. buf_pages: data pages per CPU (power of two). */
int os_perf_open(struct os_perf **out, pid_t pid, struct perf_event_attr *attr,
		 unsigned buf_pages, char *err, size_t errlen);
/* Attach mode: the same events on every thread of the running process pid
 * (one per thread and CPU, with attr->inherit so that threads they create
 * are followed; each CPU's events share one buffer through
 * PERF_EVENT_IOC_SET_OUTPUT). Threads created while the list is read are
 * picked up by listing again. -ESRCH when the process is gone. */
int os_perf_open_threads(struct os_perf **out, pid_t pid, struct perf_event_attr *attr,
			 unsigned buf_pages, char *err, size_t errlen);
/* A ring in memory with no event behind it (same signature as
 * os_perf_open, pid unused): the records os_perf_memory_write puts there
 * are read by os_perf_read as the kernel's are. How the decode path is
 * driven by synthetic records in tests, where there is no PMU. */
int os_perf_open_memory(struct os_perf **out, pid_t pid, struct perf_event_attr *attr,
			unsigned buf_pages, char *err, size_t errlen);
/* Appends one whole record (header included, len a multiple of 8);
 * -ENOSPC when it does not fit or p is no memory ring. */
int os_perf_memory_write(struct os_perf *p, const void *rec, size_t len);
int os_perf_enable(struct os_perf *p);
/* Switches the sampling events alone off or on (the side-band events stay
 * on: see split_sideband in perf.c); PERF_EVENT_IOC_ENABLE/DISABLE reach
 * the inherited copies in every thread and child process, those made
 * later included (they are born in the state of the event they inherit).
 * How the sampling budget is kept (attacher/core/budget.h). 0 or -errno. */
int os_perf_steer(struct os_perf *p, bool on);
/* Events of their own per thread (os_perf_open_threads): switches thread
 * tid's sampling events off for good (os_perf_steer leaves them off), and
 * with them the copies its later threads inherited from them. Returns how
 * many were switched off: 0 for events opened on a process (inherit: the
 * threads have no events of their own to switch) or an unknown tid. */
int os_perf_mute_thread(struct os_perf *p, pid_t tid);
/* The cost of one sample of attr's sampling event (its side-band left
 * out) in ns of CPU time, measured on the calling thread: the same work
 * with and without the event sampling it (task-clock at 20 kHz), the
 * fastest of three stretches of each (~20 ms in all), in the thread's CPU
 * clock (the kernel's interrupt work is charged to the thread it
 * interrupts; other tenants' time is not). An estimate; -1 when the event
 * cannot be opened here or took no sample. */
double os_perf_sample_cost_ns(const struct perf_event_attr *attr, unsigned buf_pages);
/* The same for a sample that a BPF filter drops (bpf_filter.h: a JIT
 * compiler thread's): the interrupt and the program, no stack copy, no
 * record. -1 where BPF is not available or the event refuses the program. */
double os_perf_dropped_cost_ns(const struct perf_event_attr *attr, unsigned buf_pages);
/* How many sampling events os_perf_steer switches (its cost). */
int os_perf_steer_fds(const struct os_perf *p);
/* The i-th of them (0 <= i < os_perf_steer_fds). */
int os_perf_steer_fd(const struct os_perf *p, int i);
int os_perf_disable(struct os_perf *p);
/* Drains every CPU's buffer; returns the number of records parsed. */
uint64_t os_perf_read(struct os_perf *p, const struct os_perf_cb *cb, void *arg);
/* Hold mode (off after open): os_perf_read leaves what it drained in the
 * buffers, so a sample's stack copy can be used in place (OS_PS_IN_RING)
 * instead of copied, until os_perf_release hands the space back to the
 * kernel. The next os_perf_read goes on after what was drained. */
void os_perf_hold(struct os_perf *p, bool on);
void os_perf_release(struct os_perf *p);
/* Records that could not be parsed (should stay 0). */
uint64_t os_perf_bad_records(const struct os_perf *p);
int os_perf_nfds(const struct os_perf *p);
int os_perf_fd(const struct os_perf *p, int i);
void os_perf_close(struct os_perf *p);

/* Parses one PERF_RECORD_SAMPLE body for `sample_type`/`regs_mask`
 * (exposed for tests with synthetic records). Returns 0 or -EPROTO. */
int os_perf_parse_sample(const void *rec, size_t len, uint64_t sample_type, uint64_t regs_mask,
			 struct os_perf_sample *s);

#endif
