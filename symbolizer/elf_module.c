#include "common/grow.h"
#include "symbolizer/elf_module.h"

#include "common/hashmap.h"
#include "common/safefs.h"
#include "common/search.h"
#include "symbolizer/symbolizer.h"

#include <elf.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <zlib.h>

#define PAGE_MASK_4K (~(uint64_t)0xfff)
#define DEBUG_ROOT "/usr/lib/debug"
/* The largest separate debug file whose CRC is checked (the largest
 * distributions ship are a few GiB). */
#define ELFMOD_DEBUG_MAX (16ULL << 30)
/* What is kept of one module's symbol table (the file is the target's: a
 * sparse file can claim any size). The largest real ones (a browser with
 * its .symtab) hold some 10^6 functions and 10^8 bytes of names; a module
 * over either cap is left without symbols (-EFBIG), not half-named.
 * At most 128 MiB of entries and 256 MiB of names per module. */
#define ELFMOD_MAX_SYMS (4u << 20)
#define ELFMOD_MAX_STRS (256u << 20)
/* How far past an exported function an address may lie for that function
 * to be offered as its nearest exported symbol (os_elfmod_nearest): static
 * functions sit between the exported ones, a few KiB apart in liblzma and
 * libsqlite3; further away the name tells little about where the code is. */
#define NEAR_MAX 0x10000

struct seg {
	uint64_t offset;
	uint64_t vaddr;
	uint64_t filesz;
	uint64_t memsz;
};

struct sym {
	uint64_t start;
	uint64_t size;
	uint32_t name;   /* offset into strs */
	uint32_t rank;   /* lower wins among symbols at the same address */
	uint32_t shndx;  /* section of the symbol */
};

struct sec {             /* an executable section (for os_elfmod_nearest) */
	uint64_t addr;
	uint64_t size;
	uint32_t index;
};

struct line_ent {
	const char *file;  /* owned by the Dwfl */
	uint32_t line;
	uint32_t column;   /* 0 when the DWARF gives none */
};

struct os_elfmod {
	char *path;
	int load_ret;          /* result of the first os_elfmod_load() */
	bool loaded;
	char *open_path;       /* what was actually opened, for libdwfl */
	bool have_id;          /* the file must be this inode (os_elfmod_expect_id) */
	uint32_t id_major, id_minor;
	uint64_t id_ino;

	struct seg *segs;
	size_t nsegs;

	struct sym *syms;
	size_t nsyms;
	bool exported_only;    /* symbols from .dynsym: static functions are missing */
	struct sec *secs;
	size_t nsecs;
	char build_id[2 * 64 + 1]; /* hex, "" when the file has none */
	char *strs;
	size_t strs_len, strs_cap;
	char **demangled;      /* lazily filled; NULL = not yet */

	int dwfl_state;        /* 0 not tried, 1 ready, -1 unavailable */
	bool separate_lines;   /* lines also from a separate debug file */
	Dwfl *dwfl;
	Dwfl_Module *dmod;
	uint64_t dbias;        /* dwfl address = vaddr + dbias */
	struct os_hmap line_cache;   /* vaddr -> index + 1 into lines, 0 = none */
	struct line_ent *lines;
	size_t nlines, lines_cap;
};

struct os_elfmod *os_elfmod_new(const char *path)
{
	struct os_elfmod *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->path = strdup(path);
	if (!m->path) {
		free(m);
		return NULL;
	}
	os_hmap_init(&m->line_cache);
	return m;
}

void os_elfmod_free(struct os_elfmod *m)
{
	size_t i;

	if (!m)
		return;
	if (m->demangled) {
		for (i = 0; i < m->nsyms; i++)
			if (m->demangled[i] != m->strs + m->syms[i].name)
				free(m->demangled[i]);
		free(m->demangled);
	}
	if (m->dwfl)
		dwfl_end(m->dwfl);
	os_hmap_destroy(&m->line_cache);
	free(m->lines);
	free(m->syms);
	free(m->secs);
	free(m->strs);
	free(m->segs);
	free(m->open_path);
	free(m->path);
	free(m);
}

