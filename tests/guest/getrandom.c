/* getrandom: lengths and booleans only; the bytes themselves differ per run. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include "guest_util.h"

int main(void) {
    unsigned char a[64], b[64];
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    ssize_t na = getrandom(a, sizeof a, 0);
    ssize_t nb = getrandom(b, sizeof b, 0);
    printf("getrandom lengths %zd %zd\n", na, nb);
    check(memcmp(a, b, sizeof a) != 0, "two draws differ");
    int nonzero = 0;
    for (size_t i = 0; i < sizeof a; i++)
        nonzero += a[i] != 0;
    check(nonzero > 32, "most bytes nonzero");
    unsigned char big[256];
    ssize_t nbig = getrandom(big, sizeof big, GRND_NONBLOCK);
    printf("getrandom 256 nonblock: %zd\n", nbig);
    printf("getrandom 0 bytes: %zd\n", getrandom(big, 0, 0));
    ssize_t bad = getrandom(big, 1, 0x1000);
    printf("bad flags: %zd einval=%d\n", bad, bad < 0 && errno == EINVAL);
    /* Bit balance over 64 KiB: ones within 1% of half. */
    static unsigned char pool[65536];
    size_t got = 0;
    while (got < sizeof pool) {
        ssize_t n = getrandom(pool + got, sizeof pool - got, 0);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    long ones = 0;
    for (size_t i = 0; i < got; i++)
        ones += __builtin_popcount(pool[i]);
    long half = (long)got * 4;
    check(got == sizeof pool, "filled 64 KiB");
    check(ones > half - half / 100 && ones < half + half / 100, "bit balance within 1%");
    printf("failures=%d\n", guest_failures);
    return guest_failures ? 1 : 0;
}
