/* test_core_slab.c — the object arena (src/core/slab.c): sizes, alignment and no overlap; a chunk
 * goes back to the pool when its last object and its owner are gone, and is reused before anything
 * new is mapped; pages of a live chunk that no object touches are returned (mincore says so) by
 * kc__slab_trim and, without it, by the background thread after the decay, while live objects keep
 * their bytes; kc__slab_prepare takes a thread's chunk before its first allocation; a thread's
 * chunk is retired when the thread exits; objects cross threads (TSan);
 * fork() leaves a usable arena in the child; AddressSanitizer sees freed space as poisoned; on
 * transparent huge pages, freed pages are returned alike and a swept chunk is MADV_NOHUGEPAGE. */
#include "core/internal.h"
#include "core/populate.h"
#include "core/slab.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#if defined(__SANITIZE_ADDRESS__)
#define HAVE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HAVE_ASAN 1
#endif
#endif
#ifdef HAVE_ASAN
#include <sanitizer/asan_interface.h>
#endif
#if defined(__SANITIZE_THREAD__)
#define HAVE_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HAVE_TSAN 1
#endif
#endif

#define CHUNK ((size_t)2 << 20)
#define PAGE  ((size_t)4096)

typedef struct blk {
    unsigned char *p;
    size_t n, got;
} blk;

static void fill(blk *b, unsigned seed)
{
    for (size_t i = 0; i < b->n; i++)
        b->p[i] = (unsigned char)(seed * 131u + i * 7u);
}

static bool intact(const blk *b, unsigned seed)
{
    for (size_t i = 0; i < b->n; i++)
        if (b->p[i] != (unsigned char)(seed * 131u + i * 7u))
            return false;
    return true;
}

static kc__slab_stats stats(void)
{
    kc__slab_stats s;
    kc__slab_stats_get(&s);
    return s;
}

static bool resident(const void *p)
{
    unsigned char v = 0;
    void *page = (void *)((uintptr_t)p & ~(uintptr_t)(PAGE - 1));
    assert_int_equal(mincore(page, PAGE, &v), 0);
    return v & 1;
}

static int setup(void **state)
{
    (void)state;
    kc__slab_set_enabled(true);
    kc__slab_release_thread();
    kc__slab_trim();
    return 0;
}

static void test_core_slab_sizes_alignment_no_overlap(void **state)
{
    (void)state;
    enum { N = 3000 };
    blk *v = calloc(N, sizeof(*v));
    assert_non_null(v);
    kc__slab_stats s0 = stats();
    for (unsigned i = 0; i < N; i++) {
        v[i].n = 1 + (i * 2654435761u) % 9000;
        v[i].p = kc__slab_alloc(v[i].n, &v[i].got);
        assert_non_null(v[i].p);
        assert_int_equal((uintptr_t)v[i].p % KC__SLAB_GRAIN, 0);
        assert_true(v[i].got >= v[i].n && v[i].got < v[i].n + KC__SLAB_GRAIN);
        assert_int_equal(v[i].got % KC__SLAB_GRAIN, 0);
        /* never across a chunk's end */
        assert_true((uintptr_t)v[i].p / CHUNK == ((uintptr_t)v[i].p + v[i].got - 1) / CHUNK);
        fill(&v[i], i);
    }
    for (unsigned i = 0; i < N; i++)
        assert_true(intact(&v[i], i)); /* nothing written over another block */
    kc__slab_stats s1 = stats();
    assert_true(s1.chunks_in_use > s0.chunks_in_use); /* ~13 MB: several chunks */
    for (unsigned i = 0; i < N; i++)
        kc__slab_free(v[i].p, v[i].got);
    /* every chunk but the thread's current one is empty: pooled */
    assert_true(stats().chunks_in_use <= s0.chunks_in_use + 1);
    kc__slab_release_thread();
    assert_int_equal(stats().chunks_in_use, s0.chunks_in_use);
    free(v);
}

static void test_core_slab_refuses_what_it_does_not_serve(void **state)
{
    (void)state;
    size_t got = 0;
    assert_null(kc__slab_alloc(0, &got));
    assert_null(kc__slab_alloc(KC__SLAB_MAX + 1, &got));
    void *p = kc__slab_alloc(KC__SLAB_MAX, &got);
    assert_non_null(p);
    assert_int_equal(got, KC__SLAB_MAX);
    kc__slab_free(p, got);
    kc__slab_set_enabled(false);
    assert_false(kc__slab_enabled());
    assert_null(kc__slab_alloc(100, &got));
    kc__slab_set_enabled(true);
    assert_true(kc__slab_enabled());
    kc__slab_release_thread();
}

