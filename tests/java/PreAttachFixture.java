/* PreAttachFixture - Java data allocated BEFORE `objscope attach`, then only
 * read (tests/e2e/attach.c, java_objects_born_before_attach_found).
 *
 * Before printing "ready" it builds three sets: LARGE long[] of 1 MiB
 * (humongous under G1: they start at a region boundary), MEDIUM long[] of
 * 32 KiB, and NODES small instances (PreAttachFixture$Node) held in a
 * Node[]. Afterwards the main loop allocates nothing: it reads one set at
 * random, element by element at random, so no collection runs during the
 * attach when the heap is sized for it (-Xms/-Xmx). Every read object was
 * born before the attach and never moved: objscope can know it only by
 * reading its header at a sampled address.
 *
 * Usage: java PreAttachFixture SECONDS
 * Prints "ready", then after SECONDS "ok L M N" when every array and node
 * still holds what was written, "CORRUPT ..." otherwise (independent of
 * timing).
 */
public class PreAttachFixture {
	static final int LARGE = 8;
	static final int LLEN = 1 << 17;   /* longs: 1 MiB */
	static final int MEDIUM = 64;
	static final int MLEN = 1 << 12;   /* longs: 32 KiB */
	static final int NODES = 40000;

	static final class Node {
		long a, b, c;
		int id;

		Node(int id) {
			this.id = id;
			a = id * 7L;
			b = id * 11L;
			c = a ^ b;
		}
	}

	static long[][] large = new long[LARGE][];
	static long[][] medium = new long[MEDIUM][];
	static Node[] nodes = new Node[NODES];

	static long[] fill(int n, long seed) {
		long[] a = new long[n];

		for (int i = 0; i < n; i++)
			a[i] = seed * 31 + i;
		return a;
	}

	static boolean holds(long[] a, long seed) {
		for (int i = 0; i < a.length; i++)
			if (a[i] != seed * 31 + i)
				return false;
		return true;
	}

	/* n random reads of one set chosen by x */
	static long read(long[] state, int n) {
		long x = state[0], sum = 0;
		int set = (int) ((x >>> 40) % 3);

		for (int k = 0; k < n; k++) {
			x ^= x << 13;
			x ^= x >>> 7;
			x ^= x << 17;
			int r = (int) (x >>> 33);
			if (set == 0) {
				sum += large[r % LARGE][(int) ((x >>> 3) & (LLEN - 1))];
			} else if (set == 1) {
				sum += medium[r % MEDIUM][(int) ((x >>> 3) & (MLEN - 1))];
			} else {
				Node nd = nodes[r % NODES];
				sum += nd.a + nd.b + nd.c;
			}
		}
		state[0] = x;
		return sum;
	}

	public static void main(String[] args) throws Exception {
		long seconds = args.length > 0 ? Long.parseLong(args[0]) : 10;
		long[] state = { 88172645463325252L };
		long sum = 0;

		for (int i = 0; i < LARGE; i++)
			large[i] = fill(LLEN, i + 1);
		for (int i = 0; i < MEDIUM; i++)
			medium[i] = fill(MLEN, i + 1000);
		for (int i = 0; i < NODES; i++)
			nodes[i] = new Node(i);
		System.out.println("ready");
		System.out.flush();
		long end = System.nanoTime() + seconds * 1000000000L;
		while (System.nanoTime() < end)
			sum += read(state, 200000);
		int bad = 0;
		for (int i = 0; i < LARGE; i++)
			bad += holds(large[i], i + 1) ? 0 : 1;
		for (int i = 0; i < MEDIUM; i++)
			bad += holds(medium[i], i + 1000) ? 0 : 1;
		for (int i = 0; i < NODES; i++) {
			Node nd = nodes[i];
			bad += nd.id == i && nd.a == i * 7L && nd.b == i * 11L && nd.c == (nd.a ^ nd.b)
				       ? 0 : 1;
		}
		if (bad > 0)
			System.out.println("CORRUPT " + bad + " " + sum);
		else
			System.out.println("ok " + LARGE + " " + MEDIUM + " " + NODES);
	}
}
