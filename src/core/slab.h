/*
 * core/slab.h — the object arena: memory for stored objects whose first touch is paid off the
 * decoding thread (slab.c). Internal API.
 *
 * kc_obj (json/obj.c) takes its one allocation from here when the arena is on: 2 MiB chunks, bump
 * allocation in 16-byte granules, a background thread that maps and populates chunks ahead of the
 * decoders (MADV_POPULATE_WRITE: one system call for 512 pages instead of 512 page faults) and
 * recycles the chunks of freed objects (a relist) for a while before unmapping them. Objects stay
 * individually reference-counted and freeable: a chunk goes back when its last object does, and a
 * page of a live chunk that no object touches any more is returned to the kernel (MADV_DONTNEED)
 * after the decay time. The design, the figures and the trade-offs: slab.c.
 *
 * Thread-safety: every function is thread-safe. An object may be freed on any thread.
 */
#ifndef KC_CORE_SLAB_H
#define KC_CORE_SLAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Allocations larger than this go to malloc (the caller's fallback). */
#define KC__SLAB_MAX ((size_t)256 << 10)
/* Allocation granule: sizes are rounded up to it; returned memory is aligned to it. */
#define KC__SLAB_GRAIN ((size_t)16)
/* The size kc__slab_alloc reports in *got for n bytes (what kc__slab_free wants back). */
static inline size_t kc__slab_size(size_t n)
{
    return (n + KC__SLAB_GRAIN - 1) & ~(KC__SLAB_GRAIN - 1);
}

/* n bytes from the arena (n rounded up to KC__SLAB_GRAIN, written to *got), or NULL: the arena is
 * off, n > KC__SLAB_MAX, or no memory — the caller then uses malloc. Never blocks on the
 * background thread. */
void *kc__slab_alloc(size_t n, size_t *got);
/* Free p, allocated with kc__slab_alloc for got bytes (the size it reported). */
void kc__slab_free(void *p, size_t got);

/* Gives the calling thread its current chunk now, when it has none and the arena is on: a thread
 * about to decode in bulk that is waiting anyway (the pager's worker, while the first page is on
 * the wire) pays for taking the chunk — mapping and populating it when the pool is empty, and
 * starting the populate-ahead — before its first object instead of at it. */
void kc__slab_prepare(void);

/* The calling thread's current chunk, if any, stops being allocated from (its unused tail is
 * returned after the decay). Call when a thread ends a bulk decode (a whole LIST) but lives on:
 * otherwise it keeps its populated chunk until it exits. */
void kc__slab_release_thread(void);

/* On by default, except in sanitizer builds (LeakSanitizer cannot see leaks inside the arena) and
 * when the environment has KCACHE_OBJ_ARENA=0 (valgrind, or an A/B measurement). Tests and
 * benchmarks switch it; allocations already made keep their origin. */
void kc__slab_set_enabled(bool on);
bool kc__slab_enabled(void);

/* Release now what the decay would release later: every pooled chunk is unmapped and every page
 * of a live chunk that holds no object is returned to the kernel (malloc_trim's counterpart, for
 * benchmarks and tests). */
void kc__slab_trim(void);

typedef struct kc__slab_stats {
    size_t chunks_in_use;   /* chunks holding objects or being allocated from */
    size_t chunks_pooled;   /* mapped, empty, ready for the next allocation */
    size_t chunks_target;   /* how many the background thread keeps populated ahead now */
    size_t pages_released;  /* pages of live chunks returned to the kernel, cumulative */
    size_t chunks_mapped;   /* cumulative */
    size_t chunks_unmapped; /* cumulative */
    size_t chunks_reused;   /* taken from the pool (pre-populated or recycled), cumulative */
    size_t misses;          /* a thread found the pool empty and mapped a chunk itself */
    size_t resident_pages;  /* pages of in-use chunks in memory now (mincore) */
} kc__slab_stats;
/* (Tests and benchmarks: resident_pages walks every chunk with mincore under the arena's lock.) */
void kc__slab_stats_get(kc__slab_stats *st);

#ifdef __cplusplus
}
#endif

#endif
