/* hello: argv, argc, a chosen environment variable, exit status 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

int main(int argc, char **argv, char **envp) {
    printf("hello, world\n");
    printf("argc=%d\n", argc);
    for (int i = 1; i < argc; i++)
        printf("argv[%d]=\"%s\" len=%zu\n", i, argv[i], strlen(argv[i]));
    printf("argv[argc] is NULL: %d\n", argv[argc] == NULL);
    /* argv[0] differs between runners (path spelling), so print only a property of it. */
    printf("argv[0] nonempty: %d\n", argv[0] != NULL && argv[0][0] != '\0');
    int env_count = 0;
    for (char **e = envp; *e; e++)
        env_count++;
    printf("envp nonempty: %d\n", env_count > 0);
    printf("environ == envp: %d\n", environ == envp);
    const char *v = getenv("GUEST_TEST_VAR");
    printf("GUEST_TEST_VAR=%s\n", v ? v : "(unset)");
    /* envp follows argv on the initial stack, as the ELF ABI lays it out. */
    printf("envp == argv+argc+1: %d\n", envp == argv + argc + 1);
    return 0;
}
