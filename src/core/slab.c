/*
 * slab.c — the object arena (core/slab.h): stored objects' memory, populated ahead of the decoder.
 *
 * Why: a cold informer sync writes every stored object into memory the process never touched, and
 * on a VM each 4 KiB page's first touch costs a fault of 1.5–12 µs (the guest's and often the
 * host's: memory the guest freed is reported back to the host and comes back zeroed). For 100,000
 * Pods that is ~100,000 faults on the thread that decodes — more than the decode itself. Here the
 * faults move to a background thread, batched: it maps 2 MiB chunks and populates them with one
 * madvise(MADV_POPULATE_WRITE) each (cheaper per page than 512 faults), ahead of the decoders,
 * on a transparent huge page when core/populate.c measures that to be cheaper on this machine
 * (one fault per chunk instead of 512: 10-30x cheaper on a VM with shadow page tables, slower
 * where the kernel must compact memory first).
 *
 * Layout. A chunk is 2 MiB, aligned to 2 MiB, so an object finds its chunk by masking its address.
 * Its first bytes are the header: a count of live objects (+1 while a thread allocates from it), a
 * count per 4 KiB page of the objects touching it (+1 on the page the bump pointer is in), and the
 * page index `top` below which no thread will allocate again. Objects are bump-allocated in 16-byte
 * granules by the thread that owns the chunk (its thread-local current chunk: no lock, no atomic
 * beyond the page and live counts); any thread frees.
 *
 *   chunk: [header | obj | obj | obj ........ | bump → unused ]      top = bump's page
 *
 * Giving memory back, individually: freeing an object decrements the counts of its pages; a page
 * below `top` whose count reaches zero holds no object and never will again, so after the decay
 * (DECAY_NS) the background thread returns it with MADV_DONTNEED (the chunk stays mapped). When a
 * chunk's last object goes, the whole chunk enters the pool. Pooled chunks are reused first (a
 * relist's or a second informer's objects land in memory the first one faulted in), and unmapped
 * once they sat unused for the decay. So a long-running informer gives back what it frees: whole
 * chunks, and the pages of live chunks that no object touches (as malloc_trim does for malloc's
 * free chunks); a deleted object sharing both its pages with live neighbours is not returned,
 * exactly as with malloc.
 *
 * Ahead of the decoders: the pool's target (chunks kept populated) starts at 0; a thread that finds
 * the pool empty maps its chunk itself (populated in one call) and doubles the target, up to
 * max(2, chunks in use / 16) capped at TARGET_MAX — so the memory populated ahead is at most ~6 %
 * of the arena (peak RSS ÷ steady RSS stays near 1). Every IDLE_NS without a take halves it, so
 * within ~2 s of a burst an idle process holds no populated spare memory (what it pooled is
 * unmapped after the decay) and its background thread sleeps without a timeout.
 *
 * Concurrency. The owner thread's increments of a page's count happen before it publishes a new
 * `top` (release); the sweeper reads `top` (acquire) and only pages below it with a zero count, and
 * holds the global mutex, which a dead chunk's return to the pool and every reuse also take — so a
 * page is never returned while an object can be written to it. The thread-local current chunk is
 * retired (its +1 dropped) when the thread exits (a pthread key's destructor). fork(): the mutex is
 * taken around it; the child restarts the background thread lazily.
 *
 * Off in sanitizer builds by default (LeakSanitizer sees malloc'd blocks, not objects inside the
 * arena; the slab's own tests switch it on, with AddressSanitizer poisoning of free space) and with
 * KCACHE_OBJ_ARENA=0 in the environment.
 */
#include "core/slab.h"
#include "core/internal.h"
#include "core/populate.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SLAB_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||                         \
    __has_feature(memory_sanitizer)
#define SLAB_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define SLAB_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SLAB_ASAN 1
#endif
#endif
#ifdef SLAB_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n)   ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n)   ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define CHUNK      ((size_t)2 << 20)
#define PAGE       ((size_t)4096)
#define NPAGES     (CHUNK / PAGE)
#define DECAY_NS   KC__NS_PER_SEC
#define IDLE_NS    (KC__NS_PER_SEC / 4) /* no take for this long: the target halves */
#define TARGET_MAX ((size_t)32)

