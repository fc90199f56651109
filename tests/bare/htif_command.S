/* Writes an HTIF command other than an exit code to tohost: the low word
 * TOHOST_LO first, then the high word TOHOST_HI, in one block (as a 64-bit
 * `tohost = value` compiles on RV32). The default is a syscall-proxy
 * request (device 0, command 0, an even payload: the address of its
 * argument block), as riscv-tests' `-p` environment sends for printf;
 * -DTOHOST_HI=0x01010000 -DTOHOST_LO=0x41 makes it a console write of 'A'
 * (device 1, command 1). `run --bare` must name the value in an error. */
#ifndef TOHOST_HI
#define TOHOST_HI 0
#endif
    .section .text.init, "ax", @progbits
    .globl _start
_start:
#ifdef TOHOST_LO
    li t1, TOHOST_LO
#else
    lla t1, syscall_args
#endif
    li t2, TOHOST_HI
    lla t0, tohost
    sw t1, 0(t0)
    sw t2, 4(t0)
1:  j 1b

    .section .tohost, "aw", @progbits
    .balign 64
    .globl tohost
tohost: .dword 0
    .balign 64
    .globl fromhost
fromhost: .dword 0

    .data
    .balign 64
syscall_args: .dword 64, 1, 0, 0, 0, 0, 0, 0
