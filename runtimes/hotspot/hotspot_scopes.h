/* hotspot_scopes.h - the Java methods a JIT-compiled pc stands for.
 *
 * C2 and C1 inline small methods into their callers: one compiled frame
 * then runs several Java methods, and the perf map names only the outer
 * one (the compiled method), so a site inside an inlined method was charged
 * to its caller. HotSpot records, for each call site and safepoint of an
 * nmethod, a PcDesc (pc offset from the code's start, and where its scope
 * chain begins in the scopes data); a scope is (sender scope, method, bci)
 * in a compressed stream (HotSpot's CompressedReadStream: an int is one
 * byte below 192, else up to five bytes, each further byte worth 64 times
 * the previous one's weight, the last one below 192 or the fifth), the
 * method an index into the nmethod's metadata section. The innermost scope
 * comes first; the outermost is the compiled method itself.
 *
 * Everything is read from the target through vmStructs names (the layout
 * below, never hard-coded offsets), once per nmethod: its header, PcDescs,
 * scopes data and metadata. A cached nmethod is checked again (compile id,
 * method and scopes address re-read) when the caller says the code may have
 * changed (after a collection: code is freed then, and by the sweeper).
 * A decoded chain whose outermost method is not the nmethod's own is not
 * trusted: the pc keeps its perf-map name.
 *
 * Return convention: 0 / -errno, counts.
 */
#ifndef OBJSCOPE_HOTSPOT_SCOPES_H
#define OBJSCOPE_HOTSPOT_SCOPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtimes/hotspot/hotspot_vm.h"

#define OS_HS_SCOPE_DEPTH 32 /* inlining levels followed (C2's MaxInlineLevel is 15) */

/* Two layouts (hs_layout.h): up to JDK 22 the debug info lies in the code
 * blob, at offsets from its start; from JDK 25 the PcDescs and scopes lie
 * in the nmethod's immutable data block (offsets from _immutable_data) and
 * the metadata after the relocations in its mutable data block. */
enum { OS_HS_NM_BLOB = 1, OS_HS_NM_SPLIT = 2 };

struct os_hs_scope_layout {
	int mode;          /* OS_HS_NM_*, 0 none */
	int64_t name;      /* CodeBlob::_name (const char*): "nmethod" */
	int64_t method;    /* CompiledMethod::_method / nmethod::_method (Method*) */
	int64_t sdata;     /* BLOB: CompiledMethod::_scopes_data_begin (address);
			    * SPLIT: nmethod::_immutable_data (address) */
	int64_t meta;      /* BLOB: nmethod::_metadata_offset (int, bytes from the blob);
			    * SPLIT: CodeBlob::_mutable_data (address) */
	int64_t pcs;       /* nmethod::_scopes_pcs_offset (int; SPLIT: from _immutable_data) */
	int64_t deps;      /* BLOB: nmethod::_dependencies_offset (int): the PcDescs' end;
			    * SPLIT: nmethod::_scopes_data_offset (int) */
	int64_t imm_size;  /* SPLIT: nmethod::_immutable_data_size (int) */
	int64_t mut_size;  /* SPLIT: CodeBlob::_mutable_data_size (int) */
	int64_t reloc;     /* SPLIT: CodeBlob::_relocation_size (int): the metadata follow */
	int64_t cid;       /* nmethod::_compile_id (int) */
	int64_t pc_off;    /* PcDesc::_pc_offset (int) */
	int64_t scope_off; /* PcDesc::_scope_decode_offset (int) */
	uint32_t pcdesc;   /* sizeof(PcDesc) */
	bool u5;           /* the scopes' ints in UNSIGNED5 (os_hs_read_u5) */
	uint32_t hdr_len;  /* bytes of the header to read: past the last field */
	bool ok;
	uint64_t name_seen; /* a _name found to read "nmethod" (a string constant of
			     * libjvm: read once, not once per nmethod), 0 none */
};

/* The value of vmStructs name (an offset or a size, at most 4096), or -1
 * with *ok set false when it is missing or implausible. */
int64_t os_hs_field(const struct os_hs_vm *vm, const char *name, bool *ok);

/* HotSpot's compressed int (CompressedReadStream::read_int) at p[*pos],
 * within len: false when it runs past len. */
bool os_hs_read_int(const uint8_t *p, size_t len, size_t *pos, uint32_t *v);
/* The UNSIGNED5 coding of JDK 21+ (with runs of zeros: *zeros, NULL where
 * none can occur). */
bool os_hs_read_u5(const uint8_t *p, size_t len, size_t *pos, uint32_t *v, uint32_t *zeros);
bool os_hs_read_int_enc(const uint8_t *p, size_t len, size_t *pos, uint32_t *v, bool u5,
			uint32_t *zeros);
/* Whether this JVM's compressed streams (debug info, line tables) are
 * UNSIGNED5: 0, or -ENOENT when that cannot be told. */
int os_hs_stream_u5(const struct os_hs_vm *vm, bool *u5);

/* Resolves the layout from the tables; l->ok false when a name is missing. */
void os_hs_scope_layout(struct os_hs_scope_layout *l, const struct os_hs_vm *vm);

/* One nmethod's debug info as read. */
struct os_hs_nm {
	uint64_t start;       /* the CodeBlob */
	uint64_t code_begin;  /* CodeBlob::_code_begin: PcDesc offsets count from here */
	uint64_t method;      /* the compiled method */
	uint64_t sdata_at;    /* scopes data address (checked with the compile id) */
	int32_t compile_id;
	bool u5;              /* its scopes' ints in UNSIGNED5 */
	uint32_t npcs, ndata, nmeta;
	int32_t *pcs;         /* npcs pairs (pc offset, scope decode offset), sorted */
	uint8_t *data;        /* scopes data */
	uint64_t *meta;       /* metadata section: index i + 1 names meta[i] */
	uint32_t epoch;       /* the caller's code epoch it was last checked in */
};

/* Reads len bytes of the target at addr into buf; false when it cannot. */
typedef bool (*os_hs_read_fn)(void *arg, uint64_t addr, void *buf, size_t len);

/* Reads the debug info of the blob at start whose code begins at
 * code_begin. 0; -ENOENT: not an nmethod (stubs, adapters, buffers);
 * -EFAULT: unreadable; -EINVAL: implausible sizes; -ENOMEM. nm is zeroed
 * on failure. */
int os_hs_nm_read(struct os_hs_nm *nm, struct os_hs_scope_layout *l, os_hs_read_fn rd,
		  void *arg, uint64_t start, uint64_t code_begin);
void os_hs_nm_free(struct os_hs_nm *nm);

/* Whether the blob at nm->start still is the nmethod nm was read from
 * (compile id, method and scopes address read again). */
bool os_hs_nm_same(const struct os_hs_nm *nm, const struct os_hs_scope_layout *l,
		   os_hs_read_fn rd, void *arg);

/* The methods running at pc, innermost first, into out (Method* values,
 * at most max), and their bytecode indexes into bci (-1: the method's
 * entry; bci may be NULL). exact: pc is a return address (a caller's frame), whose
 * PcDesc lies at pc itself; else (the interrupted frame) the next PcDesc
 * at or after pc, as HotSpot's own approximate lookup. Returns the count;
 * 0 when no scope is known there or the chain does not decode to the
 * compiled method. */
uint32_t os_hs_nm_expand(const struct os_hs_nm *nm, uint64_t pc, bool exact, uint64_t *out,
			 int32_t *bci, uint32_t max);

#endif