typedef struct chunk {
    _Atomic uint32_t live;          /* objects in it, + 1 while a thread allocates from it */
    _Atomic uint32_t top;           /* pages below it: no allocation ever again (until reuse) */
    _Atomic uint64_t dirty_ns;      /* 0, or when a page first fell to zero objects since a sweep */
    struct chunk *prev, *next;      /* in-use list or pool (mu) */
    uint64_t pooled_ns;             /* when it entered the pool (mu) */
    uint64_t swept[NPAGES / 64];    /* pages already returned to the kernel (mu) */
    bool huge;                      /* advised MADV_HUGEPAGE, not yet MADV_NOHUGEPAGE (mu) */
    _Atomic uint16_t pages[NPAGES]; /* objects touching each page, + 1 on the bump page */
} chunk;

#define HEAD ((sizeof(chunk) + 63) & ~(size_t)63)

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* wakes the background thread */
    chunk *used;       /* chunks holding objects or owned by a thread (doubly linked) */
    chunk *pool;       /* empty chunks, newest first */
    size_t n_used, n_pool, target;
    uint64_t last_take_ns;
    bool daemon, daemon_failed, cv_ready;
    kc__slab_stats st;
} S = {.mu = PTHREAD_MUTEX_INITIALIZER};

static _Atomic int enabled = -1;   /* -1: not decided yet */
static _Atomic uintptr_t map_hint; /* where the next mapping is asked for (chunks contiguous) */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_key_t owner_key;
static bool key_ok;
static __thread chunk *t_cur;
static __thread size_t t_bump;

/* ---- mapping -------------------------------------------------------------------------------- */

static chunk *map_chunk(bool populate)
{
    void *m =
        kc__mem_map_aligned(CHUNK, (void *)atomic_load_explicit(&map_hint, memory_order_relaxed));
    if (!m)
        return NULL;
    atomic_store_explicit(&map_hint, (uintptr_t)m + CHUNK, memory_order_relaxed); /* a hint */
    bool huge = populate && kc__mem_populate_ex(m, CHUNK, true);
    ((chunk *)m)->huge = huge; /* the header's page is populated, or faults in here */
    POISON((char *)m + HEAD, CHUNK - HEAD);
    return m;
}

static void unmap_chunk(chunk *c)
{
    UNPOISON(c, CHUNK); /* the address range may come back from another mmap */
    munmap(c, CHUNK);
}

/* ---- lists (mu held) ------------------------------------------------------------------------ */

static void used_link(chunk *c)
{
    c->prev = NULL;
    c->next = S.used;
    if (S.used)
        S.used->prev = c;
    S.used = c;
    S.n_used++;
}

static void used_unlink(chunk *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else
        S.used = c->next;
    if (c->next)
        c->next->prev = c->prev;
    S.n_used--;
}

static void pool_push(chunk *c, uint64_t now)
{
    c->pooled_ns = now;
    c->prev = NULL;
    c->next = S.pool;
    S.pool = c;
    S.n_pool++;
}

static size_t target_cap(void)
{
    size_t cap = S.n_used / 16;
    return cap < 2 ? 2 : cap > TARGET_MAX ? TARGET_MAX : cap;
}

/* ---- returning pages ------------------------------------------------------------------------ */

/* Return the pages of c below top that hold no object (mu held). */
static void sweep(chunk *c)
{
    KC__ASSERT_HELD(&S.mu);
    atomic_store_explicit(&c->dirty_ns, 0, memory_order_relaxed);
    size_t top = atomic_load_explicit(&c->top, memory_order_acquire);
    size_t run = 0;
    for (size_t p = 1; p <= top; p++) { /* page 0 holds the header; p == top flushes the run */
        if (p < top && !(c->swept[p / 64] >> (p % 64) & 1) &&
            atomic_load_explicit(&c->pages[p], memory_order_acquire) == 0) {
            c->swept[p / 64] |= (uint64_t)1 << (p % 64);
            run++;
        } else if (run) {
            if (c->huge) { /* khugepaged would collapse the chunk back into 2 MiB of RSS */
                madvise(c, CHUNK, MADV_NOHUGEPAGE);
                c->huge = false;
            }
            madvise((char *)c + (p - run) * PAGE, run * PAGE, MADV_DONTNEED);
            S.st.pages_released += run;
            run = 0;
        }
    }
}