bool os_elfmod_loaded(const struct os_elfmod *m)
{
	return m->loaded;
}

static int add_str(struct os_elfmod *m, const char *s, uint32_t *off)
{
	size_t len = strlen(s) + 1;
	char *n;

	if (m->strs_len + len > ELFMOD_MAX_STRS)
		return -EFBIG;
	n = os_grow_max(m->strs, &m->strs_cap, m->strs_len + len, 1, 4096, ELFMOD_MAX_STRS);
	if (!n)
		return -ENOMEM;
	m->strs = n;
	memcpy(m->strs + m->strs_len, s, len);
	*off = (uint32_t)m->strs_len;
	m->strs_len += len;
	return 0;
}

static int read_segments(struct os_elfmod *m, Elf *elf)
{
	size_t n, i;

	if (elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	m->segs = calloc(n ? n : 1, sizeof(*m->segs));
	if (!m->segs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		m->segs[m->nsegs++] = (struct seg){ ph.p_offset, ph.p_vaddr, ph.p_filesz,
						    ph.p_memsz };
	}
	return 0;
}

/* Finds the symbol table of `type` (SHT_SYMTAB / SHT_DYNSYM) with entries. */
static Elf_Scn *find_symtab(Elf *elf, Elf64_Word type, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		if (gelf_getshdr(scn, sh) && sh->sh_type == type && sh->sh_entsize &&
		    sh->sh_size >= 2 * sh->sh_entsize)
			return scn;
	}
	return NULL;
}

/* Among aliases at one address: global before weak before local, then
 * public names before "__internal" ones, then symbols with a size. */
static uint32_t sym_rank(const GElf_Sym *s, const char *name)
{
	uint32_t r;

	switch (GELF_ST_BIND(s->st_info)) {
	case STB_GLOBAL:
		r = 0;
		break;
	case STB_WEAK:
		r = 1;
		break;
	default:
		r = 2;
		break;
	}
	r = r * 2 + (name[0] == '_' && name[1] != 'Z');
	return r * 2 + (s->st_size ? 0 : 1);
}

/* The one walk over an ELF symbol table (.symtab or .dynsym): fn(arg, name,
 * sym) for each defined function (STT_FUNC, STT_GNU_IFUNC) with an
 * address, its name without a version ("__libc_start_main@@GLIBC_2.34" is
 * "__libc_start_main"), in table order. Stops at the first nonzero return
 * of fn and returns it; 0 after the last symbol. */
static int each_function(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
			 int (*fn)(void *arg, const char *name, const GElf_Sym *s), void *arg)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n, i;
	int ret;

	if (!data)
		return 0;
	n = sh->sh_size / sh->sh_entsize;
	for (i = 1; i < n; i++) {
		GElf_Sym s;
		const char *name, *at;
		char plain[512];
		int type;

		if (!gelf_getsym(data, (int)i, &s))
			break;
		type = GELF_ST_TYPE(s.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF ||
		    s.st_value == 0)
			continue;
		name = elf_strptr(elf, sh->sh_link, s.st_name);
		if (!name || !*name)
			continue;
		at = strchr(name, '@');
		if (at && at != name && (size_t)(at - name) < sizeof(plain)) {
			memcpy(plain, name, (size_t)(at - name));
			plain[at - name] = 0;
			name = plain;
		}
		ret = fn(arg, name, &s);
		if (ret)
			return ret;
	}
	return 0;
}

struct add_ctx {
	struct os_elfmod *m;
	size_t cap;
};

static int add_symbol(void *arg, const char *name, const GElf_Sym *s)
{
	struct add_ctx *c = arg;
	struct os_elfmod *m = c->m;
	struct sym *ns;
	int ret;

	if (m->nsyms + 1 > ELFMOD_MAX_SYMS)
		return -EFBIG;
	ns = os_grow_max(m->syms, &c->cap, m->nsyms + 1, sizeof(*ns), 256, ELFMOD_MAX_SYMS);
	if (!ns)
		return -ENOMEM;
	m->syms = ns;
	m->syms[m->nsyms] = (struct sym){ .start = s->st_value, .size = s->st_size,
					  .rank = sym_rank(s, name), .shndx = s->st_shndx };
	ret = add_str(m, name, &m->syms[m->nsyms].name);
	if (ret)
		return ret;
	m->nsyms++;
	return 0;
}

