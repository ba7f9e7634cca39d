/* hotspot_scan.c - the object holding a sampled heap address, found by
 * reading headers below it (see hotspot_scan.h). */
#include "runtimes/hotspot/hotspot_scan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define AHEAD 1024u               /* bytes read above the address */
#define MAX_CLASS_NAME 1024
#define KLASS_CACHE_MAX 65536
#define NEG_CACHE_MAX 65536

void os_hs_scan_init(struct os_hs_scan *s)
{
	memset(s, 0, sizeof(*s));
	os_hmap_init(&s->klass);
	os_hmap_init(&s->neg);
	s->max_per_sec = OS_HS_SCAN_PER_SEC;
}

void os_hs_scan_destroy(struct os_hs_scan *s)
{
	os_hmap_destroy(&s->klass);
	os_hmap_destroy(&s->neg);
	free(s->buf);
	memset(s, 0, sizeof(*s));
}

static uint64_t cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* A mark word HotSpot may leave in a header: unlocked or biased (bits
 * above the 31-bit hash unused unless a biasing thread is named), stack
 * locked or inflated (a pointer to a lock record or monitor). */
static bool mark_ok(const struct os_hs_layout *lay, int c, uint64_t mark)
{
	switch (mark & 3) {
	case 1:
		if (c == 2) /* compact headers: the class above the hash */
			return os_hs_decode_klass(lay, mark) != 0;
		if ((mark & 7) == 5) /* biased (JDK 17), self-forwarded (24+) */
			return (mark >> 47) == 0;
		/* the hash's end: bit 39 on JDK 17, 42 on JDK 25 */
		return (mark >> (lay->mark_hash_top ? lay->mark_hash_top : 39)) == 0;
	case 0:
	case 2:
		return mark > 4096 && (mark >> 47) == 0;
	default:
		/* 3: forwarded by a collection, the copy's address (what a
		 * collection leaves in from-space until the region is reused,
		 * where its GC threads' samples fall): the class word after it
		 * is intact */
		return mark > 4096 && (mark >> 47) == 0;
	}
}

static bool fwd_mark(const uint8_t *hdr)
{
	uint64_t mark;

	memcpy(&mark, hdr, 8);
	return (mark & 3) == 3;
}

/* A binary class name: '/'-separated parts, none empty, of letters,
 * digits, "_$.+-" and well-formed UTF-8; not starting with a digit (a
 * hidden class's last part, "0x0000000800c03000", may). */
static bool class_path_ok(const unsigned char *n, uint16_t len)
{
	if (!len || n[0] == '/' || n[len - 1] == '/' || (n[0] >= '0' && n[0] <= '9'))
		return false;
	for (uint16_t i = 0; i < len; i++) {
		unsigned char c = n[i];
		uint16_t more;

		if (c == '/' && n[i + 1] == '/')
			return false;
		if (c < 0x80) {
			if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			      (c >= '0' && c <= '9') || (c && strchr("_$/.+-", c))))
				return false;
			continue;
		}
		/* UTF-8 (HotSpot's modified UTF-8 writes U+0000 as C0 80) */
		if (c >= 0xc0 && c <= 0xdf)
			more = 1;
		else if (c >= 0xe0 && c <= 0xef)
			more = 2;
		else if (c >= 0xf0 && c <= 0xf4)
			more = 3;
		else
			return false; /* a continuation byte without a lead */
		if (i + more >= len)
			return false;
		for (; more; more--)
			if ((n[++i] & 0xc0) != 0x80)
				return false;
	}
	return true;
}

bool os_hs_class_name_ok(const char *name, uint16_t len)
{
	const unsigned char *n = (const unsigned char *)name;
	uint16_t i = 0;

	while (i < len && n[i] == '[')
		i++;
	if (!i)
		return class_path_ok(n, len);
	/* an array descriptor: [J, [[I, [Ljava/lang/Object; */
	if (i + 1 == len)
		return n[i] && strchr("BCDFIJSZ", n[i]);
	return i + 3 <= len && n[i] == 'L' && n[len - 1] == ';' &&
	       class_path_ok(n + i + 1, (uint16_t)(len - i - 2));
}

