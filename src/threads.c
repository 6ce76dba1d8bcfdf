/* Threads as the process may run them (issue 50): how many a call may
 * have, and the one way a thread waits on another. The bottom of the
 * engine with errors.c and simd.c: it calls nothing of the package.
 *
 * How many (thread_cap(), applied to every 'threads' by as_threads() in
 * args.c, so that no region asks for more than the process may have):
 *   - a forked child runs on one thread. GNU libgomp keeps its pool of
 *     threads in memory the child copies, while the threads themselves
 *     are not copied: a team started in a child forked after the parent
 *     had run one waits forever (parallel::mclapply(), future's multicore
 *     plan, mcparallel()). clang's libomp resets itself in the child (a
 *     fork handler of its own), so threads would work there; fastkpca
 *     treats every runtime alike, which is also what a forked worker
 *     wants (one process per core). The child is known by its process id,
 *     which differs from the one recorded when the library was loaded (a
 *     fork handler could not be taken off when the library is unloaded,
 *     and R may fork after that);
 *   - never more than OpenMP's thread limit (OMP_THREAD_LIMIT), and one
 *     without OpenMP.
 * A team may still be smaller than asked (OMP_DYNAMIC, a nested region):
 * every region that deals work by thread number or waits on another
 * thread deals it by the team it got (omp_get_num_threads()), and the
 * tests read the sources for it (test-threads-static.R).
 *
 * How a thread waits (wait_for_count()): on a busy machine the thread it
 * waits for may not be running, and a spinning waiter takes the core it
 * needs. So a waiter spins a little (a wait of a few microseconds on an
 * idle machine costs no system call), then yields the core at each look,
 * then sleeps between looks once the wait has lasted a while. */
#ifdef __linux__
# ifndef _GNU_SOURCE
#  define _GNU_SOURCE  /* sched_getaffinity(), CPU_COUNT() */
# endif
#endif
#include "fastkpca.h"
#include <limits.h>
#include <stdio.h>
#include <string.h>
#if defined(__unix__) || defined(__APPLE__)
# include <sched.h>
# include <time.h>
# include <unistd.h>
# define HAVE_POSIX_THREADS_WAIT 1
#endif

static long loaded_pid = -1;

static long this_process(void)
{
#if defined(__unix__) || defined(__APPLE__)
    return (long) getpid();
#else
    return 0;
#endif
}

void threads_record_process(void)
{
    loaded_pid = this_process();
}

/* Whether this process is a fork of the one that loaded the library. */
int threads_forked(void)
{
    return loaded_pid != -1 && this_process() != loaded_pid;
}

/* OpenMP's limit on the threads of the process: INT_MAX when none. */
static int openmp_thread_limit(void)
{
#ifdef _OPENMP
    int limit = omp_get_thread_limit();
    return limit >= 1 ? limit : 1;
#else
    return 1;
#endif
}

int thread_cap(void)
{
    if (threads_forked()) return 1;
    int limit = openmp_thread_limit();
    return limit < MAX_THREADS ? limit : MAX_THREADS;
}

int threads_usable(int requested)
{
    int cap = thread_cap();
    return requested < cap ? requested : cap;
}

/* The system's cores online; NA where it does not say. */
static int cores_online(void)
{
#if defined(__unix__) || defined(__APPLE__)
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (online >= 1 && online < INT_MAX) return (int) online;
#endif
    return NA_INTEGER;
}

/* The CPUs this process may run on (its affinity mask); NA where the
 * system does not say. */
static int affinity_cpus(void)
{
#ifdef __linux__
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
#endif
    return NA_INTEGER;
}

/* ---- a busy machine ------------------------------------------------------- */

