/* threads: POSIX threads (clone with CLONE_THREAD, futexes). Creation and join with return
 * values, thread-local storage, mutexes under contention, condition variables (signal,
 * broadcast, a timed wait that times out), semaphores, barriers, a spin on an atomic flag
 * that only another thread sets (the runner must preempt), a sleep and a blocking pipe read
 * that must let the other threads run meanwhile, select, poll and waitpid that must let
 * another thread (the writer, the child's waker) run, select's timeout running out while
 * another thread spins, a pipe filled past its capacity by one thread and drained by
 * another, one write, writev and socket write larger than the pipe or socket holds while
 * another thread drains it, a socket's receive timeout while another thread sleeps, thread ids, each thread's own
 * signal mask (exiting threads block every signal: the main thread's mask must not change),
 * fork from a threaded process, and the main thread leaving with pthread_exit while another
 * thread finishes the process. Only the main thread prints until the end, so the output does not depend on how
 * the threads interleave. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WORKERS 4

static atomic_int counter;
static int sums[WORKERS];
static __thread int tls_value = 7;

static void *worker(void *arg) {
    int id = (int)(long)arg, sum = 0;
    tls_value = 100 + id;
    for (int i = 0; i < 50000; i++) {
        sum += i % (id + 3);
        atomic_fetch_add(&counter, 1);
        if (i % 10000 == 0)
            sched_yield();
    }
    sums[id] = sum;
    /* Another thread's writes to its own copy never reach this one. */
    return (void *)(long)(tls_value == 100 + id ? id * 10 : -1);
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long shared_total;

