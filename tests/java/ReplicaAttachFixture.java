/* ReplicaAttachFixture - a Java workload with a planted answer for
 * `objscope attach --replicas` (tests/e2e/replicas.c, attach_*): every
 * object is built BEFORE the attach, and the JVM is started without any
 * objscope option.
 *
 * Objects born before the attach have no allocation path: objscope groups
 * them by class (docs/REPLICAS.md). So each planted set has its own class:
 *   copies  byte[4096] x ARRAYS, all filled from the same input (replicas)
 *   random  long[512]  x ARRAYS, each filled with different random words
 *   Same    instances x INSTANCES, six long fields, all equal (replicas)
 *   Rand    instances x INSTANCES, six long fields, all different
 * Expected: theta and the exact figure >= 0.9 for byte[] and Same, <= 0.1
 * for long[] and Rand. Then everything is read over and over for SECONDS,
 * allocating nothing (no collection with -Xms/-Xmx set), and a checksum that
 * does not depend on the run time is printed.
 *
 * Usage: java ReplicaAttachFixture SECONDS   (prints "ready" first)
 */
public class ReplicaAttachFixture {
	static final int ARRAYS = 200;
	static final int LEN = 4096;
	static final int INSTANCES = 2000;

	static final class Same {
		long a, b, c, d, e, f;

		Same(long x) {
			a = x; b = x * 3; c = x * 5; d = x * 7; e = x * 11; f = x * 13;
		}
	}

	static final class Rand {
		long a, b, c, d, e, f;

		Rand(long[] x) {
			a = next(x); b = next(x); c = next(x); d = next(x); e = next(x); f = next(x);
		}
	}

	static byte[][] copies = new byte[ARRAYS][];
	static long[][] random = new long[ARRAYS][];
	static Same[] same = new Same[INSTANCES];
	static Rand[] rand = new Rand[INSTANCES];

	static long next(long[] x) {
		long v = x[0];

		v ^= v << 13; v ^= v >>> 7; v ^= v << 17;
		x[0] = v;
		return v;
	}

	static long read(byte[] a) {
		long s = 0;
		for (int i = 0; i < a.length; i++)
			s += a[i];
		return s;
	}

	static long read(long[] a) {
		long s = 0;
		for (int i = 0; i < a.length; i++)
			s ^= a[i];
		return s;
	}

	static long readSame() {
		long s = 0;
		for (int i = 0; i < INSTANCES; i++) {
			Same o = same[i];
			s += o.a + o.b + o.c + o.d + o.e + o.f;
		}
		return s;
	}

	static long readRand() {
		long s = 0;
		for (int i = 0; i < INSTANCES; i++) {
			Rand o = rand[i];
			s ^= o.a + o.b + o.c + o.d + o.e + o.f;
		}
		return s;
	}

	static long checksum() {
		long sum = 0;
		for (int i = 0; i < ARRAYS; i++)
			sum = sum * 31 + read(copies[i]) * 7 + read(random[i]);
		return sum * 31 + readSame() * 7 + readRand();
	}

	public static void main(String[] args) {
		double secs = args.length > 0 ? Double.parseDouble(args[0]) : 5.0;
		byte[] input = new byte[LEN];
		long[] x = { 0x2545F4914F6CDD1DL };

		for (int i = 0; i < LEN; i++)
			input[i] = (byte) next(x);
		for (int i = 0; i < ARRAYS; i++) {
			copies[i] = new byte[LEN];
			System.arraycopy(input, 0, copies[i], 0, LEN);
			random[i] = new long[LEN / 8];
			for (int k = 0; k < LEN / 8; k++)
				random[i][k] = next(x);
		}
		for (int i = 0; i < INSTANCES; i++) {
			same[i] = new Same(0x1234567L);
			rand[i] = new Rand(x);
		}
		long first = checksum();
		System.out.println("ready");
		System.out.flush();
		long t0 = System.nanoTime(), sink = 0;
		do {
			for (int i = 0; i < ARRAYS; i++)
				sink += read(copies[i]) - read(random[i]);
			for (int k = 0; k < 8; k++) /* instances: fewer bytes, read more */
				sink += readSame() - readRand();
		} while (System.nanoTime() - t0 < (long) (secs * 1e9));
		long sum = checksum();
		System.out.println("ReplicaAttachFixture: checksum " + Long.toHexString(sum)
				   + (sum == first ? "" : " CHANGED") + (sink == Long.MIN_VALUE ? "!" : ""));
	}
}
