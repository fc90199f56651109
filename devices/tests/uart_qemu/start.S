    .section .text.start
    .globl _start
_start:
    la sp, stack_top
    call main
1:  j 1b
    .bss
    .align 4
    .space 4096
stack_top:
