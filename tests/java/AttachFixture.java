/* AttachFixture - a long-running Java workload with a planted answer for
 * `objscope attach` (tests/e2e/attach.c). It is started WITHOUT any
 * objscope flag and attached to while it runs.
 *
 * makeRandom allocates 4 MiB long[] arrays (humongous under G1: always
 * allocated outside a TLAB, so every one reaches the allocation hook even
 * in attach mode, where TLABs keep their default size) and the pool of 16
 * of them is renewed all the time (a quarter every round), so that during
 * any attach of a second or more most of the randomly read memory belongs
 * to arrays allocated while attached: that site takes most access samples.
 * makeSequential's 4 KiB arrays are made once at start (before any attach)
 * and read in order; every second a few of them are replaced and
 * System.gc() compacts the heap, so the others are moved while attached.
 *
 * Usage: java AttachFixture SECONDS [IDLE_THREADS [STOP_FILE]]
 * (ends early, with the same checks, once STOP_FILE exists)
 * Prints "ready" once the data is built, then after SECONDS "ok N M" when
 * every array still holds what was written into it (N random, M
 * sequential arrays checked), "CORRUPT ..." otherwise. The output does not
 * depend on timing.
 */
public class AttachFixture {
	static final int RANDOM = 16;
	static final int RLEN = 1 << 19; /* longs: 4 MiB */
	static final int SEQ = 1024;
	static final int SLEN = 512; /* longs: 4 KiB */

	static long[][] random = new long[RANDOM][];
	static long[] rseed = new long[RANDOM];
	static long[][] sequential = new long[SEQ][];
	static long[] sseed = new long[SEQ];
	static Object[] churn = new Object[256];

	static long[] makeRandom(int n) {
		return new long[n];
	}

	static long[] makeSequential(int n) {
		return new long[n];
	}

	static void fill(long[] a, long seed) {
		for (int i = 0; i < a.length; i++)
			a[i] = seed * 31 + i;
	}

	static boolean holds(long[] a, long seed) {
		for (int i = 0; i < a.length; i++)
			if (a[i] != seed * 31 + i)
				return false;
		return true;
	}

	static void renewRandom(int i, long seed) {
		random[i] = makeRandom(RLEN);
		rseed[i] = seed;
		fill(random[i], seed);
	}

	static void renewSequential(int i, long seed) {
		sequential[i] = makeSequential(SLEN);
		sseed[i] = seed;
		fill(sequential[i], seed);
	}

	static long readRandom(long[] state, int n) {
		long x = state[0], sum = 0;

		for (int k = 0; k < n; k++) {
			x ^= x << 13;
			x ^= x >>> 7;
			x ^= x << 17;
			int a = (int) ((x >>> 33) % RANDOM);
			int j = (int) ((x >>> 3) & (RLEN - 1));
			sum += random[a][j];
		}
		state[0] = x;
		return sum;
	}

	static long readSequential(int from, int count) {
		long sum = 0;

		for (int a = from; a < from + count; a++) {
			long[] arr = sequential[a % SEQ];
			for (int j = 0; j < SLEN; j++)
				sum += arr[j];
		}
		return sum;
	}

	public static void main(String[] args) throws Exception {
		long seconds = args.length > 0 ? Long.parseLong(args[0]) : 10;
		int idle = args.length > 1 ? Integer.parseInt(args[1]) : 0;
		java.io.File stop = args.length > 2 ? new java.io.File(args[2]) : null;
		long[] state = { 88172645463325252L };
		long seed = 1, sum = 0;
		Object gate = new Object();

		for (int t = 0; t < idle; t++) {
			Thread th = new Thread(() -> {
				synchronized (gate) {
					try {
						gate.wait();
					} catch (InterruptedException e) {
					}
				}
			});
			th.setDaemon(true);
			th.start();
		}
		for (int i = 0; i < RANDOM; i++)
			renewRandom(i, seed++);
		for (int i = 0; i < SEQ; i++)
			renewSequential(i, seed++);
		System.out.println("ready");
		System.out.flush();
		long end = System.nanoTime() + seconds * 1000000000L;
		long nextGc = System.nanoTime() + 1000000000L;
		for (int r = 0; System.nanoTime() < end && (stop == null || !stop.exists()); r++) {
			for (int k = 0; k < RANDOM / 4; k++)
				renewRandom((r * (RANDOM / 4) + k) % RANDOM, seed++);
			sum += readRandom(state, 200000);
			sum += readSequential(r * 16, 16);
			/* garbage below objscope's default --min-size */
			for (int g = 0; g < 2000; g++)
				churn[g & 255] = new long[32];
			if (System.nanoTime() > nextGc) {
				/* holes among the old arrays, then compaction */
				for (int i = r % 61; i < SEQ; i += 61)
					renewSequential(i, seed++);
				System.gc();
				nextGc = System.nanoTime() + 1000000000L;
			}
		}
		int badR = 0, badS = 0;
		for (int i = 0; i < RANDOM; i++)
			if (!holds(random[i], rseed[i]))
				badR++;
		for (int i = 0; i < SEQ; i++)
			if (!holds(sequential[i], sseed[i]))
				badS++;
		if (badR + badS > 0)
			System.out.println("CORRUPT " + badR + " " + badS + " " + sum);
		else
			System.out.println("ok " + RANDOM + " " + SEQ);
		synchronized (gate) {
			gate.notifyAll();
		}
	}
}
