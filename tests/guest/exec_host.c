/* exec_host: execve of programs that are not RV32 ELFs goes to the host, as qemu-riscv32 does:
 * a host binary (/bin/sh) with argv and envp, a `#!/bin/sh` script, a host program inheriting
 * the guest's fds at the guest's numbers (fd 5 redirected to a file, fd 1 to a pipe) and ignored
 * signals; fexecve of an open host binary; a file that is neither fails with ENOEXEC and the caller goes on; finally the
 * process itself becomes /bin/sh, whose exit status is the process's. argv[1] is a scratch
 * directory. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "guest_util.h"

/* Forks, runs `path` with `argv`/`envp` in the child (after `prepare`), waits; returns the exit
 * status, 100 + errno if execve failed, or 200 + signal. */
static int run(const char *path, char *const argv[], char *const envp[],
               void (*prepare)(void *), void *arg) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    if (pid == 0) {
        if (prepare)
            prepare(arg);
        execve(path, argv, envp);
        _exit(100 + errno);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid)
        die("waitpid");
    if (WIFSIGNALED(status))
        return 200 + WTERMSIG(status);
    return WEXITSTATUS(status);
}

/* Like `run`, with fexecve of the open file `fd`. */
static int run_fexecve(int fd, char *const argv[], char *const envp[]) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    if (pid == 0) {
        fexecve(fd, argv, envp);
        _exit(100 + errno);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid)
        die("waitpid");
    return WIFSIGNALED(status) ? 200 + WTERMSIG(status) : WEXITSTATUS(status);
}

static void to_fd5(void *arg) {
    int fd = open(arg, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0 || dup2(fd, 5) != 5)
        _exit(98);
    close(fd);
    /* A close-on-exec fd must not reach the host program. */
    int hidden = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (dup2(hidden, 6) != 6 || fcntl(6, F_SETFD, FD_CLOEXEC) != 0)
        _exit(97);
}

static void stdout_to_pipe(void *arg) {
    int *fds = arg;
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
}

static void ignore_term(void *arg) {
    (void)arg;
    signal(SIGTERM, SIG_IGN);
}

static void print_file(const char *label, const char *path) {
    char buf[256] = {0};
    int fd = open(path, O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    close(fd);
    printf("%s (%zd bytes): %s", label, n, n > 0 ? buf : "\n");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        printf("usage: exec_host SCRATCH\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    char *env[] = {"GREETING=hello from the guest env", "PATH=/bin:/usr/bin", NULL};

    /* A host binary with argv and envp. */
    char *sh_argv[] = {"sh", "-c", "echo \"host sh: \\$0=$0 \\$1=$1 $GREETING\"; exit 7",
                       "zero", "one", NULL};
    printf("sh exit status %d\n", run("/bin/sh", sh_argv, env, NULL, NULL));

    /* A #! script for a host interpreter. */
    char script[4096];
    snprintf(script, sizeof script, "%s/script.sh", argv[1]);
    FILE *f = fopen(script, "w");
    fprintf(f, "#!/bin/sh\necho \"script: $# args: $1|$2 $GREETING\"\nexit 3\n");
    fclose(f);
    chmod(script, 0755);
    char *script_argv[] = {script, "a b", "c", NULL};
    printf("script exit status %d\n", run(script, script_argv, env, NULL, NULL));

    /* The guest's fd 5 is the host program's fd 5; a close-on-exec fd 6 is closed. */
    char out[4096];
    snprintf(out, sizeof out, "%s/fd5.txt", argv[1]);
    char *fd_argv[] = {"sh", "-c",
                       "echo written to fd 5 >&5; if echo x >&6; then echo fd 6 open; "
                       "else echo fd 6 closed; fi 2>/dev/null",
                       NULL};
    printf("fd test exit status %d\n", run("/bin/sh", fd_argv, env, to_fd5, out));
    print_file("fd 5 file", out);

    /* The host program's stdout is the guest's pipe. */
    int p[2];
    if (pipe(p) != 0)
        die("pipe");
    char *pipe_argv[] = {"sh", "-c", "echo through the pipe", NULL};
    int st = run("/bin/sh", pipe_argv, env, stdout_to_pipe, p);
    close(p[1]);
    char buf[128] = {0};
    ssize_t n = read(p[0], buf, sizeof buf - 1);
    close(p[0]);
    printf("pipe test exit status %d, read %zd: %s", st, n, buf);

    /* An ignored signal stays ignored in the host program. */
    char *kill_argv[] = {"sh", "-c", "kill -TERM $$; echo survived SIGTERM", NULL};
    printf("ignored SIGTERM: exit status %d\n", run("/bin/sh", kill_argv, env, ignore_term, NULL));
    printf("default SIGTERM: exit status %d\n", run("/bin/sh", kill_argv, env, NULL, NULL));

    /* fexecve: the file open as an fd (musl tries execveat with AT_EMPTY_PATH first; under
     * qemu-riscv32 7.2, which lacks execveat, it falls back to /proc/self/fd). execveat's
     * other forms are unit tests (qemu 7.2 answers ENOSYS). */
    int sh_fd = open("/bin/sh", O_RDONLY);
    check(sh_fd >= 0, "open /bin/sh");
    char *at_argv[] = {"sh", "-c", "echo \"fexecve: $1\"; exit $2", "zero", "ran", "4", NULL};
    printf("fexecve exit status %d\n", run_fexecve(sh_fd, at_argv, env));
    close(sh_fd);

    /* Neither ELF nor script: the host refuses it, the caller continues. */
    char junk[4096];
    snprintf(junk, sizeof junk, "%s/junk", argv[1]);
    f = fopen(junk, "w");
    fprintf(f, "\x01\x02 not a program\n");
    fclose(f);
    chmod(junk, 0755);
    char *junk_argv[] = {"junk", NULL};
    errno = 0;
    int r = execve(junk, junk_argv, env);
    printf("execve of junk: %d errno=%d (ENOEXEC=%d)\n", r, errno, ENOEXEC);
    errno = 0;
    r = execve("/nonexistent/program", junk_argv, env);
    printf("execve of a missing file: %d errno=%d (ENOENT=%d)\n", r, errno, ENOENT);

    /* Finally become /bin/sh: its exit status is ours. */
    char *last_argv[] = {"sh", "-c", "echo last words from host sh; exit 5", NULL};
    execve("/bin/sh", last_argv, env);
    printf("execve /bin/sh failed: errno=%d\n", errno);
    return 1;
}
