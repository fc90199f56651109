/* An M-mode firmware as an ELF for `--bios`: two segments, and an entry point that is not
 * the first byte. Loaded as a flat binary it would run its ELF header and trap; loaded as an
 * ELF it prints its message (from the second segment) on the UART and powers off through
 * the syscon with exit code 6. */
.section .text
  .space 256, 0          # not code: the entry is _start, after it
.globl _start
_start:
  csrr t0, mhartid       # M-mode only
  la s0, msg
  li t0, 0x10000000
1: lbu t1, 0(s0)
  beqz t1, 2f
  sb t1, 0(t0)
  addi s0, s0, 1
  j 1b
2:
  li t0, 0x100000
  li t1, 0x63333
  sw t1, 0(t0)
3: j 3b

.section .data
msg: .asciz "hello from an ELF firmware\n"
