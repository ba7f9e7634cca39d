/* hotspot_naming.c - names of the HotSpot adapter: the string pool,
 * class (Klass*) and interpreted-method (Method*) words named while the
 * JVM lives, the words of allocation paths (path_words), the perf map
 * that names JIT code (before_symbolize) and name_word. */
#include "runtimes/hotspot/hotspot_int.h"

static const char *str_at(struct hotspot *h, uint64_t idx)
{
	return idx < h->nstrs ? h->strs[idx] : NULL;
}

/* Keeps a copy of s: its index, or -1 (out of memory). */
int64_t hs_str_add(struct hotspot *h, const char *s)
{
	char *dup;

	if (h->nstrs == h->capstrs) {
		uint32_t cap = h->capstrs ? h->capstrs * 2 : 256;
		char **n = realloc(h->strs, cap * sizeof(*n));

		if (!n)
			return -1;
		h->strs = n;
		h->capstrs = cap;
	}
	dup = strdup(s);
	if (!dup)
		return -1;
	h->strs[h->nstrs] = dup;
	return h->nstrs++;
}

/* Remembers name s for a tagged word of j. */
static void name_put(struct hotspot *h, struct hs_jvm *j, uint64_t word, const char *s)
{
	int64_t at = hs_str_add(h, s);

	if (at >= 0)
		os_hmap_put(&j->names, word, (uint64_t)at);
}

/* Whether the word is named (a method's line is not part of its name). */
bool hs_name_known(struct hs_jvm *j, uint64_t word)
{
	uint64_t idx;

	if (OS_FRAME_IS_METHOD(word))
		word &= ~OS_FRAME_POS_MASK;
	return os_hmap_get(&j->names, word, &idx);
}

const char *hs_klass_name(struct hotspot *h, struct hs_jvm *j, uint64_t klass)
{
	uint64_t idx;

	hs_name_klass(h, j, klass);
	if (!os_hmap_get(&j->names, OS_HS_TAG_KLASS | (klass & OS_HS_WORD_MASK), &idx))
		return NULL;
	return str_at(h, idx);
}

void hs_name_klass(struct hotspot *h, struct hs_jvm *j, uint64_t klass)
{
	uint64_t word = OS_HS_TAG_KLASS | (klass & OS_HS_WORD_MASK);
	char internal[NAME_MAX_LEN], java[NAME_MAX_LEN];

	if (hs_name_known(j, word) || !j->vm_ok)
		return;
	if (os_hs_klass_name(&j->vm, &h->mem, j->pid, klass, internal, sizeof(internal)) < 0)
		return;
	os_hs_java_class(internal, java, sizeof(java));
	name_put(h, j, word, java);
}

/* The frame word of an enum's class initializer (HS_TAG_CLINIT): named
 * "pkg.E.<clinit>" from the enum's class name. */
void hs_name_clinit(struct hotspot *h, struct hs_jvm *j, uint64_t klass)
{
	uint64_t word = HS_TAG_CLINIT | (klass & OS_HS_WORD_MASK), idx;
	char name[NAME_MAX_LEN + 16];
	const char *cls;

	if (hs_name_known(j, word))
		return;
	hs_name_klass(h, j, klass);
	if (!os_hmap_get(&j->names, OS_HS_TAG_KLASS | (klass & OS_HS_WORD_MASK), &idx) ||
	    !(cls = str_at(h, idx)))
		return;
	snprintf(name, sizeof(name), "%s.<clinit>", cls);
	name_put(h, j, word, name);
}

/* "pkg.Class.method": the class name from the names of j's classes (the
 * same holder for many methods), the method's own name read. A word with a
 * line is named by its method's name (its file and line: hs_name_word). */
void hs_name_method(struct hotspot *h, struct hs_jvm *j, uint64_t word)
{
	char meth[NAME_MAX_LEN], name[2 * NAME_MAX_LEN + 2];
	const char *cls = NULL;
	uint64_t holder, idx;

	word &= ~OS_FRAME_POS_MASK;
	if (hs_name_known(j, word) || !j->vm_ok)
		return;
	if (os_hs_method_parts(&j->vm, &h->mem, j->pid, word & OS_HS_WORD_MASK, &holder, meth,
			       sizeof(meth)) < 0)
		return;
	hs_name_klass(h, j, holder);
	if (os_hmap_get(&j->names, OS_HS_TAG_KLASS | (holder & OS_HS_WORD_MASK), &idx))
		cls = str_at(h, idx);
	if (!cls)
		return;
	snprintf(name, sizeof(name), "%s.%s", cls, meth);
	name_put(h, j, word, name);
	/* its lines too, while it surely lives: a frame at a line of it may be
	 * read after the JVM is gone (allocation paths drained at the end) */
	hs_ml_get(h, j, word & OS_HS_WORD_MASK);
}

