/*
 * populate.c — fresh memory made ready for writing in bulk (core/populate.h).
 *
 * Why: a cold informer sync writes hundreds of megabytes into memory the process never touched.
 * On the VMs we measure on, a 4 KiB page's first touch costs 1.5-12 µs (the guest's fault, and
 * with shadow page tables the hypervisor's); MADV_POPULATE_WRITE halves that by taking the faults
 * in one call (and then one write per page: under shadow page tables the hypervisor maps a page
 * at its first access, not at the guest's populate — 3-4 µs per 4 KiB here, the larger part, paid
 * here rather than by the caller's copy), and a transparent huge page maps 2 MiB with one fault:
 * 0.2-0.7 µs per 4 KiB when the kernel has a free huge page at hand. When it has not (defrag
 * "madvise": it compacts memory synchronously) the same huge page has cost 22 µs per 4 KiB on one
 * of our machines — worse than small pages. Neither is right everywhere, so the choice is measured
 * where it runs:
 *
 *   pick:  huge until measured; then the kind with the lower running average cost per 2 MiB,
 *          except every 16th pick, which takes the other kind (a probe: conditions change — a
 *          fragmented machine compacts, a fresh one has huge pages to spare).
 *   cost:  each kc__mem_populate_ex(…, huge = true) of 2 MiB or more times its madvise calls and
 *          writes and folds the cost per 2 MiB into that kind's average (weight 1/4).
 *   total: every population of 2 MiB or more, either kind, adds its thread CPU time and bytes to
 *          two counters (kc__mem_huge_stats_get): what fresh memory cost the process, for benches.
 *
 * Giving memory back is the callers' business (core/slab.c returns a swept page with
 * MADV_DONTNEED, which splits the huge page, and marks the chunk MADV_NOHUGEPAGE so that
 * khugepaged does not collapse it back to 2 MiB). THP "never", or no sysfs file: never huge.
 */
#include "core/populate.h"
#include "core/internal.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define HUGE        ((size_t)2 << 20)
#define PAGE        ((size_t)4096)
#define PROBE_EVERY 16u

static _Atomic int forced = -2;    /* -1 measured, 0 never, 1 always; -2: environment not read */
static _Atomic int available = -1; /* -1 not read yet */
static _Atomic uint64_t avg_ns[2]; /* [0] small pages, [1] huge: cost of 2 MiB, 0 = unmeasured */
static _Atomic size_t maps[2];
static _Atomic uint64_t total_ns, total_bytes; /* every timed population, cumulative */
static _Atomic unsigned picks;

/* The calling thread's CPU time: a population's cost without the time it waited for a CPU. */
static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * KC__NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

static bool thp_available(void)
{
    int a = atomic_load_explicit(&available, memory_order_relaxed);
    if (KC__LIKELY(a >= 0))
        return a > 0;
    a = 0;
    int fd = open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        char b[128];
        ssize_t k = read(fd, b, sizeof b - 1);
        close(fd);
        if (k > 0) {
            b[k] = '\0';
            a = strstr(b, "[always]") || strstr(b, "[madvise]");
        }
    }
    atomic_store_explicit(&available, a, memory_order_relaxed);
    return a > 0;
}

/* KCACHE_OBJ_ARENA=nohuge (docs/building.md): never huge, unless kc__mem_huge_set says otherwise.
 */
static int forced_mode(void)
{
    int f = atomic_load_explicit(&forced, memory_order_relaxed);
    if (KC__LIKELY(f != -2))
        return f;
    const char *e = getenv("KCACHE_OBJ_ARENA");
    int want = e && strcmp(e, "nohuge") == 0 ? 0 : -1;
    atomic_compare_exchange_strong_explicit(&forced, &f, want, memory_order_relaxed,
                                            memory_order_relaxed);
    return atomic_load_explicit(&forced, memory_order_relaxed);
}

