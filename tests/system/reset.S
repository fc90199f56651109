/* A guest that asks for a reset as its very first action, so it reboots forever: rv32vm must
 * still stop it on --timeout, a signal or Ctrl-A x.
 *   default:   S-mode kernel, reset through the sifive,test0 syscon (0x7777)
 *   -DVIA_SBI: S-mode kernel, reset through SBI SRST (system reset, cold reboot)
 * Built as a raw binary it also serves as M-mode firmware (--bios): the syscon variant then
 * resets from M-mode. */
.section .text
.globl _start
_start:
#ifdef VIA_SBI
  li a7, 0x53525354   # SRST extension
  li a6, 0            # sbi_system_reset
  li a0, 1            # cold reboot
  li a1, 0            # no reason
  ecall
#else
  li t0, 0x100000
  li t1, 0x7777
  sw t1, 0(t0)
#endif
1: j 1b
