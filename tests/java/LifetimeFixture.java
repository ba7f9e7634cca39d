// LifetimeFixture - planted object lifetimes for `record --lifetimes`
// (tests/e2e/lifetimes.c):
//   keepSite   KEEP arrays of 4 KiB made at the start and kept to the end:
//              they survive every collection (pretenuring candidates)
//   churnSite  CHURN arrays of 2 KiB dropped at once: nearly all die before
//              their first collection (an allocation hot spot)
//   midSite    one array of 4 KiB per 100 churned, kept in a ring of RING:
//              each lives while 100 x RING arrays are churned (RING 500:
//              100 MB, one or two young collections of a 64 MB young
//              generation); RING 0: none
//   SIZE       bytes of the kept and mid arrays (default 4096), the churned
//              ones half as long: SIZE 24 makes objects of 40 and 32 bytes,
//              which collections copy inline (their moves are read from
//              forwarding pointers: runtimes/hotspot/target/hotspot_fwd.c)
//   EVERY      one mid array per EVERY churned (default 100)
// Prints a checksum: its output must be the same with and without objscope.
// Usage: java LifetimeFixture [KEEP] [CHURN] [RING] [SIZE] [EVERY]
import java.util.ArrayList;

public class LifetimeFixture {
    static int size = 4096;

    static byte[] keepSite(int i) {
        byte[] a = new byte[size];
        a[i % a.length] = (byte) i;
        return a;
    }

    static byte[] churnSite(int i) {
        byte[] a = new byte[size / 2];
        a[i % a.length] = (byte) i;
        return a;
    }

    static byte[] midSite(long i) {
        byte[] a = new byte[size];
        a[(int) (i % a.length)] = (byte) i;
        return a;
    }

    public static void main(String[] args) {
        int keep = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        long churn = args.length > 1 ? Long.parseLong(args[1]) : 200000;
        int ring = args.length > 2 ? Integer.parseInt(args[2]) : 0;
        size = args.length > 3 ? Integer.parseInt(args[3]) : 4096;
        int every = args.length > 4 ? Integer.parseInt(args[4]) : 100;
        byte[][] mid = new byte[Math.max(ring, 1)][];
        ArrayList<byte[]> kept = new ArrayList<>();
        long sum = 0;
        for (int i = 0; i < keep; i++)
            kept.add(keepSite(i));
        for (long i = 0; i < churn; i++) {
            byte[] a = churnSite((int) i);
            sum += a[(int) (i % a.length)];
            if (ring > 0 && i % every == 0) {
                int k = (int) ((i / every) % ring);
                if (mid[k] != null)
                    sum += mid[k][(int) (i % size)];
                mid[k] = midSite(i);
            }
        }
        for (int i = 0; i < kept.size(); i++)
            sum += kept.get(i)[i % size];
        System.out.println("kept " + kept.size() + " checksum " + sum);
    }
}
