// AllocBench - allocation-heavy loop for docs/JAVA.md's cost figures:
// ROUNDS x 100000 short-lived arrays, sizes cycling 16 B .. 16 KiB, a few
// kept alive so GCs copy something. Prints a checksum only.
// Usage: java AllocBench ROUNDS
public class AllocBench {
    public static void main(String[] args) {
        int rounds = Integer.parseInt(args[0]);
        Object[] keep = new Object[1024];
        long sum = 0;
        for (int r = 0; r < rounds; r++) {
            for (int i = 0; i < 100000; i++) {
                int size = 16 << (i % 11);
                byte[] a = new byte[size];
                a[i % size] = (byte) i;
                sum += a[(i * 7) % size];
                if ((i & 63) == 0)
                    keep[(i >> 6) & 1023] = a;
            }
        }
        System.out.println("checksum " + sum + " " + keep.length);
    }
}
