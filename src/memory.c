/* The memory the system can still give, from the operating system's own
 * calls (fastkpca:::available_bytes() in R/memory.R): on Linux,
 * /proc/meminfo's MemAvailable and SwapFree, else sysconf() and sysinfo()
 * (which need no /proc); on macOS, the VM statistics of the Mach host and
 * sysctl's swap usage; on Windows, GlobalMemoryStatusEx(). Each way is a
 * reader, tried in the order R gives; one that does not apply to the
 * system, or fails, gives nothing and the next is tried. Nothing here warns
 * or raises an error: where no reader answers, R is told the memory is
 * unknown. Also here: advise_huge_pages(), the one call of the engine
 * that asks the system how to back memory, and with_square_buffer(), the
 * exact fit's one n x n buffer, taken from the system and given back on
 * every exit.
 *
 * The system's headers come before R's: R's remap macros (length, error,
 * ...) would rename their identifiers. */
#if defined(_WIN32)
# include <windows.h>
#elif defined(__APPLE__)
# include <mach/mach.h>
# include <sys/types.h>
# include <sys/sysctl.h>
#else
# include <stdio.h>
# include <string.h>
# include <unistd.h>
# if defined(__linux__)
#  include <stdint.h>
#  include <sys/mman.h>
#  include <sys/sysinfo.h>
# endif
#endif

#include <stdint.h>
#include <stdlib.h>

/* without R's old macros, ERROR among them, which windows.h defines too */
#define STRICT_R_HEADERS 1
#include "fastkpca.h"

/* The readers' codes; their names are fastkpca:::memory_readers in R. */
enum {
    READER_MEMINFO = 1,  /* Linux: /proc/meminfo */
    READER_SYSCONF,      /* POSIX sysconf() pages, and sysinfo()'s free swap on Linux */
    READER_MACH,         /* macOS: host_statistics64() and sysctl vm.swapusage */
    READER_WINDOWS       /* Windows: GlobalMemoryStatusEx() */
};

/* Each reader returns the bytes available, or -1 where it cannot tell. */

static double read_meminfo(void)
{
#if defined(__linux__)
    FILE *f = fopen("/proc/meminfo", "r");
    if (f == NULL) return -1;
    char line[256];
    double avail = -1, swap = 0, kib;
    while (fgets(line, sizeof line, f) != NULL) {
        if (sscanf(line, "MemAvailable: %lf", &kib) == 1) avail = kib * 1024;
        else if (sscanf(line, "SwapFree: %lf", &kib) == 1) swap = kib * 1024;
    }
    fclose(f);
    /* MemAvailable came with Linux 3.14; without it, sysconf() answers */
    return avail < 0 ? -1 : avail + swap;
#else
    return -1;
#endif
}

static double read_sysconf(void)
{
#if defined(_SC_AVPHYS_PAGES) && defined(_SC_PAGESIZE)
    long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    if (pages < 0 || size <= 0) return -1;
    double avail = (double) pages * (double) size;
# if defined(__linux__)
    /* the free pages only (the page cache it could reclaim is not counted),
     * so less than MemAvailable; free swap on top, as there */
    struct sysinfo info;
    if (sysinfo(&info) == 0)
        avail += (double) info.freeswap * (double) (info.mem_unit ? info.mem_unit : 1);
# endif
    return avail;
#else
    return -1;
#endif
}

static double read_mach(void)
{
#if defined(__APPLE__)
    mach_port_t host = mach_host_self();
    vm_size_t page = 0;
    vm_statistics64_data_t vm;
    mach_msg_type_number_t count = HOST_VM_INFO64_COUNT;
    if (host_page_size(host, &page) != KERN_SUCCESS || page == 0) return -1;
    if (host_statistics64(host, HOST_VM_INFO64, (host_info64_t) &vm, &count) != KERN_SUCCESS)
        return -1;
    /* free pages and inactive ones, which the system reclaims first, as
     * "available" counts them there */
    double avail = ((double) vm.free_count + (double) vm.inactive_count) * (double) page;
    struct xsw_usage swap;
    size_t len = sizeof swap;
    if (sysctlbyname("vm.swapusage", &swap, &len, NULL, 0) == 0)
        avail += (double) swap.xsu_avail;
    return avail;
#else
    return -1;
#endif
}

static double read_windows(void)
{
#if defined(_WIN32)
    MEMORYSTATUSEX status;
    status.dwLength = sizeof status;
    if (!GlobalMemoryStatusEx(&status)) return -1;
    /* the commit charge still free: physical memory and page file, the
     * limit an allocation meets on Windows */
    return (double) status.ullAvailPageFile;
#else
    return -1;
#endif
}

