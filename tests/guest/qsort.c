/* qsort: sort ints, strings and structs of many sizes; bsearch; stability-independent checks. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "guest_util.h"

static int cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}
static int cmp_int_desc(const void *a, const void *b) { return cmp_int(b, a); }
static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}
struct rec {
    uint32_t key;
    char name[12];
    double weight;
};
static int cmp_rec(const void *a, const void *b) {
    const struct rec *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return strcmp(x->name, y->name);
}

int main(void) {
    uint32_t seed = 99;
    static const int sizes[] = {0, 1, 2, 3, 7, 16, 100, 1000, 10007, 100000};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        int n = sizes[si];
        int *a = malloc(sizeof(int) * (size_t)(n ? n : 1));
        for (int i = 0; i < n; i++)
            a[i] = (int)(xorshift32(&seed) % 2000) - 1000;
        qsort(a, (size_t)n, sizeof(int), cmp_int);
        int sorted = 1;
        uint32_t h = FNV_INIT;
        for (int i = 0; i < n; i++) {
            if (i)
                sorted &= a[i - 1] <= a[i];
            h = fnv_word(h, (uint32_t)a[i]);
        }
        printf("n=%d sorted=%d hash=%08x", n, sorted, h);
        if (n)
            printf(" min=%d max=%d median=%d", a[0], a[n - 1], a[n / 2]);
        if (n) {
            int key = a[n / 3];
            int *found = bsearch(&key, a, (size_t)n, sizeof(int), cmp_int);
            printf(" bsearch found=%d", found && *found == key);
            int missing = 5000;
            printf(" missing=%d", bsearch(&missing, a, (size_t)n, sizeof(int), cmp_int) == NULL);
        }
        qsort(a, (size_t)n, sizeof(int), cmp_int_desc);
        int desc = 1;
        for (int i = 1; i < n; i++)
            desc &= a[i - 1] >= a[i];
        printf(" desc=%d\n", desc);
        free(a);
    }

    /* Already sorted, reversed, all equal (pathological inputs). */
    int arr[5000];
    for (int pattern = 0; pattern < 3; pattern++) {
        for (int i = 0; i < 5000; i++)
            arr[i] = pattern == 0 ? i : pattern == 1 ? 5000 - i : 42;
        qsort(arr, 5000, sizeof(int), cmp_int);
        uint32_t h = FNV_INIT;
        for (int i = 0; i < 5000; i++)
            h = fnv_word(h, (uint32_t)arr[i]);
        printf("pattern %d hash %08x\n", pattern, h);
    }

    /* Strings. */
    static const char *words[] = {"pear", "apple", "fig", "banana", "cherry", "date", "elder",
                                  "grape", "apple", "kiwi", "lemon", "Zebra", "", "mango"};
    size_t nw = sizeof words / sizeof words[0];
    const char *w[sizeof words / sizeof words[0]];
    memcpy(w, words, sizeof w);
    qsort(w, nw, sizeof(char *), cmp_str);
    for (size_t i = 0; i < nw; i++)
        printf("%s\"%s\"", i ? " " : "words: ", w[i]);
    printf("\n");

    /* Structs (element size not a power of two). */
    struct rec recs[500];
    for (int i = 0; i < 500; i++) {
        recs[i].key = xorshift32(&seed) % 50;
        snprintf(recs[i].name, sizeof recs[i].name, "n%u", xorshift32(&seed) % 100000);
        recs[i].weight = recs[i].key * 0.5;
    }
    qsort(recs, 500, sizeof(struct rec), cmp_rec);
    uint32_t h = FNV_INIT;
    for (int i = 0; i < 500; i++)
        h = fnv_bytes(fnv_word(h, recs[i].key), recs[i].name, strlen(recs[i].name));
    printf("records: first %u/%s last %u/%s hash %08x\n", recs[0].key, recs[0].name,
           recs[499].key, recs[499].name, h);
    return 0;
}
