// Planted answer for compiled frames with inlined methods (tests/e2e/java.c,
// e2e_java/inlined_methods_are_frames): the long[] arrays are allocated in
// make(), which the JIT compilers inline into build(), and read in get(),
// inlined into scan(). A report that names compiled frames only by their
// compiled method charges both to the caller.
// The "// @name" comments mark lines that e2e_java/source_lines_of_java_frames
// expects in the frames' (InlineFixture.java:LINE).
// Usage: java InlineFixture [ROUNDS [READS]] (300 rounds of 400000 reads)
public class InlineFixture {
    static final int COUNT = 400;   // arrays live at a time
    static final int LEN = 512;     // longs: 4 KiB each, above --min-size
    static final int ROUNDS = 300;

    static long[] make(int n, long seed) {
        long[] a = new long[n]; // @alloc
        a[0] = seed;
        return a;
    }

    static long[][] build(int count, int n, long seed) {
        long[][] all = new long[count][];
        for (int i = 0; i < count; i++)
            all[i] = make(n, seed + i); // @make
        return all;
    }

    static long get(long[] a, int i) {
        return a[i]; // @get
    }

    static long seed = 7;

    static int next(int bound) { // a plain LCG: java.util.Random's AtomicLong would be hot
        seed = seed * 6364136223846793005L + 1442695040888963407L;
        return (int) ((seed >>> 33) % bound);
    }

    static long scan(long[][] all, int reads) {
        long s = 0;
        for (int k = 0; k < reads; k++)
            s += get(all[next(all.length)], next(LEN)); // @scan
        return s;
    }

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : ROUNDS;
        int reads = args.length > 1 ? Integer.parseInt(args[1]) : 400000;
        long s = 0;
        for (int round = 0; round < rounds; round++) {
            long[][] all = build(COUNT, LEN, round); // @build
            s += scan(all, reads); // @scancall
        }
        System.out.println("sum " + s);
    }
}
