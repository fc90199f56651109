// cflags: -mcpu=generic_rv32+m+a+f+d+c+zba+zbb+zbc+zbs
/* bitmanip: every Zba/Zbb/Zbc/Zbs instruction via inline asm over pseudo-random operands plus
 * special values; prints a checksum per instruction and a few sample results. */
#include <stdint.h>
#include <stdio.h>
#include "guest_util.h"

#define RR(fname, mnem)                                                                 \
    static uint32_t i_##fname(uint32_t a, uint32_t b) {                                 \
        uint32_t r;                                                                     \
        __asm__ volatile(mnem " %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));                \
        return r;                                                                       \
    }
#define R1(fname, mnem)                                                                 \
    static uint32_t i_##fname(uint32_t a, uint32_t b) {                                 \
        uint32_t r;                                                                     \
        (void)b;                                                                        \
        __asm__ volatile(mnem " %0, %1" : "=r"(r) : "r"(a));                            \
        return r;                                                                       \
    }
/* Immediate forms: dispatch over the low 5 bits of b to one asm statement per immediate. */
#define IMM_CASE(mnem, n)                                                               \
    case n:                                                                             \
        __asm__ volatile(mnem " %0, %1, " #n : "=r"(r) : "r"(a));                      \
        break;
#define RI(fname, mnem)                                                                 \
    static uint32_t i_##fname(uint32_t a, uint32_t b) {                                 \
        uint32_t r = 0;                                                                 \
        switch (b & 31) {                                                               \
            IMM_CASE(mnem, 0) IMM_CASE(mnem, 1) IMM_CASE(mnem, 2) IMM_CASE(mnem, 3)     \
            IMM_CASE(mnem, 4) IMM_CASE(mnem, 5) IMM_CASE(mnem, 6) IMM_CASE(mnem, 7)     \
            IMM_CASE(mnem, 8) IMM_CASE(mnem, 9) IMM_CASE(mnem, 10) IMM_CASE(mnem, 11)   \
            IMM_CASE(mnem, 12) IMM_CASE(mnem, 13) IMM_CASE(mnem, 14) IMM_CASE(mnem, 15) \
            IMM_CASE(mnem, 16) IMM_CASE(mnem, 17) IMM_CASE(mnem, 18) IMM_CASE(mnem, 19) \
            IMM_CASE(mnem, 20) IMM_CASE(mnem, 21) IMM_CASE(mnem, 22) IMM_CASE(mnem, 23) \
            IMM_CASE(mnem, 24) IMM_CASE(mnem, 25) IMM_CASE(mnem, 26) IMM_CASE(mnem, 27) \
            IMM_CASE(mnem, 28) IMM_CASE(mnem, 29) IMM_CASE(mnem, 30) IMM_CASE(mnem, 31) \
        }                                                                               \
        return r;                                                                       \
    }

/* Zba */
RR(sh1add, "sh1add")
RR(sh2add, "sh2add")
RR(sh3add, "sh3add")
/* Zbb */
RR(andn, "andn")
RR(orn, "orn")
RR(xnor, "xnor")
R1(clz, "clz")
R1(ctz, "ctz")
R1(cpop, "cpop")
RR(max, "max")
RR(maxu, "maxu")
RR(min, "min")
RR(minu, "minu")
R1(sext_b, "sext.b")
R1(sext_h, "sext.h")
R1(zext_h, "zext.h")
RR(rol, "rol")
RR(ror, "ror")
RI(rori, "rori")
R1(orc_b, "orc.b")
R1(rev8, "rev8")
/* Zbc */
RR(clmul, "clmul")
RR(clmulh, "clmulh")
RR(clmulr, "clmulr")
/* Zbs */
RR(bclr, "bclr")
RI(bclri, "bclri")
RR(bext, "bext")
RI(bexti, "bexti")
RR(binv, "binv")
RI(binvi, "binvi")
RR(bset, "bset")
RI(bseti, "bseti")

typedef uint32_t (*op_fn)(uint32_t, uint32_t);
#define E(fname, mnem) {mnem, i_##fname}
static const struct {
    const char *name;
    op_fn fn;
} ops[] = {
    E(sh1add, "sh1add"), E(sh2add, "sh2add"), E(sh3add, "sh3add"), E(andn, "andn"),
    E(orn, "orn"),       E(xnor, "xnor"),     E(clz, "clz"),       E(ctz, "ctz"),
    E(cpop, "cpop"),     E(max, "max"),       E(maxu, "maxu"),     E(min, "min"),
    E(minu, "minu"),     E(sext_b, "sext.b"), E(sext_h, "sext.h"), E(zext_h, "zext.h"),
    E(rol, "rol"),       E(ror, "ror"),       E(rori, "rori"),     E(orc_b, "orc.b"),
    E(rev8, "rev8"),     E(clmul, "clmul"),   E(clmulh, "clmulh"), E(clmulr, "clmulr"),
    E(bclr, "bclr"),     E(bclri, "bclri"),   E(bext, "bext"),     E(bexti, "bexti"),
    E(binv, "binv"),     E(binvi, "binvi"),   E(bset, "bset"),     E(bseti, "bseti"),
};

static const uint32_t specials[] = {0,          1,          2,          31,         32,
                                    0x7fffffff, 0x80000000, 0xffffffff, 0x0000ff80, 0x00008000,
                                    0x12345678, 0x00ff00ff, 0x80808080, 0x00000080};
#define NSPEC (sizeof specials / sizeof specials[0])

int main(void) {
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        uint32_t h = FNV_INIT;
        uint32_t seed = 0x9e3779b9u ^ (uint32_t)o;
        for (size_t i = 0; i < NSPEC; i++)
            for (size_t j = 0; j < NSPEC; j++)
                h = fnv_word(h, ops[o].fn(specials[i], specials[j]));
        for (int k = 0; k < 20000; k++) {
            uint32_t a = xorshift32(&seed), b = xorshift32(&seed);
            /* Sparse and byte-structured operands hit clz/ctz/orc.b edge cases. */
            if (k % 4 == 1)
                a >>= b % 32;
            if (k % 4 == 2)
                a &= 0xff00ff00u >> (b % 9);
            h = fnv_word(h, ops[o].fn(a, b));
        }
        printf("%-7s %08x  e.g. (12345678,5)->%08x (80000000,ffffffff)->%08x\n", ops[o].name, h,
               ops[o].fn(0x12345678, 5), ops[o].fn(0x80000000, 0xffffffff));
    }
    return 0;
}
