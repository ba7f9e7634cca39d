/* hotspot_names.c - Java-style names of classes, JIT symbols and JVM
 * threads (pure functions of their input). */
#include <stdio.h>
#include <string.h>

#include "runtimes/hotspot/hotspot.h"
#include "common/profile.h"

static const char *primitive(char c)
{
	switch (c) {
	case 'B': return "byte";
	case 'C': return "char";
	case 'D': return "double";
	case 'F': return "float";
	case 'I': return "int";
	case 'J': return "long";
	case 'S': return "short";
	case 'Z': return "boolean";
	case 'V': return "void";
	default: return NULL;
	}
}

/* Appends s[0..n) to buf at *at with '/' -> '.'. */
static void put(char *buf, size_t len, size_t *at, const char *s, size_t n, bool dots)
{
	for (size_t i = 0; i < n; i++) {
		if (*at + 1 < len)
			buf[*at] = dots && s[i] == '/' ? '.' : s[i];
		(*at)++;
	}
	if (len)
		buf[*at < len ? *at : len - 1] = 0;
}

int os_hs_java_class(const char *in, char *buf, size_t len)
{
	size_t dims = 0, at = 0, n;
	const char *p;

	if (len)
		buf[0] = 0;
	while (in[dims] == '[')
		dims++;
	p = in + dims;
	n = strlen(p);
	if (dims && n == 1 && primitive(p[0])) {
		put(buf, len, &at, primitive(p[0]), strlen(primitive(p[0])), false);
	} else if (n >= 2 && p[0] == 'L' && p[n - 1] == ';') {
		put(buf, len, &at, p + 1, n - 2, true);
	} else {
		put(buf, len, &at, p, n, true);
	}
	for (size_t i = 0; i < dims; i++)
		put(buf, len, &at, "[]", 2, false);
	return (int)at;
}

int os_hs_jit_name(const char *raw, char *buf, size_t len)
{
	const char *paren = strchr(raw, '('), *sep = strstr(raw, "::");
	const char *start, *end;
	size_t at = 0;

	if (len)
		buf[0] = 0;
	if (sep && (!paren || sep < paren)) {
		/* "pkg.Class::method" or "Lpkg/Class;::method" */
		const char *cls = raw, *cend = sep, *m = sep + 2, *mend;

		while (*cls == ' ')
			cls++;
		if (cls[0] == 'L' && cend > cls + 1 && cend[-1] == ';') {
			cls++;
			cend--;
		}
		mend = m + strcspn(m, " (");
		put(buf, len, &at, cls, (size_t)(cend - cls), true);
		put(buf, len, &at, ".", 1, false);
		put(buf, len, &at, m, (size_t)(mend - m), false);
		return (int)at;
	}
	if (paren) {
		/* "RetType pkg.Class.method(args)": the last word before '(' */
		end = paren;
		while (end > raw && end[-1] == ' ')
			end--;
		start = end;
		while (start > raw && start[-1] != ' ')
			start--;
		if (memchr(start, '.', (size_t)(end - start)) && end > start) {
			put(buf, len, &at, start, (size_t)(end - start), true);
			return (int)at;
		}
	}
	/* stubs, adapters, "Interpreter": as they are */
	put(buf, len, &at, raw, strlen(raw), false);
	return (int)at;
}

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

int os_hs_thread_kind(const char *name)
{
	static const char *const gc[] = { "GC Thread#", "G1 ", "ParGC", "Parallel GC",
					  "ZWorker", "ZDirector", "ZDriver", "ZStat",
					  "ZUnmapper", "ZUncommitter", "ZRelocate", "Shenandoah",
					  NULL };
	static const char *const jit[] = { "C1 CompilerThre", "C2 CompilerThre", "Sweeper thread",
					   "JVMCI", "CompilerThread", NULL };
	static const char *const vm[] = { "VM Thread", "VM Periodic Tas", "Service Thread",
					  "Monitor Deflati", "Signal Dispatch", "Finalizer",
					  "Reference Handl", "Common-Cleaner", "Notification Th",
					  "Attach Listener", "StrDedup", NULL };

	if (!name)
		return OS_THR_JAVA;
	for (int i = 0; gc[i]; i++)
		if (starts(name, gc[i]))
			return OS_THR_GC;
	for (int i = 0; jit[i]; i++)
		if (starts(name, jit[i]))
			return OS_THR_JIT;
	for (int i = 0; vm[i]; i++)
		if (starts(name, vm[i]))
			return OS_THR_VM;
	return OS_THR_JAVA;
}

/* T / size rounded to fixed point, at least 1.0, at most OS_W_MAX. */
static uint64_t ratio_q(uint64_t t, uint64_t size)
{
	unsigned __int128 q;

	if (!size || t <= size)
		return OS_W_ONE;
	q = (((unsigned __int128)t << OS_W_FRAC) + size / 2) / size;
	return q > OS_W_MAX ? OS_W_MAX : (uint64_t)q;
}

