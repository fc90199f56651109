// The user-mode program tests/gdb.rs debugs: a function to break in, globals to watch and to
// change from gdb, and output that shows what gdb changed.
#include <stdio.h>

volatile int counter;
// Read once at the end, so a read watchpoint has something to catch.
volatile int seen = 100;
// With an argument, main waits here until gdb clears it (the Ctrl-C test).
volatile int spin = 1;

__attribute__((noinline)) int bump(int by) {
    counter += by;
    return counter;
}

int main(int argc, char **argv) {
    int total = 0;
    (void)argv;
    for (int i = 1; i <= 3; i++)
        total += bump(i);
    if (argc > 1)
        while (spin) {
        }
    printf("counter=%d total=%d seen=%d\n", counter, total, seen);
    return 0;
}
