/* proc_self_mem: /proc/self/mem reads and writes the guest's memory at guest addresses, as on
 * Linux: pread/pwrite/read/write/lseek at a variable's address, protection ignored (the kernel
 * forces access: a read-only page is written, a PROT_NONE page read), an unmapped address fails
 * with EIO, a write into code is executed afterwards. Self-checking (qemu-riscv32 passes these
 * calls to the host, which reads qemu's own memory): prints "ok"/"FAIL" lines only. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>
#include "guest_util.h"

volatile uint32_t variable = 0x12345678;

/* Returns its constant; the instruction that loads it is rewritten through /proc/self/mem. */
__attribute__((noinline, aligned(16))) static int patched(void) {
    int r;
    __asm__ volatile(".option push\n\t.option norvc\n\t"
                     "li %0, 1\n\t"
                     ".option pop"
                     : "=r"(r));
    return r;
}

static off_t at(const volatile void *p) {
    return (off_t)(uintptr_t)p;
}

int main(void) {
    long page = sysconf(_SC_PAGESIZE);
    int fd = open("/proc/self/mem", O_RDWR);
    check(fd >= 0, "open /proc/self/mem");
    char self_path[64];
    snprintf(self_path, sizeof self_path, "/proc/%d/mem", (int)getpid());
    int pid_fd = open(self_path, O_RDONLY);
    check(pid_fd >= 0, "open /proc/<pid>/mem");

    uint32_t v = 0;
    check(pread(fd, &v, 4, at(&variable)) == 4 && v == 0x12345678, "pread of a variable");
    v = 0;
    check(pread(pid_fd, &v, 4, at(&variable)) == 4 && v == 0x12345678,
          "pread through /proc/<pid>/mem");
    v = 0xcafef00d;
    check(pwrite(fd, &v, 4, at(&variable)) == 4 && variable == 0xcafef00d,
          "pwrite changes the variable");
    errno = 0;
    check(pwrite(pid_fd, &v, 4, at(&variable)) == -1 && errno == EBADF,
          "write on a read-only mem fd fails with EBADF");

    /* lseek + read/write move the position. */
    check(lseek(fd, at(&variable), SEEK_SET) == at(&variable), "lseek to the variable");
    v = 0;
    check(read(fd, &v, 4) == 4 && v == 0xcafef00d, "read at the position");
    check(lseek(fd, 0, SEEK_CUR) == at(&variable) + 4, "position advanced");
    check(lseek(fd, -4, SEEK_CUR) == at(&variable), "lseek back with SEEK_CUR");
    v = 0x0badcafe;
    check(write(fd, &v, 4) == 4 && variable == 0x0badcafe, "write at the position");
    errno = 0;
    check(lseek(fd, 0, SEEK_END) == -1 && errno == EINVAL, "SEEK_END is EINVAL");

    /* readv through the mem fd. */
    uint16_t lo = 0, hi = 0;
    struct iovec iov[2] = {{&lo, 2}, {&hi, 2}};
    check(preadv(fd, iov, 2, at(&variable)) == 4 && lo == 0xcafe && hi == 0x0bad,
          "preadv into two buffers");

    /* Protection is ignored: a read-only page is written, a PROT_NONE page read. */
    char *ro = mmap(NULL, (size_t)page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    check(pwrite(fd, "forced", 6, at(ro)) == 6 && memcmp(ro, "forced", 6) == 0,
          "pwrite into a read-only page");
    check(mprotect(ro, (size_t)page, PROT_NONE) == 0, "mprotect PROT_NONE");
    char back[6] = {0};
    check(pread(fd, back, 6, at(ro)) == 6 && memcmp(back, "forced", 6) == 0,
          "pread of a PROT_NONE page");

    /* An unmapped address fails with EIO; a read running into one is short. */
    munmap(ro, (size_t)page);
    errno = 0;
    check(pread(fd, back, 6, at(ro)) == -1 && errno == EIO, "pread of unmapped memory is EIO");
    char *two = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(two + page, (size_t)page);
    char big[64];
    check(pread(fd, big, sizeof big, at(two + page - 16)) == 16, "read up to an unmapped page");
    munmap(two, (size_t)page);

    /* A bad buffer is EFAULT, as for any read. */
    errno = 0;
    check(pread(fd, (void *)16, 4, at(&variable)) == -1 && errno == EFAULT,
          "bad destination buffer is EFAULT");

    /* Writing code: the new instruction runs (li a0-style immediate changed from 1 to 7). */
    check(patched() == 1, "code before patching");
    uint32_t insn = 0;
    const unsigned char *code = (const unsigned char *)(uintptr_t)patched;
    int found = -1;
    for (int i = 0; i < 64; i += 2) {
        pread(fd, &insn, 4, at(code + i));
        /* addi rd, x0, 1 */
        if ((insn & 0xfff0707f) == 0x00100013) {
            found = i;
            break;
        }
    }
    check(found >= 0, "found the li instruction");
    if (found >= 0) {
        insn = (insn & 0x000fffff) | (7u << 20);
        check(pwrite(fd, &insn, 4, at(code + found)) == 4, "pwrite into code");
        __builtin___clear_cache((char *)code, (char *)code + 64);
        check(patched() == 7, "patched code runs");
    }

    close(fd);
    close(pid_fd);
    printf("failures=%d\n", guest_failures);
    return guest_failures ? 1 : 0;
}