static int read_symbols(struct os_elfmod *m, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh)
{
	struct add_ctx c = { m, 0 };

	return each_function(elf, scn, sh, add_symbol, &c);
}

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

static inline bool sym_less(const struct sym *x, const struct sym *y)
{
	if (x->start != y->start)
		return x->start < y->start;
	if (x->rank != y->rank)
		return x->rank < y->rank;
	return x->name < y->name;
}

/* Stable bottom-up merge sort by cmp_sym's order: the order qsort (glibc's
 * merge sort) gives, at a third of its time (the compare is inlined; libjvm
 * has 58k function symbols, sorted at start-up). */
static void sort_syms(struct sym *a, size_t n)
{
	struct sym *tmp = n > 1 ? malloc(n * sizeof(*tmp)) : NULL, *src = a, *dst = tmp, *t;
	size_t w, lo, i, j, k, mid, hi;

	if (!tmp) {
		if (n > 1)
			qsort(a, n, sizeof(*a), cmp_sym);
		return;
	}
	/* runs of 8 by insertion sort */
	for (lo = 0; lo < n; lo += 8) {
		hi = lo + 8 < n ? lo + 8 : n;
		for (i = lo + 1; i < hi; i++) {
			struct sym v = a[i];

			for (j = i; j > lo && sym_less(&v, &a[j - 1]); j--)
				a[j] = a[j - 1];
			a[j] = v;
		}
	}
	for (w = 8; w < n; w *= 2) {
		for (lo = 0; lo < n; lo += 2 * w) {
			mid = lo + w < n ? lo + w : n;
			hi = lo + 2 * w < n ? lo + 2 * w : n;
			for (i = lo, j = mid, k = lo; i < mid && j < hi;)
				dst[k++] = sym_less(&src[j], &src[i]) ? src[j++] : src[i++];
			while (i < mid)
				dst[k++] = src[i++];
			while (j < hi)
				dst[k++] = src[j++];
		}
		t = src;
		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
	free(tmp);
}

/* End of the PT_LOAD segment holding vaddr (0 if none). */
static uint64_t seg_end(const struct os_elfmod *m, uint64_t vaddr)
{
	size_t i;

	for (i = 0; i < m->nsegs; i++)
		if (vaddr >= m->segs[i].vaddr && vaddr < m->segs[i].vaddr + m->segs[i].memsz)
			return m->segs[i].vaddr + m->segs[i].memsz;
	return 0;
}

/* Sorts, keeps one symbol per address, gives zero-sized ones the room up to
 * the next symbol (or the end of their segment). Not from .dynsym: there the
 * next symbol is the next exported one, and the room up to it holds static
 * functions; a zero-sized exported symbol names its first byte only. */
static void finish_symbols(struct os_elfmod *m)
{
	size_t i, j = 0;

	if (!m->nsyms)
		return;
	sort_syms(m->syms, m->nsyms);
	for (i = 0; i < m->nsyms; i++) {
		if (j && m->syms[j - 1].start == m->syms[i].start) {
			if (!m->syms[j - 1].size)
				m->syms[j - 1].size = m->syms[i].size;
			continue;
		}
		m->syms[j++] = m->syms[i];
	}
	m->nsyms = j;
	for (i = 0; i < m->nsyms; i++) {
		uint64_t end;

		if (m->syms[i].size)
			continue;
		if (m->exported_only) {
			m->syms[i].size = 1;
			continue;
		}
		end = i + 1 < m->nsyms ? m->syms[i + 1].start : seg_end(m, m->syms[i].start);
		m->syms[i].size = end > m->syms[i].start ? end - m->syms[i].start : 1;
	}
}

/* The hex build-id of the file, into m->build_id ("" without one). */
static void read_build_id(struct os_elfmod *m, Elf *elf)
{
	const unsigned char *id;
	ssize_t len, i;

	len = dwelf_elf_gnu_build_id(elf, (const void **)&id);
	if (len < 2 || len > 64)
		return;
	for (i = 0; i < len; i++)
		snprintf(m->build_id + 2 * i, 3, "%02x", id[i]);
}

/* Executable sections, for os_elfmod_nearest. */
static int read_sections(struct os_elfmod *m, Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t cap = 0;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    (sh.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) != (SHF_ALLOC | SHF_EXECINSTR))
			continue;
		if (m->nsecs >= 1u << 16) /* a real module has a handful */
			break;
		if (m->nsecs == cap) {
			struct sec *n = os_grow(m->secs, &cap, m->nsecs + 1, sizeof(*n), 8);

			if (!n)
				return -ENOMEM;
			m->secs = n;
		}
		m->secs[m->nsecs++] = (struct sec){ sh.sh_addr, sh.sh_size,
						    (uint32_t)elf_ndxscn(scn) };
	}
	return 0;
}

