/* A minimal S-mode "kernel": prints through the SBI legacy console and the UART, then
 * powers off through the sifive,test0 syscon with exit code 3. */
.section .text
.globl _start
_start:
  la s0, msg
1: lbu a0, 0(s0)
  beqz a0, 2f
  li a7, 1          # legacy putchar
  ecall
  addi s0, s0, 1
  j 1b
2:
  # UART directly
  li t0, 0x10000000
  li t1, 'U'
  sb t1, 0(t0)
  li t1, '\n'
  sb t1, 0(t0)
  # poweroff via syscon with code 3
  li t0, 0x100000
  li t1, 0x33333
  sw t1, 0(t0)
3: j 3b
msg: .asciz "hello from S-mode\n"
