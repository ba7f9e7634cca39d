/* ObjFixture - a Java workload with a planted answer for objscope's
 * end-to-end tests (tests/e2e/java.c).
 *
 * Two allocation sites make many medium long[] arrays (4 KiB each):
 * makeRandom's arrays are read at random (cache misses: most access
 * samples), makeSequential's are read in order (cheap). A third site,
 * makeShared, is reached from two callers (two allocation contexts).
 * While reading, the program churns garbage and calls System.gc(), so the
 * arrays are copied (young collections) and compacted (full collections)
 * while they are being read. The random index comes from an xorshift
 * generator, never from the array itself. Prints a checksum that does not
 * depend on the collector or on objscope.
 *
 * Usage: java ObjFixture [rounds]
 */
public class ObjFixture {
	static final int ARRAYS = 6000;
	static final int LEN = 512; /* longs: 4 KiB */

	static long[][] random = new long[ARRAYS][];
	static long[][] sequential = new long[ARRAYS][];
	static long[][] shared = new long[64][];
	static Object[] churn = new Object[256];

	static long[] makeRandom(int n) {
		return new long[n];
	}

	static long[] makeSequential(int n) {
		return new long[n];
	}

	static long[] makeShared(int n) {
		return new long[n];
	}

	static void callerOne(int i) {
		shared[i] = makeShared(LEN);
	}

	static void callerTwo(int i) {
		shared[i] = makeShared(LEN);
	}

	static void fill(long[] a, long seed) {
		for (int i = 0; i < a.length; i++)
			a[i] = seed * 31 + i;
	}

	static void build() {
		for (int i = 0; i < 64; i++) {
			if ((i & 1) == 0)
				callerOne(i);
			else
				callerTwo(i);
			fill(shared[i], 7 * i);
		}
		for (int i = 0; i < ARRAYS; i++) {
			random[i] = makeRandom(LEN);
			fill(random[i], i);
			churn[i & 255] = new byte[512]; /* garbage between the arrays */
			sequential[i] = makeSequential(LEN);
			fill(sequential[i], -i);
		}
	}

	static long readRandom(long x, int n, long[] out) {
		long sum = 0;

		for (int k = 0; k < n; k++) {
			x ^= x << 13;
			x ^= x >>> 7;
			x ^= x << 17;
			int a = (int) ((x >>> 33) % ARRAYS);
			int j = (int) ((x >>> 3) & (LEN - 1));
			sum += random[a][j];
		}
		out[0] = x;
		return sum;
	}

	static long readSequential(int from, int count) {
		long sum = 0;

		for (int a = from; a < from + count; a++) {
			long[] arr = sequential[a % ARRAYS];
			for (int j = 0; j < LEN; j++)
				sum += arr[j];
		}
		return sum;
	}

	static long readShared() {
		long sum = 0;

		for (long[] arr : shared)
			sum += arr[LEN / 2];
		return sum;
	}

	public static void main(String[] args) {
		int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 60;
		long sum = 0;
		long[] state = { 88172645463325252L };

		build();
		for (int r = 0; r < rounds; r++) {
			sum += readRandom(state[0], 400000, state);
			sum += readSequential(r * 50, 50);
			sum += readShared();
			/* garbage below objscope's default --min-size: collections
			 * without a flood of allocation events */
			for (int g = 0; g < 4000; g++)
				churn[g & 255] = new long[96];
			if (r % 10 == 5) {
				/* drop and replace some arrays: holes for compaction */
				for (int i = r; i < ARRAYS; i += 97) {
					random[i] = makeRandom(LEN);
					fill(random[i], i);
				}
				System.gc();
			}
		}
		System.out.println("checksum " + sum);
	}
}
