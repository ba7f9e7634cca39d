/* unit_helpers.c - see unit_helpers.h. */
#include "tests/unit/unit_helpers.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attacher/core/attrib.h"
#include "common/ring.h"
#include "runtimes/runtime.h"

void ut_mkdtemp(char *dir, size_t len, const char *name)
{
	snprintf(dir, len, "/tmp/objscope-test-%s-XXXXXX", name);
	cr_assert_not_null(mkdtemp(dir));
}

void ut_rmtree(const char *dir)
{
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_expect_eq(system(cmd), 0);
}

char *ut_path(const char *dir, const char *name)
{
	static char buf[8][160];
	static int n;
	char *p = buf[n++ % 8];

	snprintf(p, sizeof(buf[0]), "%s/%s", dir, name);
	return p;
}

uint32_t ut_frame(struct os_profile *p, uint32_t kind, const char *name, const char *module,
		  const char *file, uint32_t line, uint64_t addr)
{
	return ut_frame_col(p, kind, name, module, file, line, 0, addr);
}

uint32_t ut_frame_col(struct os_profile *p, uint32_t kind, const char *name, const char *module,
		      const char *file, uint32_t line, uint32_t column, uint64_t addr)
{
	struct os_frame f = {
		.kind = kind,
		.name = name ? os_profile_string(p, name) : OS_NONE,
		.module = module ? os_profile_string(p, module) : OS_NONE,
		.file = file ? os_profile_string(p, file) : OS_NONE,
		.line = line,
		.column = column,
		.addr = addr,
		.near_sym = OS_NONE,
		.build_id = OS_NONE,
	};

	return os_profile_frame(p, &f);
}

/* gcc -O2 output for a hash-chain walk (108 bytes):
 *   0: mov r9,rdi            3: test rdx,rdx          6: jle 63
 *   8: xor edi,edi           a: pxor xmm1,xmm1        e: xchg ax,ax
 *  10: mov eax,[rsi+rdi*4]  13: mov r8,rdi           16: and r8d,7
 *  1a: and eax,0x3ff        1f: lea r8,[rcx+r8*8]    23: mov rax,[r9+rax*8]
 *  27: test rax,rax         2a: je 50                2c: nop dword [rax+0]
 *  30: cmp [rax],rdi        33: jne 47               35: movsd xmm0,[rax+8]
 *  3a: mulsd xmm0,[r8]      3f: add dword [rax+0x18],1
 *  43: addsd xmm1,xmm0      47: mov rax,[rax+0x10]   4b: test rax,rax
 *  4e: jne 30               50: add rdi,1            54: movsd [r8],xmm1
 *  59: cmp rdx,rdi          5c: jne 10               5e: movapd xmm0,xmm1
 *  62: ret                  63: pxor xmm1,xmm1       67: movapd xmm0,xmm1
 *  6b: ret */
const uint8_t ut_walk_code[UT_WALK_CODE_LEN] = {
	0x49, 0x89, 0xf9, 0x48, 0x85, 0xd2, 0x7e, 0x5b, 0x31, 0xff, 0x66, 0x0f,
	0xef, 0xc9, 0x66, 0x90, 0x8b, 0x04, 0xbe, 0x49, 0x89, 0xf8, 0x41, 0x83,
	0xe0, 0x07, 0x25, 0xff, 0x03, 0x00, 0x00, 0x4e, 0x8d, 0x04, 0xc1, 0x49,
	0x8b, 0x04, 0xc1, 0x48, 0x85, 0xc0, 0x74, 0x24, 0x0f, 0x1f, 0x40, 0x00,
	0x48, 0x39, 0x38, 0x75, 0x12, 0xf2, 0x0f, 0x10, 0x40, 0x08, 0xf2, 0x41,
	0x0f, 0x59, 0x00, 0x83, 0x40, 0x18, 0x01, 0xf2, 0x0f, 0x58, 0xc8, 0x48,
	0x8b, 0x40, 0x10, 0x48, 0x85, 0xc0, 0x75, 0xe0, 0x48, 0x83, 0xc7, 0x01,
	0xf2, 0x41, 0x0f, 0x11, 0x08, 0x48, 0x39, 0xfa, 0x75, 0xb2, 0x66, 0x0f,
	0x28, 0xc1, 0xc3, 0x66, 0x0f, 0xef, 0xc9, 0x66, 0x0f, 0x28, 0xc1, 0xc3,
};

bool ut_mem_read(void *arg, uint64_t addr, void *out, size_t n)
{
	const struct ut_mem *m = arg;

	if (addr < m->base || addr - m->base > m->len || m->len - (addr - m->base) < n)
		return false;
	memcpy(out, m->buf + (addr - m->base), n);
	return true;
}

void ut_write_int(uint8_t *buf, size_t *at, uint32_t v)
{
	for (int i = 0;; i++) {
		if (v < 192 || i == 4) {
			buf[(*at)++] = (uint8_t)v;
			return;
		}
		v -= 192;
		buf[(*at)++] = (uint8_t)(192 + v % 64);
		v >>= 6;
	}
}

char *ut_notes_text(struct os_profile *p)
{
	size_t len = 1;
	char *all = calloc(1, 1);

	cr_assert_eq(os_profile_render_notes(p, os_runtimes_render_note), 0);
	for (uint32_t i = 0; all && i < p->meta.nnotes; i++) {
		const char *n = os_profile_str(p, p->meta.notes[i]);

		len += strlen(n) + 1;
		all = realloc(all, len);
		cr_assert_not_null(all);
		strcat(all, n);
		strcat(all, "\n");
	}
	cr_assert_not_null(all);
	return all;
}

void ut_attrib_event(struct os_attrib *at, uint32_t pid, uint16_t type, uint64_t addr,
		     uint64_t size, uint64_t aux, uint64_t aux2, uint64_t site)
{
	uint64_t buf[64];
	struct os_event *ev = (struct os_event *)buf;
	struct os_obj_event oe;

	memset(buf, 0, sizeof(buf));
	ev->type = type;
	ev->pid = pid;
	ev->tid = pid;
	ev->addr = addr;
	ev->size = size;
	ev->aux = aux;
	ev->aux2 = aux2;
	if (site) {
		ev->nframes = 2;
		ev->frames[0] = site;
		ev->frames[1] = 0x400100; /* main */
	}
	ev->len = os_event_len(ev->nframes);
	if (os_attrib_prepare(at, ev, &oe))
		os_attrib_event(at, &oe);
}
