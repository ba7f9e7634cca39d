/* SmallSites - objects not seen at allocation, from two sites of one class
 * with different access heat (tests/e2e/java.c: estimated
 * allocation paths).
 *
 * Two rings of objects are kept and renewed all the time: makeHot and
 * makeCold each replace the same number of random slots of their ring per
 * round, so both sites allocate at the same rate; readHot reads four times
 * as many random objects of its ring as readCold of its one. The objects:
 *   cells   48-byte instances (Cell: four longs), both sites the same class;
 *   split   the same, but the cold site allocates ColdCell (same layout):
 *           the class tells the site, so the samples per class are the
 *           reference the estimated paths of "cells" are compared with;
 *   arrays  long[200] (1,616 bytes), both sites: above the default
 *           --min-size, so `--java-objects exact` sees every one.
 *
 * Usage: java SmallSites cells|split|arrays SECONDS
 * Prints "ok N" (a checksum of the rings' contents that does not depend on
 * timing being right: each object holds values derived from its slot).
 */
public class SmallSites {
	static final int SLOTS = 60000;
	static final int ALEN = 200;

	static class Cell {
		long a, b, c, d;

		Cell(long v) {
			a = v;
			b = v * 3;
		}
	}

	static final class ColdCell extends Cell {
		ColdCell(long v) {
			super(v);
		}
	}

	static Object[] hot = new Object[SLOTS];
	static Object[] cold = new Object[SLOTS];
	static String mode;

	static Object makeHot(int i) {
		if (mode.equals("arrays")) {
			long[] x = new long[ALEN];
			x[0] = i;
			x[ALEN - 1] = i * 3L;
			return x;
		}
		return new Cell(i);
	}

	static Object makeCold(int i) {
		if (mode.equals("arrays")) {
			long[] x = new long[ALEN];
			x[0] = i;
			x[ALEN - 1] = i * 3L;
			return x;
		}
		if (mode.equals("split"))
			return new ColdCell(i);
		return new Cell(i);
	}

	static long value(Object o) {
		if (o instanceof long[]) {
			long[] x = (long[]) o;
			return x[0] + x[ALEN - 1];
		}
		Cell c = (Cell) o;
		return c.a + c.b;
	}

	static long readHot(long[] st, int n) {
		long x = st[0], sum = 0;

		for (int k = 0; k < n; k++) {
			x ^= x << 13;
			x ^= x >>> 7;
			x ^= x << 17;
			sum += value(hot[(int) ((x >>> 33) % SLOTS)]);
		}
		st[0] = x;
		return sum;
	}

	static long readCold(long[] st, int n) {
		long x = st[0], sum = 0;

		for (int k = 0; k < n; k++) {
			x ^= x << 13;
			x ^= x >>> 7;
			x ^= x << 17;
			sum += value(cold[(int) ((x >>> 33) % SLOTS)]);
		}
		st[0] = x;
		return sum;
	}

	public static void main(String[] args) {
		mode = args.length > 0 ? args[0] : "cells";
		long seconds = args.length > 1 ? Long.parseLong(args[1]) : 4;
		long[] st = { 0x9E3779B97F4A7C15L };
		long end = System.nanoTime() + seconds * 1000000000L, sum = 0;
		int renew = mode.equals("arrays") ? 200 : 2000;

		for (int i = 0; i < SLOTS; i++) {
			hot[i] = makeHot(i);
			cold[i] = makeCold(i);
		}
		while (System.nanoTime() < end) {
			for (int k = 0; k < renew; k++) {
				st[0] ^= st[0] << 13;
				st[0] ^= st[0] >>> 7;
				st[0] ^= st[0] << 17;
				int i = (int) ((st[0] >>> 33) % SLOTS);
				hot[i] = makeHot(i);
				cold[i] = makeCold(i);
			}
			sum += readHot(st, 40000);
			sum += readCold(st, 10000);
		}
		long check = 0;
		for (int i = 0; i < SLOTS; i++) {
			if (value(hot[i]) != value(makeHot(i)) || value(cold[i]) != value(makeCold(i))) {
				System.out.println("CORRUPT " + i);
				System.exit(1);
			}
			check += value(hot[i]);
		}
		System.out.println("ok " + check + (sum == 42 ? "!" : ""));
	}
}
