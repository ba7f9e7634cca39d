/* hotspot_vm.h - HotSpot internals read from a live target through its
 * vmStructs tables (gHotSpotVMStructs, ...Types, ...IntConstants,
 * ...LongConstants), never through hard-coded offsets: the table addresses
 * and entry layouts come from the target (struct os_jvm_info).
 *
 * The tables are read once when the JVM is up (os_hs_vm_load) into a sorted
 * name -> value lookup:
 *   "Type::field"  nonstatic field: its offset; static field: its address
 *   "Type"         sizeof(Type)
 *   "NAME"         int or long constant
 * Class and method names are then read on demand through a memory reader.
 *
 * Return convention: 0 / -errno (-ENOENT: name not in the tables, -EFAULT:
 * target memory unreadable, -EINVAL: table layout not understood).
 */
#ifndef OBJSCOPE_HOTSPOT_VM_H
#define OBJSCOPE_HOTSPOT_VM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "runtimes/hotspot/hotspot_abi.h"
#include "runtimes/hotspot/hs_layout.h"

/* Reads target memory. The default (os_hs_mem_proc) uses process_vm_readv;
 * tests give fakes. */
struct os_hs_mem {
	/* len bytes at addr of pid into buf: returns len, or -1. */
	ssize_t (*read)(void *arg, uint32_t pid, uint64_t addr, void *buf, size_t len);
	/* The 8-byte words at addrs[0..n) (batched); ok[i] says which could be
	 * read. Returns how many could. NULL: read() is used word by word. */
	size_t (*read_words)(void *arg, uint32_t pid, const uint64_t *addrs, size_t n,
			     uint64_t *out, bool *ok);
	void *arg;
};

extern const struct os_hs_mem os_hs_mem_proc;

size_t os_hs_mem_words(const struct os_hs_mem *m, uint32_t pid, const uint64_t *addrs, size_t n,
		       uint64_t *out, bool *ok);

/* A field offset or type size above this is not believed (the metadata
 * objects read here are far smaller): the tables come from the target, and
 * a wild value must not reach a bounds check as a negative or huge one. */
#define OS_HS_FIELD_MAX 4096

struct os_hs_entry {
	char *name;
	uint64_t value;
	bool is_static;  /* static field: value is its address */
	uint8_t width;   /* bytes of the field's value by its declared type, 0 unknown */
};

/* A key of hs_layout.h resolved for this JVM. */
struct os_hs_res {
	bool found;
	bool is_static;
	uint8_t width;   /* the alternative's width (hs_lalt.width) */
	uint8_t how;     /* HS_LA_* */
	uint64_t value;
	const char *name; /* the alternative found (hs_layout.h's string) */
};

/* What the adapter needs, resolved from the tables (-1 when absent, or when
 * the table's value lies outside [0, OS_HS_FIELD_MAX]). */
struct os_hs_layout {
	int64_t klass_name;          /* Klass::_name (Symbol*) */
	int64_t klass_super;         /* Klass::_super (Klass*), optional */
	int64_t symbol_length;       /* Symbol::_length (u2) */
	int64_t symbol_body;         /* Symbol::_body (u1[]) */
	int64_t method_const;        /* Method::_constMethod */
	int64_t const_constants;     /* ConstMethod::_constants */
	int64_t const_name_index;    /* ConstMethod::_name_index (u2) */
	int64_t const_sig_index;     /* ConstMethod::_signature_index (u2), optional */
	int64_t cpool_holder;        /* ConstantPool::_pool_holder */
	int64_t cpool_size;          /* sizeof(ConstantPool): the slots follow */
	int64_t oop_klass;           /* oopDesc::_metadata._klass */
	int64_t oop_cklass;          /* oopDesc::_metadata._compressed_klass */
	uint64_t narrow_klass_base;  /* CompressedKlassPointers base (value) */
	uint32_t narrow_klass_shift;
	int compressed_klass;        /* -1 unknown, 0 no, 1 yes, 2 compact headers: the
				      * narrow class in the mark word (learnt from a header) */
	uint32_t mark_klass_shift;   /* markWord::klass_shift (JDK 24+), 0 unknown */
	uint32_t mark_hash_top;      /* markWord::hash_shift + hash_bits: an unlocked mark
				      * word's bits above are 0 (the class's with compact
				      * headers); 0 unknown */
	uint64_t universe_heap;      /* address of Universe::_collectedHeap (static), 0 */
	int64_t heap_total_coll;     /* CollectedHeap::_total_collections (u32) */
	int64_t heap_gc_active;      /* CollectedHeap::_is_gc_active (bool) */
};

