/* hs_layout.h - the one table of the HotSpot names the adapter reads whose
 * name, type or meaning differs across JDK versions: for each, the name the
 * code asks for (its key) and the names that stand for it in the JVM's
 * vmStructs tables, each with the JDK major versions it holds for and the
 * width of its value. Read by the collector (hotspot_vm.c), by the in-target
 * side (target/hotspot_vms.c: no allocation, plain loads) and through those
 * by the Zero adapter.
 *
 * A key resolves to the first alternative whose version range holds the
 * JVM's major version (Abstract_VM_Version::_vm_major_version, read first),
 * that the tables name, and whose declared type has the width given here
 * (a field the JVM declares with another type is not this layout). A key
 * that does not resolve is absent: the feature named by `feature` is off
 * for this JVM, with a note naming the field, never a guess. Names not in
 * this table are looked up as they are (the same in every version read).
 *
 * Ranges were read from the vmStructs tables of JDK 17 (Debian 17.0.21) and
 * Temurin 25 (25.0.1), and from jdk21u's vmStructs.cpp (ConstMethod,
 * CodeBlob, CompiledMethod, nmethod, CompressedKlassPointers, Method); the
 * version a rename landed in between is not claimed: an old name's range
 * ends at the newest version it was seen in where the new meaning of the
 * same name would otherwise be read the old way.
 */
#ifndef OBJSCOPE_HS_LAYOUT_H
#define OBJSCOPE_HS_LAYOUT_H

#include <stdint.h>
#include <string.h>

#define HS_JDK_ANY 0      /* an open end of a version range */
#define HS_JDK_TESTED 25  /* the newest JDK this adapter was checked on */
#define HS_LAYOUT_ALTS 3
/* From this JDK the compressed streams (debug info, line number tables)
 * code ints in UNSIGNED5, which came with InstanceKlass::_fieldinfo_stream
 * (both required: hotspot_scopes.c os_hs_stream_u5). */
#define HS_JDK_UNSIGNED5 21

/* What an alternative's value means. */
enum {
	HS_LA_PLAIN = 0,  /* as the key says */
	HS_LA_REL = 1,    /* an int offset from the object's start where the key is an address */
};

struct hs_lalt {
	const char *name;   /* "Type::field", a type or a constant */
	uint16_t from, to;  /* JDK majors, inclusive; HS_JDK_ANY: open */
	uint8_t width;      /* bytes of the field's value; 0: not a field's value (an
			     * offset of a struct member, a type's size, a constant) */
	uint8_t how;        /* HS_LA_* */
};

struct hs_lkey {
	const char *key;      /* the name the code asks for */
	const char *feature;  /* what is off when it is absent */
	struct hs_lalt alt[HS_LAYOUT_ALTS];
};

/* Keys ending in "@25" name a newer meaning of a name whose older meaning
 * is its own key: the code asks for each by its key. */
