/* signals: handlers with siginfo, masks and pending signals, synchronous faults (SIGSEGV on a
 * read-only page and on an unmapped address, SIGILL, SIGTRAP) recovered by siglongjmp or by
 * advancing the pc in the ucontext, sigaltstack, an interval timer, and the siginfo of signals
 * from a child process (SIGCHLD's pid and status, sigqueue's pid and value, a real-time
 * signal's value). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>
#include "guest_util.h"

static volatile sig_atomic_t usr1_count, usr2_count, alarm_count;
static volatile int last_code, last_signo, last_pid_matches;
static sigjmp_buf fault_jump;
static volatile uintptr_t fault_addr;
static volatile int fault_code;
static char *alt_stack_base;
static volatile int handler_on_alt_stack;

static void on_usr1(int sig, siginfo_t *info, void *ctx) {
    (void)ctx;
    usr1_count++;
    last_signo = info->si_signo == sig ? sig : -1;
    last_code = info->si_code;
    last_pid_matches = info->si_pid == getpid();
}

static void on_usr2(int sig) {
    (void)sig;
    usr2_count++;
}

static void on_segv(int sig, siginfo_t *info, void *ctx) {
    (void)sig;
    (void)ctx;
    fault_addr = (uintptr_t)info->si_addr;
    fault_code = info->si_code;
    siglongjmp(fault_jump, 1);
}

/* Skip the faulting instruction by advancing the saved pc (4-byte instructions only). */
static void on_ill_or_trap(int sig, siginfo_t *info, void *ctx) {
    ucontext_t *uc = ctx;
    last_signo = sig;
    last_code = info->si_code;
    fault_addr = (uintptr_t)info->si_addr;
    int local;
    handler_on_alt_stack = alt_stack_base && (char *)&local >= alt_stack_base &&
                           (char *)&local < alt_stack_base + SIGSTKSZ * 4;
    uc->uc_mcontext.__gregs[REG_PC] += 4;
}

static void on_alarm(int sig) {
    (void)sig;
    alarm_count++;
}

static volatile sig_atomic_t got_chld, got_usr2, got_rt, chld_pid, chld_code, chld_status,
    usr2_pid, usr2_code, usr2_value, rt_value;

