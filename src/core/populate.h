/*
 * core/populate.h — fresh memory made ready for writing in bulk (internal): populate in one system
 * call, on transparent huge pages when that is measured to be cheaper here.
 */
#ifndef KC_CORE_POPULATE_H
#define KC_CORE_POPULATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Populate the whole pages inside [p, p + n) for writing with one madvise(MADV_POPULATE_WRITE)
 * (ignored before Linux 5.14), then write each page once, keeping its bytes: for memory about to be
 * written whole, one system call costs less than a fault per 4 KiB page, and under shadow page
 * tables the hypervisor maps a page only at its first access. When `huge` and the 2 MiB-aligned
 * part of the range is not empty, kc__mem_huge_pick() decides whether that part is advised
 * MADV_HUGEPAGE first, and the time the call took feeds its choice. p: borrowed, must be writable
 * for n bytes. Best effort, never fails. Thread-safe. Returns true when the range was advised for
 * huge pages. */
bool kc__mem_populate_ex(void *p, size_t n, bool huge);

/* Map n bytes (a multiple of 4 KiB) of private anonymous memory aligned to 2 MiB, so that every
 * whole 2 MiB of it can be a transparent huge page: asked at hint first (NULL: anywhere), and
 * when the kernel's answer is not aligned, 2 MiB more is mapped and the excess cut off.
 * Returns the mapping (release with munmap(p, n)) or NULL when out of address space. Nothing is
 * advised or populated. Thread-safe. */
void *kc__mem_map_aligned(size_t n, void *hint);

/* Whether the next bulk population should use transparent huge pages. Huge pages turn 512 page
 * faults (or one populate of 512 PTEs) into one; on a VM with shadow page tables that is 10-30x
 * cheaper per byte, but when the kernel must compact memory first (THP defrag "madvise") it is
 * slower than small pages. So the choice is measured: a running average of the cost per 2 MiB of
 * each kind, huge first, the cheaper one used, the other one re-tried every 16th time. False when
 * the kernel has THP off ("never", or no sysfs file) or when disabled by kc__mem_huge_set.
 * Thread-safe. */
bool kc__mem_huge_pick(void);

/* Force the choice (tests, and KCACHE_OBJ_ARENA=nohuge): 0 never huge, 1 always huge when the
 * kernel allows it, -1 measured (the default). Thread-safe. */
void kc__mem_huge_set(int mode);

typedef struct kc__mem_huge_stats {
    uint64_t huge_ns, small_ns;     /* running average cost of populating 2 MiB; 0 = not measured */
    size_t huge_maps, small_maps;   /* populations of each kind, cumulative */
    uint64_t total_ns, total_bytes; /* every population of a range with a whole 2 MiB in it,
                                     * either kind, cumulative: the populating threads' CPU
                                     * time (the cost of fresh memory) and the bytes */
    bool available;                 /* the kernel has THP in madvise or always mode */
} kc__mem_huge_stats;
/* Copy the counters into *st (caller-owned). Thread-safe; the fields are read one by one, not as
 * one snapshot. */
void kc__mem_huge_stats_get(kc__mem_huge_stats *st);

#ifdef __cplusplus
}
#endif

#endif
