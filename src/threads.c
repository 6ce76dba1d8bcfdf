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

/* fastkpca:::thread_limits(): what the default count and the cap of
 * every 'threads' are read from. */
SEXP thread_limits(void)
{
    const char *names[] = {"cap", "forked", "openmp", "thread_limit", "affinity", ""};
    SEXP ans = PROTECT(allocVector(VECSXP, 5));
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
    SEXP nm = PROTECT(allocVector(STRSXP, 5));
    for (int i = 0; i < 5; i++) SET_STRING_ELT(nm, i, mkChar(names[i]));
    setAttrib(ans, R_NamesSymbol, nm);
    UNPROTECT(2);
    return ans;
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