/* fd as an ELF file (the fd is closed: libelf keeps its mapping). */
static int elf_of_fd(int fd, Elf **out)
{
	*out = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	close(fd);
	if (!*out)
		return -ENOEXEC;
	if (elf_kind(*out) != ELF_K_ELF) {
		elf_end(*out);
		*out = NULL;
		return -ENOEXEC;
	}
	return 0;
}

/* A host file under DEBUG_ROOT, named from hex we formatted or from a
 * checked debuglink: never blocks (O_NONBLOCK), data files only
 * (os_fd_is_data). Links are followed (Fedora's .build-id entries are links
 * into the tree; only root writes there). */
static int open_debug_root(const char *path, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), fl, rc;

	if (fd < 0)
		return -errno;
	rc = os_fd_is_data(fd, st);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

/* The GNU debuglink CRC (the zlib CRC-32) of fd's content: its size at
 * open (st_size), no more (a file that grows while read is not read for
 * ever), at most ELFMOD_DEBUG_MAX; -EINTR when a stop came meanwhile. */
static int file_crc(int fd, const struct stat *st, uint32_t *crc)
{
	unsigned char buf[65536];
	uLong c = crc32(0L, Z_NULL, 0);
	off_t off = 0, size = st->st_size;
	ssize_t n = 0;
	int gen = os_fs_stop_gen();

	if (size < 0 || (uint64_t)size > ELFMOD_DEBUG_MAX)
		return -EFBIG;
	while (off < size) {
		size_t want = (uint64_t)(size - off) < sizeof(buf) ? (size_t)(size - off) : sizeof(buf);

		if (os_fs_stop_gen() != gen)
			return -EINTR;
		n = pread(fd, buf, want, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		c = crc32(c, buf, (uInt)n);
		off += n;
	}
	if (n < 0)
		return -errno;
	if (off != size)
		return -EIO; /* shrunk while read */
	*crc = (uint32_t)c;
	return 0;
}

/* The .gnu_debuglink file of `elf`, where gdb looks for it: DEBUG_ROOT
 * followed by the module's directory, and, for a module read by its own
 * path, that directory and its .debug/. The name comes from the target's
 * file: a bare file name only (no '/', not "." or ".."), under a directory
 * without ".." components, and the file's CRC must be the one the link
 * records, else it is not the debug file of this build. */
static int open_debuglink(const struct os_elfmod *m, Elf *elf, Elf **out)
{
	const char *link, *slash;
	char path[4096 + 512];
	GElf_Word crc;
	struct stat st;
	uint32_t have;
	size_t dlen;
	int i, fd, dirfd = -1;

	link = dwelf_elf_gnu_debuglink(elf, &crc);
	if (!link || !*link || strchr(link, '/') || !strcmp(link, ".") || !strcmp(link, ".."))
		return -ENOENT;
	slash = strrchr(m->path, '/');
	if (m->path[0] != '/' || !slash || strstr(m->path, "/../") || strstr(m->path, "/./"))
		return -ENOENT;
	dlen = (size_t)(slash - m->path);
	for (i = 0; i < 3; i++) {
		bool own = m->open_path && !strcmp(m->open_path, m->path);

		if (i == 0) {
			snprintf(path, sizeof(path), DEBUG_ROOT "%.*s/%s", (int)dlen, m->path,
				 link);
			fd = open_debug_root(path, &st);
		} else if (!own) {
			break;
		} else {
			/* beside the module: where its owner may plant files. Below
			 * the module's directory, no link followed (a ".debug" link
			 * to /proc would name /proc/kmsg) */
			if (dirfd < 0) {
				snprintf(path, sizeof(path), "%.*s", (int)dlen, m->path);
				dirfd = open(dlen ? path : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
				if (dirfd < 0)
					break;
			}
			if (i == 1)
				snprintf(path, sizeof(path), ".debug/%s", link);
			else if (!strcmp(link, slash + 1))
				continue; /* the module itself */
			else
				snprintf(path, sizeof(path), "%s", link);
			fd = os_open_data_beneath(dirfd, path, &st);
		}
		if (fd < 0)
			continue;
		if (file_crc(fd, &st, &have) || have != crc) {
			close(fd);
			continue;
		}
		if (dirfd >= 0)
			close(dirfd);
		return elf_of_fd(fd, out);
	}
	if (dirfd >= 0)
		close(dirfd);
	return -ENOENT;
}

/* Opens the separate debug file of the module: by build-id, else by
 * .gnu_debuglink, if installed. */
static int open_debug_file(const struct os_elfmod *m, Elf *elf, Elf **out)
{
	char path[sizeof(DEBUG_ROOT) + 16 + 2 * 64 + 8];
	int fd;

	*out = NULL;
	if (m->build_id[0]) {
		snprintf(path, sizeof(path), DEBUG_ROOT "/.build-id/%.2s/%s.debug", m->build_id,
			 m->build_id + 2);
		fd = open_debug_root(path, NULL);
		if (fd >= 0 && !elf_of_fd(fd, out))
			return 0;
	}
	return open_debuglink(m, elf, out);
}

static int load_symbols(struct os_elfmod *m, Elf *elf)
{
	Elf *dbg = NULL;
	GElf_Shdr sh;
	Elf_Scn *scn;
	int ret = 0;

	read_build_id(m, elf);
	ret = read_sections(m, elf);
	if (ret)
		return ret;
	scn = find_symtab(elf, SHT_SYMTAB, &sh);
	if (scn) {
		ret = read_symbols(m, elf, scn, &sh);
		goto out;
	}
	if (!open_debug_file(m, elf, &dbg)) {
		scn = find_symtab(dbg, SHT_SYMTAB, &sh);
		if (scn) {
			ret = read_symbols(m, dbg, scn, &sh);
			goto out;
		}
	}
	scn = find_symtab(elf, SHT_DYNSYM, &sh);
	if (scn) {
		m->exported_only = true;
		ret = read_symbols(m, elf, scn, &sh);
	}
out:
	if (dbg)
		elf_end(dbg);
	if (!ret)
		finish_symbols(m);
	return ret;
}

const char *os_elfmod_open_path(const struct os_elfmod *m)
{
	return m && m->loaded && m->load_ret == 0 ? m->open_path : NULL;
}

void os_elfmod_expect_id(struct os_elfmod *m, uint32_t dev_major, uint32_t dev_minor,
			 uint64_t ino)
{
	if (!m || m->loaded || !ino)
		return;
	m->have_id = true;
	m->id_major = dev_major;
	m->id_minor = dev_minor;
	m->id_ino = ino;
}

#define OVERLAYFS_MAGIC 0x794c7630

/* Opens p for reading as the file the target mapped: the target names it
 * (its /proc/PID/maps), so it is hostile input. Never blocks (O_NONBLOCK: a
 * FIFO), data files only (os_fd_is_data: no procfs, no FUSE), a last
 * component that is a symlink refused;
 * "/proc/PID/root/X" resolved inside that root (RESOLVE_IN_ROOT: a link in
 * a container cannot name a host file); "/proc/PID/map_files/A-B" is the
 * mapped file itself. When the maps entry's device and inode are known the
 * file must be that inode (-ESTALE otherwise: a same-named file of the host
 * or another container, or a root-only file a container path names). On
 * overlayfs the maps entry shows the underlying file's device: the inode
 * alone is compared there. */
static int open_checked(const struct os_elfmod *m, const char *p)
{
	unsigned int pid;
	struct statfs sfs;
	struct stat st;
	int fd, off = 0, fl;

	if (sscanf(p, "/proc/%u/root%n", &pid, &off) == 1 && off > 0 && p[off] == '/') {
		int rootfd = os_proc_root((pid_t)pid);

		if (rootfd < 0)
			return rootfd;
		fd = os_open_in_root(rootfd, p + off, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);
		close(rootfd);
	} else if (!strncmp(p, "/proc/", 6) && strstr(p, "/map_files/")) {
		fd = open(p, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		fd = fd < 0 ? -errno : fd;
	} else {
		fd = os_open_untrusted(AT_FDCWD, p, OS_ANY_OWNER, NULL);
	}
	if (fd < 0)
		return fd;
	fl = os_fd_is_data(fd, &st);
	if (fl < 0) {
		close(fd);
		return fl;
	}
	if (m->have_id && !strstr(p, "/map_files/") &&
	    (st.st_ino != m->id_ino ||
	     (st.st_dev != makedev(m->id_major, m->id_minor) &&
	      !(fstatfs(fd, &sfs) == 0 && sfs.f_type == OVERLAYFS_MAGIC)))) {
		close(fd);
		return -ESTALE;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

int os_elfmod_open_fd(const struct os_elfmod *m)
{
	if (!m || !m->loaded || m->load_ret || !m->open_path)
		return -ENOENT;
	return open_checked(m, m->open_path);
}

int os_elfmod_load(struct os_elfmod *m, const char *open_path)
{
	const char *p = open_path ? open_path : m->path;
	Elf *elf = NULL;
	GElf_Ehdr eh;
	int fd = -1, ret;

	if (m->loaded)
		return m->load_ret;
	m->loaded = true;
	elf_version(EV_CURRENT);
	fd = open_checked(m, p);
	if (fd < 0) {
		ret = fd;
		goto out;
	}
	m->open_path = strdup(p);
	if (!m->open_path) {
		ret = -ENOMEM;
		goto out;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		ret = -ENOEXEC;
		goto out;
	}
	ret = read_segments(m, elf);
	if (ret)
		goto out;
	ret = load_symbols(m, elf);
out:
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	m->load_ret = ret;
	return ret;
}

/* The PT_LOAD segment of a mapping at file offset pgoff; NULL if none. */
static const struct seg *seg_at_pgoff(const struct os_elfmod *m, uint64_t pgoff)
{
	const struct seg *hit = NULL;
	size_t i;

	/* The segment mapped exactly at pgoff wins; a mapping split later
	 * (mprotect) starts inside its segment. */
	for (i = 0; i < m->nsegs; i++) {
		const struct seg *s = &m->segs[i];
		uint64_t lo = s->offset & PAGE_MASK_4K;

		if (lo == pgoff)
			return s;
		if (pgoff > lo && pgoff < s->offset + s->filesz)
			hit = s;
	}
	return hit;
}

uint64_t os_elfmod_vaddr(const struct os_elfmod *m, uint64_t map_start, uint64_t pgoff,
			 uint64_t addr)
{
	const struct seg *hit = seg_at_pgoff(m, pgoff);

	if (!hit)
		return addr - map_start + pgoff;
	return addr - map_start + pgoff - hit->offset + hit->vaddr;
}

struct find_name {
	const char *name;
	uint64_t vaddr;
};

static int is_name(void *arg, const char *name, const GElf_Sym *s)
{
	struct find_name *f = arg;

	if (strcmp(name, f->name) != 0)
		return 0;
	f->vaddr = s->st_value;
	return 1;
}

int os_elfmod_dynsym_addr(struct os_elfmod *m, const char *open_path, uint64_t map_start,
			  uint64_t pgoff, const char *name, uint64_t *addr)
{
	struct find_name f = { name, 0 };
	const struct seg *hit;
	Elf *elf = NULL;
	Elf_Scn *scn;
	GElf_Shdr sh;
	int fd, ret;

	if (m->loaded || m->segs)
		return -EBUSY;
	elf_version(EV_CURRENT);
	fd = open_checked(m, open_path ? open_path : m->path);
	if (fd < 0)
		return fd;
	ret = elf_of_fd(fd, &elf);
	if (ret)
		return ret;
	ret = read_segments(m, elf);
	if (ret)
		goto out;
	scn = find_symtab(elf, SHT_DYNSYM, &sh);
	ret = -ENOENT;
	if (!scn || each_function(elf, scn, &sh, is_name, &f) != 1)
		goto out;
	hit = seg_at_pgoff(m, pgoff);
	if (!hit)
		goto out;
	*addr = f.vaddr + map_start - pgoff + hit->offset - hit->vaddr;
	ret = 0;
out:
	elf_end(elf);
	return ret;
}

/* Index + 1 of the symbol containing vaddr; 0 if none. */
static size_t symbol_at(const struct os_elfmod *m, uint64_t vaddr)
{
	/* first symbol starting after vaddr */
	size_t lo = os_lower_bound(m->nsyms, i, m->syms[i].start <= vaddr);

	if (!lo || vaddr - m->syms[lo - 1].start >= m->syms[lo - 1].size)
		return 0;
	return lo;
}

int os_elfmod_symbol_start(struct os_elfmod *m, uint64_t vaddr, uint64_t *start)
{
	size_t lo = symbol_at(m, vaddr);

	if (!lo)
		return -ENOENT;
	*start = m->syms[lo - 1].start;
	return 0;
}

int os_elfmod_symbol(struct os_elfmod *m, uint64_t vaddr, struct os_elfsym *out)
{
	size_t lo = symbol_at(m, vaddr);
	struct sym *s;

	if (!lo)
		return -ENOENT;
	s = &m->syms[lo - 1];
	if (!m->demangled) {
		m->demangled = calloc(m->nsyms, sizeof(*m->demangled));
		if (!m->demangled)
			return -ENOMEM;
	}
	if (!m->demangled[lo - 1]) {
		const char *raw = m->strs + s->name;
		char buf[1024];
		const char *d = os_sym_demangle(raw, buf, sizeof(buf));

		m->demangled[lo - 1] = d == raw ? (char *)raw : strdup(d);
		if (!m->demangled[lo - 1])
			m->demangled[lo - 1] = (char *)raw;
	}
	out->name = m->demangled[lo - 1];
	out->start = s->start;
	out->size = s->size;
	return 0;
}

int os_elfmod_nearest(struct os_elfmod *m, uint64_t vaddr, struct os_elfsym *out)
{
	size_t lo, i;
	struct sym *s;

	if (!m->exported_only)
		return -ENOENT;
	lo = os_lower_bound(m->nsyms, k, m->syms[k].start <= vaddr); /* first symbol starting after vaddr */
	if (!lo)
		return -ENOENT;
	s = &m->syms[lo - 1];
	if (vaddr - s->start < s->size || vaddr - s->start > NEAR_MAX)
		return -ENOENT;   /* inside it (the function itself), or too far */
	for (i = 0; i < m->nsecs; i++)
		if (vaddr >= m->secs[i].addr && vaddr - m->secs[i].addr < m->secs[i].size)
			break;
	if (i == m->nsecs || m->secs[i].index != s->shndx)
		return -ENOENT;   /* not in the section the symbol is in (.plt, .init) */
	if (os_elfmod_symbol(m, s->start, out))
		return -ENOENT;
	return 0;
}

const char *os_elfmod_build_id(const struct os_elfmod *m)
{
	return m && m->loaded && !m->load_ret && m->build_id[0] ? m->build_id : NULL;
}

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	/* debuginfo_path NULL: libdwfl's default "-:.debug:/usr/lib/debug" */
};

/* find_debuginfo when separate debug files are not wanted for lines:
 * libdwfl then uses the DWARF of the module's own file, if it has any. */
static int own_dwarf_only(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	(void)mod;
	(void)userdata;
	(void)modname;
	(void)base;
	(void)file_name;
	(void)debuglink_file;
	(void)debuglink_crc;
	(void)debuginfo_file_name;
	return -1;
}

static const Dwfl_Callbacks own_dwarf_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = own_dwarf_only,
	.section_address = dwfl_offline_section_address,
};

void os_elfmod_set_separate_lines(struct os_elfmod *m, bool on)
{
	if (m)
		m->separate_lines = on;
}

static int open_dwfl(struct os_elfmod *m)
{
	GElf_Addr bias;
	int fd;

	m->dwfl_state = -1;
	if (!m->open_path || m->load_ret)
		return -ENOENT;
	m->dwfl = dwfl_begin(m->separate_lines ? &offline_callbacks : &own_dwarf_callbacks);
	if (!m->dwfl)
		return -ENOMEM;
	/* the file checked again (libdwfl would open the name: another file
	 * may lie there now); the fd is libdwfl's from here */
	fd = open_checked(m, m->open_path);
	if (fd < 0)
		return fd;
	m->dmod = dwfl_report_offline(m->dwfl, m->path, m->open_path, fd);
	if (!m->dmod)
		close(fd); /* consumed only on success */
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (!m->dmod || !dwfl_module_getelf(m->dmod, &bias))
		return -ENOENT;
	m->dbias = bias;
	m->dwfl_state = 1;
	return 0;
}

void os_elfmod_warm_lines(struct os_elfmod *m)
{
	Dwarf_Addr bias;

	if (m->dwfl_state != 0)
		return;
	if (open_dwfl(m) == 0)
		dwfl_module_getdwarf(m->dmod, &bias);
}

static int lookup_line(struct os_elfmod *m, uint64_t vaddr, struct line_ent *le)
{
	Dwfl_Line *l;
	int lineno = 0, col = 0;

	if (m->dwfl_state == 0)
		open_dwfl(m);
	if (m->dwfl_state < 0)
		return -ENOENT;
	l = dwfl_module_getsrc(m->dmod, vaddr + m->dbias);
	if (!l)
		return -ENOENT;
	le->file = dwfl_lineinfo(l, NULL, &lineno, &col, NULL, NULL);
	if (!le->file || lineno <= 0)
		return -ENOENT;
	le->line = (uint32_t)lineno;
	le->column = col > 0 ? (uint32_t)col : 0;
	return 0;
}

int os_elfmod_line(struct os_elfmod *m, uint64_t vaddr, const char **file, uint32_t *line,
		   uint32_t *column)
{
	struct line_ent le;
	uint64_t idx;

	if (vaddr != UINT64_MAX && os_hmap_get(&m->line_cache, vaddr, &idx)) {
		if (!idx)
			return -ENOENT;
		*file = m->lines[idx - 1].file;
		*line = m->lines[idx - 1].line;
		if (column)
			*column = m->lines[idx - 1].column;
		return 0;
	}
	if (lookup_line(m, vaddr, &le)) {
		idx = 0;
	} else {
		struct line_ent *n = os_grow(m->lines, &m->lines_cap, m->nlines + 1, sizeof(*n), 64);

		if (!n)
			return -ENOMEM;
		m->lines = n;
		m->lines[m->nlines++] = le;
		idx = m->nlines;
		*file = le.file;
		*line = le.line;
		if (column)
			*column = le.column;
	}
	if (vaddr != UINT64_MAX)
		os_hmap_put(&m->line_cache, vaddr, idx);   /* a full cache only costs speed */
	return idx ? 0 : -ENOENT;
}