/* A page of c fell to no object: the background thread returns it after the decay. The first
 * such page since the last sweep wakes the thread, which may be asleep without a deadline. */
static void mark_dirty(chunk *c)
{
    uint64_t zero = 0;
    if (atomic_load_explicit(&c->dirty_ns, memory_order_relaxed) != 0 ||
        !atomic_compare_exchange_strong_explicit(&c->dirty_ns, &zero, kc__now_ns() | 1,
                                                 memory_order_relaxed, memory_order_relaxed))
        return;
    pthread_mutex_lock(&S.mu);
    if (S.cv_ready)
        pthread_cond_signal(&S.cv);
    pthread_mutex_unlock(&S.mu);
}

/* The last object of c is gone (and no thread allocates from it): into the pool. */
static void chunk_dead(chunk *c)
{
    pthread_mutex_lock(&S.mu);
    used_unlink(c);
    pool_push(c, kc__now_ns());
    if (S.cv_ready && S.n_pool > S.target)
        pthread_cond_signal(&S.cv); /* schedule its decay */
    pthread_mutex_unlock(&S.mu);
}

static void page_unref(chunk *c, size_t p)
{
    if (atomic_fetch_sub_explicit(&c->pages[p], 1, memory_order_release) == 1)
        mark_dirty(c);
}

/* Drop the owner's +1s: the bump page's and the chunk's. The pages after the bump pointer were
 * populated and will never hold an object: the sweep returns them after the decay. */
static void retire(chunk *c)
{
    size_t top = atomic_load_explicit(&c->top, memory_order_relaxed);
    atomic_store_explicit(&c->top, (uint32_t)NPAGES, memory_order_release);
    if (top + 1 < NPAGES)
        mark_dirty(c);
    if (top < NPAGES)
        page_unref(c, top);
    if (atomic_fetch_sub_explicit(&c->live, 1, memory_order_acq_rel) == 1)
        chunk_dead(c);
}

/* The thread's current chunk, if any, stops being allocated from. */
void kc__slab_release_thread(void)
{
    chunk *c = t_cur;
    if (!c)
        return;
    t_cur = NULL;
    if (key_ok)
        pthread_setspecific(owner_key, NULL);
    retire(c);
}

/* pthread key destructor: the value is the exiting thread's current chunk. */
static void owner_exit(void *arg)
{
    t_cur = NULL;
    retire(arg);
}

/* ---- the background thread ------------------------------------------------------------------ */

/* Unmap pooled chunks beyond the target that sat unused for the decay (mu held; drops it around
 * the munmaps). Returns the earliest time another one becomes due, or NEVER. */
static uint64_t decay_pool(uint64_t now)
{
    chunk *drop = NULL, **pp = &S.pool;
    size_t keep = 0;
    uint64_t next = KC__DEADLINE_NEVER;
    while (*pp) {
        chunk *c = *pp;
        if (keep < S.target || c->pooled_ns + DECAY_NS > now) {
            if (keep >= S.target && c->pooled_ns + DECAY_NS < next)
                next = c->pooled_ns + DECAY_NS;
            keep++;
            pp = &c->next;
            continue;
        }
        *pp = c->next;
        S.n_pool--;
        S.st.chunks_unmapped++;
        c->next = drop;
        drop = c;
    }
    if (drop) {
        pthread_mutex_unlock(&S.mu);
        while (drop) {
            chunk *n = drop->next;
            unmap_chunk(drop);
            drop = n;
        }
        pthread_mutex_lock(&S.mu);
    }
    return next;
}

static uint64_t sweep_due(uint64_t now)
{
    uint64_t next = KC__DEADLINE_NEVER;
    for (chunk *c = S.used; c; c = c->next) {
        uint64_t d = atomic_load_explicit(&c->dirty_ns, memory_order_relaxed);
        if (!d)
            continue;
        if (d + DECAY_NS <= now)
            sweep(c);
        else if (d + DECAY_NS < next)
            next = d + DECAY_NS;
    }
    return next;
}