static void test_core_slab_empty_chunks_are_reused_first(void **state)
{
    (void)state;
    enum { N = 1200 }; /* 1200 × 3 KiB: two chunks */
    static blk v[N];
    for (int round = 0; round < 3; round++) {
        kc__slab_stats before = stats();
        for (unsigned i = 0; i < N; i++) {
            v[i].n = 3072;
            v[i].p = kc__slab_alloc(v[i].n, &v[i].got);
            assert_non_null(v[i].p);
        }
        for (unsigned i = 0; i < N; i++)
            kc__slab_free(v[i].p, v[i].got);
        kc__slab_release_thread();
        kc__slab_stats after = stats();
        assert_int_equal(after.chunks_in_use, before.chunks_in_use);
        if (round > 0) /* the pool held the previous round's chunks: no thread had to map one */
            assert_int_equal(after.misses, before.misses);
        assert_true(after.chunks_reused > before.chunks_reused || round == 0);
    }
}

/* Objects of three pages: freeing one leaves its middle page (at least) touched by nothing. */
static void check_pages_returned(bool trim)
{
    enum { N = 400 };
    static blk v[N];
    for (unsigned i = 0; i < N; i++) {
        v[i].n = 3 * PAGE;
        v[i].p = kc__slab_alloc(v[i].n, &v[i].got);
        assert_non_null(v[i].p);
        fill(&v[i], i);
    }
    kc__slab_release_thread(); /* the last chunk's tail is free too */
    if (!trim) { /* let the background thread fall asleep with nothing to do — no take for a
                  * while: target 0, the pool unmapped, the tail swept — so that the freed pages
                  * below must wake it */
        uint64_t start = kc__now_ns();
        for (;;) {
            kc__slab_stats s = stats();
            uint64_t t = kc__now_ns() - start;
            if ((!s.chunks_target && !s.chunks_pooled && t > 3 * KC__NS_PER_SEC) ||
                t > 20 * KC__NS_PER_SEC)
                break;
            kc__sleep_ns(10 * KC__NS_PER_MS);
        }
        assert_int_equal(stats().chunks_target, 0);
    }
    kc__slab_stats before = stats();
    for (unsigned i = 0; i < N; i += 2)
        kc__slab_free(v[i].p, v[i].got);
    if (trim) {
        kc__slab_trim();
    } else { /* the background thread returns them after the decay (1 s) */
        uint64_t deadline = kc__now_ns() + 20 * KC__NS_PER_SEC;
        while (stats().pages_released < before.pages_released + N / 2 && kc__now_ns() < deadline)
            kc__sleep_ns(10 * KC__NS_PER_MS);
    }
    kc__slab_stats after = stats();
    assert_true(after.pages_released >= before.pages_released + N / 2);
    assert_true(after.resident_pages < before.resident_pages);
    for (unsigned i = 0; i < N; i++) {
        unsigned char *mid = v[i].p + v[i].n / 2; /* in a page no other object touches */
        if (i % 2 == 0) {
            assert_false(resident(mid));
        } else {
            assert_true(intact(&v[i], i)); /* a live neighbour keeps every byte */
            assert_true(resident(mid));
        }
    }
    for (unsigned i = 1; i < N; i += 2)
        kc__slab_free(v[i].p, v[i].got);
}

static void test_core_slab_trim_returns_free_pages(void **state)
{
    (void)state;
    check_pages_returned(true);
}

static void test_core_slab_decay_returns_free_pages(void **state)
{
    (void)state;
    check_pages_returned(false);
}

/* True when the mapping holding p has the VmFlag flag ("hg", "nh") in /proc/self/smaps. */
static bool vm_flag(const void *p, const char *flag)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    assert_non_null(f);
    char line[512], want[8];
    snprintf(want, sizeof want, " %s", flag);
    bool in = false, found = false;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
            in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
        else if (in && strncmp(line, "VmFlags:", 8) == 0)
            found = strstr(line + 8, want) != NULL;
    }
    fclose(f);
    return found;
}

/* Skip without THP in madvise or always mode; else empty the pool, so that the chunks a test maps
 * next are mapped then, and force them onto huge pages (the test sets -1 back). */
static void huge_chunks_or_skip(void)
{
    kc__mem_huge_stats hs;
    kc__mem_huge_stats_get(&hs);
    if (!hs.available)
        skip();
    kc__slab_trim();
    kc__mem_huge_set(1);
}

/* On transparent huge pages (forced on, when the kernel has THP in madvise or always mode): the
 * freed pages are still returned one by one, and a chunk with returned pages is marked
 * MADV_NOHUGEPAGE, so that khugepaged cannot collapse it back into a whole resident 2 MiB. */
