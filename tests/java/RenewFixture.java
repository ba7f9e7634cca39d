/* RenewFixture - a running JVM whose hot objects are small and renewed all
 * the time, for `objscope attach` (tests/e2e/attach.c): the attach must
 * rank their allocation site first (hybrid TLAB sampling steered
 * in a JVM started without objscope).
 *
 * renewHot allocates 8 KiB long[] arrays (far below any TLAB the JVM sizes
 * itself: seen at allocation only by TLAB sampling) into a pool of 2048
 * (16 MiB) read at random; every round replaces 64 of them, so the whole
 * pool is new a few times a second. keepCold's 2048 arrays of the same
 * size are made once at start (before any attach) and read in order, a
 * tenth as often.
 *
 * Usage: java RenewFixture SECONDS [STOP_FILE]
 * Prints "ready" once the pools are built, then after SECONDS (or once
 * STOP_FILE exists) "ok N" when every array still holds what was written
 * into it, "CORRUPT ..." otherwise. The output does not depend on timing.
 */
import java.io.File;

public class RenewFixture {
	static final int POOL = 2048;
	static final int LEN = 1024; /* longs: 8 KiB */

	static long[][] hot = new long[POOL][];
	static long[] hseed = new long[POOL];
	static long[][] cold = new long[POOL][];

	static long[] renewHot(long seed) {
		long[] a = new long[LEN];
		for (int i = 0; i < LEN; i++)
			a[i] = seed + i;
		return a;
	}

	static long[] keepCold(long seed) {
		long[] a = new long[LEN];
		for (int i = 0; i < LEN; i++)
			a[i] = seed * 31 + i;
		return a;
	}

	public static void main(String[] args) {
		long end = System.nanoTime() + Long.parseLong(args[0]) * 1_000_000_000L;
		File stop = args.length > 1 ? new File(args[1]) : null;
		long x = 88172645463325252L, sum = 0, seed = 1;

		for (int i = 0; i < POOL; i++) {
			hseed[i] = seed;
			hot[i] = renewHot(seed++);
			cold[i] = keepCold(i);
		}
		System.out.println("ready");
		System.out.flush();
		for (long round = 0; System.nanoTime() < end; round++) {
			for (int k = 0; k < 64; k++) {
				x ^= x << 13;
				x ^= x >>> 7;
				x ^= x << 17;
				int i = (int) ((x >>> 1) % POOL);
				hseed[i] = seed;
				hot[i] = renewHot(seed++);
			}
			for (int k = 0; k < 20000; k++) {
				x ^= x << 13;
				x ^= x >>> 7;
				x ^= x << 17;
				long[] a = hot[(int) ((x >>> 1) % POOL)];
				sum += a[(int) ((x >>> 20) % LEN)];
			}
			long[] c = cold[(int) (round % POOL)];
			for (int k = 0; k < 2000; k++)
				sum += c[k % LEN];
			if (stop != null && round % 64 == 0 && stop.exists())
				break;
		}
		for (int i = 0; i < POOL; i++) {
			if (hot[i][LEN - 1] != hseed[i] + LEN - 1 || cold[i][LEN - 1] != i * 31L + LEN - 1) {
				System.out.println("CORRUPT " + i);
				System.exit(1);
			}
		}
		System.out.println("ok " + POOL + (sum == 42 ? " " : ""));
	}
}