/* readers: the codes of the readers to try, in order (an integer vector,
 * possibly empty). Returns c(bytes, reader) from the first that answers,
 * or c(NA, 0). */
SEXP available_bytes(SEXP readers)
{
    engine_entered(__func__);
    if (!isInteger(readers)) error_argument("'readers' must be an integer vector");
    for (R_xlen_t i = 0; i < XLENGTH(readers); i++)
        if (INTEGER(readers)[i] < READER_MEMINFO || INTEGER(readers)[i] > READER_WINDOWS)
            error_argument("'readers' must hold codes of readers, from %d to %d",
                           READER_MEMINFO, READER_WINDOWS);
    SEXP out = PROTECT(allocVector(REALSXP, 2));
    REAL(out)[0] = NA_REAL;
    REAL(out)[1] = 0;
    for (R_xlen_t i = 0; i < XLENGTH(readers); i++) {
        int reader = INTEGER(readers)[i];
        double avail = reader == READER_MEMINFO ? read_meminfo()
                     : reader == READER_SYSCONF ? read_sysconf()
                     : reader == READER_MACH ? read_mach()
                     : reader == READER_WINDOWS ? read_windows() : -1;
        if (avail > 0) {
            REAL(out)[0] = avail;
            REAL(out)[1] = reader;
            break;
        }
    }
    UNPROTECT(1);
    return out;
}

/* Asks Linux to back the large matrix at p (bytes long) with huge pages,
 * before anything is written to it: the kernels fill their n x n and
 * n x m results on first touch, and with 4 KB pages each page's fault
 * cost about 1.5 us on the project machine, 40% of kernel_matrix(k, z, x)
 * at n = 8000 (perf). Only the whole 2 MB pages inside the matrix are
 * advised; a hint the system may ignore (transparent huge pages off, or
 * "always" already), and nothing elsewhere. Values do not change. */
#define HUGE_PAGE_BYTES ((size_t) 2 << 20)
void advise_huge_pages(void *p, size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (bytes < 4 * HUGE_PAGE_BYTES) return;
    uintptr_t start = ((uintptr_t) p + HUGE_PAGE_BYTES - 1) & ~(uintptr_t) (HUGE_PAGE_BYTES - 1);
    uintptr_t end = ((uintptr_t) p + bytes) & ~(uintptr_t) (HUGE_PAGE_BYTES - 1);
    if (end > start) (void) madvise((void *) start, end - start, MADV_HUGEPAGE);
#else
    (void) p;
    (void) bytes;
#endif
}

/* The exact fit's one n x n buffer (fit.c), freed on every exit. */
typedef struct {
    SEXP (*body)(void *data, double *buffer);
    void *data;
    double *buffer;
} buffer_call;

static SEXP run_buffer_call(void *data)
{
    buffer_call *call = (buffer_call *) data;
    return call->body(call->data, call->buffer);
}

static void free_buffer_call(void *data, Rboolean jump)
{
    buffer_call *call = (buffer_call *) data;
    (void) jump;
    free(call->buffer);
    call->buffer = NULL;
    /* a fit's progress ends with its buffer, also on an error or interrupt */
    progress_end();
}

/* body(data, K) with K a malloc'ed n x n double buffer, freed as soon as
 * body returns, errors or is interrupted (R_UnwindProtect). An R_alloc'ed
 * buffer would stay resident until the next garbage collection. */
SEXP with_square_buffer(int n, SEXP (*body)(void *data, double *buffer), void *data)
{
    if ((double) n * (double) n * sizeof(double) > (double) SIZE_MAX / 2)
        error_memory("cannot allocate the %d x %d kernel matrix", n, n);
    buffer_call call = {body, data, NULL};
    call.buffer = (double *) malloc((size_t) n * (size_t) n * sizeof(double));
    if (call.buffer == NULL)
        error_memory("cannot allocate the %d x %d kernel matrix (%.1f GiB)", n, n,
                     8.0 * n * (double) n / 1073741824.0);
    advise_huge_pages(call.buffer, (size_t) n * (size_t) n * sizeof(double));
    SEXP cont = PROTECT(R_MakeUnwindCont());
    SEXP ans = R_UnwindProtect(run_buffer_call, &call, free_buffer_call, &call, cont);
    UNPROTECT(1);
    return ans;
}
