/* stdio: buffering modes, interleaving of stdio and write(2), large writes, fprintf, ungetc,
 * fmemopen/open_memstream, and stdin at EOF. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "guest_util.h"

int main(void) {
    /* stdout is a pipe or file under the test harness: fully buffered by default. Make the
     * order deterministic by switching modes explicitly. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("line buffered 1\n");
    write(1, "raw write after line 1\n", 23);
    printf("partial ");
    fflush(stdout);
    write(1, "raw in middle\n", 14);
    printf("rest of partial\n");

    static char fullbuf[256];
    setvbuf(stdout, fullbuf, _IOFBF, sizeof fullbuf);
    printf("full buffered A\n");
    printf("full buffered B\n");
    write(1, "raw before flush\n", 17);
    fflush(stdout);

    setvbuf(stdout, NULL, _IONBF, 0);
    printf("unbuffered ");
    write(1, "raw ", 4);
    printf("done\n");

    setvbuf(stdout, NULL, _IOFBF, 4096);
    /* A large write that crosses the buffer size several times. */
    uint32_t h = FNV_INIT;
    for (int i = 0; i < 2000; i++) {
        char line[64];
        int n = snprintf(line, sizeof line, "row %04d %08x\n", i, i * 2654435761u);
        h = fnv_bytes(h, line, (size_t)n);
        if (i % 250 == 0)
            fputs(line, stdout);
    }
    printf("hash of 2000 rows %08x\n", h);

    char big[10000];
    memset(big, 'x', sizeof big);
    big[sizeof big - 1] = '\n';
    size_t wrote = fwrite(big, 1, sizeof big, stdout);
    printf("fwrite returned %zu\n", wrote);
    fflush(stdout);

    /* fprintf to stderr does not appear in the compared stdout; check its return value only. */
    int n = fprintf(stderr, "stderr line\n");
    printf("fprintf(stderr) returned %d\n", n);

    /* String streams. */
    char mem[64] = "42 3.5 word\n";
    FILE *f = fmemopen(mem, strlen(mem), "r");
    int iv = 0;
    double dv = 0;
    char wv[16] = "";
    int got = fscanf(f, "%d %lf %15s", &iv, &dv, wv);
    printf("fscanf got=%d i=%d d=%g w=%s\n", got, iv, dv, wv);
    int c = fgetc(f);
    printf("next char %d\n", c);
    printf("ungetc %d\n", ungetc('Z', f));
    printf("after ungetc %c\n", fgetc(f));
    printf("eof %d\n", fgetc(f) == EOF && feof(f));
    fclose(f);

    char *dyn = NULL;
    size_t dyn_len = 0;
    FILE *ms = open_memstream(&dyn, &dyn_len);
    for (int i = 0; i < 100; i++)
        fprintf(ms, "%d,", i * i);
    fclose(ms);
    printf("memstream len=%zu hash=%08x tail=%s\n", dyn_len, fnv_bytes(FNV_INIT, dyn, dyn_len),
           dyn + dyn_len - 10);
    free(dyn);

    /* stdin is /dev/null (or closed-for-reading) under the harness. */
    int in = getchar();
    printf("stdin first char is EOF: %d\n", in == EOF);

    printf("no trailing newline at exit");
    return 0;
}
