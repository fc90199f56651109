/* intmath: RV32IM multiply/divide corner cases through inline asm (division by zero and
 * INT_MIN / -1 are undefined in C but defined by the ISA), plus shifts and comparisons. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#define OP_RR(name)                                                                   \
    static uint32_t op_##name(uint32_t a, uint32_t b) {                               \
        uint32_t r;                                                                   \
        __asm__ volatile(#name " %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));             \
        return r;                                                                     \
    }

OP_RR(mul)
OP_RR(mulh)
OP_RR(mulhu)
OP_RR(mulhsu)
OP_RR(div)
OP_RR(divu)
OP_RR(rem)
OP_RR(remu)
OP_RR(sll)
OP_RR(srl)
OP_RR(sra)
OP_RR(slt)
OP_RR(sltu)

typedef uint32_t (*op_fn)(uint32_t, uint32_t);
static const struct {
    const char *name;
    op_fn fn;
} ops[] = {
    {"mul", op_mul},   {"mulh", op_mulh}, {"mulhu", op_mulhu}, {"mulhsu", op_mulhsu},
    {"div", op_div},   {"divu", op_divu}, {"rem", op_rem},     {"remu", op_remu},
    {"sll", op_sll},   {"srl", op_srl},   {"sra", op_sra},     {"slt", op_slt},
    {"sltu", op_sltu},
};

static const uint32_t values[] = {
    0, 1, 2, 3, 7, 31, 32, 33, 0x7fffffff, 0x80000000, 0x80000001, 0xffffffff, 0xfffffffe,
    0xfffffff9, 0x0000ffff, 0x00010000, 0x12345678, 0xdeadbeef, 0x55555555, 0xaaaaaaaa,
};
#define NV (sizeof values / sizeof values[0])

int main(void) {
    /* Named corner cases first, for readable diffs. */
    volatile uint32_t zero = 0, minus1 = 0xffffffff, int_min = 0x80000000, seven = 7;
    printf("div INT_MIN/-1 = %08x\n", op_div(int_min, minus1));
    printf("rem INT_MIN%%-1 = %08x\n", op_rem(int_min, minus1));
    printf("div 7/0 = %08x\n", op_div(seven, zero));
    printf("divu 7/0 = %08x\n", op_divu(seven, zero));
    printf("rem 7%%0 = %08x\n", op_rem(seven, zero));
    printf("remu 7%%0 = %08x\n", op_remu(seven, zero));
    printf("div -7/2 = %d rem = %d\n", (int)op_div(-7, 2), (int)op_rem(-7, 2));
    printf("div 7/-2 = %d rem = %d\n", (int)op_div(7, -2), (int)op_rem(7, -2));
    printf("mulh INT_MIN*INT_MIN = %08x\n", op_mulh(int_min, int_min));
    printf("mulhsu -1*0xffffffff = %08x\n", op_mulhsu(minus1, 0xffffffff));
    printf("mulhu 0xffffffff^2 = %08x\n", op_mulhu(0xffffffff, 0xffffffff));
    printf("sll by 33 uses low 5 bits: %08x\n", op_sll(1, 33));
    printf("sra INT_MIN by 31: %08x\n", op_sra(int_min, 31));

    /* The full table. */
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        printf("%s:", ops[o].name);
        uint32_t h = 0;
        for (size_t i = 0; i < NV; i++) {
            for (size_t j = 0; j < NV; j++) {
                uint32_t r = ops[o].fn(values[i], values[j]);
                h = h * 31 + r;
                if (j < 4 && i % 4 == 0)
                    printf(" %x", r);
            }
        }
        printf(" | hash %08x\n", h);
    }

    /* C-level arithmetic the compiler lowers itself (constants, strength reduction). */
    volatile int32_t v = -1234567;
    printf("C: v/10=%d v%%10=%d v/7=%d v%%7=%d v>>3=%d (unsigned)v/3=%u\n", v / 10, v % 10, v / 7,
           v % 7, v >> 3, (uint32_t)v / 3u);
    volatile int32_t big = INT_MAX;
    printf("C: INT_MAX*3 wraps (unsigned) = %u, INT_MAX/-1 = %d\n", (uint32_t)big * 3u, big / -1);
    return 0;
}
