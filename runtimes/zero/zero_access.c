/* zero_access.c - access paths of a Zero JVM (runtime.h op java_walk).
 *
 * A sample taken in the bytecode interpreter (BytecodeInterpreter::run)
 * has no Java frame in its native stack: the interpreted method lives in
 * the interpreter's state (the istate) on the Zero stack, which the sample
 * does not copy. While run() works, its registers hold the istate's
 * address and the bytecode pointer (bcp). So, at drain time, each sampled
 * register that points into the thread's stack above sp is tried as an
 * istate: its _method is read from the target, and it is taken only when
 * another sampled register lies inside that method's bytecodes (the HotSpot
 * adapter checks, os_hotspot_bcp_word). The bcp is the sample's own, so the
 * method and line are those of the sample: a method whose frame had gone by
 * drain time fails the check, and the sample keeps its native path.
 * The callers come from the Zero frame chain above that istate
 * (zero_frames.h, read at drain time: best effort, each frame checked the
 * same way with its own bcp), then the native frames past libjvm that the
 * stack copy holds. Everything else is HotSpot's walk.
 */
#include <string.h>

#include "attacher/core/decode.h"
#include "attacher/core/remote.h"
#include "common/shm.h"
#include "runtimes/hotspot/hotspot.h"
#include "runtimes/zero/zero_frames.h"
#include "runtimes/zero/zero_int.h"

#define ZA_STACK_SPAN (64ULL << 20) /* a candidate istate lies at most this far above sp */
#define ZA_CODE_SPAN 0x10000ULL     /* u2 _code_size: a bcp and its istate's _bcp are closer */
#define ZA_NATIVE_MAX 64            /* native frames read from the stack copy */
#define ZA_ISTATE_WORDS 5           /* _thread, _bcp, _locals, _constants, _method */
#define ZA_BCP 1
#define ZA_METHOD 4

struct za {
	struct zero *z;
	struct zero_jvm *j;
};

static bool za_istate(const struct za *a, uint64_t is, uint64_t w[ZA_ISTATE_WORDS])
{
	return os_remote_read((pid_t)a->j->pid, is, w, 8 * ZA_ISTATE_WORDS) == 8 * ZA_ISTATE_WORDS;
}

/* zero_frames.h reader and frame check over the target's memory. */
static bool za_read(void *arg, uint64_t addr, uint64_t *w)
{
	const struct za *a = arg;

	return os_remote_read((pid_t)a->j->pid, addr, w, 8) == 8;
}

static bool za_frame(void *arg, uint64_t is, uint64_t thread, uint64_t *word)
{
	const struct za *a = arg;
	uint64_t w[ZA_ISTATE_WORDS];

	if (!za_istate(a, is, w) || w[0] != thread)
		return false;
	*word = os_hotspot_bcp_word(a->z->hs, a->j->asid, w[ZA_METHOD], w[ZA_BCP]);
	return *word != 0;
}

/* The leaf: the istate among the sampled registers, checked by a bcp among
 * them. Its word into *word, its address and thread into *is, *thread. */
static bool za_leaf(const struct za *a, const uint64_t *regs, uint64_t *word, uint64_t *is,
		    uint64_t *thread)
{
	uint64_t sp = regs[OS_REG_SP], w[ZA_ISTATE_WORDS];

	for (int i = 0; i < OS_REG_COUNT; i++) {
		uint64_t v = regs[i];

		if (v <= sp || v - sp > ZA_STACK_SPAN || (v & 7) || !za_istate(a, v, w) || !w[0] ||
		    !w[ZA_BCP] || !w[ZA_METHOD])
			continue;
		for (int k = 0; k < OS_REG_COUNT; k++) {
			uint64_t b = regs[k];

			/* the sample's bcp is in the same method as the istate's
			 * last saved one: cheap, before the method is read */
			if (b - w[ZA_BCP] + ZA_CODE_SPAN >= 2 * ZA_CODE_SPAN)
				continue;
			*word = os_hotspot_bcp_word(a->z->hs, a->j->asid, w[ZA_METHOD], b);
			if (*word) {
				*is = v;
				*thread = w[0];
				return true;
			}
		}
	}
	return false;
}

/* The native frames past libjvm's last one in the stack copy's frame
 * pointer chain from the leaf (the thread's start, when the copy reaches
 * it) appended to frames[n..max). */
static uint32_t za_native(const struct zero_jvm *j, const struct os_rt_frame *start, os_rt_read read,
			  void *arg, uint64_t *frames, uint32_t n, uint32_t max)
{
	uint64_t pcs[ZA_NATIVE_MAX], fp = start->fp, next, ret;
	int m = 0, last = -1;

	while (m < ZA_NATIVE_MAX && read(arg, fp, &next, 8) && read(arg, fp + 8, &ret, 8) && ret) {
		pcs[m++] = ret;
		if (next <= fp)
			break;
		fp = next;
	}
	for (int i = 0; i < m; i++)
		if (pcs[i] >= j->jvm_lo && pcs[i] < j->jvm_hi)
			last = i;
	if (last < 0)
		return n;
	for (int i = last + 1; i < m && n < max; i++)
		frames[n++] = pcs[i];
	return n;
}

static bool in_interp(const struct zero_jvm *j, uint64_t pc)
{
	for (uint32_t i = 0; i < j->nranges; i++)
		if (pc >= j->ranges[2 * i] && pc < j->ranges[2 * i + 1])
			return true;
	return false;
}

/* The path of a sample in the interpreter; 0 when its method was not found. */
static uint32_t za_path(struct zero *z, struct zero_jvm *j, const struct os_rt_frame *start,
			os_rt_read read, void *arg, uint64_t *frames, uint32_t max)
{
	struct za a = { z, j };
	struct os_zf_layout l = { .istate_words = j->istate_words };
	uint64_t is, thread, next, sp = start->regs[OS_REG_SP];
	uint32_t n;
	bool bad, truncated;

	if (!za_leaf(&a, start->regs, &frames[0], &is, &thread))
		return 0;
	n = 1;
	/* its callers: the frames above the leaf's own */
	if (j->istate_words && n < max) {
		if (za_read(&a, is + 8ULL * j->istate_words, &next) && next) {
			n += os_zf_walk(&l, za_read, za_frame, &a, next, thread, sp, sp + ZA_STACK_SPAN,
					frames + n, max - n, &bad, &truncated);
			if (bad)
				j->chain_bad++;
		}
	}
	return za_native(j, start, read, arg, frames, n, max);
}

uint32_t zero_java_walk(struct os_runtime *rt, uint32_t asid, const struct os_rt_frame *start,
			bool leaf, os_rt_read read, void *arg, uint64_t *frames, uint32_t max)
{
	struct zero *z = zero_of(rt);
	struct zero_jvm *j = leaf ? zero_jvm_find(z, asid) : NULL;
	uint32_t n;

	if (j) {
		j->samples++;
		if (in_interp(j, start->pc)) {
			j->interp++;
			n = start->regs && max ? za_path(z, j, start, read, arg, frames, max) : 0;
			if (n)
				j->named++;
			return n;
		}
	}
	if (!zero_jvm_find(z, asid) || !z->hs->ops->java_walk)
		return 0; /* not Zero's: "do not know" */
	return z->hs->ops->java_walk(z->hs, asid, start, leaf, read, arg, frames, max);
}
