/* TwoSitesFixture - two allocation sites of one small class, read 4:1: the
 * planted answer of estimated allocation paths (docs/JAVA.md "Samples on
 * objects not seen at allocation").
 *
 * Cell (a 48-byte object: header and four longs) is allocated at two
 * sites (newHot, newCold), called one after the other in the same loop:
 * equal allocation volume. Each round reads cells of the hot pool 400,000 times and cells of
 * the cold pool 100,000 times, at random, on different source lines
 * (readHot, readCold): the hot site's objects take four fifths of the
 * reads. Cells are far below any TLAB, so in hybrid mode most are not seen
 * at allocation and their samples are estimated.
 *
 * Usage: java TwoSitesFixture SECONDS
 * Prints "ok 65536" when every cell still holds what was written into it
 * (the output does not depend on timing), "CORRUPT ..." otherwise.
 */
public class TwoSitesFixture {
	static final int POOL = 1 << 16;  /* cells per site: 3 MiB each */
	static final int RENEW = 4096;    /* cells of each pool renewed per round */
	static final int HOT_READS = 400_000, COLD_READS = 100_000;

	static final class Cell {
		long a, b, c, d;

		Cell(long s) {
			a = s;
			b = s * 3;
			c = s * 5;
			d = s * 7;
		}
	}

	static Cell[] hot = new Cell[POOL], cold = new Cell[POOL];

	static long readHot(long x, int n) {
		long sum = 0;
		for (int i = 0; i < n; i++) {
			x ^= x << 13;
			x ^= x >>> 7;
			x ^= x << 17;
			Cell c = hot[(int) ((x >>> 1) & (POOL - 1))];
			sum += c.a + c.d;
		}
		return sum;
	}

	static long readCold(long x, int n) {
		long sum = 0;
		for (int i = 0; i < n; i++) {
			x ^= x << 13;
			x ^= x >>> 7;
			x ^= x << 17;
			Cell c = cold[(int) ((x >>> 1) & (POOL - 1))];
			sum += c.b + c.c;
		}
		return sum;
	}

	static Cell newHot(long s) {
		return new Cell(s);
	}

	static Cell newCold(long s) {
		return new Cell(s);
	}

	static boolean ok(Cell c) {
		return c.b == c.a * 3 && c.c == c.a * 5 && c.d == c.a * 7;
	}

	public static void main(String[] args) {
		long end = System.nanoTime() + Long.parseLong(args[0]) * 1_000_000_000L;
		long x = 88172645463325252L, sum = 0;

		for (int i = 0; i < POOL; i++) {
			hot[i] = newHot(i);
			cold[i] = newCold(i + POOL);
		}
		for (long round = 0; System.nanoTime() < end; round++) {
			for (int k = 0; k < RENEW; k++) {
				int i = (int) ((round * RENEW + k) & (POOL - 1));
				hot[i] = newHot(round + k);
				cold[i] = newCold(round - k);
			}
			sum += readHot(x + round, HOT_READS);
			sum += readCold(x - round, COLD_READS);
		}
		for (int i = 0; i < POOL; i++)
			if (!ok(hot[i]) || !ok(cold[i])) {
				System.out.println("CORRUPT at " + i);
				System.exit(1);
			}
		System.out.println("ok " + POOL + (sum == 42 ? "!" : ""));
	}
}
