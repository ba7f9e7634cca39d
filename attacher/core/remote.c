/* remote.c - reading the memory of another process, and the code-page
 * cache (remote.h). */
#include "attacher/core/remote.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "common/hashmap.h"
#include "symbolizer/symbolizer.h"

#define CODE_PAGE 4096u
#define CODE_PAGES 4096u /* 16 MiB, touched only where used (2 MiB thrashed on javac) */

struct code_page {
	uint64_t key;   /* (asid << 36 | page number) + 1; 0 = empty */
	uint8_t data[CODE_PAGE];
};

struct os_code_cache {
	struct code_page pages[CODE_PAGES];
};

static ssize_t remote_rw(pid_t pid, uint64_t addr, void *buf, size_t len, bool write)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	return write ? process_vm_writev(pid, &local, 1, &remote, 1, 0)
		     : process_vm_readv(pid, &local, 1, &remote, 1, 0);
}

ssize_t os_remote_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	return remote_rw(pid, addr, buf, len, false);
}

static int rw_all(pid_t pid, uint64_t addr, void *buf, size_t len, bool write)
{
	ssize_t n = remote_rw(pid, addr, buf, len, write);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

int os_remote_read_all(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	return rw_all(pid, addr, buf, len, false);
}

int os_remote_write_all(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	return rw_all(pid, addr, (void *)buf, len, true);
}

/* The cached page holding addr, filled if it lies in an ELF mapping; NULL
 * when it does not (or cannot be read). */
static const uint8_t *code_page_of(struct os_code_cache *cc, struct os_symbolizer *sym,
				   pid_t pid, uint32_t asid, uint64_t addr)
{
	uint64_t page = addr & ~(uint64_t)(CODE_PAGE - 1);
	uint64_t key = (((uint64_t)asid << 36) | (page >> 12)) + 1, bias, start, end;
	struct code_page *cp = &cc->pages[os_hash64(key) & (CODE_PAGES - 1)];
	const char *path;

	if (cp->key == key)
		return cp->data;
	if (os_sym_module_at(sym, asid, addr, &path, &bias, &start, &end) != 0 ||
	    page < start || page + CODE_PAGE > end)
		return NULL;
	cp->key = 0;
	if (os_remote_read(pid, page, cp->data, CODE_PAGE) != (ssize_t)CODE_PAGE)
		return NULL;
	cp->key = key;
	return cp->data;
}

ssize_t os_code_read(struct os_code_cache **cc, struct os_symbolizer *sym, pid_t pid,
		     uint32_t asid, uint64_t addr, void *buf, size_t len)
{
	size_t done = 0;

	if (!*cc)
		*cc = calloc(1, sizeof(**cc));
	while (*cc && done < len) {
		uint64_t a = addr + done;
		const uint8_t *pg = code_page_of(*cc, sym, pid, asid, a);
		size_t off = (size_t)(a & (CODE_PAGE - 1)), n = CODE_PAGE - off;

		if (!pg)
			break;
		if (n > len - done)
			n = len - done;
		memcpy((uint8_t *)buf + done, pg + off, n);
		done += n;
	}
	if (done == len)
		return (ssize_t)len;
	return os_remote_read(pid, addr, buf, len);
}

void os_code_cache_free(struct os_code_cache *cc)
{
	free(cc);
}
