/* strconv: strtol/strtoul/strtoll/strtod/atof parsing (bases, signs, overflow, end pointers)
 * and snprintf formatting (widths, flags, truncation, %n, positional args). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static void t_strtol(const char *s, int base) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, base);
    printf("strtol(\"%s\", %d) = %ld end=+%td errno=%d\n", s, base, v, end - s, errno);
}
static void t_strtoul(const char *s, int base) {
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, base);
    printf("strtoul(\"%s\", %d) = %lu end=+%td errno=%d\n", s, base, v, end - s, errno);
}
static void t_strtoll(const char *s, int base) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, base);
    printf("strtoll(\"%s\", %d) = %lld end=+%td errno=%d\n", s, base, v, end - s, errno);
}
static void t_strtod(const char *s) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    printf("strtod(\"%s\") = %.17g (%a) end=+%td errno=%d\n", s, v, v, end - s, errno);
}
static void t_strtof(const char *s) {
    char *end;
    errno = 0;
    float v = strtof(s, &end);
    printf("strtof(\"%s\") = %.9g end=+%td errno=%d\n", s, (double)v, end - s, errno);
}

int main(void) {
    t_strtol("12345", 10);
    t_strtol("  -42abc", 10);
    t_strtol("0x1F", 0);
    t_strtol("0777", 0);
    t_strtol("z", 36);
    t_strtol("2147483647", 10);
    t_strtol("2147483648", 10);
    t_strtol("-2147483649", 10);
    t_strtol("", 10);
    t_strtol("+", 10);
    t_strtol("101101", 2);
    t_strtoul("4294967295", 10);
    t_strtoul("4294967296", 10);
    t_strtoul("-1", 10);
    t_strtoul("0xffffFFFF", 16);
    t_strtoll("9223372036854775807", 10);
    t_strtoll("9223372036854775808", 10);
    t_strtoll("-9223372036854775808", 10);
    t_strtoll("0x7fffffffffffffff", 0);
    printf("atoi(\" 77x\")=%d atol(\"-9\")=%ld\n", atoi(" 77x"), atol("-9"));

    t_strtod("3.14159");
    t_strtod("  -0.0");
    t_strtod("1e308");
    t_strtod("1e309");
    t_strtod("2e-308");
    t_strtod("4e-324");
    t_strtod("1e-400");
    t_strtod("0x1.8p3");
    t_strtod("inf");
    t_strtod("-Infinity");
    t_strtod("nanxyz");
    t_strtod("1.7976931348623157e308");
    t_strtod("2.2250738585072011e-308");
    t_strtod("0.1");
    t_strtod("123456789012345678901234567890");
    t_strtod(".5e1x");
    t_strtod("e5");
    t_strtod("9007199254740993");
    t_strtod("1.00000000000000011102230246251565404236316680908203125");
    t_strtof("3.4028235e38");
    t_strtof("3.5e38");
    t_strtof("1e-46");
    t_strtof("0.1");

    char buf[128];
    int n;
    n = snprintf(buf, sizeof buf, "[%5d|%-5d|%05d|%+d|% d|%x|%X|%#x|%o|%#o]", 42, 42, 42, 42, 42,
                 255, 255, 255, 8, 8);
    printf("%s n=%d\n", buf, n);
    n = snprintf(buf, sizeof buf, "[%s|%10s|%-10s|%.3s|%c|%%|%5.1f|%-8.3e|%G]", "str", "right",
                 "left", "truncate", 'C', 3.14159, 31415.9, 1e-10);
    printf("%s n=%d\n", buf, n);
    n = snprintf(buf, sizeof buf, "[%lld|%llu|%llx|%" PRId64 "|%zu|%td|%hhd|%hd]", LLONG_MIN,
                 ULLONG_MAX, 0x123456789abcdefULL, INT64_C(-5), (size_t)7, (ptrdiff_t)-3, 300,
                 70000);
    printf("%s n=%d\n", buf, n);
    volatile size_t ten = 10; /* volatile: keep the compiler from warning about truncation */
    n = snprintf(buf, ten, "truncated output here");
    printf("truncated: \"%s\" would be n=%d\n", buf, n);
    n = snprintf(NULL, 0, "%d-%s", 123456, "count");
    printf("snprintf(NULL, 0) = %d\n", n);
    int pos = 0;
    snprintf(buf, sizeof buf, "abc%ndef", &pos);
    printf("%%n stored %d\n", pos);
    snprintf(buf, sizeof buf, "%2$s %1$s %2$s", "world", "hello");
    printf("positional: %s\n", buf);
    snprintf(buf, sizeof buf, "%*d|%-*d|%.*f", 6, 1, 6, 2, 2, 2.71828);
    printf("star: %s\n", buf);
    snprintf(buf, sizeof buf, "%p", (void *)0x1234);
    printf("pointer: %s\n", buf);

    /* sscanf round trips. */
    int a = 0, b = 0;
    char w[16] = "";
    double d = 0;
    n = sscanf("10 0x20 word 2.5", "%d %i %15s %lf", &a, &b, w, &d);
    printf("sscanf n=%d %d %d %s %g\n", n, a, b, w, d);
    n = sscanf("12:34:56", "%d:%d", &a, &b);
    printf("sscanf partial n=%d %d %d\n", n, a, b);
    return 0;
}
