/* indirect: indirect jumps with one dominant target, with none, and with a target that changes
 * after the profile was taken (tier 2's indirect-jump prediction must stay exact when its guess
 * is wrong); calls through function pointers, switch jump tables and returns. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef uint32_t (*step_fn)(uint32_t);

__attribute__((noinline)) static uint32_t add_seven(uint32_t x) { return x + 7; }
__attribute__((noinline)) static uint32_t rotate(uint32_t x) { return x << 5 | x >> 27; }
__attribute__((noinline)) static uint32_t mix(uint32_t x) { return x * 2654435761u ^ x >> 13; }
__attribute__((noinline)) static uint32_t negate(uint32_t x) { return -x; }

/* volatile: the compiler may not turn the calls into direct ones. */
static step_fn volatile table[4] = {add_seven, rotate, mix, negate};

static uint32_t lcg(uint32_t *state) {
    *state = *state * 1664525u + 1013904223u;
    return *state >> 16;
}

/* One target 31 times in 32, the others now and then. */
static uint32_t dominant(uint32_t n) {
    uint32_t acc = 1, state = 5;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t r = lcg(&state);
        step_fn f = (r & 31) == 0 ? table[1 + r % 3] : table[0];
        acc = f(acc) ^ i;
    }
    return acc;
}

/* No target dominates. */
static uint32_t spread(uint32_t n) {
    uint32_t acc = 2, state = 11;
    for (uint32_t i = 0; i < n; i++)
        acc = table[lcg(&state) & 3](acc) + i;
    return acc;
}

/* One target for the first stretch (long enough to be profiled and compiled), another after. */
static uint32_t phase_change(uint32_t n) {
    uint32_t acc = 3;
    for (uint32_t i = 0; i < n; i++) {
        step_fn f = i < n / 4 ? table[2] : table[3];
        acc = f(acc) + (i & 0xff);
    }
    return acc;
}

/* A dense switch (a jump table: jalr through a loaded address) with a dominant case. */
__attribute__((noinline)) static uint32_t dispatch(uint32_t op, uint32_t x) {
    switch (op) {
    case 0: return x + 1;
    case 1: return x ^ 0x5a5a5a5a;
    case 2: return x * 3;
    case 3: return x >> 1;
    case 4: return x - 17;
    case 5: return ~x;
    case 6: return x << 2;
    case 7: return x | 0x80000001u;
    default: return x;
    }
}

static uint32_t interpreter(uint32_t n) {
    uint32_t acc = 4, state = 23;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t r = lcg(&state);
        uint32_t op = (r & 15) < 14 ? 2 : r % 8;
        acc = dispatch(op, acc) + i;
    }
    return acc;
}

/* argv[1]: a scale for the long runs (default 1), so a test can run long enough for tier 2. */
int main(int argc, char **argv) {
    uint32_t scale = argc > 1 ? (uint32_t)atoi(argv[1]) : 1;
    printf("dominant      %08x\n", dominant(400000 * scale));
    printf("spread        %08x\n", spread(200000 * scale));
    printf("phase change  %08x\n", phase_change(400000 * scale));
    printf("interpreter   %08x\n", interpreter(400000 * scale));
    /* Short runs too: before any tier has compiled anything. */
    printf("short         %08x %08x %08x\n", dominant(40), spread(40), phase_change(40));
    return 0;
}