/* Layout helper of a real Klass at k (cached); false when k is not one. */
static bool klass_ok(struct os_hs_scan *s, const struct os_hs_vm *vm, const struct os_hs_mem *m,
		     uint32_t pid, uint64_t k, int32_t *lh)
{
	uint64_t v, sym, lh_off;
	uint16_t len;
	char name[MAX_CLASS_NAME];
	bool ok = false;

	if (!k || (k & 7) || (k >> 47))
		return false;
	if (os_hmap_get(&s->klass, k, &v)) {
		*lh = (int32_t)(uint32_t)v;
		return v != 0;
	}
	if (os_hs_vm_get(vm, "Klass::_layout_helper", &lh_off) == 0 && vm->lay.klass_name >= 0 &&
	    m->read(m->arg, pid, k + lh_off, lh, 4) == 4 && *lh != 0 &&
	    m->read(m->arg, pid, k + (uint64_t)vm->lay.klass_name, &sym, 8) == 8 && sym &&
	    !(sym & 7) && !(sym >> 47) &&
	    m->read(m->arg, pid, sym + (uint64_t)vm->lay.symbol_length, &len, 2) == 2 && len &&
	    len < sizeof(name) &&
	    m->read(m->arg, pid, sym + (uint64_t)vm->lay.symbol_body, name, len) == len &&
	    os_hs_class_name_ok(name, len))
		ok = (name[0] == '[') == (*lh < 0);
	if (s->klass.count < KLASS_CACHE_MAX)
		os_hmap_put(&s->klass, k, ok ? (1ULL << 32 | (uint32_t)*lh) : 0);
	return ok;
}

/* Bytes of the object whose header is at hdr[0..] (klass word at ko bytes,
 * array length after it), 0 when not an object. */
static uint64_t size_of(struct os_hs_scan *s, const struct os_hs_vm *vm,
			const struct os_hs_mem *m, uint32_t pid, const uint8_t *hdr, int c,
			uint64_t *klass)
{
	struct os_hs_layout lay = vm->lay;
	uint64_t word = 0, mark;
	int64_t ko;
	int32_t lh, len;

	lay.compressed_klass = c;
	ko = os_hs_klass_word_offset(&lay);
	/* the headers this code knows: mark, klass; compact: the class in the
	 * mark */
	if (c == 2 ? ko != 0 : ko != 8)
		return 0;
	memcpy(&mark, hdr, 8);
	if (!mark_ok(&lay, c, mark))
		return 0;
	memcpy(&word, hdr + ko, c == 1 ? 4 : 8);
	if (!word)
		return 0;
	*klass = os_hs_decode_klass(&lay, word);
	if (!klass_ok(s, vm, m, pid, *klass, &lh))
		return 0;
	len = 0;
	if (lh < 0)
		memcpy(&len, hdr + os_hs_array_length_offset(&lay), 4);
	return os_hs_object_bytes(lh, len);
}

/* Header layouts to try: the one learnt, else compressed then not. */
static int modes(const struct os_hs_vm *vm, int *c)
{
	if (vm->lay.compressed_klass >= 0) {
		c[0] = vm->lay.compressed_klass;
		return 1;
	}
	c[0] = vm->lay.oop_cklass >= 0 ? 1 : 0;
	c[1] = 0;
	if (vm->lay.mark_klass_shift) {
		c[c[0] ? 2 : 1] = 2;
		return c[0] ? 3 : 2;
	}
	return c[0] ? 2 : 1;
}

static int find(struct os_hs_scan *s, struct os_hs_vm *vm, const struct os_hs_mem *m,
		uint32_t pid, uint64_t lo, uint64_t hi, uint64_t addr,
		bool (*covered)(void *arg, uint64_t start, uint64_t end), void *arg,
		struct os_hs_found *out)
{
	uint64_t a8 = addr & ~7ULL, wlo, whi, nw, klass = 0, nk;
	struct os_hs_found fb = { 0 }; /* a candidate followed by neither zero nor a header */
	uint64_t back = s->back && s->back < OS_HS_SCAN_BACK ? s->back : OS_HS_SCAN_BACK;
	uint8_t *w;
	int c[3], nc = modes(vm, c);

