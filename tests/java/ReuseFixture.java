/* ReuseFixture - planted reuse distances on Java objects moved by System.gc()
 * between reuses (docs/REUSE.md, tests/e2e/reuse.c).
 *
 *   java -XX:+UseSerialGC -XX:MarkSweepDeadRatio=0 -cp build/java ReuseFixture ROUNDS [PASSES]
 *
 * Two long[] from two allocation sites: SMALL (1 MiB, smallSite) and LARGE
 * (8 MiB, largeSite). A group reads every element of the small array
 * PASSES (8) times over, then every element of the large one once: both
 * arrays get the same number of reads, so both get samples and reuses.
 * After 256 groups (4 GiB of reads), a round, one chunk of the garbage allocated
 * before the arrays is dropped and System.gc() runs: the full collection
 * (no dead space left in place: MarkSweepDeadRatio=0) slides both arrays
 * down by the chunk's size, so the reuses that span it keep their identity
 * (object + offset) only if the profiler follows the move.
 * Exact reuse distances (distinct bytes touched between two reads of one
 * element): small 1 MiB (7 of its 8 reuses a group; the 8th spans the large
 * sweep: 9 MiB), large 8 MiB + 1 MiB. (Not smaller: a reuse time must stand
 * well above the jitter of a watchpoint trap's cost, docs/REUSE.md
 * "Limits".) Prints the sum. */
public class ReuseFixture {
	static final int SMALL = 1 << 17, LARGE = 1 << 20; /* longs */
	static final int PASSES = 8, CHUNKS = 64;
	static volatile long sink;

	static long[] smallSite() {
		long[] a = new long[SMALL];
		for (int i = 0; i < SMALL; i++)
			a[i] = i;
		return a;
	}

	static long[] largeSite() {
		long[] a = new long[LARGE];
		for (int i = 0; i < LARGE; i++)
			a[i] = i;
		return a;
	}

	static long sweep(long[] a) {
		long s = 0;
		for (int i = 0; i < a.length; i++)
			s += a[i];
		return s;
	}

	public static void main(String[] args) {
		int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 20;
		/* PASSES 4096: one group a round, the large array read once
		 * (the small one's samples only: the interpreted test) */
		int passes = args.length > 1 ? Integer.parseInt(args[1]) : PASSES;
		int groups = Math.max(1, 4096 / (passes + 8));
		byte[][] prefix = new byte[CHUNKS][];
		for (int i = 0; i < CHUNKS; i++)
			prefix[i] = new byte[65536];
		System.gc(); /* prefix and arrays old and in allocation order */
		long[] small = smallSite(), large = largeSite();
		System.gc();
		long sum = 0;
		for (int r = 0; r < rounds; r++) {
			for (int k = 0; k < groups; k++) {
				for (int p = 0; p < passes; p++) {
					sum += sweep(small);
					sink = sum; /* each pass is read again: not folded by the JIT */
				}
				sum += sweep(large);
				sink = sum;
			}
			prefix[r % CHUNKS] = null; /* garbage below the arrays: they slide */
			System.gc();
		}
		System.out.println(sum);
	}
}
