/*
 * watch_convert.c — WATCH events of a custom resource converted through its CRD's conversion
 * webhook (CV7: events whose stored version differs from the watched one; CV6: only those objects
 * are sent, in order, one review per batch).
 *
 * Design: a watch in a version other than the storage version, on a CRD converting by webhook,
 * gets its own converter thread — the watch's own delivery path, as upstream converts in the
 * watch's serving goroutine. The thread owns the hub watcher's wake: it takes the due events,
 * converts them without any server lock, and queues them for the stream; the stream's
 * libmicrohttpd callback (watch.c, on MHD's epoll threads) only takes converted events and never
 * waits. A slow webhook so delays that watch alone: the store publishes into the hub's bounded
 * per-watcher ring as for any watch, and other watches are untouched. Parked streams are resumed
 * by the thread when converted events are ready, when the watcher ends, or at the stream's timer
 * (deadline, bookmark, hang-up check). A conversion failure ends the stream with one ERROR event
 * (500 InternalError and the CV8 message; watch.c). The thread is detached: the end of the stream
 * hands it the watcher and never waits; whichever of the two ends last frees both. It counts as an
 * offloaded request for its whole life, so kc_server_stop waits for its end (a call in flight:
 * bounded at 30 s, CV9).
 */
#include "server/api/api_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define WC_POLL_NS (250 * KC__NS_PER_MS)

struct kc__wconv {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cond;
    kc_server *srv;
    kc__rsrc *r;
    kc__watcher *w; /* borrowed from the stream */
    kc__conv *cv;   /* owned */
    struct MHD_Connection *conn;
    char desired[256];
    kc__hub_event *q; /* converted events, owned */
    size_t n, cap;
    int end;     /* the watcher's end (KC_ESTOPPED, KC_ETOOLARGE) */
    char *error; /* conversion failure message */
    bool stop, woken, parked, exited;
    uint64_t park_until;
};

static void wc_wake(void *ud)
{
    kc__wconv *c = ud;
    pthread_mutex_lock(&c->mu);
    c->woken = true;
    pthread_cond_signal(&c->cond);
    pthread_mutex_unlock(&c->mu);
}

/* A parked stream counts as an offloaded request, so the server's stop waits until this thread
 * resumed it (libmicrohttpd must not stop with suspended connections). */
static void wc_offloaded(kc__wconv *c, int d)
{
    pthread_mutex_lock(&c->srv->off_mu);
    c->srv->offloaded += d;
    pthread_cond_broadcast(&c->srv->off_cond);
    pthread_mutex_unlock(&c->srv->off_mu);
}

/* Under c->mu: resume a parked stream. */
static void wc_resume_locked(kc__wconv *c)
{
    if (c->parked) {
        c->parked = false;
        MHD_resume_connection(c->conn);
        wc_offloaded(c, -1);
    }
}

/* Convert evs[0..n) in place (mu NOT held); 0 or the failure in *err. */
static int wc_convert(kc__wconv *c, kc__hub_event *evs, size_t n, kc__req *fake)
{
    kc_obj **objs = calloc(n ? n : 1, sizeof(*objs));
    if (!objs)
        return kc_error_set(&fake->err, KC_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        objs[i] = kc_obj_ref(evs[i].obj);
    int rc = kc__convert_objs_with(fake, c->r, c->cv, c->desired, objs, n);
    for (size_t i = 0; i < n; i++) {
        if (rc == 0) {
            kc_obj_unref(evs[i].obj);
            evs[i].obj = objs[i];
        } else {
            kc_obj_unref(objs[i]);
        }
    }
    free(objs);
    return rc;
}

/* Under c->mu: queue converted events (on ENOMEM: the stream ends, the client resumes). */
static void wc_queue_locked(kc__wconv *c, kc__hub_event *evs, size_t n)
{
    if (c->n + n > c->cap) {
        size_t cap = (c->n + n) * 2;
        kc__hub_event *q = realloc(c->q, cap * sizeof(*q));
        if (!q) {
            for (size_t i = 0; i < n; i++)
                kc__hub_event_release(&evs[i]);
            c->end = KC_ENOMEM;
            return;
        }
        c->q = q;
        c->cap = cap;
    }
    if (n)
        memcpy(c->q + c->n, evs, n * sizeof(*evs));
    c->n += n;
}

static void wc_wait(kc__wconv *c)
{
    pthread_mutex_lock(&c->mu);
    uint64_t until = kc__now_ns() + WC_POLL_NS;
    if (c->parked && c->park_until < until)
        until = c->park_until;
    while (!c->woken && !c->stop && kc__now_ns() < until)
        kc__cond_wait_until(&c->cond, &c->mu, until);
    c->woken = false;
    if (c->parked && kc__now_ns() >= c->park_until)
        wc_resume_locked(c); /* the stream's own timer */
    pthread_mutex_unlock(&c->mu);
}

/* The converter's memory and the watcher (the last of the thread and the stream frees them). */
static void wc_free(kc__wconv *c)
{
    kc__watcher_free(c->w); /* first: no wake can come after */
    for (size_t i = 0; i < c->n; i++)
        kc__hub_event_release(&c->q[i]);
    free(c->q);
    free(c->error);
    kc__conv_end(c->cv);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cond);
    free(c);
}