static void on_from_child(int signo, siginfo_t *info, void *ctx) {
    (void)ctx;
    if (signo == SIGCHLD) {
        chld_pid = info->si_pid;
        chld_code = info->si_code;
        chld_status = info->si_status;
        got_chld = 1;
    } else if (signo != SIGUSR2) {
        rt_value = info->si_value.sival_int;
        got_rt = 1;
    } else {
        usr2_pid = info->si_pid;
        usr2_code = info->si_code;
        usr2_value = info->si_value.sival_int;
        got_usr2 = 1;
    }
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);

    /* raise() and kill() with SA_SIGINFO. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_usr1;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    check(sigaction(SIGUSR1, &sa, NULL) == 0, "sigaction SIGUSR1");
    raise(SIGUSR1);
    printf("after raise: count=%d signo ok=%d si_code=%d (SI_TKILL=%d) pid ok=%d\n",
           (int)usr1_count, last_signo == SIGUSR1, last_code, SI_TKILL, last_pid_matches);
    kill(getpid(), SIGUSR1);
    printf("after kill: count=%d si_code=%d (SI_USER=%d) pid ok=%d\n", (int)usr1_count,
           last_code, SI_USER, last_pid_matches);

    /* Blocked signals stay pending until unblocked. */
    signal(SIGUSR2, on_usr2);
    sigset_t block, old, pending;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR2);
    check(sigprocmask(SIG_BLOCK, &block, &old) == 0, "sigprocmask block");
    raise(SIGUSR2);
    sigpending(&pending);
    printf("blocked: handler ran %d times, pending=%d\n", (int)usr2_count,
           sigismember(&pending, SIGUSR2));
    sigprocmask(SIG_SETMASK, &old, NULL);
    printf("unblocked: handler ran %d times\n", (int)usr2_count);

    /* Ignored signal. */
    signal(SIGUSR2, SIG_IGN);
    raise(SIGUSR2);
    printf("ignored SIGUSR2: handler count still %d\n", (int)usr2_count);

    /* The old action comes back from sigaction. */
    struct sigaction prev;
    sigaction(SIGUSR1, NULL, &prev);
    printf("queried action is our handler: %d, SA_SIGINFO: %d\n", prev.sa_sigaction == on_usr1,
           (prev.sa_flags & SA_SIGINFO) != 0);

    /* SIGSEGV: write to a read-only page, then read an unmapped address. */
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    long page = sysconf(_SC_PAGESIZE);
    char *ro = mmap(NULL, (size_t)page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (sigsetjmp(fault_jump, 1) == 0) {
        ((volatile char *)ro)[123] = 1;
        printf("write to read-only page did not fault\n");
    } else {
        printf("SIGSEGV on read-only write: addr ok=%d code=%d (SEGV_ACCERR=%d)\n",
               fault_addr == (uintptr_t)ro + 123, fault_code, SEGV_ACCERR);
    }
    munmap(ro, (size_t)page);
    if (sigsetjmp(fault_jump, 1) == 0) {
        volatile int v = *(volatile int *)ro;
        (void)v;
        printf("read of unmapped page did not fault\n");
    } else {
        printf("SIGSEGV on unmapped read: addr ok=%d code=%d (SEGV_MAPERR=%d)\n",
               fault_addr == (uintptr_t)ro, fault_code, SEGV_MAPERR);
    }
    /* The signal mask is restored by siglongjmp (savemask=1): SIGSEGV works again. */
    if (sigsetjmp(fault_jump, 1) == 0) {
        volatile int v = *(volatile int *)16;
        (void)v;
    } else {
        printf("second SIGSEGV delivered: addr=%lu\n", (unsigned long)fault_addr);
    }

    /* SIGILL and SIGTRAP, continued by skipping the instruction, on an alternate stack. */
    static char alt[SIGSTKSZ * 4];
    alt_stack_base = alt;
    stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0};
    check(sigaltstack(&ss, NULL) == 0, "sigaltstack");
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_ill_or_trap;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaction(SIGILL, &sa, NULL);
    sigaction(SIGTRAP, &sa, NULL);
    uintptr_t ill_pc;
    __asm__ volatile(".option push\n\t.option norvc\n\t"
                     "la %0, 1f\n\t"
                     "1: .word 0xffffffff\n\t"
                     ".option pop"
                     : "=r"(ill_pc));
    printf("SIGILL: signo=%d code=%d (ILL_ILLOPC=%d) addr ok=%d on altstack=%d\n", last_signo,
           last_code, ILL_ILLOPC, fault_addr == ill_pc, handler_on_alt_stack);
    uintptr_t trap_pc;
    __asm__ volatile(".option push\n\t.option norvc\n\t"
                     "la %0, 1f\n\t"
                     "1: ebreak\n\t"
                     ".option pop"
                     : "=r"(trap_pc));
    printf("SIGTRAP: signo=%d code=%d (TRAP_BRKPT=%d) addr ok=%d\n", last_signo, last_code,
           TRAP_BRKPT, fault_addr == trap_pc);

    /* Every register survives a handler that runs on return from the ecall that raised it. */
    pid_t pid = getpid();
    uint32_t out_s2, out_s3, out_t0, out_a0;
    double fp_in = 1.0 / 3.0, fp_out;
    int saved_count = usr1_count;
    __asm__ volatile("li s2, 0x11111111\n\t"
                     "li s3, 0x22222222\n\t"
                     "li t0, 0x33333333\n\t"
                     "fmv.d ft0, %[fin]\n\t"
                     "mv a0, %[pid]\n\t"
                     "li a1, %[sig]\n\t"
                     "li a7, 129\n\t" /* kill */
                     "ecall\n\t"
                     "mv %[o2], s2\n\t"
                     "mv %[o3], s3\n\t"
                     "mv %[ot0], t0\n\t"
                     "mv %[oa0], a0\n\t"
                     "fmv.d %[fout], ft0"
                     : [o2] "=&r"(out_s2), [o3] "=&r"(out_s3), [ot0] "=&r"(out_t0),
                       [oa0] "=&r"(out_a0), [fout] "=&f"(fp_out)
                     : [pid] "r"(pid), [sig] "i"(SIGUSR1), [fin] "f"(fp_in)
                     : "s2", "s3", "t0", "a0", "a1", "a7", "ft0", "memory");
    printf("registers across a handler: s2=%08x s3=%08x t0=%08x a0=%u ft0 kept=%d ran=%d\n",
           out_s2, out_s3, out_t0, out_a0, fp_out == fp_in, usr1_count == saved_count + 1);

    /* Interval timer: SIGALRM every 5 ms, wait for three. */
    signal(SIGALRM, on_alarm);
    struct itimerval it = {{0, 5000}, {0, 5000}};
    check(setitimer(ITIMER_REAL, &it, NULL) == 0, "setitimer");
    while (alarm_count < 3)
        pause();
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    printf("SIGALRM delivered at least 3 times: %d\n", alarm_count >= 3);

    /* sigsuspend returns after a handled signal. */
    sigset_t only_usr1_blocked, waitmask;
    sigemptyset(&only_usr1_blocked);
    sigaddset(&only_usr1_blocked, SIGUSR1);
    sigprocmask(SIG_BLOCK, &only_usr1_blocked, &old);
    raise(SIGUSR1);
    int before_suspend = usr1_count;
    sigemptyset(&waitmask);
    int rs = sigsuspend(&waitmask);
    printf("sigsuspend returned %d, handler ran during it: %d\n", rs,
           usr1_count == before_suspend + 1);
    sigprocmask(SIG_SETMASK, &old, NULL);

    /* Signals from another process carry its siginfo: SIGCHLD the child's pid and status,
     * sigqueue its pid and value. */
    struct sigaction chld;
    memset(&chld, 0, sizeof chld);
    chld.sa_sigaction = on_from_child;
    chld.sa_flags = SA_SIGINFO;
    sigaction(SIGCHLD, &chld, NULL);
    sigaction(SIGUSR2, &chld, NULL);
    sigaction(SIGRTMIN + 2, &chld, NULL);
    sigset_t from_child;
    sigemptyset(&from_child);
    sigaddset(&from_child, SIGCHLD);
    sigaddset(&from_child, SIGUSR2);
    sigaddset(&from_child, SIGRTMIN + 2);
    sigprocmask(SIG_BLOCK, &from_child, &old);
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        sigqueue(getppid(), SIGUSR2, (union sigval){.sival_int = 31337});
        sigqueue(getppid(), SIGRTMIN + 2, (union sigval){.sival_int = 2718});
        _exit(7);
    }
    while (!(got_chld && got_usr2 && got_rt))
        sigsuspend(&old);
    sigprocmask(SIG_SETMASK, &old, NULL);
    waitpid(child, NULL, 0);
    printf("SIGCHLD siginfo: child's pid %d, CLD_EXITED %d, status %d\n", chld_pid == child,
           chld_code == CLD_EXITED, chld_status);
    printf("sigqueue from the child: its pid %d, SI_QUEUE %d, value %d\n", usr2_pid == child,
           usr2_code == SI_QUEUE, usr2_value);
    printf("real-time signal from the child: value %d\n", rt_value);

    printf("failures=%d\n", guest_failures);
    return guest_failures ? 1 : 0;
}