/* A class or method word of an allocation path: named now, or, before the
 * JVM event (the JDK's start-up code allocates inside JNI_CreateJavaVM),
 * once vmStructs is read. Start-up classes and methods belong to the boot
 * loader and are never unloaded, so their words stay valid until then. */
void hs_name_path_word(struct hotspot *h, struct hs_jvm *j, uint64_t word)
{
	if (!j->vm_ok) {
		if (!j->have_info)
			os_hmap_put(&j->unnamed, word, 0);
		return;
	}
	if ((word & ~OS_HS_WORD_MASK) == OS_HS_TAG_KLASS)
		hs_name_klass(h, j, word & OS_HS_WORD_MASK);
	else if (OS_FRAME_IS_METHOD(word))
		hs_name_method(h, j, word);
}

void hs_name_pending(struct hotspot *h, struct hs_jvm *j)
{
	size_t it = 0;
	uint64_t word, v;

	while (os_hmap_next(&j->unnamed, &it, &word, &v))
		hs_name_path_word(h, j, word);
	os_hmap_destroy(&j->unnamed);
	os_hmap_init(&j->unnamed);
}

/* The perf map is the target's file, in a directory its user can write
 * (its /tmp, its container's): opened without following a link, never a
 * FIFO or device (O_NONBLOCK), only if it belongs to the JVM's user or root,
 * a path under /proc/PID/root resolved inside that root; read with caps
 * (symbolizer/perfmap.h); removed (when objscope asked for it) only if it
 * is still the file read, with the JVM's file-system identity. A map that
 * fails a check is not read: a warning and a note say so. */
void hs_before_symbolize(struct os_runtime *rt)
{
	struct hotspot *h = hs_of(rt);
	char path[160], dir[160];

	if (!h->sym) /* no symbolizer: nothing to name, nothing to remove */
		return;
	for (uint32_t i = 0; i < h->njvms; i++) {
		struct hs_jvm *j = h->jvms[i];
		/* one JVM per attach; its pid may be the container's view */
		bool attached = h->att.on && (j->pid == h->att.pid || h->njvms == 1) &&
				h->att.map[0];
		int rootfd = -1, dirfd, fd, off = 0;
		const char *name, *slash;
		uint32_t why = 0;
		unsigned int rpid;
		size_t long_lines = 0;
		struct os_fsid fsid;
		struct stat st;
		uid_t uid = j->uid;
		gid_t gid = j->gid;

		/* the preload did not ask for a map (its path was taken): what
		 * is there is not the JVM's (the note says so) */
		if (!attached && (j->info.flags & OS_JVM_F_MAP_REFUSED))
			continue;
		if (attached) { /* written on request, possibly in a container's /tmp */
			snprintf(path, sizeof(path), "%s", h->att.map);
			snprintf(dir, sizeof(dir), "/proc/%u", h->att.pid);
			if (stat(dir, &st) == 0) { /* the host's pid: the owner for sure */
				uid = st.st_uid;
				gid = st.st_gid;
			}
		} else {
			snprintf(path, sizeof(path), "/tmp/perf-%u.map", j->pid);
		}
		slash = strrchr(path, '/');
		if (!slash || !slash[1])
			continue;
		name = slash + 1;
		if (sscanf(path, "/proc/%u/root%n", &rpid, &off) == 1 && off > 0 &&
		    path[off] == '/') {
			rootfd = os_proc_root((pid_t)rpid);
			if (rootfd < 0) {
				os_debug("hotspot: perf map %s: %s", path, strerror(-rootfd));
				continue;
			}
			snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path - off), path + off);
			dirfd = os_open_in_root(rootfd, dir[0] ? dir : "/", O_PATH | O_DIRECTORY,
						0);
		} else {
			snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
			dirfd = open(dir[0] ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
			dirfd = dirfd < 0 ? -errno : dirfd;
		}
		if (dirfd == -ENOSYS) { /* no openat2 (< 5.6): no resolution that stays inside */
			char note[400];

			j->map.issue = HS_MAP_NO_OPENAT2;
			j->map.pid = j->pid;
			snprintf(j->map.path, sizeof(j->map.path), "%s", path);
			hs_map_note(&j->map, note, sizeof(note));
			os_warn("%s", note);
		} else if (dirfd < 0) {
			os_debug("hotspot: perf map %s: its directory: %s", path, strerror(-dirfd));
		}
		if (dirfd < 0) {
			if (rootfd >= 0)
				close(rootfd);
			continue;
		}
		fd = os_open_untrusted(dirfd, name, uid, &st);
		if (fd == -ELOOP)
			why = HS_MAP_LINK;
		else if (fd == -EFTYPE_OS)
			why = HS_MAP_NOT_REGULAR;
		else if (fd == -EPERM)
			why = HS_MAP_OTHER_USER;
		if (fd >= 0) {
			int rc = os_sym_load_perf_map_fd(h->sym, j->asid, fd, &long_lines);

			if (rc == -EFBIG)
				why = HS_MAP_TOO_LARGE;
			else if (rc < 0)
				os_debug("hotspot: cannot read %s: %s", path, strerror(-rc));
			else if (long_lines)
				os_debug("hotspot: %s: %zu lines over 64 KiB skipped", path,
					 long_lines);
			close(fd);
		} else if (fd != -ENOENT && !why) {
			os_debug("hotspot: cannot open %s: %s", path, strerror(-fd));
		}
		if (why) {
			struct stat lst;
			char note[400];

			j->map.issue = HS_MAP_NOT_READ;
			j->map.why = why;
			j->map.pid = j->pid;
			snprintf(j->map.path, sizeof(j->map.path), "%s", path);
			j->map.owner_known = fd == -EPERM &&
					     fstatat(dirfd, name, &lst, AT_SYMLINK_NOFOLLOW) == 0;
			if (j->map.owner_known) {
				j->map.owner_uid = (uint32_t)lst.st_uid;
				j->map.jvm_uid = (uint32_t)uid;
			}
			hs_map_note(&j->map, note, sizeof(note));
			os_warn("%s", note);
		}
		/* written because objscope asked for it: leave no artifact, but
		 * remove only the file read, as the JVM's user would */
		if (fd >= 0 && (attached ? h->att.remove_map : j->map_ours)) {
			os_fs_enter(&fsid, uid, gid);
			os_unlink_same(dirfd, name, &st);
			os_fs_leave(&fsid);
		}
		close(dirfd);
		if (rootfd >= 0)
			close(rootfd);
	}
}

