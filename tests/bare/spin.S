/* Never reports a result: checks that --max-insns stops a bare-metal program. */
    .section .text.init
    .globl _start
_start:
    addi t0, t0, 1
    j _start

    .section .tohost, "aw", @progbits
    .align 6
    .globl tohost
tohost: .dword 0
    .globl fromhost
fromhost: .dword 0
