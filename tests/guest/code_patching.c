/* code_patching: a program that writes machine code at run time and runs it, as a JIT does.
 * It patches one function 1500 times, each time making it visible with
 * __builtin___clear_cache (riscv_flush_icache), and patches code at a new place in a page it
 * switches between writable and executable with mprotect, with a fence.i, 300 times. Every
 * patched function must run as written. (Each flush drops decoded code; rv32vm's tier 2 once
 * ran out of code memory after about a thousand of them.) */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include "guest_util.h"

typedef int (*unary_fn)(int);

/* addi a0, a0, imm */
static uint32_t addi_a0(int imm) {
    return ((uint32_t)(imm & 0xfff) << 20) | (10u << 15) | (10u << 7) | 0x13u;
}

static const uint32_t RET = 0x00008067u;

int main(void) {
    uint32_t *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED)
        die("mmap rwx");
    long total = 0;
    for (int round = 0; round < 1500; round++) {
        code[0] = addi_a0(round);
        code[1] = RET;
        __builtin___clear_cache((char *)code, (char *)(code + 2));
        unary_fn f = (unary_fn)code;
        for (int k = 0; k < 20; k++)
            total += f(k);
    }
    printf("patched in place, 1500 flushes: total %ld\n", total);

    uint32_t *page = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
        die("mmap rw");
    long sum = 0;
    for (int round = 0; round < 300; round++) {
        uint32_t *at = page + (round * 7) % 2040;
        mprotect(page, 8192, PROT_READ | PROT_WRITE);
        at[0] = addi_a0(round);
        at[1] = RET;
        mprotect(page, 8192, PROT_READ | PROT_EXEC);
        __asm__ volatile("fence.i" ::: "memory");
        sum += ((unary_fn)at)(1);
    }
    printf("written through mprotect, 300 fence.i: sum %ld\n", sum);
    return 0;
}
