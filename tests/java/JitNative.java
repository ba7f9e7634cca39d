/* JitNative - native allocations made under JIT-compiled Java frames
 * (tests/e2e/java.c, allocation_paths_without_frame_pointers).
 *
 * Each round creates a java.util.zip.Deflater, whose constructor calls the
 * native method Deflater.init: zlib's deflateInit2 callocs its window and
 * hash tables (several KiB each) through the JNI code of libzip, and end()
 * frees them. After a few thousand rounds round() and the Deflater code are
 * compiled and the native method is called through its compiled wrapper,
 * so the allocation paths cross compiled frames, which keep no frame
 * pointer unless the JVM runs with -XX:+PreserveFramePointer.
 *
 * Usage: java JitNative [ROUNDS]   (default 20000)
 * Prints "ok N" with N the bytes compressed; the output does not depend on
 * timing.
 */
import java.util.zip.Deflater;

public class JitNative {
	static final byte[] INPUT = new byte[256];
	static final byte[] OUTPUT = new byte[512];

	static int round(int i) {
		Deflater d = new Deflater(1 + i % 9);
		d.setInput(INPUT);
		d.finish();
		int n = d.deflate(OUTPUT);
		d.end();
		return n;
	}

	public static void main(String[] args) {
		int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 20000;
		long total = 0;

		for (int i = 0; i < INPUT.length; i++)
			INPUT[i] = (byte) (i * 7);
		for (int i = 0; i < rounds; i++)
			total += round(i);
		System.out.println("ok " + total);
	}
}
