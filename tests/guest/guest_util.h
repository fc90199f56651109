/* Shared helpers for the user-mode guest test programs (header only). */
#ifndef GUEST_UTIL_H
#define GUEST_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Marsaglia xorshift32: deterministic operands, identical on every host. */
static inline uint32_t xorshift32(uint32_t *state) {
    uint32_t x = *state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *state = x;
    return x;
}

/* FNV-1a over a 32-bit word (little-endian byte order). */
static inline uint32_t fnv_word(uint32_t hash, uint32_t word) {
    for (int i = 0; i < 4; i++) {
        hash ^= (word >> (8 * i)) & 0xffu;
        hash *= 16777619u;
    }
    return hash;
}

static inline uint32_t fnv_bytes(uint32_t hash, const void *data, size_t len) {
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        hash ^= p[i];
        hash *= 16777619u;
    }
    return hash;
}

#define FNV_INIT 2166136261u

/* Report a check: prints "ok NAME" or "FAIL NAME" and counts failures. */
static int guest_failures;
static inline void check(int cond, const char *name) {
    printf("%s %s\n", cond ? "ok" : "FAIL", name);
    if (!cond)
        guest_failures++;
}

static inline void die(const char *what) {
    perror(what);
    exit(99);
}

#endif