/* The JVM's own native memory, by the functions that asked for it: the
 * first frame (leaf first) naming one of these subsystems decides. The
 * names are HotSpot's C++ classes and namespaces (JDK 11-21). */
static const struct {
	const char *needle, *type;
} hs_native_kinds[] = {
	{ "metaspace::", HS_NATIVE_METASPACE },
	{ "Metaspace::", HS_NATIVE_METASPACE },
	{ "MetaspaceArena", HS_NATIVE_METASPACE },
	{ "ClassLoaderMetaspace", HS_NATIVE_METASPACE },
	{ "CodeHeap::", "[JVM code cache: compiled code]" },
	{ "CodeCache::", "[JVM code cache: compiled code]" },
	/* compiled code's own metadata outside the code heap (oop maps) */
	{ "ImmutableOopMapSet", "[JVM code cache: compiled code]" },
	{ "CodeBlob::", "[JVM code cache: compiled code]" },
	{ "G1CardSet", HS_NATIVE_GC },
	{ "G1BlockOffsetTable", HS_NATIVE_GC },
	{ "G1CMBitMap", HS_NATIVE_GC },
	{ "G1RegionToSpaceMapper", HS_NATIVE_GC },
	/* the heap's auxiliary tables (card table, block offset table, mark
	 * bitmaps) are committed region by region through the same mappers as
	 * the heap: the heap's own commits leave the index (attrib.c in_heap),
	 * so what stays under these is GC data, not the heap */
	{ "G1RegionsLargerThanCommitSizeMapper", HS_NATIVE_GC },
	{ "G1RegionsSmallerThanCommitSizeMapper", HS_NATIVE_GC },
	{ "G1PageBasedVirtualSpace", HS_NATIVE_GC },
	{ "MarkBitMap", HS_NATIVE_GC },
	{ "ParMarkBitMap", HS_NATIVE_GC },
	{ "CardTable", HS_NATIVE_GC },
	{ "G1FromCardCache", HS_NATIVE_GC },
	{ "HeapRegionManager::", "[JVM: Java heap reservation]" },
	{ "ReservedHeapSpace", "[JVM: Java heap reservation]" },
	/* Thread::operator new: a thread's C++ object (JavaThread, GC and
	 * compiler threads), touched by the code it runs (TLAB top, state):
	 * H2's first "object" at defaults was the main JavaThread */
	{ "Thread::allocate", "[JVM thread: its C++ Thread object]" },
	{ "SymbolTable::", "[JVM symbol and string tables]" },
	{ "SystemDictionary::", "[JVM class loading: dictionaries]" },
	{ "PlaceholderTable::", "[JVM class loading: dictionaries]" },
	{ "StringTable::", "[JVM symbol and string tables]" },
	{ "Arena::", "[JVM arena: compiler and runtime scratch]" },
	{ "ChunkPool", "[JVM arena: compiler and runtime scratch]" },
};