static void test_core_slab_huge_chunks_return_pages(void **state)
{
    (void)state;
    huge_chunks_or_skip();
    size_t got = 0;
    unsigned char *probe = kc__slab_alloc(64, &got);
    assert_non_null(probe);
    assert_true(vm_flag(probe, "hg"));
    kc__slab_free(probe, got);
    check_pages_returned(true);
    kc__mem_huge_set(-1);
    unsigned char *again = kc__slab_alloc(64, &got); /* the current chunk: swept above */
    assert_non_null(again);
    kc__slab_free(again, got);
    kc__slab_release_thread();
    kc__slab_trim();
}

static void test_core_slab_swept_chunk_is_nohugepage(void **state)
{
    (void)state;
    huge_chunks_or_skip();
    enum { N = 100 };
    blk v[N];
    for (unsigned i = 0; i < N; i++) {
        v[i].n = 3 * PAGE;
        v[i].p = kc__slab_alloc(v[i].n, &v[i].got);
        assert_non_null(v[i].p);
    }
    kc__mem_huge_set(-1);
    assert_true(vm_flag(v[0].p, "hg"));
    assert_false(vm_flag(v[0].p, "nh"));
    kc__slab_free(v[0].p, v[0].got); /* its middle page touches nothing else */
    kc__slab_trim();
    assert_true(vm_flag(v[1].p, "nh"));
    assert_false(vm_flag(v[1].p, "hg"));
    assert_false(resident(v[0].p + v[0].n / 2));
    for (unsigned i = 1; i < N; i++)
        kc__slab_free(v[i].p, v[i].got);
    kc__slab_release_thread();
}

/* kc__slab_prepare takes the thread's chunk ahead of its first allocation, which then needs no
 * other; a second prepare with a current chunk takes nothing; the chunk is retired as usual. */
static void test_core_slab_prepare_takes_the_chunk_first(void **state)
{
    (void)state;
    kc__slab_stats s0 = stats();
    kc__slab_prepare();
    kc__slab_stats s1 = stats();
    assert_int_equal(s1.chunks_in_use, s0.chunks_in_use + 1);
    kc__slab_prepare();
    assert_int_equal(stats().chunks_in_use, s1.chunks_in_use);
    blk b = {.n = 1000};
    b.p = kc__slab_alloc(b.n, &b.got);
    assert_non_null(b.p);
    kc__slab_stats s2 = stats();
    assert_int_equal(s2.chunks_in_use, s1.chunks_in_use); /* it went into the prepared chunk */
    assert_int_equal(s2.chunks_mapped + s2.chunks_reused, s1.chunks_mapped + s1.chunks_reused);
    kc__slab_free(b.p, b.got);
    kc__slab_release_thread();
    assert_int_equal(stats().chunks_in_use, s0.chunks_in_use);
    kc__slab_set_enabled(false); /* off: prepare takes nothing */
    kc__slab_prepare();
    assert_int_equal(stats().chunks_in_use, s0.chunks_in_use);
    kc__slab_set_enabled(true);
}

static void *alloc_and_exit(void *arg)
{
    blk *v = arg;
    for (unsigned i = 0; i < 100; i++) {
        v[i].n = 1000;
        v[i].p = kc__slab_alloc(v[i].n, &v[i].got);
        if (v[i].p)
            fill(&v[i], i);
    }
    return NULL; /* no kc__slab_release_thread: the thread's exit retires its chunk */
}

static void test_core_slab_thread_exit_retires_its_chunk(void **state)
{
    (void)state;
    static blk v[100];
    kc__slab_stats before = stats();
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, alloc_and_exit, v), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(stats().chunks_in_use, before.chunks_in_use + 1); /* its objects live */
    for (unsigned i = 0; i < 100; i++) {
        assert_non_null(v[i].p);
        assert_true(intact(&v[i], i));
        kc__slab_free(v[i].p, v[i].got);
    }
    /* the last free ends the chunk: the owner's reference went with the thread */
    assert_int_equal(stats().chunks_in_use, before.chunks_in_use);
}

/* Producers allocate and hand blocks to consumers on other threads, which check and free them. */
enum { RING = 256, PER_PRODUCER = 20000, PRODUCERS = 2 };
typedef struct ring {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    blk b[RING];
    unsigned seed[RING];
    size_t head, tail;
    int producers_left;
    size_t bad, freed;
} ring;

