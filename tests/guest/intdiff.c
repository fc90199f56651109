/* intdiff: integer differential oracle. xorshift operands (mixed with special values) through
 * every RV32I/M register-register, register-immediate, branch and load/store form via inline
 * asm; prints a running hash per operation. Compared against qemu-riscv32. */
#include <stdint.h>
#include <stdio.h>
#include "guest_util.h"

#define ITER 30000

#define RR(fname, mnem)                                                                 \
    static uint32_t f_##fname(uint32_t a, uint32_t b) {                                 \
        uint32_t r;                                                                     \
        __asm__ volatile(mnem " %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));                \
        return r;                                                                       \
    }
/* rd == rs1 == rs2 aliasing form. */
#define RSELF(fname, mnem)                                                              \
    static uint32_t f_##fname(uint32_t a, uint32_t b) {                                 \
        (void)b;                                                                        \
        __asm__ volatile(mnem " %0, %0, %0" : "+r"(a));                                 \
        return a;                                                                       \
    }
/* Immediates: a fixed spread of 12-bit values selected by b. */
#define ICASE(mnem, k, imm)                                                             \
    case k:                                                                             \
        __asm__ volatile(mnem " %0, %1, " #imm : "=r"(r) : "r"(a));                    \
        break;
#define RI(fname, mnem)                                                                 \
    static uint32_t f_##fname(uint32_t a, uint32_t b) {                                 \
        uint32_t r = 0;                                                                 \
        switch (b & 15) {                                                               \
            ICASE(mnem, 0, 0) ICASE(mnem, 1, 1) ICASE(mnem, 2, -1) ICASE(mnem, 3, 2047) \
            ICASE(mnem, 4, -2048) ICASE(mnem, 5, 0x555) ICASE(mnem, 6, -0x555)          \
            ICASE(mnem, 7, 7) ICASE(mnem, 8, 0x7f) ICASE(mnem, 9, 0x80)                 \
            ICASE(mnem, 10, -129) ICASE(mnem, 11, 1000) ICASE(mnem, 12, -1000)          \
            ICASE(mnem, 13, 0x7ff) ICASE(mnem, 14, 0x100) ICASE(mnem, 15, 3)            \
        }                                                                               \
        return r;                                                                       \
    }
#define SHI(fname, mnem)                                                                \
    static uint32_t f_##fname(uint32_t a, uint32_t b) {                                 \
        uint32_t r = 0;                                                                 \
        switch (b & 7) {                                                                \
            ICASE(mnem, 0, 0) ICASE(mnem, 1, 1) ICASE(mnem, 2, 5) ICASE(mnem, 3, 15)    \
            ICASE(mnem, 4, 16) ICASE(mnem, 5, 24) ICASE(mnem, 6, 30) ICASE(mnem, 7, 31) \
        }                                                                               \
        return r;                                                                       \
    }
/* Branches: result 1 if taken. */
#define BR(fname, mnem)                                                                 \
    static uint32_t f_##fname(uint32_t a, uint32_t b) {                                 \
        uint32_t r;                                                                     \
        __asm__ volatile("li %0, 1\n\t" mnem " %1, %2, 1f\n\tli %0, 0\n1:"             \
                         : "=&r"(r)                                                     \
                         : "r"(a), "r"(b));                                             \
        return r;                                                                       \
    }

RR(add, "add") RR(sub, "sub") RR(sll, "sll") RR(slt, "slt") RR(sltu, "sltu") RR(xor_, "xor")
RR(srl, "srl") RR(sra, "sra") RR(or_, "or") RR(and_, "and")
RR(mul, "mul") RR(mulh, "mulh") RR(mulhsu, "mulhsu") RR(mulhu, "mulhu")
RR(div, "div") RR(divu, "divu") RR(rem, "rem") RR(remu, "remu")
RSELF(add_self, "add") RSELF(sub_self, "sub") RSELF(mul_self, "mul") RSELF(div_self, "div")
RSELF(sltu_self, "sltu") RSELF(mulh_self, "mulh")
RI(addi, "addi") RI(slti, "slti") RI(sltiu, "sltiu") RI(xori, "xori") RI(ori, "ori")
RI(andi, "andi")
SHI(slli, "slli") SHI(srli, "srli") SHI(srai, "srai")
BR(beq, "beq") BR(bne, "bne") BR(blt, "blt") BR(bge, "bge") BR(bltu, "bltu") BR(bgeu, "bgeu")

