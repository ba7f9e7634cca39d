/* bpf_filter.h - samples of chosen threads dropped in the kernel.
 *
 * A JIT compiler thread's samples are JVM internals that objscope counts
 * and never decodes (docs/JAVA.md "Samples of JIT compiler threads"); on
 * javac they are half of all samples, and each still costs the kernel its
 * register and 8 KiB stack copy, the ring's space and the budget's share.
 * A BPF program (BPF_PROG_TYPE_PERF_EVENT) attached to the sampling events
 * (PERF_EVENT_IOC_SET_BPF; the kernel gives it to the copies that threads
 * inherit, also those born later) looks the sampled thread up in a hash
 * map: a thread there has its count incremented and the sample dropped
 * before anything is copied; any other sample goes on as before. The
 * collector adds a thread once it knows it is a JIT compiler thread, takes
 * it out when it exits (thread ids are reused), and adds the counts to the
 * thread's samples at the end: nothing is lost silently.
 *
 * Where BPF is not available (no CAP_BPF/CAP_PERFMON, a kernel without
 * CONFIG_BPF_SYSCALL, objscope in another PID namespace than the target:
 * the program sees the kernel's thread ids) the samples are taken and
 * counted in user space as before.
 * Return convention: 0 / -errno.
 */
#ifndef OBJSCOPE_BPF_FILTER_H
#define OBJSCOPE_BPF_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OS_BPF_FILTER_MAX 4096 /* threads filtered at once */

struct os_bpf_filter {
	int map_fd, prog_fd;   /* -1 when not open */
	int attached;          /* sampling events given the program */
	uint32_t added, full;  /* threads added; adds refused (map full) */
};

/* A closed filter (fds -1): every call below is then a no-op. */
void os_bpf_filter_init(struct os_bpf_filter *f);
/* Creates the map and loads the program; err says why not. */
int os_bpf_filter_open(struct os_bpf_filter *f, char *err, size_t errlen);
/* Gives the program to a sampling event (PERF_EVENT_IOC_SET_BPF). */
int os_bpf_filter_attach(struct os_bpf_filter *f, int perf_fd);
/* From now on the samples of thread tid are counted and dropped. */
int os_bpf_filter_add(struct os_bpf_filter *f, uint32_t tid);
/* Thread tid's samples dropped so far; with `remove`, it leaves the map
 * (its id may be reused by another thread). */
uint64_t os_bpf_filter_take(struct os_bpf_filter *f, uint32_t tid, bool remove);
/* Whether samples are being filtered (open and given to an event). */
bool os_bpf_filter_on(const struct os_bpf_filter *f);
void os_bpf_filter_close(struct os_bpf_filter *f);

#endif