static void *producer(void *arg)
{
    ring *r = arg;
    for (unsigned i = 0; i < PER_PRODUCER; i++) {
        blk b = {.n = 16 + (i * 40503u) % 6000};
        b.p = kc__slab_alloc(b.n, &b.got);
        if (!b.p)
            abort();
        fill(&b, i);
        pthread_mutex_lock(&r->mu);
        while (r->head - r->tail == RING)
            pthread_cond_wait(&r->cv, &r->mu);
        r->b[r->head % RING] = b;
        r->seed[r->head % RING] = i;
        r->head++;
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
    }
    pthread_mutex_lock(&r->mu);
    r->producers_left--;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

static void *consumer(void *arg)
{
    ring *r = arg;
    pthread_mutex_lock(&r->mu);
    for (;;) {
        while (r->head == r->tail && r->producers_left > 0)
            pthread_cond_wait(&r->cv, &r->mu);
        if (r->head == r->tail)
            break;
        blk b = r->b[r->tail % RING];
        unsigned seed = r->seed[r->tail % RING];
        r->tail++;
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
        bool ok = intact(&b, seed);
        kc__slab_free(b.p, b.got);
        pthread_mutex_lock(&r->mu);
        r->bad += !ok;
        r->freed++;
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

static void test_core_slab_objects_cross_threads(void **state)
{
    (void)state;
    static ring r;
    pthread_mutex_init(&r.mu, NULL);
    pthread_cond_init(&r.cv, NULL);
    r.producers_left = PRODUCERS;
    kc__slab_stats before = stats();
    pthread_t t[PRODUCERS + 2];
    for (int i = 0; i < PRODUCERS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, producer, &r), 0);
    for (int i = PRODUCERS; i < PRODUCERS + 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, consumer, &r), 0);
    for (int i = 0; i < PRODUCERS + 2; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    assert_int_equal(r.freed, (size_t)PRODUCERS * PER_PRODUCER);
    assert_int_equal(r.bad, 0);
    assert_int_equal(stats().chunks_in_use, before.chunks_in_use); /* all chunks ended */
    pthread_cond_destroy(&r.cv);
    pthread_mutex_destroy(&r.mu);
}

static void test_core_slab_fork_child_allocates(void **state)
{
    (void)state;
#ifdef HAVE_TSAN
    skip(); /* TSan does not support starting threads in the child of a multi-threaded fork */
#endif
    blk b = {.n = 5000};
    b.p = kc__slab_alloc(b.n, &b.got);
    assert_non_null(b.p);
    fill(&b, 7);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) { /* the child: its copy of the arena works, new chunks included */
        int bad = !intact(&b, 7);
        for (unsigned i = 0; i < 2000 && !bad; i++) {
            blk c = {.n = 4000};
            c.p = kc__slab_alloc(c.n, &c.got);
            if (!c.p)
                _exit(2);
            fill(&c, i);
            bad = !intact(&c, i);
            kc__slab_free(c.p, c.got);
        }
        kc__slab_free(b.p, b.got);
        kc__slab_release_thread();
        kc__slab_trim();
        _exit(bad ? 3 : 0);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_true(intact(&b, 7));
    kc__slab_free(b.p, b.got);
    kc__slab_release_thread();
}

static void test_core_slab_freed_space_is_poisoned(void **state)
{
    (void)state;
#ifdef HAVE_ASAN
    size_t got = 0;
    char *p = kc__slab_alloc(100, &got);
    assert_non_null(p);
    assert_false(__asan_address_is_poisoned(p));
    assert_true(__asan_address_is_poisoned(p + got)); /* past the end: not handed out */
    kc__slab_free(p, got);
    assert_true(__asan_address_is_poisoned(p));
    kc__slab_release_thread();
#else
    skip();
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_core_slab_sizes_alignment_no_overlap, setup),
        cmocka_unit_test_setup(test_core_slab_refuses_what_it_does_not_serve, setup),
        cmocka_unit_test_setup(test_core_slab_empty_chunks_are_reused_first, setup),
        cmocka_unit_test_setup(test_core_slab_trim_returns_free_pages, setup),
        cmocka_unit_test_setup(test_core_slab_decay_returns_free_pages, setup),
        cmocka_unit_test_setup(test_core_slab_huge_chunks_return_pages, setup),
        cmocka_unit_test_setup(test_core_slab_swept_chunk_is_nohugepage, setup),
        cmocka_unit_test_setup(test_core_slab_prepare_takes_the_chunk_first, setup),
        cmocka_unit_test_setup(test_core_slab_thread_exit_retires_its_chunk, setup),
        cmocka_unit_test_setup(test_core_slab_objects_cross_threads, setup),
        cmocka_unit_test_setup(test_core_slab_fork_child_allocates, setup),
        cmocka_unit_test_setup(test_core_slab_freed_space_is_poisoned, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