uint64_t os_hs_weight(uint32_t mode, uint64_t tlab, uint64_t refill_bytes, uint64_t size)
{
	switch (mode) {
	case OS_JVM_MODE_HYBRID:
		/* A fixed TLAB of T bytes: an object of size s < T is seen
		 * exactly when it does not fit the TLAB's free rest, at the
		 * refill it causes; with the rest spread evenly over [0, T)
		 * that happens with probability s / T: weight T / s. Objects
		 * >= T are always seen. An outside-TLAB event weighs 1
		 * (os_hs_weight_jvm). */
		if (!refill_bytes)
			return OS_W_ONE;
		return ratio_q(tlab, size);
	case OS_JVM_MODE_SAMPLED:
		/* adaptive TLABs: the refill's TLAB size stands in for T. An
		 * outside-TLAB event carries no TLAB size: weight 1 (an
		 * underestimate for objects below the TLAB size, docs/JAVA.md) */
		return ratio_q(refill_bytes, size);
	default:
		return OS_W_ONE;
	}
}

static uint64_t hs_weight_unthinned(const struct os_jvm_info *info, uint64_t tlab,
				    uint64_t refill_bytes, uint64_t size);

uint64_t os_hs_weight_jvm(const struct os_jvm_info *info, uint64_t refill_bytes, uint64_t size)
{
	/* a TLAB drawn around OS_HS_FOCUS_TLAB ended here (a focus) */
	uint64_t w, t = refill_bytes & OS_HS_FOCUS_BIT && info->tlab_bytes > OS_HS_FOCUS_TLAB
				? OS_HS_FOCUS_TLAB
				: info->tlab_bytes;

	refill_bytes &= ~OS_HS_FOCUS_BIT;
	if (!(refill_bytes & OS_HS_THIN_BIT))
		return hs_weight_unthinned(info, t, refill_bytes, size);
	/* kept with probability 1 / OS_HS_SMALL_THIN besides (hotspot_abi.h) */
	w = hs_weight_unthinned(info, t, refill_bytes & ~OS_HS_THIN_BIT, size);
	return w > OS_W_MAX / OS_HS_SMALL_THIN ? OS_W_MAX : w * OS_HS_SMALL_THIN;
}

static uint64_t hs_weight_unthinned(const struct os_jvm_info *info, uint64_t tlab,
				    uint64_t refill_bytes, uint64_t size)
{
	double t = (double)tlab, s = (double)size, p, q;

	/* outside any TLAB (refill_bytes 0): os_hs_weight's 1, below */
	if (info->mode != OS_JVM_MODE_HYBRID || !(info->flags & OS_JVM_F_TLAB_DITHER) || !size ||
	    !tlab || !refill_bytes)
		return os_hs_weight(info->mode, tlab, refill_bytes, size);
	/* An object allocated outside any TLAB (refill_bytes 0) is seen for
	 * sure: hybrid mode sets TLABRefillWasteFraction=1, so a TLAB's rest
	 * is never kept for a later object; an object goes outside only when
	 * the heap gives its thread no TLAB (G1 at the end of an allocation
	 * region: HotSpot's compute_size offers the region's rest, the TLAB
	 * allocation fails, and every allocation of the thread goes outside
	 * until the region changes; a full heap; a collection pending) or
	 * when it is larger than a TLAB may be. Every object so made reaches
	 * the outside-TLAB hook: weight 1. Weighed T / s, the runs of ~40 objects G1 makes so at
	 * every region's end raised its estimates of 32- and 40-byte objects by 6% at T = 4 KiB
	 * (tests/java/LifetimeFixture 300 4000000 100000 24 4; Serial, whose
	 * TLABs never fail, within 0.5%).
	 *
	 * Every TLAB's free space (after the object that made it) is D bytes,
	 * D uniform in [T/2, 3T/2) (runtimes/hotspot/target/hotspot.c hs_dither), and every
	 * object that does not fit the rest makes a new TLAB. The rest met by
	 * an object is then the residual of a renewal process: P(rest < s) =
	 * E[min(s, D)] / E[D], that is s / T for s <= T/2, 1 for s >= 3T/2 and
	 * (3Ts - s^2 - T^2/4) / (2T^2) between. The weight is its inverse. */
	if (s >= 1.5 * t)
		return OS_W_ONE;
	if (s <= 0.5 * t)
		p = s / t;
	else
		p = (3.0 * t * s - s * s - 0.25 * t * t) / (2.0 * t * t);
	q = (double)OS_W_ONE / p + 0.5;
	if (q < (double)OS_W_ONE)
		return OS_W_ONE;
	return q > (double)OS_W_MAX ? OS_W_MAX : (uint64_t)q;
}

uint64_t os_hs_zgc_mask(uint64_t addr, uint64_t offset_mask)
{
	uint64_t view;

	if (!offset_mask || (offset_mask & (offset_mask + 1)))
		offset_mask = (1ULL << 42) - 1;
	view = addr / (offset_mask + 1);
	if (view == 1 || view == 2 || view == 4)
		return addr & offset_mask;
	return addr;
}