static void *daemon_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&S.mu);
    for (;;) {
        while (S.n_pool < S.target) { /* populate ahead, outside the lock */
            pthread_mutex_unlock(&S.mu);
            chunk *c = map_chunk(true);
            pthread_mutex_lock(&S.mu);
            if (!c) { /* out of memory: stop populating ahead until the next miss */
                S.target = S.n_pool;
                break;
            }
            S.st.chunks_mapped++;
            pool_push(c, kc__now_ns());
        }
        uint64_t now = kc__now_ns(), next = KC__DEADLINE_NEVER;
        if (S.target && now - S.last_take_ns >= IDLE_NS) {
            S.target /= 2;
            S.last_take_ns = now;
        }
        if (S.target)
            next = S.last_take_ns + IDLE_NS;
        uint64_t t = decay_pool(now);
        next = t < next ? t : next;
        t = sweep_due(kc__now_ns());
        next = t < next ? t : next;
        if (S.n_pool < S.target)
            continue;
        kc__cond_wait_until(&S.cv, &S.mu, next);
    }
    return NULL;
}

/* mu held. */
static void daemon_start(void)
{
    if (S.daemon || S.daemon_failed || !S.cv_ready)
        return;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the thread inherits it: no signal runs there */
    pthread_attr_t at;
    pthread_t t;
    int rc = pthread_attr_init(&at);
    if (rc == 0) {
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        rc = pthread_create(&t, &at, daemon_main, NULL);
        pthread_attr_destroy(&at);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0) {
        pthread_setname_np(t, "kc-arena");
        S.daemon = true;
    } else {
        S.daemon_failed = true; /* threads map their own chunks: slower, still correct */
    }
}

/* ---- set-up and fork ------------------------------------------------------------------------ */

static void fork_prepare(void)
{
    pthread_mutex_lock(&S.mu);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&S.mu);
}

static void fork_child(void)
{
    pthread_mutex_init(&S.mu, NULL);
    S.cv_ready = kc__cond_init_monotonic(&S.cv) == 0;
    S.daemon = false; /* not copied by fork: started again on the next take */
}

static void init_once(void)
{
    key_ok = pthread_key_create(&owner_key, owner_exit) == 0;
    S.cv_ready = kc__cond_init_monotonic(&S.cv) == 0;
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    int want = 1;
#ifdef SLAB_SANITIZED
    want = 0;
#endif
    const char *e = getenv("KCACHE_OBJ_ARENA");
    if (e && *e)
        want = !(e[0] == '0' || strcmp(e, "off") == 0 || strcmp(e, "false") == 0);
    int unset = -1;
    atomic_compare_exchange_strong_explicit(&enabled, &unset, want, memory_order_release,
                                            memory_order_relaxed);
}

bool kc__slab_enabled(void)
{
    int e = atomic_load_explicit(&enabled, memory_order_acquire); /* key_ok is set before */
    if (KC__UNLIKELY(e < 0)) {
        pthread_once(&once, init_once);
        e = atomic_load_explicit(&enabled, memory_order_acquire);
    }
    return e > 0 && key_ok;
}

void kc__slab_set_enabled(bool on)
{
    pthread_once(&once, init_once);
    atomic_store_explicit(&enabled, on ? 1 : 0, memory_order_release);
}

/* ---- allocation ----------------------------------------------------------------------------- */

/* An empty chunk ready for one owner allocating from its header on (mu held when it is shared). */
static void chunk_start(chunk *c)
{
    memset(c->swept, 0, sizeof(c->swept));
    atomic_store_explicit(&c->dirty_ns, 0, memory_order_relaxed);
    atomic_store_explicit(&c->live, 1, memory_order_relaxed);
    atomic_store_explicit(&c->top, 0, memory_order_relaxed);
    atomic_store_explicit(&c->pages[0], 1, memory_order_relaxed); /* the bump page's +1 */
}

/* A new current chunk for this thread (the old one retired), or NULL: the pool's newest, else one
 * this thread maps (and the populate-ahead target doubles). */
