/* hotspot_lines.c - source lines of Java methods (hotspot_lines.h). */
#include "runtimes/hotspot/hotspot_lines.h"
#include "common/unaligned.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define ML_MAX_TABLE (256u << 10) /* a line table larger than this is not believed */
#define CM_HDR_MAX 256

void os_hs_line_layout(struct os_hs_line_layout *l, const struct os_hs_vm *vm)
{
	bool ok = true;
	uint64_t cm = 0, cp = 0, bit = 1;
	const struct os_hs_res *fr;

	memset(l, 0, sizeof(*l));
	l->method_const = os_hs_field(vm, "Method::_constMethod", &ok);
	l->constants = os_hs_field(vm, "ConstMethod::_constants", &ok);
	l->cm_size = os_hs_field(vm, "ConstMethod::_constMethod_size", &ok);
	l->flags = os_hs_field(vm, "ConstMethod::_flags", &ok);
	l->code_size = os_hs_field(vm, "ConstMethod::_code_size", &ok);
	l->cp_source = os_hs_field(vm, "ConstantPool::_source_file_name_index", &ok);
	if (os_hs_vm_get(vm, "ConstMethod", &cm) != 0 || cm < 16 || cm > CM_HDR_MAX ||
	    os_hs_vm_get(vm, "ConstantPool", &cp) != 0 || cp < 16 || cp > 4096)
		ok = false;
	fr = os_hs_vm_res(vm, "ConstMethod::_flags");
	if (!fr || (fr->width != 2 && fr->width != 4))
		ok = false;
	if (os_hs_vm_get(vm, "ConstMethodFlags::_misc_has_linenumber_table", &bit) == 0 &&
	    (!bit || (bit & (bit - 1)) || bit > 0x8000))
		ok = false; /* not one bit: the flags are not understood */
	if (!ok)
		return;
	if (os_hs_stream_u5(vm, &l->u5) != 0)
		return;
	l->flags_width = fr->width;
	l->line_bit = (uint32_t)bit;
	l->cm_sizeof = (uint32_t)cm;
	l->cp_sizeof = (uint32_t)cp;
	/* the header fields read lie inside the header */
	if (l->constants + 8 > (int64_t)cm || l->cm_size + 4 > (int64_t)cm ||
	    l->flags + l->flags_width > (int64_t)cm || l->code_size + 2 > (int64_t)cm)
		return;
	l->ok = true;
}

static int32_t unzigzag(uint32_t v)
{
	return (int32_t)(v >> 1) ^ -(int32_t)(v & 1);
}

int os_hs_lines_decode(const uint8_t *p, size_t len, uint32_t *pairs, uint32_t max)
{
	return os_hs_lines_decode_enc(p, len, pairs, max, false);
}

int os_hs_lines_decode_enc(const uint8_t *p, size_t len, uint32_t *pairs, uint32_t max, bool u5)
{
	int64_t bci = 0, line = 0;
	uint32_t n = 0;
	size_t pos = 0;

	for (;;) {
		uint8_t b;

		if (pos >= len)
			return -EINVAL;
		b = p[pos++];
		if (b == 0)
			return (int)n;
		if (b == 0xFF) {
			uint32_t db, dl;

			/* a pair's two ints: never a run of zeros (a raw byte
			 * before each pair ends any) */
			if (!os_hs_read_int_enc(p, len, &pos, &db, u5, NULL) ||
			    !os_hs_read_int_enc(p, len, &pos, &dl, u5, NULL))
				return -EINVAL;
			bci += unzigzag(db);
			line += unzigzag(dl);
		} else {
			bci += b >> 3;
			line += b & 7;
		}
		if (bci < 0 || bci > 0xffff || line < 0 || line > 0xffff || n == max)
			return -EINVAL;
		pairs[n++] = (uint32_t)bci << 16 | (uint32_t)line;
	}
}

void os_hs_lines_sort(uint32_t *pairs, uint32_t n)
{
	/* insertion sort: stable, and linear on the usual (sorted) tables */
	for (uint32_t i = 1; i < n; i++) {
		uint32_t v = pairs[i], k = i;

		for (; k > 0 && (pairs[k - 1] >> 16) > (v >> 16); k--)
			pairs[k] = pairs[k - 1];
		pairs[k] = v;
	}
}

