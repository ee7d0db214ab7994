/*
 * test_leader_fixture.h — shared set-up of the leader-election tests: electors with short timings
 * (LD 600 ms, RD 400 ms, RP 100 ms; leaseDurationSeconds is then 1) over the embedded API server,
 * and a recorder of their callbacks (L8) that a test waits on with a deadline — never a sleep.
 * Header-only (static functions) so each test binary stands alone.
 */
#ifndef KC_TEST_LEADER_FIXTURE_H
#define KC_TEST_LEADER_FIXTURE_H

#include "test_informer_fixture.h"

#include "kcache/leader.h"

#include <pthread.h>

#define LFX_LD 600
#define LFX_RD 400
#define LFX_RP 100

static const kc_gvr lfx_leases = {"coordination.k8s.io", "v1", "leases"};

/* Callbacks of one elector, in order: "new:<id>", "started", "stopped". */
typedef struct lrec {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    char ev[64][96];
    size_t n;
    unsigned started, stopped, news;
    uint64_t t_started, t_stopped; /* CLOCK_MONOTONIC of the last of each */
    bool leader_in_started;        /* is_leader was true inside on_started_leading */
} lrec;

static inline void lrec_init(lrec *r)
{
    memset(r, 0, sizeof(*r));
    pthread_mutex_init(&r->mu, NULL);
    kc__cond_init_monotonic(&r->cv);
}

static inline void lrec_destroy(lrec *r)
{
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
}

static inline void lrec_push(lrec *r, const char *what, const char *id)
{
    pthread_mutex_lock(&r->mu);
    if (r->n < 64)
        snprintf(r->ev[r->n++], 96, "%s%s", what, id ? id : "");
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

static void lrec_started(void *ud, kc_leader_elector *el)
{
    lrec *r = ud;
    bool lead = kc_leader_elector_is_leader(el);
    pthread_mutex_lock(&r->mu);
    r->started++;
    r->t_started = kc__now_ns();
    r->leader_in_started = lead;
    pthread_mutex_unlock(&r->mu);
    lrec_push(r, "started", NULL);
}

static void lrec_stopped(void *ud, kc_leader_elector *el)
{
    (void)el;
    lrec *r = ud;
    pthread_mutex_lock(&r->mu);
    r->stopped++;
    r->t_stopped = kc__now_ns();
    pthread_mutex_unlock(&r->mu);
    lrec_push(r, "stopped", NULL);
}

static void lrec_new(void *ud, kc_leader_elector *el, const char *id)
{
    (void)el;
    lrec *r = ud;
    pthread_mutex_lock(&r->mu);
    r->news++;
    pthread_mutex_unlock(&r->mu);
    lrec_push(r, "new:", id);
}

/* How many times r's elector started leading (read under the lock). */
static inline unsigned lrec_started_count(lrec *r)
{
    pthread_mutex_lock(&r->mu);
    unsigned n = r->started;
    pthread_mutex_unlock(&r->mu);
    return n;
}

/* A field of r read under its lock. */
#define LREC_GET(r, field)                                                                         \
    ({                                                                                             \
        pthread_mutex_lock(&(r)->mu);                                                              \
        unsigned lrec_v_ = (r)->field;                                                             \
        pthread_mutex_unlock(&(r)->mu);                                                            \
        lrec_v_;                                                                                   \
    })

/* Wait until *field >= n (a field of r read under r->mu). */
#define LREC_WAIT(r, field, n, timeout_ms)                                                         \
    ({                                                                                             \
        uint64_t lrec_dl_ = kc__deadline_after_ms(timeout_ms);                                     \
        pthread_mutex_lock(&(r)->mu);                                                              \
        while ((r)->field < (n) && kc__cond_wait_until(&(r)->cv, &(r)->mu, lrec_dl_) == 0) {       \
        }                                                                                          \
        bool lrec_ok_ = (r)->field >= (n);                                                         \
        pthread_mutex_unlock(&(r)->mu);                                                            \
        lrec_ok_;                                                                                  \
    })

static inline kc_leader_elector_opts lfx_opts(const char *lease, const char *id, lrec *r)
{
    kc_leader_elector_opts o = {0};
    o.ns = "default";
    o.name = lease;
    o.identity = id;
    o.lease_duration_ms = LFX_LD;
    o.renew_deadline_ms = LFX_RD;
    o.retry_period_ms = LFX_RP;
    o.on_started_leading = lrec_started;
    o.on_stopped_leading = lrec_stopped;
    o.on_new_leader = lrec_new;
    o.ud = r;
    return o;
}

static inline kc_leader_elector *lfx_new(ifx *f, const kc_leader_elector_opts *o)
{
    kc_leader_elector *el = NULL;
    kc_error e = KC_ERROR_INIT;
    KC_TEST_RC(kc_leader_elector_new(f->client, o, &el, &e), 0, &e);
    return el;
}

static inline void lfx_start(kc_leader_elector *el)
{
    kc_error e = KC_ERROR_INIT;
    KC_TEST_RC(kc_leader_elector_start(el, &e), 0, &e);
}

/* The Lease's spec field at ptr as a string (NULL when absent). */
static inline char *lfx_lease_str(ifx *f, const char *lease, const char *ptr)
{
    kc_obj *o = NULL;
    if (kc_client_get(f->client, &lfx_leases, "default", lease, &o, NULL) < 0)
        return NULL;
    char *s = NULL;
    if (kc_obj_get_string(o, ptr, &s, NULL, NULL) < 0)
        s = NULL;
    kc_obj_unref(o);
    return s;
}

/* Bounded wait for a condition no callback reports (a field on the server, a fence passing). */
#define LFX_WAIT(cond, timeout_ms)                                                                 \
    ({                                                                                             \
        uint64_t lfx_dl_ = kc__deadline_after_ms(timeout_ms);                                      \
        while (!(cond) && kc__now_ns() < lfx_dl_)                                                  \
            kc__sleep_ns(2 *                                                                       \
                         KC__NS_PER_MS); /* bounded poll of a condition, not a sleep-for-sync */   \
        (cond);                                                                                    \
    })

#endif