static const struct hs_lkey hs_layout[] = {
	{ "CollectedHeap::_is_gc_active", "the collector's state (object headers read between "
	  "collections, the dead-object check after them)",
	  { { "CollectedHeap::_is_gc_active", HS_JDK_ANY, 21, 1, 0 },
	    { "CollectedHeap::_is_stw_gc_active", 22, HS_JDK_ANY, 1, 0 } } },
	{ "GenCollectedHeap::_young_gen", "the Serial collector's young generation",
	  { { "GenCollectedHeap::_young_gen", HS_JDK_ANY, 22, 8, 0 },
	    { "SerialHeap::_young_gen", 22, HS_JDK_ANY, 8, 0 } } },
	{ "HeapRegionManager::_regions", "G1 region generations",
	  { { "HeapRegionManager::_regions", HS_JDK_ANY, 22, 0, 0 },
	    { "G1HeapRegionManager::_regions", 22, HS_JDK_ANY, 0, 0 } } },
	{ "HeapRegion::_type", "G1 region generations",
	  { { "HeapRegion::_type", HS_JDK_ANY, 22, 0, 0 },
	    { "G1HeapRegion::_type", 22, HS_JDK_ANY, 0, 0 } } },
	{ "HeapRegionType::_tag", "G1 region generations",
	  { { "HeapRegionType::_tag", HS_JDK_ANY, 22, 0, 0 },
	    { "G1HeapRegionType::_tag", 22, HS_JDK_ANY, 0, 0 } } },
	{ "HeapRegionType::YoungMask", "G1 region generations",
	  { { "HeapRegionType::YoungMask", HS_JDK_ANY, 22, 0, 0 },
	    { "G1HeapRegionType::YoungMask", 22, HS_JDK_ANY, 0, 0 } } },
	{ "HeapRegionType::HumongousMask", "G1 humongous regions",
	  { { "HeapRegionType::HumongousMask", HS_JDK_ANY, 22, 0, 0 },
	    { "G1HeapRegionType::HumongousMask", 22, HS_JDK_ANY, 0, 0 } } },
	{ "ConstMethod::_flags", "source lines of Java frames",
	  { { "ConstMethod::_flags", HS_JDK_ANY, 20, 2, 0 },
	    { "ConstMethod::_flags._flags", 21, HS_JDK_ANY, 4, 0 } } },
	{ "CompressedKlassPointers::_narrow_klass._base", "compressed class pointers",
	  { { "CompressedKlassPointers::_narrow_klass._base", HS_JDK_ANY, 21, 8, 0 },
	    { "CompressedKlassPointers::_base", 22, HS_JDK_ANY, 8, 0 } } },
	{ "CompressedKlassPointers::_narrow_klass._shift", "compressed class pointers",
	  { { "CompressedKlassPointers::_narrow_klass._shift", HS_JDK_ANY, 21, 4, 0 },
	    { "CompressedKlassPointers::_shift", 22, HS_JDK_ANY, 4, 0 } } },
	{ "CodeBlob::_code_begin", "JIT frames walked by their code blobs",
	  { { "CodeBlob::_code_begin", HS_JDK_ANY, 22, 8, HS_LA_PLAIN },
	    { "CodeBlob::_code_offset", 23, HS_JDK_ANY, 4, HS_LA_REL } } },
	{ "CodeBlob::_frame_complete_offset", "JIT frames walked by their code blobs",
	  { { "CodeBlob::_frame_complete_offset", HS_JDK_ANY, 22, 4, 0 },
	    { "CodeBlob::_frame_complete_offset", 23, HS_JDK_ANY, 2, 0 } } },
	/* compiled methods' debug info: in the code blob (offsets from its
	 * start) up to JDK 22; from JDK 25 the scopes live in a separate
	 * immutable block and the metadata after the relocations in the
	 * mutable one. JDK 23 and 24 are neither: not read. */
	{ "CompiledMethod::_method", "compiled frames named by their nmethods",
	  { { "CompiledMethod::_method", HS_JDK_ANY, 22, 8, 0 },
	    { "nmethod::_method", 25, HS_JDK_ANY, 8, 0 } } },
	{ "CompiledMethod::_scopes_data_begin", "compiled frames named by their nmethods",
	  { { "CompiledMethod::_scopes_data_begin", HS_JDK_ANY, 22, 8, 0 } } },
	{ "nmethod::_metadata_offset", "compiled frames named by their nmethods",
	  { { "nmethod::_metadata_offset", HS_JDK_ANY, 22, 4, 0 } } },
	{ "nmethod::_scopes_pcs_offset", "compiled frames named by their nmethods",
	  { { "nmethod::_scopes_pcs_offset", HS_JDK_ANY, 22, 4, 0 } } },
	{ "nmethod::_dependencies_offset", "compiled frames named by their nmethods",
	  { { "nmethod::_dependencies_offset", HS_JDK_ANY, 22, 4, 0 } } },
	{ "nmethod::_immutable_data@25", "compiled frames named by their nmethods",
	  { { "nmethod::_immutable_data", 25, HS_JDK_ANY, 8, 0 } } },
	{ "nmethod::_immutable_data_size@25", "compiled frames named by their nmethods",
	  { { "nmethod::_immutable_data_size", 25, HS_JDK_ANY, 4, 0 } } },
	{ "nmethod::_scopes_pcs_offset@25", "compiled frames named by their nmethods",
	  { { "nmethod::_scopes_pcs_offset", 25, HS_JDK_ANY, 4, 0 } } },
	{ "nmethod::_scopes_data_offset@25", "compiled frames named by their nmethods",
	  { { "nmethod::_scopes_data_offset", 25, HS_JDK_ANY, 4, 0 } } },
	{ "CodeBlob::_mutable_data@25", "compiled frames named by their nmethods",
	  { { "CodeBlob::_mutable_data", 25, HS_JDK_ANY, 8, 0 } } },
	{ "CodeBlob::_mutable_data_size@25", "compiled frames named by their nmethods",
	  { { "CodeBlob::_mutable_data_size", 25, HS_JDK_ANY, 4, 0 } } },
	{ "CodeBlob::_relocation_size@25", "compiled frames named by their nmethods",
	  { { "CodeBlob::_relocation_size", 25, HS_JDK_ANY, 4, 0 } } },
	/* the mark word: where the hash and (compact headers) the class are */
	{ "markWord::hash_shift", "object headers found below sampled addresses",
	  { { "markWord::hash_shift", HS_JDK_ANY, HS_JDK_ANY, 0, 0 } } },
	{ "markWord::hash_bits", "object headers found below sampled addresses",
	  { { "markWord::hash_bits", HS_JDK_ANY, HS_JDK_ANY, 0, 0 } } },
	{ "markWord::klass_shift", "compact object headers",
	  { { "markWord::klass_shift", 24, HS_JDK_ANY, 0, 0 } } },
};

