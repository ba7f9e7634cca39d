/* bpf_filter.c - samples of chosen threads dropped in the kernel
 * (bpf_filter.h). The program is eleven instructions, written here as
 * bytes: no compiler or loader library is needed for it. */
#include "attacher/sampling/bpf_filter.h"

#include <errno.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static long sys_bpf(int cmd, union bpf_attr *a)
{
	return syscall(__NR_bpf, cmd, a, sizeof(*a));
}

#define INSN(c, d, s, o, i) \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })

void os_bpf_filter_init(struct os_bpf_filter *f)
{
	memset(f, 0, sizeof(*f));
	f->map_fd = f->prog_fd = -1;
}

int os_bpf_filter_open(struct os_bpf_filter *f, char *err, size_t errlen)
{
	union bpf_attr a;
	int rc;

	os_bpf_filter_init(f);
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_HASH;
	a.key_size = sizeof(uint32_t);   /* thread id */
	a.value_size = sizeof(uint64_t); /* its samples dropped */
	a.max_entries = OS_BPF_FILTER_MAX;
	f->map_fd = (int)sys_bpf(BPF_MAP_CREATE, &a);
	if (f->map_fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot create a BPF map: %s", strerror(errno));
		return rc;
	}
	{
		/* tid = bpf_get_current_pid_tgid() (its low half); v = lookup(map,
		 * &tid); if (v) { *v += 1; return 0: dropped } return 1: kept */
		struct bpf_insn p[] = {
			INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_current_pid_tgid),
			INSN(BPF_STX | BPF_MEM | BPF_W, BPF_REG_10, BPF_REG_0, -4, 0),
			INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0),
			INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -4),
			INSN(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, f->map_fd),
			INSN(0, 0, 0, 0, 0),
			INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
			INSN(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 4, 0),
			INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_1, 0, 0, 1),
			INSN(BPF_STX | BPF_ATOMIC | BPF_DW, BPF_REG_0, BPF_REG_1, 0, BPF_ADD),
			INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0),
			INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
			INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1),
			INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
		};

		memset(&a, 0, sizeof(a));
		a.prog_type = BPF_PROG_TYPE_PERF_EVENT;
		a.insns = (uint64_t)(uintptr_t)p;
		a.insn_cnt = sizeof(p) / sizeof(p[0]);
		a.license = (uint64_t)(uintptr_t)"GPL"; /* no GPL-only helper is called */
		f->prog_fd = (int)sys_bpf(BPF_PROG_LOAD, &a);
	}
	if (f->prog_fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot load the BPF sample filter: %s", strerror(errno));
		os_bpf_filter_close(f);
		return rc;
	}
	return 0;
}

int os_bpf_filter_attach(struct os_bpf_filter *f, int perf_fd)
{
	if (f->prog_fd < 0)
		return -EBADF;
	if (ioctl(perf_fd, PERF_EVENT_IOC_SET_BPF, f->prog_fd) != 0)
		return -errno;
	f->attached++;
	return 0;
}

bool os_bpf_filter_on(const struct os_bpf_filter *f)
{
	return f->prog_fd >= 0 && f->attached > 0;
}

int os_bpf_filter_add(struct os_bpf_filter *f, uint32_t tid)
{
	union bpf_attr a;
	uint64_t zero = 0;

	if (!os_bpf_filter_on(f))
		return -EBADF;
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)f->map_fd;
	a.key = (uint64_t)(uintptr_t)&tid;
	a.value = (uint64_t)(uintptr_t)&zero;
	a.flags = BPF_NOEXIST; /* already there: its count stays */
	if (sys_bpf(BPF_MAP_UPDATE_ELEM, &a) != 0) {
		if (errno == EEXIST)
			return 0;
		if (errno == E2BIG)
			f->full++;
		return -errno;
	}
	f->added++;
	return 0;
}

uint64_t os_bpf_filter_take(struct os_bpf_filter *f, uint32_t tid, bool remove)
{
	union bpf_attr a;
	uint64_t v = 0;

	if (f->map_fd < 0)
		return 0;
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)f->map_fd;
	a.key = (uint64_t)(uintptr_t)&tid;
	a.value = (uint64_t)(uintptr_t)&v;
	if (sys_bpf(BPF_MAP_LOOKUP_ELEM, &a) != 0)
		return 0;
	if (remove) {
		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)f->map_fd;
		a.key = (uint64_t)(uintptr_t)&tid;
		sys_bpf(BPF_MAP_DELETE_ELEM, &a);
	}
	return v;
}

void os_bpf_filter_close(struct os_bpf_filter *f)
{
	if (f->prog_fd >= 0)
		close(f->prog_fd);
	if (f->map_fd >= 0)
		close(f->map_fd);
	f->prog_fd = f->map_fd = -1;
	f->attached = 0;
}
