/* ReplicaFixture - a Java workload with a planted answer for `--replicas`
 * (tests/e2e/replicas.c).
 *
 * makeSame's byte[4096] arrays are each filled from the same input: all of
 * them are replicas of each other. makeRand's are each filled with
 * different random bytes. Both sets are then read over and over. Expected:
 * theta and the exact figure >= 0.9 for makeSame, <= 0.1 for makeRand.
 * Little garbage is made while reading (few collections). Prints a checksum
 * that does not depend on the run time.
 *
 * Usage: java ReplicaFixture [seconds]   (default 3)
 */
public class ReplicaFixture {
	static final int ARRAYS = 512;
	static final int LEN = 4096;

	static byte[][] same = new byte[ARRAYS][];
	static byte[][] rand = new byte[ARRAYS][];

	/* One method per site, each with its own loop: even when the JIT
	 * compiles (OSR) and inlines, the allocating method stays apart. */
	static void makeSame(byte[] input) {
		for (int i = 0; i < ARRAYS; i++) {
			same[i] = new byte[LEN];
			System.arraycopy(input, 0, same[i], 0, LEN);
		}
	}

	static long makeRand(long x) {
		for (int i = 0; i < ARRAYS; i++) {
			rand[i] = new byte[LEN];
			for (int k = 0; k < LEN; k++) {
				x ^= x << 13; x ^= x >>> 7; x ^= x << 17;
				rand[i][k] = (byte) x;
			}
		}
		return x;
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
		long x = 0x2545F4914F6CDD1DL;

		for (int i = 0; i < LEN; i++) {
			x ^= x << 13; x ^= x >>> 7; x ^= x << 17;
			input[i] = (byte) x;
		}
		makeSame(input);
		makeRand(x);
		long t0 = System.nanoTime(), sink = 0;
		do {
			for (int i = 0; i < ARRAYS; i++)
				sink += read(same[i]) - read(rand[i]);
		} while (System.nanoTime() - t0 < (long) (secs * 1e9));
		long sum = 0;
		for (int i = 0; i < ARRAYS; i++)
			sum = sum * 31 + read(same[i]) * 7 + read(rand[i]);
		System.out.println("ReplicaFixture: checksum " + Long.toHexString(sum)
				   + (sink == Long.MIN_VALUE ? "!" : ""));
	}
}