struct os_hs_vm {
	struct os_hs_entry *e;       /* sorted by name */
	size_t n, cap;
	struct os_hs_layout lay;
	uint64_t heap;               /* Universe::_collectedHeap once read (never changes) */
	/* Abstract_VM_Version: major 0 when it could not be read (then the
	 * version ranges of hs_layout.h are not applied: names alone decide) */
	uint32_t major, minor, security, build;
	char release[64];            /* _s_vm_release ("25.0.1+8-LTS"), "" unknown */
	struct os_hs_res res[HS_LAYOUT_N];
	uint64_t missing;            /* bit i: hs_layout[i] holds for this version, not found */
};

/* Reads the four tables of info from pid and resolves the layout. */
int os_hs_vm_load(struct os_hs_vm *vm, const struct os_hs_mem *m, uint32_t pid,
		  const struct os_jvm_info *info);
void os_hs_vm_free(struct os_hs_vm *vm);
/* Adds one name (tests, or tables read elsewhere); call os_hs_vm_finish after. */
int os_hs_vm_add(struct os_hs_vm *vm, const char *name, uint64_t value, bool is_static);
/* ... with the width of its declared type (hs_layout_type_width; 0 unknown). */
int os_hs_vm_add_typed(struct os_hs_vm *vm, const char *name, uint64_t value, bool is_static,
		       uint8_t width);
/* Sorts the names and resolves the layout (static values read through m). */
int os_hs_vm_finish(struct os_hs_vm *vm, const struct os_hs_mem *m, uint32_t pid);
/* Looks a name up: 0 and *value, or -ENOENT. A key of hs_layout.h gives
 * the value of the alternative resolved for this JVM's version. */
int os_hs_vm_get(const struct os_hs_vm *vm, const char *name, uint64_t *value);
/* A field offset or type size: 0 and *value in [0, OS_HS_FIELD_MAX], -ENOENT,
 * or -ERANGE (the table says something else: not believed). */
int os_hs_vm_field(const struct os_hs_vm *vm, const char *name, int64_t *value);

/* The resolved alternative of a key of hs_layout.h: NULL when absent. */
const struct os_hs_res *os_hs_vm_res(const struct os_hs_vm *vm, const char *key);
/* "field (feature)" of each key this JVM's version needs and lacks, joined
 * by "; " into buf; returns how many. */
int os_hs_vm_missing(const struct os_hs_vm *vm, char *buf, size_t len);

/* Internal name of the Klass* ("[B", "java/lang/String") into buf. */
int os_hs_klass_name(const struct os_hs_vm *vm, const struct os_hs_mem *m, uint32_t pid,
		     uint64_t klass, char *buf, size_t len);
/* Klass::_super of the Klass* (0 for java.lang.Object); -ENOENT when the
 * tables do not have the field. */
int os_hs_klass_super(const struct os_hs_vm *vm, const struct os_hs_mem *m, uint32_t pid,
		      uint64_t klass, uint64_t *super);
/* The text of a Symbol* into buf. */
int os_hs_symbol_str(const struct os_hs_vm *vm, const struct os_hs_mem *m, uint32_t pid,
		     uint64_t sym, char *buf, size_t len);
/* Of a Method*: its holder Klass* and its name ("makeData") into name. */
int os_hs_method_parts(const struct os_hs_vm *vm, const struct os_hs_mem *m, uint32_t pid,
		       uint64_t method, uint64_t *holder, char *name, size_t len);
/* "pkg.Class.method" of a Method* into buf. */
int os_hs_method_name(const struct os_hs_vm *vm, const struct os_hs_mem *m, uint32_t pid,
		      uint64_t method, char *buf, size_t len);
/* The Klass* an object header names now (compressed pointers decoded), 0
 * when the layout is unknown. `word` is the 8 bytes at oop + klass offset. */
uint64_t os_hs_decode_klass(const struct os_hs_layout *lay, uint64_t word);

/* An object's bytes from its class's Klass::_layout_helper lh (> 0: an
 * instance, its size with flag bits below 8; < 0: an array, header bytes in
 * bits 16..23 and log2 element size in bits 0..7) and, for an array, its
 * length len: 0 when that is not an object's. */
uint64_t os_hs_object_bytes(int32_t lh, int32_t len);
/* Offset of the klass word in an object header (0: the mark word, compact
 * headers), -1 unknown. */
int64_t os_hs_klass_word_offset(const struct os_hs_layout *lay);
/* Offset of an array's length in its header, -1 unknown. */
int64_t os_hs_array_length_offset(const struct os_hs_layout *lay);
/* The collector's state now: CollectedHeap::_total_collections and
 * _is_gc_active. 0, -ENOENT (not in the tables) or -EFAULT (the target is
 * gone). */
int os_hs_gc_state(struct os_hs_vm *vm, const struct os_hs_mem *m, uint32_t pid,
		   uint32_t *total, bool *active);
/* Learns whether class pointers are compressed from an object whose Klass*
 * is known (its header is written): 0, or -EFAULT / -EINVAL. */
int os_hs_learn_header(struct os_hs_vm *vm, const struct os_hs_mem *m, uint32_t pid, uint64_t oop,
		       uint64_t klass);

#endif
