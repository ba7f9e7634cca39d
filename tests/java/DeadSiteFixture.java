/* DeadSiteFixture - a planted answer where a dead site's objects must not
 * rank (tests/e2e/java.c dead_site_*): deadSite fills a pool of 4096
 * long[1024] arrays (8 KiB each, 32 MiB), then liveSite replaces every one
 * of them with an array of the same class and size, and System.gc()
 * compacts the heap, moving the live arrays over the space the dead ones
 * held. Only the live arrays are read afterwards (at random, ROUNDS rounds
 * of POOL reads, a fixed count of reads whatever the machine's speed): a
 * profiler that keeps dead objects finds them at the addresses the live
 * ones now occupy and names the dead site.
 *
 * Usage: java DeadSiteFixture [ROUNDS]
 * Prints "ok SUM": SUM depends only on ROUNDS.
 */
public class DeadSiteFixture {
	static final int POOL = 4096;
	static final int LEN = 1024; /* longs: 8 KiB */

	static long[][] pool = new long[POOL][];

	static long[] deadSite(long seed) {
		long[] a = new long[LEN];
		for (int i = 0; i < LEN; i++)
			a[i] = seed ^ i;
		return a;
	}

	static long[] liveSite(long seed) {
		long[] a = new long[LEN];
		for (int i = 0; i < LEN; i++)
			a[i] = seed + i;
		return a;
	}

	public static void main(String[] args) {
		int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3000;
		long sum = 0, x = 12345;

		for (int i = 0; i < POOL; i++)
			pool[i] = deadSite(i);
		for (int i = 0; i < POOL; i++)
			sum += pool[i][i % LEN];
		/* the dead site's arrays survive a collection first: moved and
		 * tracked at their new addresses before they die */
		System.gc();
		for (int i = 0; i < POOL; i++)
			pool[i] = liveSite(i);
		System.gc();
		System.gc();
		for (int r = 0; r < rounds; r++) {
			for (int k = 0; k < POOL; k++) {
				x = x * 6364136223846793005L + 1442695040888963407L;
				int i = (int)((x >>> 33) % POOL);
				int j = (int)((x >>> 13) % LEN);
				sum += pool[i][j];
			}
		}
		System.out.println("ok " + sum);
	}
}
