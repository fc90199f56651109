/* atomics: the A extension through C11 atomics (amoadd/amoswap/amoand/amoor/amoxor/amomin/
 * amomax and lr/sc compare-and-swap loops) plus explicit lr.w/sc.w and fences. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include "guest_util.h"

static uint32_t amo(const char *which, volatile uint32_t *p, uint32_t v) {
    uint32_t old = 0;
#define AMO(m)                                                                          \
    __asm__ volatile(m " %0, %2, (%1)" : "=r"(old) : "r"(p), "r"(v) : "memory")
    switch (which[0] * 256 + which[1]) {
    case 'a' * 256 + 'd': AMO("amoadd.w"); break;
    case 's' * 256 + 'w': AMO("amoswap.w.aq"); break;
    case 'a' * 256 + 'n': AMO("amoand.w.rl"); break;
    case 'o' * 256 + 'r': AMO("amoor.w.aqrl"); break;
    case 'x' * 256 + 'o': AMO("amoxor.w"); break;
    case 'm' * 256 + 'i': AMO("amomin.w"); break;
    case 'm' * 256 + 'a': AMO("amomax.w"); break;
    case 'u' * 256 + 'i': AMO("amominu.w"); break;
    case 'u' * 256 + 'a': AMO("amomaxu.w"); break;
    }
#undef AMO
    return old;
}

int main(void) {
    static const char *names[] = {"ad", "sw", "an", "or", "xo", "mi", "ma", "ui", "ua"};
    static const char *long_names[] = {"amoadd", "amoswap", "amoand", "amoor", "amoxor",
                                       "amomin", "amomax", "amominu", "amomaxu"};
    for (int n = 0; n < 9; n++) {
        volatile uint32_t cell = 0x80000001u;
        uint32_t seed = 5u + (uint32_t)n;
        uint32_t h = FNV_INIT;
        for (int i = 0; i < 5000; i++) {
            uint32_t v = xorshift32(&seed);
            if (i % 3 == 0)
                v = (uint32_t)(int32_t)(int8_t)v;
            uint32_t old = amo(names[n], &cell, v);
            h = fnv_word(fnv_word(h, old), cell);
        }
        printf("%-8s final=%08x hash=%08x\n", long_names[n], cell, h);
    }

    /* lr/sc increment loop. */
    volatile uint32_t counter = 0;
    int sc_failures = 0;
    for (int i = 0; i < 1000; i++) {
        uint32_t tmp, fail;
        __asm__ volatile("1: lr.w %0, (%2)\n\t"
                         "addi %0, %0, 3\n\t"
                         "sc.w %1, %0, (%2)\n\t"
                         "bnez %1, 1b"
                         : "=&r"(tmp), "=&r"(fail)
                         : "r"(&counter)
                         : "memory");
        sc_failures += (int)fail;
    }
    printf("lr/sc counter=%u\n", counter);
    (void)sc_failures;

    /* sc.w without a reservation must fail (returns nonzero) and not store. */
    volatile uint32_t target = 77;
    uint32_t fail;
    uint32_t dummy;
    __asm__ volatile("lr.w %1, (%2)\n\tsc.w %1, %3, (%2)\n\tsc.w %0, %3, (%2)"
                     : "=&r"(fail), "=&r"(dummy)
                     : "r"(&target), "r"(99)
                     : "memory");
    printf("second sc.w fails: %d target=%u\n", fail != 0, target);

    /* C11 atomics. */
    _Atomic uint32_t a = 10;
    atomic_fetch_add(&a, 5);
    atomic_fetch_sub(&a, 3);
    atomic_fetch_or(&a, 0x100);
    atomic_fetch_and(&a, 0x1ff);
    atomic_fetch_xor(&a, 0xf);
    uint32_t expected = 0;
    int ok1 = atomic_compare_exchange_strong(&a, &expected, 1);
    printf("cas wrong expected: ok=%d observed=%u\n", ok1, expected);
    int ok2 = atomic_compare_exchange_strong(&a, &expected, 1234);
    printf("cas right expected: ok=%d value=%u\n", ok2, atomic_load(&a));
    printf("exchange old=%u new=%u\n", atomic_exchange(&a, 42), atomic_load(&a));
    _Atomic uint8_t small = 250;
    atomic_fetch_add(&small, 10);
    _Atomic uint16_t mid = 65530;
    atomic_fetch_add(&mid, 10);
    printf("sub-word atomics: u8=%u u16=%u\n", atomic_load(&small), atomic_load(&mid));
    atomic_thread_fence(memory_order_seq_cst);
    __asm__ volatile("fence rw, rw\n\tfence.i\n\tfence r, r" ::: "memory");
    printf("fences ok\n");
    return 0;
}