bool kc__mem_huge_pick(void)
{
    int f = forced_mode();
    if (f == 0 || !thp_available())
        return false;
    if (f == 1)
        return true;
    uint64_t h = atomic_load_explicit(&avg_ns[1], memory_order_relaxed);
    uint64_t s = atomic_load_explicit(&avg_ns[0], memory_order_relaxed);
    bool huge = !(h && s && s < h); /* huge until small is measured cheaper */
    if (h && (atomic_fetch_add_explicit(&picks, 1, memory_order_relaxed) + 1) % PROBE_EVERY == 0)
        huge = !huge; /* the probe: the other kind, once in a while */
    return huge;
}

void kc__mem_huge_set(int mode)
{
    atomic_store_explicit(&forced, mode < 0 ? -1 : mode > 0, memory_order_relaxed);
}

void kc__mem_huge_stats_get(kc__mem_huge_stats *st)
{
    st->small_ns = atomic_load_explicit(&avg_ns[0], memory_order_relaxed);
    st->huge_ns = atomic_load_explicit(&avg_ns[1], memory_order_relaxed);
    st->small_maps = atomic_load_explicit(&maps[0], memory_order_relaxed);
    st->huge_maps = atomic_load_explicit(&maps[1], memory_order_relaxed);
    st->total_ns = atomic_load_explicit(&total_ns, memory_order_relaxed);
    st->total_bytes = atomic_load_explicit(&total_bytes, memory_order_relaxed);
    st->available = thp_available();
}

/* Fold one measured cost (of n bytes) into kind k's running average (a lost update under a race
 * only drops one sample). */
static void record(int k, uint64_t ns, size_t n)
{
    uint64_t per = (uint64_t)((double)ns * (double)HUGE / (double)n);
    uint64_t old = atomic_load_explicit(&avg_ns[k], memory_order_relaxed);
    atomic_store_explicit(&avg_ns[k], old ? (3 * old + per) / 4 : (per ? per : 1),
                          memory_order_relaxed);
    atomic_fetch_add_explicit(&maps[k], 1, memory_order_relaxed);
}

void *kc__mem_map_aligned(size_t n, void *hint)
{
    char *m = mmap(hint, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    if (!((uintptr_t)m & (HUGE - 1)))
        return m;
    munmap(m, n); /* not aligned: map 2 MiB more and cut */
    char *w = mmap(NULL, n + HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (w == MAP_FAILED)
        return NULL;
    char *a = (char *)(((uintptr_t)w + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
    if (a > w)
        munmap(w, (size_t)(a - w));
    if (a + n < w + n + HUGE)
        munmap(a + n, (size_t)(w + n + HUGE - (a + n)));
    return a;
}

bool kc__mem_populate_ex(void *p, size_t n, bool huge)
{
    char *a = (char *)(((uintptr_t)p + PAGE - 1) & ~(uintptr_t)(PAGE - 1));
    char *e = (char *)(((uintptr_t)p + n) & ~(uintptr_t)(PAGE - 1));
    if (e <= a)
        return false;
    char *ha = (char *)(((uintptr_t)a + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
    char *he = (char *)((uintptr_t)e & ~(uintptr_t)(HUGE - 1));
    bool timed = he > ha;          /* a range with a whole 2 MiB in it is timed … */
    bool measured = huge && timed; /* … and, when it may be huge, feeds the choice */
    uint64_t t0 = timed ? kc__now_ns() : 0, c0 = timed ? thread_cpu_ns() : 0;
    bool advised =
        measured && kc__mem_huge_pick() && madvise(ha, (size_t)(he - ha), MADV_HUGEPAGE) == 0;
    (void)madvise(a, (size_t)(e - a), MADV_POPULATE_WRITE); /* Linux >= 5.14; else the loop */
    for (volatile char *q = a; q < e; q += PAGE)
        *q = *q; /* a write: with shadow page tables the hypervisor maps the page only now */
    if (timed) {
        uint64_t ns = kc__now_ns() - t0, cpu = thread_cpu_ns() - c0;
        atomic_fetch_add_explicit(&total_ns, cpu, memory_order_relaxed);
        atomic_fetch_add_explicit(&total_bytes, (uint64_t)(e - a), memory_order_relaxed);
        if (measured && thp_available())
            record(advised, ns, (size_t)(e - a));
    }
    return advised;
}