uint32_t os_hs_line_at(const uint32_t *pairs, uint32_t n, int32_t bci)
{
	uint32_t lo = 0, hi = n;

	if (bci == -1)
		bci = 0;
	if (bci < 0)
		return 0;
	/* the first entry at or after bci: HotSpot takes the first one at bci
	 * (in table order, kept by the stable sort), else the last one below */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if ((pairs[mid] >> 16) < (uint32_t)bci)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n && (pairs[lo] >> 16) == (uint32_t)bci)
		return pairs[lo] & 0xffff;
	return lo ? pairs[lo - 1] & 0xffff : 0;
}

void os_hs_mlines_free(struct os_hs_mlines *ml)
{
	free(ml->pairs);
	memset(ml, 0, sizeof(*ml));
}

int os_hs_mlines_read(struct os_hs_mlines *ml, const struct os_hs_line_layout *l,
		      os_hs_read_fn rd, void *arg, uint64_t method)
{
	uint8_t hdr[CM_HDR_MAX], *tab;
	uint64_t cm, end, lo;
	int32_t words;
	uint32_t flags, max;
	int n;

	memset(ml, 0, sizeof(*ml));
	if (!l->ok)
		return -ENOENT;
	if (!rd(arg, method + (uint64_t)l->method_const, &cm, 8) || !cm || (cm & 7))
		return -EFAULT;
	if (!rd(arg, cm, hdr, l->cm_sizeof))
		return -EFAULT;
	memcpy(&ml->cpool, hdr + l->constants, 8);
	memcpy(&words, hdr + l->cm_size, 4);
	flags = l->flags_width == 4 ? (uint32_t)os_i32_at(hdr, l->flags) : os_u16_at(hdr, l->flags);
	ml->code_size = os_u16_at(hdr, l->code_size);
	ml->code_base = cm + l->cm_sizeof;
	end = cm + (uint64_t)(words > 0 ? words : 0) * 8;
	lo = ml->code_base + ml->code_size;
	if (end < lo)
		return -EINVAL;
	if (!(flags & l->line_bit)) /* the method has a line number table */
		return 0;
	if (end - lo > ML_MAX_TABLE || end == lo)
		return -EINVAL;
	/* each pair takes a byte at least */
	max = end - lo < OS_HS_LINES_MAX ? (uint32_t)(end - lo) : OS_HS_LINES_MAX;
	tab = malloc(end - lo);
	ml->pairs = malloc(sizeof(*ml->pairs) * max);
	if (!tab || !ml->pairs) {
		free(tab);
		os_hs_mlines_free(ml);
		return -ENOMEM;
	}
	if (!rd(arg, lo, tab, end - lo)) {
		free(tab);
		os_hs_mlines_free(ml);
		return -EFAULT;
	}
	n = os_hs_lines_decode_enc(tab, end - lo, ml->pairs, max, l->u5);
	free(tab);
	if (n < 0) {
		os_hs_mlines_free(ml);
		return n;
	}
	ml->npairs = (uint32_t)n;
	os_hs_lines_sort(ml->pairs, ml->npairs);
	if (!n) {
		free(ml->pairs);
		ml->pairs = NULL;
	} else {
		uint32_t *shrunk = realloc(ml->pairs, sizeof(*ml->pairs) * (size_t)n);

		if (shrunk)
			ml->pairs = shrunk;
	}
	return 0;
}

int os_hs_source_symbol(const struct os_hs_line_layout *l, os_hs_read_fn rd, void *arg,
			uint64_t cpool, uint64_t *sym)
{
	uint16_t idx;

	*sym = 0;
	if (!l->ok || !cpool)
		return -ENOENT;
	if (!rd(arg, cpool + (uint64_t)l->cp_source, &idx, 2))
		return -EFAULT;
	if (!idx)
		return 0;
	if (!rd(arg, cpool + l->cp_sizeof + (uint64_t)idx * 8, sym, 8))
		return -EFAULT;
	return 0;
}

int32_t os_hs_bci_of(const struct os_hs_mlines *ml, uint64_t bcp, bool low13)
{
	if (!ml->code_size)
		return -1;
	if (low13) {
		if (ml->code_size > 0x2000)
			return -1;
		uint32_t bci = (uint32_t)((bcp - ml->code_base) & 0x1fff);

		return bci < ml->code_size ? (int32_t)bci : -1;
	}
	if (bcp < ml->code_base || bcp >= ml->code_base + ml->code_size)
		return -1;
	return (int32_t)(bcp - ml->code_base);
}