static uint32_t f_lui_auipc(uint32_t a, uint32_t b) {
    uint32_t r1, r2, r3;
    (void)b;
    __asm__ volatile("lui %0, 0xfffff\n\tlui %1, 0x80000\n\tlui %2, 0x12345"
                     : "=r"(r1), "=r"(r2), "=r"(r3));
    return a ^ r1 ^ (r2 + r3);
}

/* Loads/stores at offsets within a scratch buffer, via every width and sign. */
static uint8_t mem_buf[64] __attribute__((aligned(8)));
static uint32_t f_loads(uint32_t a, uint32_t b) {
    uint32_t *w = (uint32_t *)mem_buf;
    w[b % 16] = a;
    uint8_t *base = mem_buf + (b % 16) * 4;
    uint32_t lb, lbu, lh, lhu, lw;
    __asm__ volatile("lb %0, 1(%5)\n\tlbu %1, 3(%5)\n\tlh %2, 2(%5)\n\tlhu %3, 0(%5)\n\tlw %4, 0(%5)"
                     : "=&r"(lb), "=&r"(lbu), "=&r"(lh), "=&r"(lhu), "=&r"(lw)
                     : "r"(base)
                     : "memory");
    return lb ^ (lbu << 3) ^ (lh << 7) ^ (lhu << 11) ^ (lw * 3);
}
static uint32_t f_stores(uint32_t a, uint32_t b) {
    uint8_t *base = mem_buf + (b % 8) * 4;
    uint32_t out;
    __asm__ volatile("sw %1, 0(%2)\n\tsb %1, 5(%2)\n\tsh %1, 6(%2)\n\tsb %3, 1(%2)\n\tlw %0, 4(%2)"
                     : "=&r"(out)
                     : "r"(a), "r"(base), "r"(b)
                     : "memory");
    return out ^ *(uint32_t *)base;
}
/* jal/jalr: link register value relative to the function start. */
static uint32_t f_jalr(uint32_t a, uint32_t b) {
    uint32_t link_delta;
    (void)b;
    __asm__ volatile("1: auipc t0, 0\n\t"
                     "jal t1, 2f\n\t"
                     "2: sub %0, t1, t0\n\t"
                     "la t2, 3f\n\t"
                     "jalr t3, 0(t2)\n\t"
                     "3: sub t3, t3, t2\n\t"
                     "add %0, %0, t3"
                     : "=r"(link_delta)
                     :
                     : "t0", "t1", "t2", "t3");
    return a + link_delta;
}

typedef uint32_t (*op_fn)(uint32_t, uint32_t);
#define E(n) {#n, f_##n}
static const struct {
    const char *name;
    op_fn fn;
} ops[] = {
    E(add),      E(sub),      E(sll),      E(slt),      E(sltu),      E(xor_),      E(srl),
    E(sra),      E(or_),      E(and_),     E(mul),      E(mulh),      E(mulhsu),    E(mulhu),
    E(div),      E(divu),     E(rem),      E(remu),     E(add_self),  E(sub_self),  E(mul_self),
    E(div_self), E(sltu_self), E(mulh_self), E(addi),   E(slti),      E(sltiu),     E(xori),
    E(ori),      E(andi),     E(slli),     E(srli),     E(srai),      E(beq),       E(bne),
    E(blt),      E(bge),      E(bltu),     E(bgeu),     E(lui_auipc), E(loads),     E(stores),
    E(jalr),
};

static const uint32_t specials[] = {0, 1, 0xffffffff, 0x80000000, 0x7fffffff, 2, 31, 32};

static uint32_t operand(uint32_t *seed, int k) {
    uint32_t r = xorshift32(seed);
    switch (k % 8) {
    case 0:
        return specials[r % 8];
    case 1:
        return r & 0xff;
    case 2:
        return (uint32_t)(int32_t)(int8_t)r;
    case 3:
        return r >> (r % 32);
    default:
        return r;
    }
}

int main(void) {
    uint32_t total = FNV_INIT;
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        uint32_t seed = 0x12345u + (uint32_t)o * 7919u;
        uint32_t h = FNV_INIT;
        for (int k = 0; k < ITER; k++) {
            uint32_t a = operand(&seed, k);
            uint32_t b = operand(&seed, k / 8 + k);
            h = fnv_word(h, ops[o].fn(a, b));
        }
        printf("%-10s %08x\n", ops[o].name, h);
        total = fnv_word(total, h);
    }
    printf("total %08x\n", total);
    return 0;
}
