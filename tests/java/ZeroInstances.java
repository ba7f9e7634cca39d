/* ZeroInstances - instances and arrays from two sites for the HotSpot Zero
 * adapter's end-to-end tests (tests/e2e/zero.c): Zero's interpreter
 * allocates every array in the VM (each one seen) but places instances in
 * its TLAB itself (seen when they do not fit: weighed). N instances of
 * 1616 bytes (200 long fields) and N long[256] arrays (2 KiB), all kept.
 * Prints a count that does not depend on objscope.
 *
 * Usage: java ZeroInstances [N]
 */
public class ZeroInstances {
	long f0, f1, f2, f3, f4, f5, f6, f7, f8, f9;
	long f10, f11, f12, f13, f14, f15, f16, f17, f18, f19;
	long f20, f21, f22, f23, f24, f25, f26, f27, f28, f29;
	long f30, f31, f32, f33, f34, f35, f36, f37, f38, f39;
	long f40, f41, f42, f43, f44, f45, f46, f47, f48, f49;
	long f50, f51, f52, f53, f54, f55, f56, f57, f58, f59;
	long f60, f61, f62, f63, f64, f65, f66, f67, f68, f69;
	long f70, f71, f72, f73, f74, f75, f76, f77, f78, f79;
	long f80, f81, f82, f83, f84, f85, f86, f87, f88, f89;
	long f90, f91, f92, f93, f94, f95, f96, f97, f98, f99;
	long f100, f101, f102, f103, f104, f105, f106, f107, f108, f109;
	long f110, f111, f112, f113, f114, f115, f116, f117, f118, f119;
	long f120, f121, f122, f123, f124, f125, f126, f127, f128, f129;
	long f130, f131, f132, f133, f134, f135, f136, f137, f138, f139;
	long f140, f141, f142, f143, f144, f145, f146, f147, f148, f149;
	long f150, f151, f152, f153, f154, f155, f156, f157, f158, f159;
	long f160, f161, f162, f163, f164, f165, f166, f167, f168, f169;
	long f170, f171, f172, f173, f174, f175, f176, f177, f178, f179;
	long f180, f181, f182, f183, f184, f185, f186, f187, f188, f189;
	long f190, f191, f192, f193, f194, f195, f196, f197, f198, f199;

	static Object[] objs;
	static long[][] arrays;

	static ZeroInstances makeInstance(int i) {
		ZeroInstances z = new ZeroInstances();
		z.f0 = i;
		return z;
	}

	static long[] makeArray(int i) {
		long[] a = new long[256];
		a[0] = i;
		return a;
	}

	public static void main(String[] args) {
		int n = args.length > 0 ? Integer.parseInt(args[0]) : 4000;
		long sum = 0;

		objs = new Object[n];
		arrays = new long[n][];
		for (int i = 0; i < n; i++) {
			objs[i] = makeInstance(i);
			arrays[i] = makeArray(i);
		}
		for (int i = 0; i < n; i++)
			sum += ((ZeroInstances) objs[i]).f0 + arrays[i][0];
		System.out.println("instances " + n + " sum " + sum);
	}
}
