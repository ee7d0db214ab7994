/*
 * bench/decode_sink.h — what the decoding benches share (bench_decode.c, bench_floor.c): a sink
 * that keeps every decoded object until the repetition ends, thread CPU time, and medians.
 * Header-only (static functions): each bench .c file is its own program.
 */
#ifndef KC_BENCH_DECODE_SINK_H
#define KC_BENCH_DECODE_SINK_H

#include <kcache/decode.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* CPU time of this thread: on a shared, loaded VM wall time includes time spent descheduled. */
static inline double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

struct stats {
    double med, min, max;
};

/* Sorts v. */
static inline struct stats summarize(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    struct stats s = {n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v[0], v[n - 1]};
    return s;
}

/* Decoded objects, kept (one reference each) until drop_all. */
struct sink {
    kc_obj **objs;
    size_t n, cap;
};

/* kc_list_item_cb: takes the reference. */
static inline int keep(void *ud, kc_obj *obj)
{
    struct sink *s = ud;
    if (s->n == s->cap) {
        kc_obj_unref(obj);
        return KC_ENOMEM;
    }
    s->objs[s->n++] = obj;
    return 0;
}

/* kc_watch_event_cb: every event of these benches carries an object. */
static inline int keep_event(void *ud, const kc_watch_event *ev)
{
    if (!ev->obj)
        return KC_EPARSE;
    return keep(ud, kc_obj_ref(ev->obj));
}

static inline void drop_all(struct sink *s)
{
    for (size_t i = 0; i < s->n; i++)
        kc_obj_unref(s->objs[i]);
    s->n = 0;
}

static inline void die(const char *what, int r, const kc_error *err)
{
    fprintf(stderr, "%s failed: %s (%s)\n", what, kc_errno_name(r),
            err && err->message ? err->message : "");
    exit(1);
}

#endif
