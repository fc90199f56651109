/* int64: 64-bit integer math on RV32 goes through libgcc/compiler-rt helpers (__divdi3,
 * __udivdi3, __moddi3, __muldi3, shifts) and multi-word sequences. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include "guest_util.h"

static uint64_t xorshift64(uint64_t *s) {
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return x;
}

static const uint64_t specials[] = {
    0, 1, 2, 3, 10, 0x7fffffffffffffffULL, 0x8000000000000000ULL, 0xffffffffffffffffULL,
    0x00000000ffffffffULL, 0x0000000100000000ULL, 0xffffffff00000000ULL, 0x123456789abcdef0ULL,
    0x8000000000000001ULL, 1000000007ULL, 0xfffffffffffffff9ULL,
};
#define NS (sizeof specials / sizeof specials[0])

int main(void) {
    volatile int64_t a = -9876543210123LL, b = 1234567;
    printf("signed: a/b=%" PRId64 " a%%b=%" PRId64 " a*b=%" PRId64 "\n", a / b, a % b,
           (int64_t)((uint64_t)a * (uint64_t)b)); /* wrapping product without signed overflow UB */
    volatile uint64_t ua = 0xfedcba9876543210ULL, ub = 0x123456789ULL;
    printf("unsigned: a/b=%" PRIu64 " a%%b=%" PRIu64 " a*b=%016" PRIx64 "\n", ua / ub, ua % ub,
           ua * ub);
    volatile int sh = 37;
    printf("shifts: %016" PRIx64 " %016" PRIx64 " %016" PRIx64 "\n", ua << sh, ua >> sh,
           (uint64_t)((int64_t)ua >> sh));
    volatile int64_t mn = INT64_MIN;
    printf("INT64_MIN/2=%" PRId64 " INT64_MIN%%3=%" PRId64 "\n", mn / 2, mn % 3);
    printf("u64 to double %.17g, i64 to double %.17g\n", (double)ua, (double)a);
    volatile double d = 1.8446744073709550e19;
    printf("double to u64 %" PRIu64 ", -1e18 to i64 %" PRId64 "\n", (uint64_t)d,
           (int64_t)(-1e18 + (double)b));
    volatile float f = 9.2233715e18f;
    printf("float to i64 %" PRId64 "\n", (int64_t)(f / 2));

    /* Table over special values (skip division by zero: UB in C). */
    uint32_t hd = FNV_INIT, hm = FNV_INIT, hs = FNV_INIT;
    for (size_t i = 0; i < NS; i++) {
        for (size_t j = 0; j < NS; j++) {
            volatile uint64_t x = specials[i], y = specials[j];
            uint64_t prod = x * y;
            hm = fnv_word(fnv_word(hm, (uint32_t)prod), (uint32_t)(prod >> 32));
            if (y != 0) {
                uint64_t q = x / y, r = x % y;
                hd = fnv_word(fnv_word(hd, (uint32_t)q), (uint32_t)(q >> 32));
                hd = fnv_word(fnv_word(hd, (uint32_t)r), (uint32_t)(r >> 32));
                int64_t sx = (int64_t)x, sy = (int64_t)y;
                if (!(sx == INT64_MIN && sy == -1)) {
                    int64_t sq = sx / sy, sr = sx % sy;
                    hs = fnv_word(fnv_word(hs, (uint32_t)sq), (uint32_t)((uint64_t)sq >> 32));
                    hs = fnv_word(fnv_word(hs, (uint32_t)sr), (uint32_t)((uint64_t)sr >> 32));
                }
            }
        }
    }
    printf("specials: mul %08x udiv %08x sdiv %08x\n", hm, hd, hs);

    /* Random operands. */
    uint64_t s = 88172645463325252ULL;
    uint32_t h[8];
    for (int k = 0; k < 8; k++)
        h[k] = FNV_INIT;
    for (int i = 0; i < 20000; i++) {
        uint64_t x = xorshift64(&s), y = xorshift64(&s);
        /* Vary magnitudes so both the 32-bit and full 64-bit division paths run. */
        y >>= (unsigned)(i % 64);
        if (y == 0)
            y = 1;
        int64_t sx = (int64_t)x, sy = (int64_t)y;
        uint64_t res[8] = {x * y, x / y, x % y, (uint64_t)(sx / sy), (uint64_t)(sx % sy),
                           x << (i % 64), x >> (i % 64), (uint64_t)(sx >> (i % 64))};
        for (int k = 0; k < 8; k++)
            h[k] = fnv_word(fnv_word(h[k], (uint32_t)res[k]), (uint32_t)(res[k] >> 32));
    }
    const char *names[8] = {"mul", "udiv", "urem", "sdiv", "srem", "shl", "lshr", "ashr"};
    for (int k = 0; k < 8; k++)
        printf("random %s %08x\n", names[k], h[k]);

    /* Comparisons and 64-bit counting. */
    printf("clzll %d ctzll %d popcountll %d\n", __builtin_clzll(ub), __builtin_ctzll(ub << 20),
           __builtin_popcountll(ua));
    printf("compare: %d %d %d\n", (int64_t)ua < 0, ua > ub, (int64_t)-1 < (int64_t)1);
    return 0;
}
