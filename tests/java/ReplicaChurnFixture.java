/* ReplicaChurnFixture - a Java workload with a planted answer for
 * `--replicas` on short-lived objects (tests/e2e/replicas.c).
 *
 * Two sites make byte[4096] arrays in a loop; each keeps its last KEEP
 * arrays (older ones become garbage), so an array lives a few
 * milliseconds. makeSame's are each filled from the same input: all are
 * replicas of each other; makeRand's with different random bytes. Every
 * iteration reads the new arrays and an older one of each. Expected: theta
 * and the exact figure >= 0.9 for makeSame, <= 0.1 for makeRand. Prints a
 * checksum that does not depend on the run time.
 *
 * Usage: java ReplicaChurnFixture [seconds]   (default 3; a "ready" line
 * first when REPLICA_CHURN_READY is set: a target for `objscope attach`)
 */
public class ReplicaChurnFixture {
	static final int KEEP = 128;
	static final int LEN = 4096;
	static final int READS = 4;

	static byte[][] same = new byte[KEEP][];
	static byte[][] rand = new byte[KEEP][];
	static long x = 0x2545F4914F6CDD1DL;

	/* One method per site: even when the JIT inlines, the allocating
	 * method stays apart. */
	static byte[] makeSame(byte[] input) {
		byte[] a = new byte[LEN];
		System.arraycopy(input, 0, a, 0, LEN);
		return a;
	}

	static byte[] makeRand() {
		byte[] a = new byte[LEN];
		for (int k = 0; k < LEN; k++) {
			x ^= x << 13; x ^= x >>> 7; x ^= x << 17;
			a[k] = (byte) x;
		}
		return a;
	}

	static long read(byte[] a) {
		long s = 0;
		for (int i = 0; i < a.length; i++)
			s += a[i];
		return s;
	}

	public static void main(String[] args) {
		double secs = args.length > 0 ? Double.parseDouble(args[0]) : 3.0;
		byte[] input = new byte[LEN];
		long t0 = System.nanoTime(), sink = 0, it = 0;

		for (int i = 0; i < LEN; i++) {
			x ^= x << 13; x ^= x >>> 7; x ^= x << 17;
			input[i] = (byte) x;
		}
		if (System.getenv("REPLICA_CHURN_READY") != null) { /* objscope attach (e2e) */
			System.out.println("ready");
			System.out.flush();
		}
		do {
			int i = (int) (it % KEEP), old = (i + KEEP / 2) % KEEP;
			same[i] = makeSame(input);
			rand[i] = makeRand();
			for (int r = 0; r < READS; r++)
				sink += read(same[i]) - read(rand[i]);
			if (same[old] != null)
				sink += read(same[old]) - read(rand[old]);
			it++;
		} while (it < KEEP || System.nanoTime() - t0 < (long) (secs * 1e9));
		if (System.getenv("REPLICA_CHURN_VERBOSE") != null)
			System.err.printf("ReplicaChurnFixture: %d iterations, an array lives %.2f ms%n",
					  it, (System.nanoTime() - t0) / 1e6 / it * KEEP);
		long sum = 0;
		for (int i = 0; i < KEEP; i++)
			sum = sum * 31 + read(same[i]);
		System.out.println("ReplicaChurnFixture: checksum " + Long.toHexString(sum)
				   + (sink == Long.MIN_VALUE ? "!" : ""));
	}
}
