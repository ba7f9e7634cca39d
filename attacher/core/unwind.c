/* unwind.c - access-path unwinding with libdwfl from a sampled stack copy. */
#include "attacher/core/unwind.h"

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "common/hashmap.h"

/* x86_64 DWARF register numbers: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip */
static const int dwarf_from_perf[17] = {
	OS_REG_AX, OS_REG_DX, OS_REG_CX, OS_REG_BX, OS_REG_SI, OS_REG_DI, OS_REG_BP, OS_REG_SP,
	OS_REG_R8, OS_REG_R9, OS_REG_R10, OS_REG_R11, OS_REG_R12, OS_REG_R13, OS_REG_R14,
	OS_REG_R15, OS_REG_IP,
};

struct uw_space {
	Dwfl *dwfl;
	bool attached;
};

struct os_unwinder {
	struct os_symbolizer *sym;
	struct os_hmap spaces;   /* asid -> struct uw_space * */
	/* the sample being unwound */
	uint32_t asid;
	uint32_t tid;
	const uint64_t *regs;
	const uint8_t *stack;
	uint64_t sp, len;
	struct uw_space *cur;
	uint64_t *frames;
	uint32_t n, max;
	uint64_t last_sp;        /* the previous frame's sp (0: unknown) */
	/* where the unwinding stopped for want of a module (os_unwind_stopped) */
	bool stopped;
	uint64_t stop_sp, stop_fp;
};

static char *debuginfo_path;

static const Dwfl_Callbacks offline_cbs = {
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
	.section_address = dwfl_offline_section_address,
};

static pid_t cb_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct os_unwinder *u = arg;

	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = u;
	return (pid_t)u->tid;
}

static bool cb_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = arg;
	return true;
}

static bool cb_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct os_unwinder *u = arg;

	(void)dwfl;
	/* written so that nothing wraps: addr near 2^64 (a garbage CFA) must
	 * not pass the check */
	if (!u->stack || addr < u->sp || addr - u->sp > u->len || u->len - (addr - u->sp) < 8)
		return false; /* beyond the copied stack: the path ends here */
	memcpy(result, u->stack + (addr - u->sp), 8);
	return true;
}

static bool cb_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct os_unwinder *u = arg;
	Dwarf_Word r[17];

	for (int i = 0; i < 17; i++)
		r[i] = u->regs[dwarf_from_perf[i]];
	return dwfl_thread_state_registers(thread, 0, 17, r);
}

static const Dwfl_Thread_Callbacks thread_cbs = {
	.next_thread = cb_next_thread,
	.get_thread = cb_get_thread,
	.memory_read = cb_memory_read,
	.set_initial_registers = cb_set_initial_registers,
};

struct os_unwinder *os_unwinder_new(struct os_symbolizer *sym)
{
	struct os_unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->sym = sym;
	os_hmap_init(&u->spaces);
	return u;
}

void os_unwinder_free(struct os_unwinder *u)
{
	uint64_t k, v;
	size_t it;

	if (!u)
		return;
	for (it = 0; os_hmap_next(&u->spaces, &it, &k, &v);) {
		struct uw_space *s = (struct uw_space *)(uintptr_t)v;

		if (s->dwfl)
			dwfl_end(s->dwfl);
		free(s);
	}
	os_hmap_destroy(&u->spaces);
	free(u);
}

/* Makes sure the module holding pc is known to the address space's Dwfl. */
static bool report_module(struct os_unwinder *u, uint64_t pc)
{
	const char *path;
	uint64_t bias, start, end;
	Dwfl_Module *m;
	int fd;

	if (dwfl_addrmodule(u->cur->dwfl, pc))
		return true;
	if (os_sym_module_at(u->sym, u->asid, pc, &path, &bias, &start, &end) < 0)
		return false;
	/* the file the symbolizer checked (the mapped inode, no link, inside
	 * the process's root), not whatever the name leads to now */
	fd = os_sym_module_fd(u->sym, u->asid, pc);
	if (fd < 0)
		return false;
	dwfl_report_begin_add(u->cur->dwfl);
	m = dwfl_report_elf(u->cur->dwfl, path, path, fd, bias, true);
	dwfl_report_end(u->cur->dwfl, NULL, NULL);
	if (!m)
		close(fd); /* libdwfl owns it only when the module was made */
	return m != NULL;
}

static struct uw_space *space_of(struct os_unwinder *u, uint32_t asid)
{
	struct uw_space *s;
	uint64_t v;

	if (os_hmap_get(&u->spaces, asid, &v))
		return (struct uw_space *)(uintptr_t)v;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->dwfl = dwfl_begin(&offline_cbs);
	if (!s->dwfl || os_hmap_put(&u->spaces, asid, (uint64_t)(uintptr_t)s) < 0) {
		if (s->dwfl)
			dwfl_end(s->dwfl);
		free(s);
		return NULL;
	}
	return s;
}

static int cb_frame(Dwfl_Frame *state, void *arg)
{
	struct os_unwinder *u = arg;
	Dwarf_Addr pc;
	Dwarf_Word fsp = 0;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation) || !pc)
		return DWARF_CB_ABORT;
	/* a frame that does not move on means a loop in the CFI: stop. The
	 * same return address again is recursion as long as sp grows. */
	if (dwfl_frame_reg(state, 7, &fsp) != 0)
		fsp = 0;
	if (u->n > 1 && u->frames[u->n - 1] == pc && (!fsp || !u->last_sp || fsp <= u->last_sp))
		return DWARF_CB_ABORT;
	u->last_sp = fsp;
	u->frames[u->n++] = pc;
	if (u->n >= u->max)
		return DWARF_CB_ABORT;
	/* the caller is computed from this frame's CFI: its module must be known */
	if (!report_module(u, activation ? pc : pc - 1)) {
		Dwarf_Word sp, fp;

		/* JIT code (no module): a runtime adapter may go on from here */
		if (u->n > 1 && dwfl_frame_reg(state, 7, &sp) == 0 &&
		    dwfl_frame_reg(state, 6, &fp) == 0) {
			u->stopped = true;
			u->stop_sp = sp;
			u->stop_fp = fp;
		}
		return DWARF_CB_ABORT;
	}
	return DWARF_CB_OK;
}

uint32_t os_unwind(struct os_unwinder *u, uint32_t asid, uint32_t tid,
		   const uint64_t regs[OS_REG_COUNT], const uint8_t *stack, size_t len,
		   uint64_t *frames, uint32_t max)
{
	u->stopped = false;
	u->last_sp = 0;
	if (!max)
		return 0;
	u->cur = space_of(u, asid);
	if (!u->cur)
		return 0;
	u->asid = asid;
	u->tid = tid;
	u->regs = regs;
	u->stack = stack;
	u->len = stack ? len : 0;
	u->sp = regs[OS_REG_SP];
	u->frames = frames;
	u->n = 0;
	u->max = max;
	if (!report_module(u, regs[OS_REG_IP]))
		return 0;
	if (!u->cur->attached) {
		if (!dwfl_attach_state(u->cur->dwfl, NULL, (pid_t)tid, &thread_cbs, u))
			return 0;
		u->cur->attached = true;
	}
	/* an error at the end of the stack is normal: keep what was found */
	dwfl_getthread_frames(u->cur->dwfl, (pid_t)tid, cb_frame, u);
	return u->n;
}

bool os_unwind_stopped(const struct os_unwinder *u, uint64_t *sp, uint64_t *fp)
{
	if (!u || !u->stopped)
		return false;
	*sp = u->stop_sp;
	*fp = u->stop_fp;
	return true;
}