/* Steps whose threads meet often (a band reduction's panels and sweeps, the
 * matrix-free pipeline's tiles) lose on a machine whose cores are taken by
 * other processes: a thread the system holds back for a time slice holds
 * up the others at every meeting, and OpenMP's idle threads spin for a few
 * milliseconds after each region, on cores the busy processes and the
 * main thread want (measured at n = 2000 beside two busy processes on 2
 * cores: about twice the time of one thread, up to 4 times in single
 * runs). So such a step asks
 * threads_unless_busy() between its regions, on the main thread: at most
 * the cores that other processes leave free, and at least one. The
 * other processes' demand is the system's count of running threads
 * (/proc/loadavg), less this process's own (those of its threads in state
 * R: OpenMP's idle threads spin for a while after each region), the
 * least of three looks (a thread that only passes by is not counted),
 * and a first sign of other threads looked at again 5 ms later (one that
 * has just gone to sleep is not counted: cores_left_free()); the cores,
 * those online. (This process's threads are counted once, the
 * system's three times.) The main thread's own wait for a core (its
 * schedstat) would not do: beside two busy processes on two cores the
 * system often gives the one thread of this process a core of its own,
 * and the second thread then shares the other core with both. A look
 * costs about 0.1 ms (more with many threads: a file each); the answer is
 * kept for BUSY_LOOK_NS. Elsewhere than
 * Linux the machine counts as idle. The results do not depend on it: the
 * same bits on any number of threads. */
#define BUSY_LOOK_NS 50e6  /* 50 ms */

#ifdef __linux__
# include <dirent.h>

/* The system's running threads (the fourth field of /proc/loadavg,
 * "running/total"); -1 if unread. */
static int system_running(void)
{
    FILE *f = fopen("/proc/loadavg", "r");
    if (f == NULL) return -1;
    double l1, l5, l15;
    int running = -1, total = 0;
    if (fscanf(f, "%lf %lf %lf %d/%d", &l1, &l5, &l15, &running, &total) != 5) running = -1;
    fclose(f);
    return running;
}

/* This process's threads in state R. */
static int own_running(void)
{
    DIR *d = opendir("/proc/self/task");
    if (d == NULL) return 1;
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/self/task/%.20s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL) continue;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = '\0';
        const char *close = strrchr(buf, ')');  /* the state follows the name */
        if (close != NULL && close[1] == ' ' && close[2] == 'R') count++;
    }
    closedir(d);
    return count > 0 ? count : 1;
}

static double monotonic_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}
#endif

static int free_cores = -1;  /* the last look's answer; -1: none yet */
static double free_cores_at = 0.0;

/* The threads of other processes running now: the system's count less
 * this process's own, the least of three looks; -1 where unread. */
static int others_running(void)
{
    int own = own_running(), others = -1;
    for (int look = 0; look < 3; look++) {
        int running = system_running();
        if (running < 0) return -1;
        int o = running - own;
        if (o < 0) o = 0;
        if (others < 0 || o < others) others = o;
    }
    return others;
}

/* The cores other processes leave free, at least 1; INT_MAX where the
 * system does not say. A look that finds other threads running where the
 * last answer, within BUSY_RECENT_NS, found none is looked at again
 * BUSY_CONFIRM_NS later, and the fewer of the two counts taken: the
 * system's count (Linux 6.18 here) also holds, for a few milliseconds, a
 * thread that has just gone to sleep on a busy core (the scheduler takes
 * it off the core's queue late). On an idle machine, a matrix-free fit at
 * n = 20000 on 2 threads found such a thread in all three looks in 0 to
 * 51 of the 1572 steps of three fits (none that a scan of /proc's
 * threads showed in state R, and none 4 ms later), and each sent the
 * fit's steps to one thread for BUSY_LOOK_NS. A process that keeps a core
 * busy is still there 5 ms later; once found, it is not looked at twice. */
#define BUSY_CONFIRM_NS 5e6  /* 5 ms */
#define BUSY_RECENT_NS 1e9   /* 1 s */

static int cores_left_free(void)
{
#ifdef __linux__
    double now = monotonic_ns();
    if (free_cores >= 0 && now - free_cores_at < BUSY_LOOK_NS) return free_cores;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int others = others_running();
    if (others < 0) return INT_MAX;
    int was_busy = free_cores >= 0 && free_cores < online && now - free_cores_at < BUSY_RECENT_NS;
    if (others > 0 && !was_busy) {
        struct timespec nap = {0, (long) BUSY_CONFIRM_NS};
        nanosleep(&nap, NULL);
        int again = others_running();
        if (again >= 0 && again < others) others = again;
        now = monotonic_ns();
    }
    free_cores = online > others ? (int) (online - others) : 1;
    free_cores_at = now;
    return free_cores;
#else
    return INT_MAX;
#endif
}