const char *hs_native_type_of(const char *const *names, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		if (!names[i])
			continue;
		for (size_t k = 0; k < sizeof(hs_native_kinds) / sizeof(hs_native_kinds[0]); k++)
			if (strstr(names[i], hs_native_kinds[k].needle))
				return hs_native_kinds[k].type;
	}
	return NULL;
}

const char *hs_native_type(struct os_runtime *rt, uint32_t asid, const char *const *names,
			   uint32_t n)
{
	return hs_jvm_find(hs_of(rt), asid) ? hs_native_type_of(names, n) : NULL;
}

enum os_rt_word hs_name_word(struct os_runtime *rt, uint32_t asid, uint64_t word,
			     const char **name, const char **file, uint32_t *line)
{
	struct hotspot *h = hs_of(rt);
	struct hs_jvm *j = hs_jvm_find(h, asid);
	uint64_t idx;
	bool klass = (word & ~OS_HS_WORD_MASK) == OS_HS_TAG_KLASS;
	bool clinit = (word & ~OS_HS_WORD_MASK) == HS_TAG_CLINIT;
	bool method = OS_FRAME_IS_METHOD(word);
	uint32_t ln = method ? (uint32_t)((word & OS_FRAME_POS_MASK) >> OS_FRAME_POS_SHIFT) : 0;

	*name = NULL;
	if (file)
		*file = NULL;
	if (line)
		*line = 0;
	if (word == HS_WORD_BEFORE) {
		*name = HS_BEFORE_NAME;
		return OS_RT_WORD_SYNTHETIC;
	}
	if (word == HS_WORD_SMALL) {
		*name = HS_SMALL_NAME;
		return OS_RT_WORD_SYNTHETIC;
	}
	if (word == HS_WORD_ENUM) {
		*name = HS_ENUM_NAME;
		return OS_RT_WORD_SYNTHETIC;
	}
	if (word == OS_RT_WORD_GC_THREAD) {
		*name = OS_RT_GC_THREAD_NAME;
		return OS_RT_WORD_SYNTHETIC;
	}
	if (clinit) { /* an enum constant's inferred path (hs_class_ctx) */
		if (j && os_hmap_get(&j->names, word, &idx))
			*name = str_at(h, idx);
		if (!*name)
			*name = "[an enum's class initializer]";
		return OS_RT_WORD_FRAME;
	}
	if (!klass && !method)
		return OS_RT_WORD_UNKNOWN;
	if (j && os_hmap_get(&j->names, method ? word & ~OS_FRAME_POS_MASK : word, &idx))
		*name = str_at(h, idx);
	if (*name && ln && file && line) {
		/* a line word is made only with its method's file known (hs_line_word) */
		uint64_t at;

		if (os_hmap_get(&j->ml_at, word & OS_HS_WORD_MASK, &at) && at &&
		    j->mls[at - 1].file) {
			*file = str_at(h, j->mls[at - 1].file - 1);
			*line = *file ? ln : 0;
		}
	}
	if (klass)
		return OS_RT_WORD_TYPE; /* a type even when unnamed: never a frame */
	if (!*name) /* its Method could not be read (unloaded, or the JVM gone) */
		*name = "Interpreter";
	return OS_RT_WORD_FRAME;
}

/* A native allocation path (malloc, mmap) of a JVM: the preload's walk
 * through JIT code gives interpreted frames as Method* words; their names
 * are read now, while the methods exist, and compiled frames become the
 * methods inlined there (direct buffers and other native memory allocated
 * from compiled Java code). */
uint32_t hs_path_words(struct os_runtime *rt, struct os_aspace *as, const uint64_t *frames,
		       uint32_t n, uint64_t *out, uint32_t max)
{
	struct hotspot *h = hs_of(rt);
	struct hs_jvm *j = NULL;
	bool named;

	for (uint32_t i = 0; i < n && !j; i++)
		if (OS_FRAME_IS_METHOD(frames[i]))
			j = hs_jvm_get(h, as);
	if (!j && h->njvms)
		j = hs_jvm_find(h, as->id);
	if (!j) {
		n = n < max ? n : max;
		for (uint32_t i = 0; i < n; i++)
			out[i] = hs_canon_word(h, NULL, frames[i]);
		return n;
	}
	n = hs_expand_path(h, j, frames, n, out, max, &named);
	for (uint32_t i = 0; i < n && !named; i++)
		if (OS_FRAME_IS_METHOD(out[i]))
			hs_name_path_word(h, j, out[i]);
	return n;
}
