/* Writes three known words into the signature region, then reports a pass through HTIF
 * tohost. Used to check `rv32vm run --bare --signature`. */
    .section .text.init
    .globl _start
_start:
    la t0, begin_signature
    li t1, 0xdeadbeef
    sw t1, 0(t0)
    li t1, 0x01234567
    sw t1, 4(t0)
    li t1, 0x00000000
    sw t1, 8(t0)
    li t1, 1
    la t0, tohost
    sw t1, 0(t0)
1:  j 1b

    .section .tohost, "aw", @progbits
    .align 6
    .globl tohost
tohost: .dword 0
    .align 6
    .globl fromhost
fromhost: .dword 0

    .data
    .align 4
    .globl begin_signature
begin_signature:
    .word 0x11111111, 0x22222222, 0x33333333, 0x44444444
    .globl end_signature
end_signature:
