/*
 * bench/server_load.h — the watch fan-out load of bench_server (part 3), header-only (static;
 * each bench .c file is its own program): watchers and writers, each set driven by one thread with
 * one libcurl multi handle.
 *
 *   watch_loop(fanout *)   runs every watch stream of f->ws (easy handles already added to
 *                          f->wm by the caller); each event line is checked (type ADDED,
 *                          resourceVersion strictly increasing) and folded into an
 *                          order-sensitive hash; a watcher is done once it has f->target events.
 *                          Returns when every transfer ended (the caller stops the server).
 *   write_loop(fanout *)   POSTs f->total ConfigMaps to LOAD_NS on WRITE_CONNS keep-alive
 *                          connections, write i due at f->start_ns + i / f->rate, recording the
 *                          RV of each 201 reply (f->rvs), each round trip (f->lat_us) and the
 *                          acknowledged count (f->acked).
 * Each loop stores its thread's CPU seconds in f->watch_cpu_s / f->write_cpu_s. The curl write
 * and header callbacks reach the run through g_fan, which the caller sets before starting.
 */
#ifndef KC_BENCH_SERVER_LOAD_H
#define KC_BENCH_SERVER_LOAD_H

#include <curl/curl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/internal.h"

#define LOAD_NS     "bench-watch" /* the namespace written and watched */
#define WRITE_CONNS 8             /* keep-alive writer connections */

typedef struct watcher {
    CURL *easy;
    char url[512];
    char line[4096]; /* partial line carried between callbacks */
    size_t line_len;
    atomic_ulong events;
    uint64_t last_rv, fold, done_ns;
    unsigned long bad; /* events out of order or of another type */
    bool ended, connected;
} watcher;

typedef struct fanout {
    watcher *ws;
    int nwatch;
    atomic_int connected, finished;
    atomic_ulong target; /* events each watcher must get (ULONG_MAX until the writes are done) */
    atomic_bool stop;    /* server stopped: watch loop may end */
    CURLM *wm;
    /* writers */
    double rate;
    unsigned long total;
    atomic_ulong acked, ok;
    uint64_t *rvs;        /* RV of each successful write (from its 201 reply) */
    const char *base_url; /* the server, e.g. http://127.0.0.1:PORT */
    uint64_t start_ns, end_ns;
    double *lat_us; /* per-write round trip */
    unsigned long new_conns;
    double watch_cpu_s, write_cpu_s;
} fanout;

/* CPU seconds of the calling thread (CLOCK_THREAD_CPUTIME_ID) or process. */
static double cpu_clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The object's resourceVersion: the first one in the line (metadata comes before data). */
static uint64_t line_rv(const char *p, size_t len)
{
    static const char key[] = "\"resourceVersion\":\"";
    const char *q = memmem(p, len, key, sizeof key - 1);
    return q ? strtoull(q + sizeof key - 1, NULL, 10) : 0;
}

static void watch_line(fanout *f, watcher *w, const char *p, size_t len)
{
    uint64_t rv = line_rv(p, len);
    if (len < 16 || memcmp(p, "{\"type\":\"ADDED\",", 16) != 0 || rv <= w->last_rv)
        w->bad++;
    w->last_rv = rv;
    w->fold = w->fold * 1000003u + rv;
    unsigned long n = atomic_fetch_add(&w->events, 1) + 1;
    if (!w->done_ns && n >= atomic_load(&f->target)) {
        w->done_ns = kc__now_ns();
        atomic_fetch_add(&f->finished, 1);
    }
}

static fanout *g_fan;

static size_t watch_cb(char *p, size_t sz, size_t n, void *ud)
{
    watcher *w = ud;
    size_t len = sz * n, i = 0;
    while (i < len) {
        char *nl = memchr(p + i, '\n', len - i);
        size_t seg = nl ? (size_t)(nl - (p + i)) : len - i;
        if (w->line_len || !nl) { /* reassemble a line split across callbacks */
            if (w->line_len + seg > sizeof w->line)
                return 0;
            memcpy(w->line + w->line_len, p + i, seg);
            w->line_len += seg;
            if (nl) {
                watch_line(g_fan, w, w->line, w->line_len);
                w->line_len = 0;
            }
        } else {
            watch_line(g_fan, w, p + i, seg);
        }
        i += seg + (nl != NULL);
    }
    return len;
}

/* The server sends the response headers when the watch is registered. */
static size_t watch_header(char *p, size_t sz, size_t n, void *ud)
{
    watcher *w = ud;
    if (!w->connected) {
        w->connected = true;
        atomic_fetch_add(&g_fan->connected, 1);
    }
    return sz * n;
}

/* One thread, one curl multi handle, every watch stream. */
static void *watch_loop(void *arg)
{
    fanout *f = arg;
    double cpu0 = cpu_clock_s(CLOCK_THREAD_CPUTIME_ID);
    int running = 1;
    while (running) {
        curl_multi_perform(f->wm, &running);
        CURLMsg *m;
        int q;
        while ((m = curl_multi_info_read(f->wm, &q)))
            if (m->msg == CURLMSG_DONE)
                for (int i = 0; i < f->nwatch; i++)
                    if (f->ws[i].easy == m->easy_handle && !f->ws[i].ended) {
                        watcher *w = &f->ws[i];
                        w->ended = true;
                        if (!w->connected) {
                            w->connected = true;
                            atomic_fetch_add(&f->connected, 1);
                        }
                        if (!w->done_ns)
                            atomic_fetch_add(&f->finished, 1);
                    }
        if (running)
            curl_multi_poll(f->wm, NULL, 0, 100, NULL);
    }
    f->watch_cpu_s = cpu_clock_s(CLOCK_THREAD_CPUTIME_ID) - cpu0;
    return NULL;
}

typedef struct wreq {
    CURL *easy;
    uint64_t t0;
    char body[256];
    char reply[2048];
    size_t reply_len;
    bool busy;
} wreq;

static size_t reply_cb(char *p, size_t sz, size_t n, void *ud)
{
    wreq *r = ud;
    size_t len = sz * n, c = len;
    if (c > sizeof r->reply - 1 - r->reply_len)
        c = sizeof r->reply - 1 - r->reply_len;
    memcpy(r->reply + r->reply_len, p, c);
    r->reply_len += c;
    return len;
}

/* One thread, one curl multi handle: POST ConfigMaps on WRITE_CONNS keep-alive connections,
 * write i started at start + i / rate (late writes start as soon as a connection is free). */
static void *write_loop(void *arg)
{
    fanout *f = arg;
    double cpu0 = cpu_clock_s(CLOCK_THREAD_CPUTIME_ID);
    CURLM *m = curl_multi_init();
    curl_multi_setopt(m, CURLMOPT_MAX_HOST_CONNECTIONS, (long)WRITE_CONNS);
    curl_multi_setopt(m, CURLMOPT_MAXCONNECTS, (long)WRITE_CONNS * 2);
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    char url[256];
    snprintf(url, sizeof url, "%s/api/v1/namespaces/" LOAD_NS "/configmaps", f->base_url);
    wreq rq[WRITE_CONNS];
    for (int i = 0; i < WRITE_CONNS; i++) {
        rq[i] = (wreq){.easy = curl_easy_init()};
        curl_easy_setopt(rq[i].easy, CURLOPT_URL, url);
        curl_easy_setopt(rq[i].easy, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(rq[i].easy, CURLOPT_WRITEFUNCTION, reply_cb);
        curl_easy_setopt(rq[i].easy, CURLOPT_WRITEDATA, &rq[i]);
        curl_easy_setopt(rq[i].easy, CURLOPT_PRIVATE, &rq[i]);
        curl_easy_setopt(rq[i].easy, CURLOPT_NOSIGNAL, 1L); /* SIGPIPE ignored in main */
    }
    unsigned long next = 0, done = 0;
    int running = 0;
    while (done < f->total) {
        uint64_t now = kc__now_ns();
        for (int i = 0; i < WRITE_CONNS && next < f->total; i++) {
            uint64_t due = f->start_ns + (uint64_t)((double)next * 1e9 / f->rate);
            if (due > now)
                break;
            if (rq[i].busy)
                continue;
            snprintf(rq[i].body, sizeof rq[i].body,
                     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                     "\"w-%lu\"},\"data\":{\"k\":\"v\"}}",
                     next++);
            curl_easy_setopt(rq[i].easy, CURLOPT_POSTFIELDS, rq[i].body);
            rq[i].reply_len = 0;
            rq[i].busy = true;
            rq[i].t0 = kc__now_ns();
            curl_multi_add_handle(m, rq[i].easy);
        }
        curl_multi_perform(m, &running);
        CURLMsg *msg;
        int q;
        while ((msg = curl_multi_info_read(m, &q))) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            wreq *r;
            long code = 0;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&r);
            curl_easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &code);
            curl_multi_remove_handle(m, msg->easy_handle);
            r->busy = false;
            r->reply[r->reply_len] = 0;
            long nc = 0;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_NUM_CONNECTS, &nc);
            f->new_conns += (unsigned long)nc;
            if (done < f->total)
                f->lat_us[done] = (double)(kc__now_ns() - r->t0) / 1e3;
            if (msg->data.result == CURLE_OK && code == 201)
                f->rvs[atomic_fetch_add(&f->ok, 1)] = line_rv(r->reply, r->reply_len);
            done++;
            atomic_store(&f->acked, done);
        }
        int wait_ms = 100;
        if (next < f->total) {
            uint64_t due = f->start_ns + (uint64_t)((double)next * 1e9 / f->rate);
            now = kc__now_ns();
            wait_ms = due > now ? (int)((due - now + KC__NS_PER_MS - 1) / KC__NS_PER_MS) : 0;
            bool any_free = false;
            for (int i = 0; i < WRITE_CONNS; i++)
                any_free |= !rq[i].busy;
            if (!any_free)
                wait_ms = 100;
        }
        if (done < f->total && (running || wait_ms))
            curl_multi_poll(m, NULL, 0, wait_ms, NULL);
    }
    f->end_ns = kc__now_ns();
    for (int i = 0; i < WRITE_CONNS; i++)
        curl_easy_cleanup(rq[i].easy);
    curl_multi_cleanup(m);
    curl_slist_free_all(h);
    f->write_cpu_s = cpu_clock_s(CLOCK_THREAD_CPUTIME_ID) - cpu0;
    return NULL;
}

#endif
