/* Echoes a line through Spike's HTIF console device: each byte is read with
 * a console read (device 1, command 0: tohost = 0x0100 << 48), whose reply
 * fromhost = 0x0100 << 48 | 0x100 | byte the program polls for, then written
 * back with a console write (device 1, command 1). A newline ends the line
 * and the program exits with status 0. The 64-bit words are written as two
 * word stores, low word first, as RV32 code does. */
    .section .text.init, "ax", @progbits
    .globl _start
_start:
    lla s0, tohost
    lla s1, fromhost
    li s2, 0x01000000          /* device 1, command 0: read */
    li s3, 0x01010000          /* device 1, command 1: write */
next:
    sw zero, 0(s1)
    sw zero, 4(s1)
    sw zero, 0(s0)
    sw s2, 4(s0)
wait_read:
    lw t0, 0(s1)
    beqz t0, wait_read
    lw t1, 4(s1)
    bne t1, s2, fail           /* the reply names the device and command */
    andi t2, t0, 0x100
    beqz t2, fail
    andi a0, t0, 0xff
    sw zero, 0(s1)
    sw zero, 4(s1)
    sw a0, 0(s0)
    sw s3, 4(s0)
wait_write:
    lw t0, 0(s1)
    beqz t0, wait_write
    li t1, 10
    bne a0, t1, next
    li t0, 1                   /* exit 0 */
    sw t0, 0(s0)
    sw zero, 4(s0)
1:  j 1b
fail:
    li t0, 3                   /* exit 1: test 1 failed */
    sw t0, 0(s0)
    sw zero, 4(s0)
2:  j 2b

    .section .tohost, "aw", @progbits
    .balign 64
    .globl tohost
tohost: .dword 0
    .balign 64
    .globl fromhost
fromhost: .dword 0
