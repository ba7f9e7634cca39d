/* remote.h - reading the memory of another process: the one
 * process_vm_readv (and process_vm_writev) of the collector side, and the
 * cache of the code pages of its ELF mappings. */
#ifndef OBJSCOPE_REMOTE_H
#define OBJSCOPE_REMOTE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct os_symbolizer;

/* Reads len bytes at addr of pid into buf: the number of bytes read (fewer
 * than len when the range runs into an unmapped page), or -1 with errno. */
ssize_t os_remote_read(pid_t pid, uint64_t addr, void *buf, size_t len);

/* All of [addr, addr + len) read (os_remote_read) or written: 0, -errno, or
 * -EFAULT when only a part could be. */
int os_remote_read_all(pid_t pid, uint64_t addr, void *buf, size_t len);
int os_remote_write_all(pid_t pid, uint64_t addr, const void *buf, size_t len);

/* Code bytes of ELF mappings (immutable) kept in a direct-mapped cache of
 * whole pages: each decode miss of the software sampler used to cost one
 * process_vm_readv (about 10% of the collector's time on javac). Anonymous
 * code (JIT, the interpreter) changes and is always read afresh. A library
 * unmapped and another mapped at the same address could be served stale
 * bytes, as the sampler's per-IP cache would be. */
struct os_code_cache;

/* os_remote_read of pid (address space asid of sym) through the cache *cc,
 * allocated on first use (touched only where used); without it (out of
 * memory) the read goes to the target. */
ssize_t os_code_read(struct os_code_cache **cc, struct os_symbolizer *sym, pid_t pid,
		     uint32_t asid, uint64_t addr, void *buf, size_t len);
void os_code_cache_free(struct os_code_cache *cc);

#endif