static chunk *take_chunk(void)
{
    kc__slab_release_thread();
    pthread_mutex_lock(&S.mu);
    daemon_start();
    chunk *c = S.pool;
    if (c) {
        S.pool = c->next;
        S.n_pool--;
        S.st.chunks_reused++;
        chunk_start(c);
        used_link(c);
    } else {
        S.st.misses++;
        size_t cap = target_cap();
        S.target = S.target * 2 > cap ? cap : S.target ? S.target * 2 : 2;
    }
    S.last_take_ns = kc__now_ns();
    if (S.cv_ready && S.n_pool < S.target)
        pthread_cond_signal(&S.cv);
    pthread_mutex_unlock(&S.mu);
    if (!c) {
        if (!(c = map_chunk(true)))
            return NULL;
        chunk_start(c);
        pthread_mutex_lock(&S.mu);
        S.st.chunks_mapped++;
        used_link(c);
        pthread_mutex_unlock(&S.mu);
    }
    t_cur = c;
    t_bump = HEAD;
    pthread_setspecific(owner_key, c);
    return c;
}

void kc__slab_prepare(void)
{
    if (kc__slab_enabled() && !t_cur)
        (void)take_chunk(); /* NULL: no memory; the first allocation tries again */
}

void *kc__slab_alloc(size_t n, size_t *got)
{
    if (!kc__slab_enabled() || n == 0 || n > KC__SLAB_MAX)
        return NULL;
    n = kc__slab_size(n);
    chunk *c = t_cur;
    size_t b = t_bump;
    if (KC__UNLIKELY(!c || b + n > CHUNK)) {
        c = take_chunk();
        if (!c)
            return NULL;
        b = HEAD;
    }
    size_t first = b / PAGE, last = (b + n - 1) / PAGE, end = b + n, nb = end / PAGE;
    for (size_t p = first; p <= last; p++)
        atomic_fetch_add_explicit(&c->pages[p], 1, memory_order_relaxed);
    if (nb != first) { /* the bump pointer leaves its page: move the +1, then publish */
        if (nb < NPAGES)
            atomic_fetch_add_explicit(&c->pages[nb], 1, memory_order_relaxed);
        atomic_fetch_sub_explicit(&c->pages[first], 1, memory_order_relaxed); /* > 0: ours */
        atomic_store_explicit(&c->top, (uint32_t)nb, memory_order_release);
    }
    atomic_fetch_add_explicit(&c->live, 1, memory_order_relaxed);
    t_bump = end;
    *got = n;
    char *p = (char *)c + b;
    UNPOISON(p, n);
    return p;
}

void kc__slab_free(void *p, size_t got)
{
    if (!p)
        return;
    chunk *c = (chunk *)((uintptr_t)p & ~(uintptr_t)(CHUNK - 1));
    size_t off = (size_t)((char *)p - (char *)c);
    KC__DEBUG_ASSERT(off >= HEAD && off + got <= CHUNK);
    POISON(p, got);
    for (size_t q = off / PAGE; q <= (off + got - 1) / PAGE; q++)
        page_unref(c, q);
    if (atomic_fetch_sub_explicit(&c->live, 1, memory_order_acq_rel) == 1)
        chunk_dead(c);
}

/* ---- trim and stats ------------------------------------------------------------------------- */

void kc__slab_trim(void)
{
    pthread_mutex_lock(&S.mu);
    S.target = 0;
    chunk *drop = S.pool;
    S.st.chunks_unmapped += S.n_pool;
    S.pool = NULL;
    S.n_pool = 0;
    for (chunk *c = S.used; c; c = c->next)
        sweep(c);
    pthread_mutex_unlock(&S.mu);
    while (drop) {
        chunk *n = drop->next;
        unmap_chunk(drop);
        drop = n;
    }
}

void kc__slab_stats_get(kc__slab_stats *st)
{
    pthread_mutex_lock(&S.mu);
    *st = S.st;
    st->resident_pages = 0;
    unsigned char vec[NPAGES];
    for (chunk *c = S.used; c; c = c->next)
        if (mincore(c, CHUNK, vec) == 0)
            for (size_t i = 0; i < NPAGES; i++)
                st->resident_pages += vec[i] & 1;
    st->chunks_in_use = S.n_used;
    st->chunks_pooled = S.n_pool;
    st->chunks_target = S.target;
    pthread_mutex_unlock(&S.mu);
}