#define HS_LAYOUT_N (sizeof(hs_layout) / sizeof(hs_layout[0]))

/* The key's index, or -1 when the name is not a key. a and b: the name
 * in two parts ("Type", "field"; b NULL for a whole name). */
static inline int hs_layout_key(const char *a, const char *b)
{
	size_t na = strlen(a);

	for (size_t i = 0; i < HS_LAYOUT_N; i++) {
		const char *k = hs_layout[i].key;

		if (strncmp(k, a, na) != 0)
			continue;
		if (!b ? k[na] == 0 : (k[na] == ':' && k[na + 1] == ':' && !strcmp(k + na + 2, b)))
			return (int)i;
	}
	return -1;
}

/* Whether alternative al holds for JDK major (0: unknown, no ranged one). */
static inline int hs_layout_in_range(const struct hs_lalt *al, uint32_t major)
{
	if (al->from == HS_JDK_ANY && al->to == HS_JDK_ANY)
		return 1;
	if (!major)
		return 0;
	return (al->from == HS_JDK_ANY || major >= al->from) &&
	       (al->to == HS_JDK_ANY || major <= al->to);
}

/* The width in bytes of a vmStructs type string, 0 when not known (a
 * struct, an unknown typedef). */
static inline uint8_t hs_layout_type_width(const char *t)
{
	static const struct { const char *t; uint8_t w; } w[] = {
		{ "bool", 1 }, { "u1", 1 }, { "jbyte", 1 }, { "char", 1 },
		{ "volatile signed char", 1 }, { "signed char", 1 },
		{ "u2", 2 }, { "jushort", 2 }, { "int16_t", 2 }, { "uint16_t", 2 },
		{ "short", 2 },
		{ "int", 4 }, { "u4", 4 }, { "uint", 4 }, { "juint", 4 }, { "jint", 4 },
		{ "unsigned int", 4 }, { "int32_t", 4 }, { "uint32_t", 4 }, { "narrowKlass", 4 },
		{ "unsigned", 4 },
		{ "size_t", 8 }, { "address", 8 }, { "intx", 8 }, { "uintx", 8 }, { "uint64_t", 8 },
		{ "intptr_t", 8 }, { "uintptr_t", 8 }, { "jlong", 8 },
	};

	if (!t)
		return 0;
	if (t[0] && t[strlen(t) - 1] == '*')
		return 8;
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		if (!strcmp(t, w[i].t))
			return w[i].w;
	return 0;
}

#endif
