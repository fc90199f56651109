/* Passes, but its signature symbols are the wrong way round
 * (end_signature before begin_signature): `--signature` must refuse them. */
    .section .text.init, "ax", @progbits
    .globl _start
_start:
    li t1, 1
    lla t0, tohost
    sw t1, 0(t0)
    sw zero, 4(t0)
1:  j 1b

    .section .tohost, "aw", @progbits
    .balign 64
    .globl tohost
tohost: .dword 0
    .globl fromhost
fromhost: .dword 0

    .data
    .balign 16
    .globl end_signature
end_signature:
    .word 0x11111111, 0x22222222
    .globl begin_signature
begin_signature:
    .word 0x33333333
