/* fpprint: printf of many float/double values in %a, %.17g, %e, %f, %g, including specials,
 * subnormals and float->double conversions. Exercises the F/D loads, conversions and musl's
 * long-double (quad, soft) printf paths. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "guest_util.h"

static double from_bits(uint64_t b) {
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

static void show(double d) {
    printf("%a | %.17g | %e | %.3f | %g | %10.4e\n", d, d, d, d, d, d);
}

int main(void) {
    static const double fixed[] = {
        0.0, -0.0, 1.0, -1.0, 0.1, 0.5, 1.0 / 3.0, 2.0 / 3.0, 3.141592653589793, 2.718281828459045,
        1e10, 1e-10, 123456789.125, 1e300, 1e-300, 1e308, DBL_MAX, DBL_MIN, DBL_EPSILON,
        5e-324, 2.2250738585072009e-308, 4.9406564584124654e-324, 0.30000000000000004,
        9007199254740993.0, 9007199254740992.0, 1.5, 2.5, -2.5, 1e21, 1e22, 1e23, 123.456,
        65536.0, 4294967296.0, 0.000001, 100.0,
    };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        show(fixed[i]);
    volatile double zero = 0.0;
    show(1.0 / zero);
    show(-1.0 / zero);
    double nan = zero / zero;
    printf("nan: %f %e %g signbit-insensitive\n", fabs(nan), fabs(nan), fabs(nan));

    /* Single precision values promoted to double. */
    static const float floats[] = {0.1f, 1.0f / 3.0f, FLT_MAX, FLT_MIN, FLT_EPSILON, 1e-45f,
                                   16777217.0f, -3.75f, 1e38f, 3.4028235e38f};
    for (size_t i = 0; i < sizeof floats / sizeof floats[0]; i++) {
        volatile float f = floats[i];
        printf("float %a %.9g %e\n", (double)f, (double)f, (double)f);
    }

    /* Precision sweep of one value. */
    double pi = 3.141592653589793;
    for (int p = 0; p <= 20; p += 4)
        printf("pi %%.%df = %.*f, %%.%de = %.*e\n", p, p, pi, p, p, pi);

    /* Pseudo-random bit patterns: print every 200th, hash all %.17g outputs. */
    uint32_t s = 777;
    uint32_t h = FNV_INIT;
    for (int i = 0; i < 4000; i++) {
        uint64_t bits = ((uint64_t)xorshift32(&s) << 32) | xorshift32(&s);
        double d = from_bits(bits);
        if (isnan(d))
            continue;
        char buf[64];
        int n = snprintf(buf, sizeof buf, "%.17g %a", d, d);
        h = fnv_bytes(h, buf, (size_t)n);
        if (i % 200 == 0)
            printf("rand %s\n", buf);
    }
    printf("hash of random %%.17g/%%a: %08x\n", h);

    /* Round trip through strtod for the random values. */
    s = 4242;
    int roundtrip_ok = 1;
    for (int i = 0; i < 2000; i++) {
        uint64_t bits = ((uint64_t)xorshift32(&s) << 32) | xorshift32(&s);
        double d = from_bits(bits);
        if (isnan(d) || isinf(d))
            continue;
        char buf[64];
        snprintf(buf, sizeof buf, "%.17g", d);
        double back = 0;
        sscanf(buf, "%lf", &back);
        roundtrip_ok &= memcmp(&back, &d, sizeof d) == 0;
    }
    printf("%%.17g round trips: %d\n", roundtrip_ok);

    /* Integer conversions of doubles. */
    static const double conv[] = {2.5, -2.5, 3.7, -3.7, 2147483647.0, -2147483648.0, 4294967295.0,
                                  1e9, 0.999999};
    for (size_t i = 0; i < sizeof conv / sizeof conv[0]; i++) {
        volatile double c = conv[i];
        printf("conv %g -> int %d, lrint %ld, (unsigned)%u\n", c,
               c >= -2147483648.0 && c <= 2147483647.0 ? (int)c : 0, lrint(c),
               c >= 0 && c <= 4294967295.0 ? (unsigned)c : 0u);
    }
    return 0;
}
