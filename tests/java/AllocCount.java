// AllocCount - the Java fixture of tests/unit/test_hotspot_preload.c.
// Allocates N byte arrays of SIZE bytes payload from one site (kept alive in
// a list so GCs copy them), churns garbage, calls System.gc() twice, and
// prints a checksum: its output must be the same with and without objscope.
// Usage: java AllocCount N SIZE
import java.util.ArrayList;

public class AllocCount {
    static byte[] site(int size, int i) {
        byte[] a = new byte[size];
        a[i % size] = (byte) i;
        return a;
    }

    public static void main(String[] args) {
        int n = Integer.parseInt(args[0]);
        int size = Integer.parseInt(args[1]);
        ArrayList<byte[]> keep = new ArrayList<>();
        long sum = 0;
        for (int i = 0; i < n; i++) {
            keep.add(site(size, i));
            Object[] junk = new Object[8]; // small garbage, below min_size
            sum += junk.length;
        }
        System.gc();
        for (int i = 0; i < keep.size(); i++)
            sum += keep.get(i)[i % size];
        System.gc();
        System.out.println("arrays " + keep.size() + " checksum " + sum);
        System.err.println("done");
    }
}
