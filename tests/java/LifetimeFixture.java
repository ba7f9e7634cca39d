// LifetimeFixture - planted object lifetimes for `record --lifetimes`
// (tests/e2e/lifetimes.c):
//   keepSite   KEEP arrays of 4 KiB made at the start and kept to the end:
//              they survive every collection (pretenuring candidates)
//   churnSite  arrays of 2 KiB dropped at once, made until ROUNDS young
//              collections have passed: nearly all die before their first
//              collection (an allocation hot spot)
// Prints a checksum: its output must be the same with and without objscope.
// Usage: java LifetimeFixture [KEEP] [CHURN]
import java.util.ArrayList;

public class LifetimeFixture {
    static byte[] keepSite(int i) {
        byte[] a = new byte[4096];
        a[i % a.length] = (byte) i;
        return a;
    }

    static byte[] churnSite(int i) {
        byte[] a = new byte[2048];
        a[i % a.length] = (byte) i;
        return a;
    }

    public static void main(String[] args) {
        int keep = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        long churn = args.length > 1 ? Long.parseLong(args[1]) : 200000;
        ArrayList<byte[]> kept = new ArrayList<>();
        long sum = 0;
        for (int i = 0; i < keep; i++)
            kept.add(keepSite(i));
        for (long i = 0; i < churn; i++) {
            byte[] a = churnSite((int) i);
            sum += a[(int) (i % a.length)];
        }
        for (int i = 0; i < kept.size(); i++)
            sum += kept.get(i)[i % 4096];
        System.out.println("kept " + kept.size() + " checksum " + sum);
    }
}
