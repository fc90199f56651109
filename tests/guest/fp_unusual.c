// cflags: -ffp-contract=off
/* fp_unusual: hot loops whose F/D operations often take the unusual path of a compiling tier:
 * NaN results (0*inf, inf-inf, sqrt of a negative, 0/0), division by zero, singles, and the
 * same arithmetic under a dynamic rounding mode other than round-to-nearest-even; conversions
 * to int near the ends of their range; min/max, classification and casts to unsigned. Results,
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

/* fmin/fmax of signed zeros, NaNs (a signalling one too) and ordinary values, classification
 * (isnormal/issubnormal/isinf/isnan, which clang turns into fclass), and casts to unsigned
 * around 0, 2^31 and 2^32, singles and doubles. */
static uint64_t pass_min_max_class(int n, int *flags_out) {
    static const uint64_t special[] = {
        0x0000000000000000ull, 0x8000000000000000ull, 0x3ff0000000000000ull,
        0xbff0000000000000ull, 0x7ff8000000000000ull, 0xfff8000000000000ull,
        0x7ff0000000000001ull, 0x7ff0000000000000ull, 0xfff0000000000000ull,
        0x0000000000000001ull, 0x8000000000000001ull, 0x41dfffffffe00000ull,
        0x41e0000000000000ull, 0x41efffffffe00000ull, 0x41f0000000000000ull,
        0x3fe0000000000000ull, 0xbfe0000000000000ull, 0x3ff8000000000000ull,
        0x4004000000000000ull, 0x41e65a0bc0000000ull, 0x0010000000000000ull,
    };
    const int count = sizeof special / sizeof special[0];
    uint64_t h = 0;
    int flags = 0;
    for (int i = 0; i < n; i++) {
        double a, b;
        memcpy(&a, &special[i % count], sizeof a);
        memcpy(&b, &special[(i / count + i) % count], sizeof b);
        float af = (float)a, bf = (float)b;
        /* The instructions themselves: clang calls libm's fmin, which does not use them. */
        double lo, hi;
        float lof, hif;
        __asm__ volatile("fmin.d %0, %1, %2" : "=f"(lo) : "f"(a), "f"(b));
        __asm__ volatile("fmax.d %0, %1, %2" : "=f"(hi) : "f"(a), "f"(b));
        __asm__ volatile("fmin.s %0, %1, %2" : "=f"(lof) : "f"(af), "f"(bf));
        __asm__ volatile("fmax.s %0, %1, %2" : "=f"(hif) : "f"(af), "f"(bf));
        int class = isnormal(a) | (fpclassify(b) == FP_SUBNORMAL) << 1 | isinf(lo) << 2 | isnan(hi) << 3 |
                    isnormal(af) << 4 | (fpclassify(bf) == FP_SUBNORMAL) << 5 | isinf(lof) << 6 | isnan(hif) << 7;
        uint32_t u = (uint32_t)a, uf = (uint32_t)af;
        h = h * 31 + bits(lo) * 3 + bits(hi) * 5 + fbits(lof) * 7 + fbits(hif) * 11 +
            (uint64_t)class * 13 + (uint64_t)u * 17 + uf;
        if (i % 997 == 996) {
            flags |= fetestexcept(FE_ALL_EXCEPT);
            feclearexcept(FE_ALL_EXCEPT);
        }
    }
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
    feclearexcept(FE_ALL_EXCEPT);
    int flags;
    uint64_t h = pass_min_max_class(100000, &flags);
    printf("min/max/class/unsigned hash %016llx flags %x\n", (unsigned long long)h, flags);
    return 0;
}