/* The thread's end: free all when the stream is gone, then let the server's stop go on. */
static void wc_exit(kc__wconv *c)
{
    kc_server *srv = c->srv;
    pthread_mutex_lock(&c->mu);
    c->exited = true;
    bool gone = c->stop;
    pthread_mutex_unlock(&c->mu);
    if (gone)
        wc_free(c);
    pthread_mutex_lock(&srv->off_mu);
    srv->offloaded--;
    pthread_cond_broadcast(&srv->off_cond);
    pthread_mutex_unlock(&srv->off_mu);
}

static void *wc_main(void *arg)
{
    kc__wconv *c = arg;
    kc__req fake = {.srv = c->srv};
    kc__hub_event evs[64];
    for (;;) {
        pthread_mutex_lock(&c->mu);
        bool stop = c->stop || c->end || c->error;
        pthread_mutex_unlock(&c->mu);
        if (stop)
            break;
        size_t n = 0;
        int rc = kc__watcher_take(c->w, evs, KC__ARRAY_LEN(evs), &n);
        int crc = n ? wc_convert(c, evs, n, &fake) : 0;
        pthread_mutex_lock(&c->mu);
        if (crc) {
            for (size_t i = 0; i < n; i++)
                kc__hub_event_release(&evs[i]);
            c->error = strdup(fake.err.message && *fake.err.message ? fake.err.message
                                                                    : "conversion failed");
            if (!c->error)
                c->end = KC_ENOMEM;
        } else if (n) {
            wc_queue_locked(c, evs, n);
        }
        if (rc && !c->end)
            c->end = rc;
        if (n || c->end || c->error)
            wc_resume_locked(c);
        uint64_t wake_at = c->parked ? c->park_until : KC__DEADLINE_NEVER;
        pthread_mutex_unlock(&c->mu);
        kc_error_clear(&fake.err);
        if (n || rc)
            continue;
        int arc = kc__watcher_arm(c->w, wake_at);
        if (arc == 1)
            continue;
        if (arc != 0) {
            pthread_mutex_lock(&c->mu);
            c->end = arc;
            wc_resume_locked(c);
            pthread_mutex_unlock(&c->mu);
            break;
        }
        wc_wait(c);
    }
    wc_exit(c);
    return NULL;
}

int kc__wconv_start(kc_server *srv, kc__rsrc *r, const char *version, kc__watcher *w,
                    struct MHD_Connection *conn, kc__conv *cv, kc__wconv **ret)
{
    kc__wconv *c = calloc(1, sizeof(*c));
    if (!c)
        return KC_ENOMEM;
    c->srv = srv;
    c->r = r;
    c->w = w;
    c->cv = cv;
    c->conn = conn;
    kc__rsrc_api_version(r, version, c->desired, sizeof(c->desired));
    pthread_mutex_init(&c->mu, NULL);
    if (kc__cond_init_monotonic(&c->cond) != 0) {
        pthread_mutex_destroy(&c->mu);
        free(c);
        return KC_ENOMEM;
    }
    kc__watcher_set_wake(w, wc_wake, c);
    wc_offloaded(c, 1); /* the thread's whole life: kc_server_stop waits for its end */
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&c->th, &a, wc_main, c);
    pthread_attr_destroy(&a);
    if (rc != 0) {
        wc_offloaded(c, -1);
        kc__watcher_set_wake(w, NULL, NULL);
        pthread_mutex_destroy(&c->mu);
        pthread_cond_destroy(&c->cond);
        free(c);
        return KC_ENOMEM;
    }
    *ret = c;
    return 0;
}

int kc__wconv_take(kc__wconv *c, kc__hub_event *evs, size_t max, size_t *ret_n, char **error)
{
    pthread_mutex_lock(&c->mu);
    size_t n = c->n < max ? c->n : max;
    if (n) { /* c->q may be NULL while nothing was queued */
        memcpy(evs, c->q, n * sizeof(*evs));
        memmove(c->q, c->q + n, (c->n - n) * sizeof(*evs));
        c->n -= n;
    }
    *ret_n = n;
    int rc = 0;
    if (!c->n && c->error) {
        *error = c->error;
        c->error = NULL;
        rc = KC_EIO;
    } else if (!c->n && c->end) {
        rc = c->end;
    }
    pthread_mutex_unlock(&c->mu);
    return n ? 0 : rc;
}

int kc__wconv_park(kc__wconv *c, uint64_t wake_at_ns)
{
    pthread_mutex_lock(&c->mu);
    int rc = c->n || c->end || c->error || kc__now_ns() >= wake_at_ns ? 1 : 0;
    if (!rc) {
        wc_offloaded(c, 1);
        c->parked = true;
        c->park_until = wake_at_ns;
        c->woken = true; /* the thread re-arms with the stream's timer */
        pthread_cond_signal(&c->cond);
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

void kc__wconv_stop(kc__wconv *c, kc__watcher *w)
{
    if (!c) {
        kc__watcher_free(w);
        return;
    }
    pthread_mutex_lock(&c->mu);
    c->stop = true;
    c->w = w;      /* the watcher goes with the converter */
    if (c->parked) /* the stream is going away: never resumed again */
        wc_offloaded(c, -1);
    c->parked = false;
    bool exited = c->exited;
    pthread_cond_signal(&c->cond);
    pthread_mutex_unlock(&c->mu);
    if (exited) /* else the thread frees all at its end: never wait for a call in flight */
        wc_free(c);
}