	if (!s->buf && !(s->buf = malloc(OS_HS_SCAN_BACK + AHEAD + 64)))
		return 0;
	w = (uint8_t *)s->buf;
	wlo = a8 - lo > back ? a8 - back : (lo + 7) & ~7ULL;
	whi = hi - a8 > AHEAD ? a8 + AHEAD : hi & ~7ULL;
	/* the heap may be committed in parts: fall back to the address's page */
	if (whi <= wlo || m->read(m->arg, pid, wlo, w, whi - wlo) != (ssize_t)(whi - wlo)) {
		wlo = a8 & ~4095ULL;
		if (wlo < lo)
			wlo = (lo + 7) & ~7ULL;
		whi = (a8 | 4095) + 1 < hi ? (a8 | 4095) + 1 : hi & ~7ULL;
		if (whi <= wlo || whi - wlo < 24 ||
		    m->read(m->arg, pid, wlo, w, whi - wlo) != (ssize_t)(whi - wlo))
			return 0;
	}
	nw = (whi - wlo) / 8;
	for (uint64_t p = a8; p >= wlo && p + 24 <= whi; p -= 8) {
		const uint8_t *hdr = w + (p - wlo);

		for (int i = 0; i < nc; i++) {
			uint64_t size = size_of(s, vm, m, pid, hdr, c[i], &klass), end = p + size;

			if (size < 16 || end <= addr)
				continue;
			if (end > hi || (covered && covered(arg, p, end))) {
				s->rejected++;
				continue;
			}
			/* what follows must be unused space or another object */
			if (end + 24 <= whi && (end - wlo) / 8 < nw) {
				const uint8_t *next = w + (end - wlo);
				uint64_t nm;

				memcpy(&nm, next, 8);
				if (nm && !size_of(s, vm, m, pid, next, c[i], &nk)) {
					/* the newest object of a TLAB is followed by what
					 * the memory held before (TLABs are not zeroed):
					 * kept in case no object further down covers the
					 * address (one that does holds this "header" in
					 * its data: a forgery) */
					if (!fb.size && (vm->lay.compressed_klass < 0 ||
							 vm->lay.compressed_klass == c[i]))
						fb = (struct os_hs_found){ p, size, klass,
									   fwd_mark(hdr) };
					s->rejected++;
					continue;
				}
			}
			if (vm->lay.compressed_klass < 0)
				vm->lay.compressed_klass = c[i];
			*out = (struct os_hs_found){ p, size, klass, fwd_mark(hdr) };
			return 1;
		}
		if (p < 8)
			break;
	}
	if (fb.size) { /* nothing below it covers the address */
		s->unverified_end++;
		*out = fb;
		return 1;
	}
	/* large objects: G1 humongous ones start at a region boundary */
	for (uint64_t al = 1ULL << 20, prev = UINT64_MAX; !s->back && al <= 1ULL << 25; al <<= 1) {
		uint64_t p = addr & ~(al - 1), hdr[3];

		if (p < lo || p >= wlo || p == prev)
			continue;
		prev = p;
		if (m->read(m->arg, pid, p, hdr, sizeof(hdr)) != sizeof(hdr))
			continue;
		for (int i = 0; i < nc; i++) {
			uint64_t size = size_of(s, vm, m, pid, (const uint8_t *)hdr, c[i], &klass);

			if (size < 16 || p + size <= addr)
				continue;
			if (p + size > hi || (covered && covered(arg, p, p + size))) {
				s->rejected++;
				continue;
			}
			if (vm->lay.compressed_klass < 0)
				vm->lay.compressed_klass = c[i];
			*out = (struct os_hs_found){ p, size, klass, fwd_mark((const uint8_t *)hdr) };
			return 1;
		}
	}
	return 0;
}

int os_hs_scan_find(struct os_hs_scan *s, struct os_hs_vm *vm, const struct os_hs_mem *m,
		    uint32_t pid, uint64_t lo, uint64_t hi, uint64_t addr, uint64_t now_ns,
		    bool (*covered)(void *arg, uint64_t start, uint64_t end), void *arg,
		    struct os_hs_found *out)
{
	uint64_t page = addr >> 12, when, t0;
	int rc;

	if (addr < lo || addr >= hi) {
		s->not_found++;
		return 0;
	}
	if (os_hmap_get(&s->neg, page, &when) && now_ns - when < OS_HS_SCAN_NEG_NS) {
		s->skipped++;
		return -EAGAIN;
	}
	if (now_ns - s->sec_start >= 1000000000ULL) {
		s->sec_start = now_ns;
		s->sec_scans = 0;
	}
	if (s->max_per_sec && s->sec_scans >= s->max_per_sec) {
		s->skipped++;
		return -EAGAIN;
	}
	s->sec_scans++;
	s->scans++;
	t0 = cpu_now();
	rc = find(s, vm, m, pid, lo, hi, addr, covered, arg, out);
	s->cpu_ns += cpu_now() - t0;
	if (rc == 1) {
		s->found++;
		os_hmap_del(&s->neg, page);
		return 1;
	}
	s->not_found++;
	if (s->neg.count >= NEG_CACHE_MAX) { /* forget all: entries are short-lived */
		os_hmap_destroy(&s->neg);
		os_hmap_init(&s->neg);
	}
	os_hmap_put(&s->neg, page, now_ns);
	return 0;
}