/* Call on the main thread, between parallel regions (inside one it gives
 * threads as they are: the look is the main thread's). */
int threads_unless_busy(int threads)
{
    if (threads <= 1) return threads;
#ifdef _OPENMP
    if (omp_in_parallel()) return threads;
#endif
    int free = cores_left_free();
    return threads < free ? threads : free;
}

/* ---- waits between threads ----------------------------------------------- */

#define WAIT_SPINS 128       /* pauses before the first yield */
#define WAIT_YIELDS 2048     /* yields before the waiter sleeps between looks */
#define WAIT_SLEEP_NS 50000  /* 50 microseconds a look after that */

static void wait_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Waits until *count >= at_least, *count written by another thread with
 * count_publish(); what that thread wrote before it is then visible. No
 * R: runs on the threads. */
void wait_for_count(const int *count, int at_least)
{
    for (long looks = 0; __atomic_load_n(count, __ATOMIC_ACQUIRE) < at_least; looks++) {
        if (looks < WAIT_SPINS) {
            wait_pause();
            continue;
        }
#ifdef HAVE_POSIX_THREADS_WAIT
        if (looks < WAIT_SPINS + WAIT_YIELDS) {
            sched_yield();
        } else {
            struct timespec nap = {0, WAIT_SLEEP_NS};
            nanosleep(&nap, NULL);
        }
#else
        wait_pause();
#endif
    }
}

/* *count <- value, after everything this thread wrote before it. */
void count_publish(int *count, int value)
{
    __atomic_store_n(count, value, __ATOMIC_RELEASE);
}

/* The next unit of work dealt from *count: its value, taken up by one, so
 * each unit goes to one thread and the units go out in order (a thread
 * that then waits for an earlier unit waits for one already taken). */
int count_take(int *count)
{
    return __atomic_fetch_add(count, 1, __ATOMIC_RELAXED);
}

/* ---- for R ---------------------------------------------------------------- */

/* fastkpca:::thread_limits(): what the default count and the cap of
 * every 'threads' are read from. */
SEXP thread_limits(SEXP look)
{
    if (!isLogical(look) || XLENGTH(look) != 1 || LOGICAL(look)[0] == NA_LOGICAL)
        error_argument("'look' must be TRUE or FALSE");
    const char *names[] = {"cap", "forked", "openmp", "thread_limit", "affinity", "free_cores",
                           "online"};
    SEXP ans = PROTECT(allocVector(VECSXP, 7));
    SET_VECTOR_ELT(ans, 0, ScalarInteger(thread_cap()));
    SET_VECTOR_ELT(ans, 1, ScalarLogical(threads_forked()));
#ifdef _OPENMP
    SET_VECTOR_ELT(ans, 2, ScalarLogical(1));
    int limit = omp_get_thread_limit();
    SET_VECTOR_ELT(ans, 3, ScalarInteger(limit >= 1 && limit < INT_MAX ? limit : NA_INTEGER));
#else
    SET_VECTOR_ELT(ans, 2, ScalarLogical(0));
    SET_VECTOR_ELT(ans, 3, ScalarInteger(NA_INTEGER));
#endif
    SET_VECTOR_ELT(ans, 4, ScalarInteger(affinity_cpus()));
    /* the machine looked at only when asked (a look costs about 0.1 ms) */
    int free = LOGICAL(look)[0] ? cores_left_free() : INT_MAX;
    SET_VECTOR_ELT(ans, 5, ScalarInteger(free == INT_MAX ? NA_INTEGER : free));
    SET_VECTOR_ELT(ans, 6, ScalarInteger(cores_online()));
    SEXP nm = PROTECT(allocVector(STRSXP, 7));
    for (int i = 0; i < 7; i++) SET_STRING_ELT(nm, i, mkChar(names[i]));
    setAttrib(ans, R_NamesSymbol, nm);
    UNPROTECT(2);
    return ans;
}
