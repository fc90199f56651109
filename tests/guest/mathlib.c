// cflags: -ffp-contract=off
/* mathlib: libm functions, fused multiply-add, rounding functions under each of the four
 * rounding modes, and the IEEE exception flags. */
#include <fenv.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "guest_util.h"

#pragma STDC FENV_ACCESS ON

static const char *flag_names(int f) {
    static char buf[64];
    buf[0] = 0;
    if (f & FE_INVALID)
        strcat(buf, "invalid ");
    if (f & FE_DIVBYZERO)
        strcat(buf, "divbyzero ");
    if (f & FE_OVERFLOW)
        strcat(buf, "overflow ");
    if (f & FE_UNDERFLOW)
        strcat(buf, "underflow ");
    if (f & FE_INEXACT)
        strcat(buf, "inexact ");
    if (!buf[0])
        strcat(buf, "none");
    return buf;
}

int main(void) {
    static const double xs[] = {0.0, 0.5, 1.0, 2.0, 3.0, 10.0, 0.1, 100.5, 1e-5, 1e5, 7.25};
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
        volatile double x = xs[i];
        printf("x=%g sqrt=%.17g sin=%.17g cos=%.17g tan=%.17g\n", x, sqrt(x), sin(x), cos(x),
               tan(x));
        printf("  exp=%.17g log=%.17g log2=%.17g log10=%.17g\n", exp(x), log(x), log2(x),
               log10(x));
        printf("  pow(x,1.5)=%.17g atan=%.17g cbrt=%.17g expm1=%.17g log1p=%.17g\n", pow(x, 1.5),
               atan(x), cbrt(x), expm1(x), log1p(x));
        printf("  sqrtf=%.9g sinf=%.9g expf=%.9g logf=%.9g\n", (double)sqrtf((float)x),
               (double)sinf((float)x), (double)expf((float)x), (double)logf((float)x));
    }
    printf("atan2(1,-1)=%.17g hypot(3,4)=%.17g fmod(10.5,3)=%.17g remainder(10.5,3)=%.17g\n",
           atan2(1, -1), hypot(3, 4), fmod(10.5, 3), remainder(10.5, 3));
    printf("asin(0.5)=%.17g acos(0.5)=%.17g sinh(1)=%.17g tanh(0.5)=%.17g\n", asin(0.5), acos(0.5),
           sinh(1), tanh(0.5));
    printf("tgamma(5.5)=%.17g lgamma(10)=%.17g erf(0.5)=%.17g\n", tgamma(5.5), lgamma(10),
           erf(0.5));
    int e;
    double m = frexp(1234.5, &e);
    printf("frexp(1234.5)=%.17g,%d ldexp(0.75,10)=%g modf: ", m, e, ldexp(0.75, 10));
    double ip;
    double fp = modf(-3.75, &ip);
    printf("%g %g\n", ip, fp);

    /* fma: exact product then one rounding; differs from a*b+c. */
    volatile double fa = 1.0 + DBL_EPSILON, fb = 1.0 - DBL_EPSILON, fc = -1.0;
    printf("fma=%a a*b+c=%a\n", fma(fa, fb, fc), fa * fb + fc);
    volatile float ga = 1.0f + FLT_EPSILON, gb = 1.0f - FLT_EPSILON, gc = -1.0f;
    printf("fmaf=%a\n", (double)fmaf(ga, gb, gc));

    /* Rounding functions under all four modes. */
    static const int modes[] = {FE_TONEAREST, FE_DOWNWARD, FE_UPWARD, FE_TOWARDZERO};
    static const char *mode_names[] = {"nearest", "down", "up", "towardzero"};
    static const double rv[] = {2.5, 3.5, -2.5, -3.5, 2.4, -2.6, 0.5, -0.5, 1e16 + 1};
    for (int mi = 0; mi < 4; mi++) {
        check(fesetround(modes[mi]) == 0, "fesetround");
        printf("mode %s (fegetround ok %d):\n", mode_names[mi], fegetround() == modes[mi]);
        for (size_t i = 0; i < sizeof rv / sizeof rv[0]; i++) {
            volatile double v = rv[i];
            printf("  %g: rint=%g nearbyint=%g lrint=%ld llrint=%lld round=%g floor=%g ceil=%g "
                   "trunc=%g rintf=%g\n",
                   v, rint(v), nearbyint(v), lrint(v), llrint(v), round(v), floor(v), ceil(v),
                   trunc(v), (double)rintf((float)v));
        }
        /* Arithmetic rounding follows the dynamic mode. */
        volatile double one = 1.0, three = 3.0;
        volatile float onef = 1.0f, threef = 3.0f;
        printf("  1/3=%a -1/3=%a 1f/3f=%a sqrt(2)=%a\n", one / three, -one / three,
               (double)(onef / threef), sqrt(2.0 * one));
        volatile double big = 1e308;
        printf("  1e308*10=%g (int)(2.7)=%d\n", big * 10, (int)(2.7 * one));
    }
    fesetround(FE_TONEAREST);

    /* Exception flags. */
    volatile double z = 0.0, o = 1.0, tiny = DBL_MIN, huge = DBL_MAX;
    volatile double sink;
    feclearexcept(FE_ALL_EXCEPT);
    printf("flags after clear: %s\n", flag_names(fetestexcept(FE_ALL_EXCEPT)));
    sink = o / z;
    printf("1/0: %s\n", flag_names(fetestexcept(FE_ALL_EXCEPT)));
    feclearexcept(FE_ALL_EXCEPT);
    sink = z / z;
    printf("0/0: %s\n", flag_names(fetestexcept(FE_ALL_EXCEPT)));
    feclearexcept(FE_ALL_EXCEPT);
    sink = huge * 2;
    printf("max*2: %s\n", flag_names(fetestexcept(FE_ALL_EXCEPT)));
    feclearexcept(FE_ALL_EXCEPT);
    sink = tiny / 3e10;
    printf("min/3e10: %s\n", flag_names(fetestexcept(FE_ALL_EXCEPT)));
    feclearexcept(FE_ALL_EXCEPT);
    sink = o / 3;
    printf("1/3: %s\n", flag_names(fetestexcept(FE_ALL_EXCEPT)));
    feclearexcept(FE_ALL_EXCEPT);
    sink = o + o;
    printf("1+1: %s\n", flag_names(fetestexcept(FE_ALL_EXCEPT)));
    feclearexcept(FE_ALL_EXCEPT);
    sink = sqrt(-o);
    printf("sqrt(-1): %s isnan=%d\n", flag_names(fetestexcept(FE_ALL_EXCEPT)), isnan(sink));
    feclearexcept(FE_ALL_EXCEPT);
    volatile float fz = 0.0f;
    volatile float fs = 1.0f / fz;
    printf("1f/0f: %s\n", flag_names(fetestexcept(FE_ALL_EXCEPT)));
    feclearexcept(FE_ALL_EXCEPT);
    volatile double nanv = NAN;
    volatile int cmp = nanv < o;
    printf("NaN < 1 (signalling compare): %d %s\n", cmp, flag_names(fetestexcept(FE_ALL_EXCEPT)));
    feclearexcept(FE_ALL_EXCEPT);
    cmp = nanv == o;
    printf("NaN == 1 (quiet compare): %d %s\n", cmp, flag_names(fetestexcept(FE_ALL_EXCEPT)));
    feclearexcept(FE_ALL_EXCEPT);
    volatile int conv = (int)(huge);
    (void)conv;
    printf("(int)DBL_MAX: %s\n", flag_names(fetestexcept(FE_ALL_EXCEPT)));
    feclearexcept(FE_ALL_EXCEPT);
    feraiseexcept(FE_OVERFLOW | FE_INEXACT);
    printf("feraiseexcept: %s\n", flag_names(fetestexcept(FE_ALL_EXCEPT)));
    fenv_t env;
    fegetenv(&env);
    feclearexcept(FE_ALL_EXCEPT);
    fesetenv(&env);
    printf("fesetenv restored: %s\n", flag_names(fetestexcept(FE_ALL_EXCEPT)));
    (void)sink;
    (void)fs;

    /* Min/max/copysign/classification with signed zeros and NaN. */
    printf("fmin(-0,0)=%g fmax(-0,0)=%g fmin(nan,1)=%g copysign(3,-0)=%g signbit(-0)=%d\n",
           fmin(-0.0, 0.0), fmax(-0.0, 0.0), fmin(NAN, 1.0), copysign(3, -0.0), signbit(-0.0));
    printf("fpclassify: %d %d %d %d %d\n", fpclassify(0.0), fpclassify(1.0), fpclassify(5e-324),
           fpclassify(INFINITY), fpclassify(NAN));
    printf("failures=%d\n", guest_failures);
    return guest_failures ? 1 : 0;
}
