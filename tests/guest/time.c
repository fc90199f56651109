/* time: clocks advance, sleeps last at least as long as asked. Prints booleans only. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <sys/time.h>
#include <sys/times.h>
#include <time.h>
#include <unistd.h>
#include "guest_util.h"

static int64_t ns_of(const struct timespec *t) {
    return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

int main(void) {
    struct timespec a, b;
    check(clock_gettime(CLOCK_MONOTONIC, &a) == 0, "clock_gettime MONOTONIC");
    int64_t prev = ns_of(&a);
    int monotonic = 1;
    for (int i = 0; i < 10000; i++) {
        clock_gettime(CLOCK_MONOTONIC, &b);
        monotonic &= ns_of(&b) >= prev;
        prev = ns_of(&b);
    }
    check(monotonic, "monotonic never goes back over 10000 reads");
    check(a.tv_nsec >= 0 && a.tv_nsec < 1000000000, "tv_nsec in range");

    struct timespec req = {0, 10 * 1000 * 1000};
    clock_gettime(CLOCK_MONOTONIC, &a);
    check(nanosleep(&req, NULL) == 0, "nanosleep 10ms");
    clock_gettime(CLOCK_MONOTONIC, &b);
    int64_t slept = ns_of(&b) - ns_of(&a);
    check(slept >= 10 * 1000 * 1000, "nanosleep elapsed >= 10ms");
    check(slept < 5LL * 1000 * 1000 * 1000, "nanosleep elapsed < 5s");

    clock_gettime(CLOCK_MONOTONIC, &a);
    usleep(20000);
    clock_gettime(CLOCK_MONOTONIC, &b);
    check(ns_of(&b) - ns_of(&a) >= 20 * 1000 * 1000, "usleep 20ms elapsed >= 20ms");

    clock_gettime(CLOCK_MONOTONIC, &a);
    struct timespec abs_deadline = a;
    abs_deadline.tv_nsec += 15 * 1000 * 1000;
    if (abs_deadline.tv_nsec >= 1000000000) {
        abs_deadline.tv_nsec -= 1000000000;
        abs_deadline.tv_sec++;
    }
    check(clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &abs_deadline, NULL) == 0,
          "clock_nanosleep TIMER_ABSTIME");
    clock_gettime(CLOCK_MONOTONIC, &b);
    check(ns_of(&b) >= ns_of(&abs_deadline), "woke after the absolute deadline");

    struct timespec rt;
    check(clock_gettime(CLOCK_REALTIME, &rt) == 0, "clock_gettime REALTIME");
    check(rt.tv_sec > 1700000000, "realtime after 2023");
    /* 64-bit time_t on rv32 (time64 syscalls): must not be truncated. */
    check(sizeof(time_t) == 8, "time_t is 64-bit");
    time_t now = time(NULL);
    check(now >= rt.tv_sec && now - rt.tv_sec < 10, "time() agrees with REALTIME");
    struct timeval tv;
    check(gettimeofday(&tv, NULL) == 0 && tv.tv_sec >= rt.tv_sec && tv.tv_usec < 1000000,
          "gettimeofday agrees");

    struct timespec res;
    check(clock_getres(CLOCK_MONOTONIC, &res) == 0 && ns_of(&res) > 0 && ns_of(&res) <= 1000000,
          "clock_getres MONOTONIC in (0, 1ms]");

    struct timespec cpu_a, cpu_b;
    check(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu_a) == 0, "PROCESS_CPUTIME clock");
    volatile uint32_t spin = 0;
    for (uint32_t i = 0; i < 3000000; i++)
        spin += i;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu_b);
    check(ns_of(&cpu_b) >= ns_of(&cpu_a), "process CPU time does not go back");

    /* clock_nanosleep works on the clocks Linux sleeps on; the raw and coarse ones can be read
     * but not slept on (EOPNOTSUPP), an unknown one is EINVAL. musl returns the error. */
    struct timespec short_sleep = {0, 1000};
    const clockid_t sleepable[] = {CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME, CLOCK_TAI};
    for (int i = 0; i < 4; i++)
        printf("clock_nanosleep(clock %d) = %d\n", (int)sleepable[i],
               clock_nanosleep(sleepable[i], 0, &short_sleep, NULL));
    const clockid_t unsleepable[] = {CLOCK_MONOTONIC_RAW, CLOCK_REALTIME_COARSE,
                                     CLOCK_MONOTONIC_COARSE, 99};
    for (int i = 0; i < 4; i++)
        printf("clock_nanosleep(clock %d) = %d\n", (int)unsleepable[i],
               clock_nanosleep(unsleepable[i], 0, &short_sleep, NULL));

    struct tm tmv;
    time_t fixed = 1234567890;
    gmtime_r(&fixed, &tmv);
    char s[64];
    strftime(s, sizeof s, "%Y-%m-%d %H:%M:%S %a %j", &tmv);
    printf("gmtime(1234567890) = %s\n", s);
    time_t far = 4102444800LL; /* 2100-01-01: past 2038 */
    gmtime_r(&far, &tmv);
    strftime(s, sizeof s, "%Y-%m-%d %H:%M:%S", &tmv);
    printf("gmtime(4102444800) = %s\n", s);
    printf("failures=%d\n", guest_failures);
    return guest_failures ? 1 : 0;
}