static void *locker(void *arg) {
    (void)arg;
    for (int i = 0; i < 20000; i++) {
        pthread_mutex_lock(&lock);
        long v = shared_total;
        if (i % 1000 == 0)
            sched_yield(); /* hold the lock across a switch: the others must wait */
        shared_total = v + 1;
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

/* A bounded queue: producer and consumer on condition variables. */
#define QUEUE 8
static int queue[QUEUE], head, tail, count;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER, not_empty = PTHREAD_COND_INITIALIZER;

static void *producer(void *arg) {
    int items = (int)(long)arg;
    for (int i = 1; i <= items; i++) {
        pthread_mutex_lock(&lock);
        while (count == QUEUE)
            pthread_cond_wait(&not_full, &lock);
        queue[tail] = i;
        tail = (tail + 1) % QUEUE;
        count++;
        pthread_cond_signal(&not_empty);
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

static pthread_cond_t go = PTHREAD_COND_INITIALIZER;
static int go_flag, waiting;

static void *broadcast_waiter(void *arg) {
    (void)arg;
    pthread_mutex_lock(&lock);
    waiting++;
    while (!go_flag)
        pthread_cond_wait(&go, &lock);
    waiting--;
    pthread_mutex_unlock(&lock);
    return (void *)1;
}

static sem_t ping, pong;

static void *ponger(void *arg) {
    int rounds = (int)(long)arg;
    for (int i = 0; i < rounds; i++) {
        sem_wait(&ping);
        sem_post(&pong);
    }
    return NULL;
}

static pthread_barrier_t barrier;
static atomic_int phase_sum;

static void *barrier_worker(void *arg) {
    int id = (int)(long)arg;
    for (int round = 0; round < 3; round++) {
        atomic_fetch_add(&phase_sum, id + round);
        pthread_barrier_wait(&barrier);
    }
    return NULL;
}

static atomic_int flag;

static void *flag_setter(void *arg) {
    (void)arg;
    volatile unsigned x = 1;
    for (int i = 0; i < 200000; i++)
        x = x * 1103515245u + 12345u;
    atomic_store(&flag, 1);
    return NULL;
}

static atomic_int sleeper_flag;

static void *flag_while_main_sleeps(void *arg) {
    (void)arg;
    atomic_store(&sleeper_flag, 1);
    return NULL;
}

static int pipe_fds[2];
static char pipe_buf[16];

static void *pipe_reader(void *arg) {
    (void)arg;
    long n = read(pipe_fds[0], pipe_buf, sizeof pipe_buf - 1);
    return (void *)n;
}

static void *late_writer(void *arg) {
    usleep(20 * 1000); /* the main thread waits in select or poll first */
    write(pipe_fds[1], arg, 1);
    return NULL;
}

static atomic_int stop_spinning;

static void *spinner(void *arg) {
    (void)arg;
    while (!atomic_load(&stop_spinning))
        ; /* always runnable: the main thread's select must still time out */
    return NULL;
}

enum { BULK = 256 * 1024, CHUNK = 4096 };
static long bulk_total;

/* Reads BULK bytes from descriptor `arg`; returns their sum. */
static void *bulk_reader(void *arg) {
    int fd = (int)(long)arg;
    static char buf[CHUNK];
    long total = 0, sum = 0;
    while (total < BULK) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n; i++)
            sum += (unsigned char)buf[i];
        total += n;
    }
    bulk_total = total;
    return (void *)sum;
}

/* A receive on a socket with a 50 ms SO_RCVTIMEO that no one writes to. */
static void *timed_receiver(void *arg) {
    int fd = (int)(long)arg;
    struct timeval tv = {0, 50 * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    struct timespec before, after;
    clock_gettime(CLOCK_MONOTONIC, &before);
    char c;
    errno = 0;
    ssize_t n = recv(fd, &c, 1, 0);
    int err = errno;
    clock_gettime(CLOCK_MONOTONIC, &after);
    long ms = (after.tv_sec - before.tv_sec) * 1000 + (after.tv_nsec - before.tv_nsec) / 1000000;
    return (void *)(long)(n == -1 && err == EAGAIN && ms >= 45 && ms < 400);
}

static pid_t waited_child;
static int child_status;

static void *child_waiter(void *arg) {
    (void)arg;
    return (void *)(long)waitpid(waited_child, &child_status, 0);
}

static pid_t thread_tid;

static void *tid_reporter(void *arg) {
    (void)arg;
    thread_tid = (pid_t)syscall(SYS_gettid);
    return NULL;
}

static sem_t detached_done;

static void *detached(void *arg) {
    (void)arg;
    sem_post(&detached_done);
    return NULL;
}

static void *exits_early(void *arg) {
    pthread_exit((void *)((long)arg + 1));
    return NULL;
}

static sem_t last_go;
static volatile sig_atomic_t usr1_seen;

static void on_usr1(int signo) {
    usr1_seen = signo;
}

static void *last_thread(void *arg) {
    (void)arg;
    sem_wait(&last_go);
    printf("the last thread ends the process\n");
    fflush(stdout);
    return NULL; /* the last thread's end is exit(0) */
}

int main(void) {
    pthread_t t[WORKERS];
    long total = 0;

    for (long i = 0; i < WORKERS; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)i) != 0) {
            printf("pthread_create failed\n");
            return 1;
        }
    for (int i = 0; i < WORKERS; i++) {
        void *r;
        pthread_join(t[i], &r);
        total += (long)r;
    }
    printf("workers: counter %d, results %ld, sums %d %d %d %d, main tls %d\n",
           atomic_load(&counter), total, sums[0], sums[1], sums[2], sums[3], tls_value);

    for (int i = 0; i < WORKERS; i++)
        pthread_create(&t[i], NULL, locker, NULL);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(t[i], NULL);
    printf("mutex: total %ld\n", shared_total);

    pthread_t prod;
    long consumed = 0, items = 0;
    pthread_create(&prod, NULL, producer, (void *)1000L);
    while (items < 1000) {
        pthread_mutex_lock(&lock);
        while (count == 0)
            pthread_cond_wait(&not_empty, &lock);
        consumed += queue[head];
        head = (head + 1) % QUEUE;
        count--;
        items++;
        pthread_cond_signal(&not_full);
        pthread_mutex_unlock(&lock);
    }
    pthread_join(prod, NULL);
    printf("condvar queue: %ld items, sum %ld\n", items, consumed);

    for (int i = 0; i < WORKERS; i++)
        pthread_create(&t[i], NULL, broadcast_waiter, NULL);
    for (;;) {
        pthread_mutex_lock(&lock);
        int all = waiting == WORKERS;
        if (all) {
            go_flag = 1;
            pthread_cond_broadcast(&go);
        }
        pthread_mutex_unlock(&lock);
        if (all)
            break;
        sched_yield();
    }
    long released = 0;
    for (int i = 0; i < WORKERS; i++) {
        void *r;
        pthread_join(t[i], &r);
        released += (long)r;
    }
    printf("broadcast: %ld released\n", released);

    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_nsec += 20 * 1000 * 1000;
    if (deadline.tv_nsec >= 1000000000) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&lock);
    int rc = pthread_cond_timedwait(&go, &lock, &deadline);
    pthread_mutex_unlock(&lock);
    printf("timed wait: %s\n", rc == ETIMEDOUT ? "timed out" : "woke");

    sem_init(&ping, 0, 0);
    sem_init(&pong, 0, 0);
    pthread_t pt;
    pthread_create(&pt, NULL, ponger, (void *)2000L);
    for (int i = 0; i < 2000; i++) {
        sem_post(&ping);
        sem_wait(&pong);
    }
    pthread_join(pt, NULL);
    printf("semaphores: 2000 round trips\n");

    pthread_barrier_init(&barrier, NULL, WORKERS);
    for (long i = 0; i < WORKERS; i++)
        pthread_create(&t[i], NULL, barrier_worker, (void *)i);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(t[i], NULL);
    printf("barrier: phase sum %d\n", atomic_load(&phase_sum));

    pthread_t setter;
    pthread_create(&setter, NULL, flag_setter, NULL);
    while (!atomic_load(&flag))
        ; /* no futex, no yield: only preemption lets the setter run on one CPU */
    pthread_join(setter, NULL);
    printf("spin on a flag: seen\n");

    pthread_t sleeper_peer;
    pthread_create(&sleeper_peer, NULL, flag_while_main_sleeps, NULL);
    usleep(50 * 1000);
    printf("sleep: the other thread ran meanwhile %s\n", atomic_load(&sleeper_flag) ? "yes" : "no");
    pthread_join(sleeper_peer, NULL);

    pipe(pipe_fds);
    pthread_t reader;
    void *got;
    pthread_create(&reader, NULL, pipe_reader, NULL);
    usleep(10 * 1000); /* the reader blocks in read first */
    write(pipe_fds[1], "hello", 5);
    pthread_join(reader, &got);
    printf("pipe between threads: %ld bytes, \"%s\"\n", (long)got, pipe_buf);

    fd_set readable;
    FD_ZERO(&readable);
    FD_SET(pipe_fds[0], &readable);
    struct timeval tv = {5, 0};
    pthread_t writer;
    pthread_create(&writer, NULL, late_writer, "s");
    int ready = select(pipe_fds[0] + 1, &readable, NULL, NULL, &tv);
    pthread_join(writer, NULL);
    printf("select while another thread writes: %d ready, fd set %s, time left %s\n", ready,
           FD_ISSET(pipe_fds[0], &readable) ? "yes" : "no",
           tv.tv_sec <= 5 ? "at most 5 s" : "wrong");
    read(pipe_fds[0], pipe_buf, 1);

    struct pollfd pfd = {.fd = pipe_fds[0], .events = POLLIN};
    pthread_create(&writer, NULL, late_writer, "p");
    ready = poll(&pfd, 1, 5000);
    pthread_join(writer, NULL);
    printf("poll while another thread writes: %d ready, POLLIN %s\n", ready,
           pfd.revents & POLLIN ? "yes" : "no");
    read(pipe_fds[0], pipe_buf, 1);

    pthread_t spin;
    pthread_create(&spin, NULL, spinner, NULL);
    struct timespec before, after;
    clock_gettime(CLOCK_MONOTONIC, &before);
    FD_ZERO(&readable);
    FD_SET(pipe_fds[0], &readable);
    tv = (struct timeval){0, 30 * 1000};
    ready = select(pipe_fds[0] + 1, &readable, NULL, NULL, &tv);
    clock_gettime(CLOCK_MONOTONIC, &after);
    atomic_store(&stop_spinning, 1);
    pthread_join(spin, NULL);
    long waited_ms = (after.tv_sec - before.tv_sec) * 1000 + (after.tv_nsec - before.tv_nsec) / 1000000;
    printf("select timeout while another thread spins: %d ready, waited 30 ms or more %s\n", ready,
           waited_ms >= 29 ? "yes" : "no");

    pthread_t bulk;
    static char chunk[CHUNK];
    long sum = 0;
    for (int i = 0; i < CHUNK; i++)
        chunk[i] = (char)(i * 7 + 3);
    pthread_create(&bulk, NULL, bulk_reader, (void *)(long)pipe_fds[0]);
    for (long done = 0; done < BULK; done += CHUNK) {
        write(pipe_fds[1], chunk, CHUNK); /* the pipe holds 64 KiB: the reader must run */
        for (int i = 0; i < CHUNK; i++)
            sum += (unsigned char)chunk[i];
    }
    pthread_join(bulk, &got);
    printf("pipe past its capacity: reader got everything %s\n",
           (long)got == sum && bulk_total == BULK ? "yes" : "no");

    /* One write, one writev, and one write into a stream socket, each of more than the pipe
     * or socket holds, drained by another thread. */
    static char big[BULK];
    long big_sum = 0;
    for (int i = 0; i < BULK; i++) {
        big[i] = (char)(i * 13 + 1);
        big_sum += (unsigned char)big[i];
    }
    int stream[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, stream) != 0)
        return 98;
    struct iovec halves[2] = {{big, BULK / 2}, {big + BULK / 2, BULK / 2}};
    for (int way = 0; way < 3; way++) {
        int from = way == 2 ? stream[0] : pipe_fds[0], to = way == 2 ? stream[1] : pipe_fds[1];
        pthread_create(&bulk, NULL, bulk_reader, (void *)(long)from);
        ssize_t wrote = way == 1 ? writev(to, halves, 2) : write(to, big, BULK);
        pthread_join(bulk, &got);
        printf("one %s of 256 KiB another thread drains: wrote all %s, reader got it all %s\n",
               way == 0 ? "pipe write" : way == 1 ? "pipe writev" : "socket write",
               wrote == BULK ? "yes" : "no", (long)got == big_sum && bulk_total == BULK ? "yes" : "no");
    }

    /* The socket's own timeout ends the receive while the main thread sleeps longer. */
    int quiet[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, quiet) != 0)
        return 98;
    pthread_t receiver;
    pthread_create(&receiver, NULL, timed_receiver, (void *)(long)quiet[0]);
    usleep(500 * 1000);
    pthread_join(receiver, &got);
    printf("SO_RCVTIMEO ends a receive while another thread sleeps: %s\n",
           got == (void *)1L ? "yes" : "no");

    int gate[2];
    pipe(gate);
    fflush(stdout);
    waited_child = fork();
    if (waited_child == 0) {
        char c;
        read(gate[0], &c, 1); /* exits only once the main thread writes */
        _exit(c);
    }
    pthread_t waiter;
    pthread_create(&waiter, NULL, child_waiter, NULL);
    usleep(20 * 1000); /* the waiter blocks in waitpid first */
    write(gate[1], "\x05", 1);
    void *reaped;
    pthread_join(waiter, &reaped);
    printf("waitpid in a thread while the main thread wakes the child: reaped %s, status %d\n",
           (pid_t)(long)reaped == waited_child ? "yes" : "no",
           WIFEXITED(child_status) ? WEXITSTATUS(child_status) : -1);

    pthread_t reporter;
    pthread_create(&reporter, NULL, tid_reporter, NULL);
    pthread_join(reporter, NULL);
    pid_t main_tid = (pid_t)syscall(SYS_gettid);
    printf("ids: main tid is pid %s, thread tid differs %s\n",
           main_tid == getpid() ? "yes" : "no",
           thread_tid != main_tid && thread_tid > 0 ? "yes" : "no");

    sem_init(&detached_done, 0, 0);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t d;
    pthread_create(&d, &attr, detached, NULL);
    sem_wait(&detached_done);
    printf("detached thread: ran\n");

    pthread_t early;
    void *early_result;
    pthread_create(&early, NULL, exits_early, (void *)41L);
    pthread_join(early, &early_result);
    printf("pthread_exit: %ld\n", (long)early_result);

    sigset_t mask;
    sigprocmask(SIG_BLOCK, NULL, &mask);
    printf("main mask after threads ended: SIGTERM %s\n",
           sigismember(&mask, SIGTERM) ? "blocked" : "open");
    signal(SIGUSR1, on_usr1);
    raise(SIGUSR1);
    printf("raise in the main thread: handled %s\n", usr1_seen == SIGUSR1 ? "yes" : "no");

    sem_init(&last_go, 0, 0);
    pthread_t busy;
    pthread_create(&busy, NULL, last_thread, NULL);
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        printf("fork child: one thread, pid differs %s\n", getpid() != main_tid ? "yes" : "no");
        fflush(stdout);
        _exit(5);
    }
    int status = 0;
    waitpid(child, &status, 0);
    printf("fork: child exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    fflush(stdout);

    sem_post(&last_go);
    pthread_exit(NULL);
}
