// cflags: -ffp-contract=off
/* fp_unusual: hot loops whose F/D operations often take the unusual path of a compiling tier:
 * NaN results (0*inf, inf-inf, sqrt of a negative, 0/0), division by zero, singles, and the
 * same arithmetic under a dynamic rounding mode other than round-to-nearest-even; conversions
 * to int near the ends of their range. Results,
 * NaN bits and the accumulated exception flags are hashed and printed. */
#include <fenv.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#pragma STDC FENV_ACCESS ON

static uint64_t bits(double d) {
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

static uint32_t fbits(float f) {
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

/* One pass of mixed arithmetic; the hash covers every result's bits. */
static uint64_t pass(int n, double *acc_out, int *flags_out) {
    volatile double inf = INFINITY;
    double acc = 0;
    uint64_t h = 0;
    int flags = 0;
    for (int i = 0; i < n; i++) {
        double a = (double)(i % 7) - 3.0;
        double b = (i % 5 == 0) ? inf : a * 0.5;
        double c = a * b;
        double d = c - b;
        double e = sqrt(a);
        double g = fma(a, 1.0 / 3.0, d);
        float f = (float)a / (float)(i % 3);
        float s = sqrtf(f) + f * 0.1f;
        /* Conversions to int around +-2^31 and +-2^30, by a cast (round toward zero) and
         * by lrint (the dynamic rounding mode), from doubles and singles. */
        static const double edges[] = {2147483647.5, 2147483647.4, 2147483646.5, 2147483648.0,
                                       -2147483648.5, -2147483648.6, -2147483647.5, 1073741823.5,
                                       1073741824.5, -0.5, 0.5, 1.5, -1.5, 2.5};
        double big = (i % 3 == 0) ? edges[(i / 3) % 14] : ((i % 13) - 6) * 3.58e8 + (i % 4) * 0.25;
        int t = (int)big, r = (int)lrint(big), tf = (int)(float)big, rf = (int)lrintf((float)big);
        h = h * 31 + bits(c) + bits(d) * 7 + bits(e) * 13 + bits(g) * 17 + fbits(f) * 19 +
            fbits(s) + (uint32_t)t * 23 + (uint32_t)r * 29 + (uint32_t)tf * 37 + (uint32_t)rf;
        if (!isnan(d) && !isinf(d))
            acc += d / 3.0;
        if (i % 997 == 996) {
            flags |= fetestexcept(FE_ALL_EXCEPT);
            feclearexcept(FE_ALL_EXCEPT);
        }
    }
    *acc_out = acc;
    *flags_out = flags | fetestexcept(FE_ALL_EXCEPT);
    return h;
}

int main(void) {
    static const struct {
        int mode;
        const char *name;
    } modes[] = {
        {FE_TONEAREST, "nearest"},
        {FE_UPWARD, "upward"},
        {FE_DOWNWARD, "downward"},
        {FE_TOWARDZERO, "towardzero"},
    };
    for (unsigned m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        fesetround(modes[m].mode);
        feclearexcept(FE_ALL_EXCEPT);
        double acc;
        int flags;
        uint64_t h = pass(100000, &acc, &flags);
        fesetround(FE_TONEAREST);
        printf("%-10s acc %a hash %016llx flags %x\n", modes[m].name, acc,
               (unsigned long long)h, flags);
    }
    return 0;
}
