/* setjmp: longjmp out of nested and recursive calls; callee-saved registers (integer and FP)
 * survive; sigsetjmp without signal mask. */
#include <setjmp.h>
#include <stdio.h>

static jmp_buf env;
static int depth_reached;

static int recurse(int depth, int limit) {
    volatile int local[8];
    for (int i = 0; i < 8; i++)
        local[i] = depth * 8 + i;
    depth_reached = depth;
    if (depth == limit)
        longjmp(env, depth * 10 + local[3] % 7);
    return recurse(depth + 1, limit) + local[0];
}

static double fp_work(double x) {
    jmp_buf inner;
    volatile double keep = x * 3.0;
    if (setjmp(inner) == 0) {
        volatile double scratch = keep + 1;
        (void)scratch;
        longjmp(inner, 1);
    }
    return keep;
}

int main(void) {
    for (int limit = 0; limit < 5; limit++) {
        volatile int counter = 100 + limit;
        register double fp_saved = 1.5 * limit;
        int r = setjmp(env);
        if (r == 0) {
            counter++;
            recurse(0, limit * 7);
            printf("not reached\n");
        } else {
            printf("limit %d: setjmp returned %d, depth %d, counter %d, fp %g\n", limit, r,
                   depth_reached, counter, fp_saved);
        }
    }
    /* longjmp with 0 makes setjmp return 1. */
    volatile int times = 0;
    int r = setjmp(env);
    times++;
    if (times == 1)
        longjmp(env, 0);
    printf("longjmp(env, 0) -> setjmp returned %d after %d passes\n", r, times);

    printf("fp across inner setjmp: %g\n", fp_work(2.5));

    sigjmp_buf senv;
    volatile int s = 0;
    if (sigsetjmp(senv, 0) == 0) {
        s = 1;
        siglongjmp(senv, 5);
    }
    printf("siglongjmp done, s=%d\n", s);
    return 0;
}
