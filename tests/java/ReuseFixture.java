/* ReuseFixture - planted reuse distances on Java objects moved by System.gc()
 * between reuses (docs/REUSE.md, tests/e2e/reuse.c).
 *
 *   java -XX:+UseSerialGC -XX:MarkSweepDeadRatio=0 -cp build/java ReuseFixture ROUNDS [PASSES | mid [KIB]]
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
 * "Limits".) Prints the sum.
 *
 * Those distances sit at bin edges (1 MiB = 2^20 is bin 21's lower edge).
 * "mid" plants them at the log-centres of ViRDA bins 22 and 24 (bin n =
 * [2^(n-1), 2^n - 1] bytes, log-centre 2^(n-0.5): an estimate must be 29%
 * low or 41% high to leave it), for per-bin shares (docs/REUSE.md "Per-bin
 * shares"), in the pattern of tests/fixtures/reuse_sets.c "mid": the small
 * array has S = 1448 KiB = 1,482,752 bytes (185,344 longs), the large one
 * 7 x S = 10,379,264 bytes. A group reads the small array once, then the
 * next seventh of the large one (group g: chunk g mod 7), both through
 * sweep(): as many reads of each. Between two reads of a small element the
 * thread reads the small array's other S - 8 bytes and one chunk (S bytes):
 * 2S - 8 = 2,965,496 bytes, 0.011% under 2^21.5 = 2,965,821. Between two
 * reads of a large element (7 groups apart) it reads the 7 chunks but that
 * element (7S - 8) and the small array (S): 8S - 8 = 11,862,008 bytes, 0.011%
 * under 2^23.5 = 11,863,283. Every reuse is at one of those two distances,
 * and no phase of the stream is longer than a reuse (the footprint model is
 * exact on it). What the JVM adds on the same thread between two reads: the
 * static `sink` (8 bytes), the arrays' length words, main's and sweep's
 * frames, the safepoint poll word: under 1 KiB by this count, < 0.04% of 2S
 * (not measured: no exact engine runs the JVM; the interpreter's first
 * milliseconds, before the JIT, touch more). A reuse that spans a round's
 * System.gc() also spans the collector's pass over the heap (~16 MiB live,
 * on the VM thread, if its accesses count): 1 in 896 of the small array's
 * reuses and 7 in 896 of the large one's (896 groups a round, 2.5 GiB of
 * reads). Not smaller: JIT-compiled sweeps read ~17 GB/s here, so the
 * 724 KiB of the native fixture's "mid" gives reuse times of ~85 us, near
 * the trap's cost and its jitter. `mid KIB` sets S in KiB (724: bins 21 and
 * 23). */
public class ReuseFixture {
	static final int SMALL = 1 << 17, LARGE = 1 << 20; /* longs */
	static final int PASSES = 8, CHUNKS = 64;
	static final int MID_KIB = 1448, MID_CHUNKS = 7;
	static volatile long sink;

	static long[] smallSite(int n) {
		long[] a = new long[n];
		for (int i = 0; i < n; i++)
			a[i] = i;
		return a;
	}

	static long[] largeSite(int n) {
		long[] a = new long[n];
		for (int i = 0; i < n; i++)
			a[i] = i;
		return a;
	}

	/* the elements [from, to) of a */
	static long sweep(long[] a, int from, int to) {
		long s = 0;
		for (int i = from; i < to; i++)
			s += a[i];
		return s;
	}

	public static void main(String[] args) {
		int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 20;
		boolean mid = args.length > 1 && args[1].equals("mid");
		int kib = mid && args.length > 2 ? Integer.parseInt(args[2]) : MID_KIB;
		/* PASSES 4096: one group a round, the large array read once
		 * (the small one's samples only: the interpreted test) */
		int passes = mid ? 1 : args.length > 1 ? Integer.parseInt(args[1]) : PASSES;
		/* mid: about 2.5 GiB of reads a round (896 groups at 1448 KiB) */
		int groups = mid ? MID_CHUNKS * Math.max(1, 256 * 724 / kib)
				 : Math.max(1, 4096 / (passes + 8));
		int ns = mid ? kib << 7 : SMALL, nl = mid ? MID_CHUNKS * ns : LARGE;
		int chunk = mid ? ns : LARGE, nchunks = mid ? MID_CHUNKS : 1;
		byte[][] prefix = new byte[CHUNKS][];
		for (int i = 0; i < CHUNKS; i++)
			prefix[i] = new byte[65536];
		System.gc(); /* prefix and arrays old and in allocation order */
		long[] small = smallSite(ns), large = largeSite(nl);
		System.gc();
		long sum = 0, g = 0;
		for (int r = 0; r < rounds; r++) {
			for (int k = 0; k < groups; k++, g++) {
				for (int p = 0; p < passes; p++) {
					sum += sweep(small, 0, ns);
					sink = sum; /* each pass is read again: not folded by the JIT */
				}
				int c = (int)(g % nchunks);
				sum += sweep(large, c * chunk, (c + 1) * chunk);
				sink = sum;
			}
			prefix[r % CHUNKS] = null; /* garbage below the arrays: they slide */
			System.gc();
		}
		System.out.println(sum);
	}
}
