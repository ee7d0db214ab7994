/*
 * enrich_fetch.c — one rate-limited background GET for a pod the daemon's cache misses after its
 * sync (enrich-semantics CA5): the pod is not on this node (a misrouted file, a cluster-wide
 * stream) or its watch event lags.
 *
 * Design. The reply path never waits on the network (CA4): kc__enrich_fetch_lookup answers from a
 * side table under one mutex and, on a miss, only queues the key; one thread sends the GETs.
 *   - One entry per key ("p:<ns>/<name>" for a Pod, "n:<ns>" for its Namespace when the Namespace
 *     watch does not hold it): a key is queued or in flight at most once, so a pod asked for by
 *     every record of a busy file costs one GET.
 *   - A token bucket (rate per second, burst) paces every GET, and a 429 or 503 — or a transport
 *     failure, the API server gone — pauses all of them for the response's Retry-After (capped at
 *     5 min), else for a backoff of 1 s doubling to 60 s, times a random 0.5–1.5 (agents started
 *     together do not retry together). A success resets the backoff. No path loops without one
 *     of these waits, whatever the server answers.
 *   - Results: a 200 is served for ttl (60 s; no watch keeps it current, so it is fetched again
 *     on the first lookup after that, the old answer served meanwhile); a 404, or any other
 *     failure, is remembered for neg_ttl (30 s, CA5) and answers "not found" without a request
 *     (a negative hit). A 429/503 leaves the key queued for after the pause: the answer is not
 *     known. An object already held and then failing is kept (a failure is no proof the pod is
 *     gone; a 404 is).
 *   - Bounds: at most max_entries (1024) entries and max_bytes (64 MiB) of JSON — a node's own
 *     pods are in the watch, so the table holds only strays; the oldest settled entry is evicted
 *     first (counted); when every entry is queued or in flight, a new key is dropped (counted)
 *     rather than growing the queue. Responses have no size limit of their own (AN11 cannot
 *     happen): only the table's byte bound, which evicts.
 *   - A stored result (or a 404 replacing one, or the eviction of one) bumps the view's
 *     generation counter (enrich.h) after the change, so a helper holding an answer asks again.
 * The table is an array scanned linearly with a 64-bit hash per entry: lookups reach it only
 * after the cache missed, and it holds at most 1024 entries.
 */
#include "enrich_api.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kcache/error.h"
#include "kcache/obj.h"

enum { F_QUEUED, F_INFLIGHT, F_OK, F_NEG };

typedef struct fentry {
    char *key; /* "p:ns/name" or "n:ns" */
    uint64_t hash;
    int state;
    bool has_json;      /* json holds the last good answer (also while queued again) */
    int64_t expires_ms; /* F_OK / F_NEG: fetched again (or forgotten) after this */
    uint64_t seq;       /* queue order (F_QUEUED) / age (eviction) */
    char *json;
    size_t len;
    char ver[160]; /* "<uid>/<resourceVersion>" of json */
} fentry;

struct kc__enrich_fetch {
    kc__enrich_fetch_opts o;
    kc_client *client;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* CLOCK_MONOTONIC */
    pthread_t thread;
    bool stop, started;
    fentry *e;
    size_t n;
    uint64_t seq;
    double tokens;
    int64_t refill_ms, pause_until_ms, backoff_ms;
    uint64_t rng;
    kc__enrich_fetch_stats st;
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t hash_key(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static fentry *find(kc__enrich_fetch *f, const char *key)
{
    uint64_t h = hash_key(key);
    for (size_t i = 0; i < f->n; i++)
        if (f->e[i].hash == h && !strcmp(f->e[i].key, key))
            return &f->e[i];
    return NULL;
}

static void drop_json(kc__enrich_fetch *f, fentry *e)
{
    if (e->has_json)
        f->st.bytes -= e->len;
    free(e->json);
    e->json = NULL;
    e->len = 0;
    e->has_json = false;
}

static void remove_at(kc__enrich_fetch *f, size_t i)
{
    drop_json(f, &f->e[i]);
    free(f->e[i].key);
    f->e[i] = f->e[--f->n];
}

/* Evict the oldest settled entry (never one queued or in flight); false when there is none. */
static bool evict_one(kc__enrich_fetch *f)
{
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < f->n; i++)
        if ((f->e[i].state == F_OK || f->e[i].state == F_NEG) &&
            (best == SIZE_MAX || f->e[i].seq < f->e[best].seq))
            best = i;
    if (best == SIZE_MAX)
        return false;
    if (f->e[best].has_json && f->o.generation) /* an answer served until now goes */
        atomic_fetch_add_explicit(f->o.generation, 1, memory_order_release);
    remove_at(f, best);
    f->st.evicted++;
    return true;
}

/* Queue key (a new entry, or an existing settled one again). Under mu. */
static void enqueue(kc__enrich_fetch *f, const char *key)
{
    fentry *e = find(f, key);
    if (e && (e->state == F_QUEUED || e->state == F_INFLIGHT))
        return;
    if (!e) {
        if (f->n >= f->o.max_entries && !evict_one(f)) {
            f->st.dropped++;
            return;
        }
        char *k = strdup(key);
        if (!k) {
            f->st.dropped++;
            return;
        }
        e = &f->e[f->n++];
        *e = (fentry){.key = k, .hash = hash_key(k)};
    }
    e->state = F_QUEUED;
    e->seq = ++f->seq;
    f->st.queued++;
    pthread_cond_signal(&f->cv);
}

/* ---- the reply path ------------------------------------------------------------------------ */

/* The Namespace's JSON and version: the watch's first, else the side table's (queued when
 * absent). Under mu. *json new malloc'd or NULL. */
static void ns_answer(kc__enrich_fetch *f, const char *ns, char **json, size_t *len, char *ver,
                      size_t vn)
{
    *json = NULL;
    kc_obj *o = f->o.ns_store ? kc_store_get(f->o.ns_store, NULL, ns) : NULL;
    if (o) {
        size_t l = 0;
        const char *s = kc_obj_json(o, &l);
        if (s && (*json = malloc(l + 1))) {
            memcpy(*json, s, l);
            (*json)[l] = '\0';
            *len = l;
            snprintf(ver, vn, "%s/%s", kc_obj_uid(o), kc_obj_resource_version(o));
        }
        kc_obj_unref(o);
        return;
    }
    char key[300];
    snprintf(key, sizeof key, "n:%s", ns);
    fentry *e = find(f, key);
    if (e && e->has_json && (*json = malloc(e->len + 1))) {
        memcpy(*json, e->json, e->len + 1);
        *len = e->len;
        snprintf(ver, vn, "%s", e->ver);
    }
    if (!e || ((e->state == F_OK || e->state == F_NEG) && e->expires_ms <= now_ms()))
        enqueue(f, key);
}

int kc__enrich_fetch_lookup(kc__enrich_fetch *f, const kc__enrich_key *key, kc__enrich_meta *ret)
{
    memset(ret, 0, sizeof *ret);
    if (!f || !key->ns || !key->pod || f->o.rate <= 0 || strlen(key->ns) + strlen(key->pod) > 280)
        return KC_ENOTFOUND; /* a uid or container id alone names no GET */
    char k[300], *pod = NULL, *ns = NULL, pver[160] = "", nver[160] = "";
    size_t plen = 0, nlen = 0;
    snprintf(k, sizeof k, "p:%s/%s", key->ns, key->pod);
    pthread_mutex_lock(&f->mu);
    fentry *e = find(f, k);
    int64_t now = now_ms();
    if (!e || ((e->state == F_OK || e->state == F_NEG) && e->expires_ms <= now)) {
        enqueue(f, k); /* new, or due again (the old answer, if any, is served meanwhile) */
        e = find(f, k);
    } else if (e->state == F_NEG) {
        f->st.negative_hits++;
    }
    if (e && e->has_json && (pod = malloc(e->len + 1))) {
        memcpy(pod, e->json, e->len + 1);
        plen = e->len;
        snprintf(pver, sizeof pver, "%s", e->ver);
        ns_answer(f, key->ns, &ns, &nlen, nver, sizeof nver);
        f->st.hits++;
    }
    pthread_mutex_unlock(&f->mu);
    if (!pod)
        return KC_ENOTFOUND;
    snprintf(ret->version, sizeof ret->version, "fetch/%s/%s", pver, nver);
    if (key->have_version && !strcmp(key->have_version, ret->version)) {
        ret->same = true;
    } else {
        ret->pod = json_loadb(pod, plen, 0, NULL);
        ret->ns = ns ? json_loadb(ns, nlen, 0, NULL) : NULL;
    }
    free(pod);
    free(ns);
    if (!ret->same && !ret->pod) {
        kc__enrich_meta_clear(ret);
        return KC_EPARSE;
    }
    return 0;
}

/* ---- the fetching thread -------------------------------------------------------------------- */

static int client_get(void *ud, const char *resource, const char *ns, const char *name, char **body,
                      size_t *len, int *status, int *retry_after_s)
{
    kc_gvr gvr = {"", "v1", resource};
    kc_obj *o = NULL;
    kc_error err = KC_ERROR_INIT;
    int rc = kc_client_get(ud, &gvr, ns, name, &o, &err);
    *status = err.http_status;
    *retry_after_s = err.retry_after_s;
    kc_error_clear(&err);
    if (rc)
        return rc;
    size_t l = 0;
    const char *s = kc_obj_json(o, &l);
    *body = s ? malloc(l + 1) : NULL;
    if (*body) {
        memcpy(*body, s, l);
        (*body)[l] = '\0';
        *len = l;
    }
    kc_obj_unref(o);
    return *body ? 0 : KC_ENOMEM;
}

static void timed_wait(kc__enrich_fetch *f, int64_t until_ms)
{
    int64_t left = until_ms - now_ms();
    if (left <= 0)
        return;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += left / 1000;
    ts.tv_nsec += (left % 1000) * 1000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    pthread_cond_timedwait(&f->cv, &f->mu, &ts);
}

/* A pause after a 429/503 or a transport failure. Under mu. */
static void pause_for(kc__enrich_fetch *f, int retry_after_s)
{
    int64_t ms;
    if (retry_after_s > 0) {
        ms = (int64_t)(retry_after_s > 300 ? 300 : retry_after_s) * 1000;
    } else {
        f->rng ^= f->rng << 13;
        f->rng ^= f->rng >> 7;
        f->rng ^= f->rng << 17;
        ms = f->backoff_ms / 2 + (int64_t)(f->rng % (uint64_t)f->backoff_ms); /* ×[0.5, 1.5) */
        f->backoff_ms = f->backoff_ms * 2 > 60000 ? 60000 : f->backoff_ms * 2;
    }
    f->pause_until_ms = now_ms() + ms;
}

/* "<uid>/<resourceVersion>" of a fetched object's JSON. */
static void json_version(const char *json, size_t len, char *ver, size_t n)
{
    json_t *o = json_loadb(json, len, 0, NULL);
    json_t *md = json_object_get(o, "metadata");
    snprintf(ver, n, "%s/%s", json_string_value(json_object_get(md, "uid")) ?: "",
             json_string_value(json_object_get(md, "resourceVersion")) ?: "");
    json_decref(o);
}

/* Record the outcome of the GET of key. Under mu. */
static void settle(kc__enrich_fetch *f, const char *key, int rc, char *body, size_t len, int status,
                   int retry_after_s)
{
    fentry *e = find(f, key); /* in flight: never evicted, but the array may have moved */
    bool changed = false;
    int64_t now = now_ms();
    if (!rc) {
        f->st.ok++;
        f->backoff_ms = 1000;
        if (e) {
            drop_json(f, e);
            e->json = body;
            e->len = len;
            e->has_json = true;
            f->st.bytes += len;
            json_version(body, len, e->ver, sizeof e->ver);
            e->state = F_OK;
            e->seq = ++f->seq; /* the newest: evicted last */
            e->expires_ms = now + f->o.ttl_ms;
            body = NULL;
            changed = true;
        }
        while (f->st.bytes > f->o.max_bytes && evict_one(f))
            ;
        if (key[0] == 'p') { /* its Namespace, unless watched or held */
            char nk[300];
            snprintf(nk, sizeof nk, "n:%.*s", (int)strcspn(key + 2, "/"), key + 2);
            kc_obj *o = f->o.ns_store ? kc_store_get(f->o.ns_store, NULL, nk + 2) : NULL;
            if (!o && !find(f, nk))
                enqueue(f, nk);
            kc_obj_unref(o);
        }
    } else if (status == 429 || status == 503 || !status) {
        if (status)
            f->st.throttled++;
        else
            f->st.errors++;
        pause_for(f, retry_after_s);
        if (e && status) { /* not known yet: again after the pause */
            e->state = F_QUEUED;
        } else if (e) { /* the API server gone: remembered, an answer held kept */
            e->state = e->has_json ? F_OK : F_NEG;
            e->expires_ms = now + f->o.neg_ttl_ms;
        }
    } else {
        if (rc == KC_ENOTFOUND)
            f->st.notfound++;
        else
            f->st.errors++;
        if (e) {
            if (rc == KC_ENOTFOUND && e->has_json) {
                drop_json(f, e);
                changed = true;
            }
            e->state = e->has_json ? F_OK : F_NEG;
            e->expires_ms = now + f->o.neg_ttl_ms;
        }
    }
    free(body);
    if (changed && f->o.generation)
        atomic_fetch_add_explicit(f->o.generation, 1, memory_order_release);
}

/* The oldest queued entry, or NULL. Under mu. */
static fentry *next_queued(kc__enrich_fetch *f)
{
    fentry *best = NULL;
    for (size_t i = 0; i < f->n; i++)
        if (f->e[i].state == F_QUEUED && (!best || f->e[i].seq < best->seq))
            best = &f->e[i];
    return best;
}

static void *fetch_main(void *arg)
{
    kc__enrich_fetch *f = arg;
    pthread_mutex_lock(&f->mu);
    while (!f->stop) {
        int64_t now = now_ms();
        f->tokens += (double)(now - f->refill_ms) * f->o.rate / 1000.0;
        if (f->tokens > f->o.burst)
            f->tokens = f->o.burst;
        f->refill_ms = now;
        fentry *e = next_queued(f);
        if (!e) {
            pthread_cond_wait(&f->cv, &f->mu);
            continue;
        }
        if (now < f->pause_until_ms) {
            timed_wait(f, f->pause_until_ms);
            continue;
        }
        if (f->tokens < 1.0) {
            timed_wait(f, now + 1 + (int64_t)((1.0 - f->tokens) * 1000.0 / f->o.rate));
            continue;
        }
        f->tokens -= 1.0;
        e->state = F_INFLIGHT;
        char key[300];
        snprintf(key, sizeof key, "%s", e->key);
        f->st.sent++;
        pthread_mutex_unlock(&f->mu);
        char *body = NULL, ns[300];
        size_t len = 0;
        int status = 0, ra = -1, rc;
        if (key[0] == 'p') {
            size_t nl = strcspn(key + 2, "/");
            snprintf(ns, sizeof ns, "%.*s", (int)nl, key + 2);
            rc = f->o.get(f->o.get_ud, "pods", ns, key + 2 + nl + 1, &body, &len, &status, &ra);
        } else {
            rc = f->o.get(f->o.get_ud, "namespaces", NULL, key + 2, &body, &len, &status, &ra);
        }
        pthread_mutex_lock(&f->mu);
        settle(f, key, rc, body, len, status, ra);
    }
    pthread_mutex_unlock(&f->mu);
    return NULL;
}

kc__enrich_fetch *kc__enrich_fetch_new(kc_client *client, const kc__enrich_fetch_opts *o)
{
    kc__enrich_fetch *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->o = *o;
    f->client = client;
    if (!f->o.burst)
        f->o.burst = 5;
    if (!f->o.ttl_ms)
        f->o.ttl_ms = 60000;
    if (!f->o.neg_ttl_ms)
        f->o.neg_ttl_ms = 30000;
    if (!f->o.max_entries)
        f->o.max_entries = 1024;
    if (!f->o.max_bytes)
        f->o.max_bytes = 64u << 20;
    if (!f->o.get) {
        f->o.get = client_get;
        f->o.get_ud = client;
    }
    f->e = calloc(f->o.max_entries, sizeof *f->e);
    f->tokens = f->o.burst;
    f->refill_ms = now_ms();
    f->backoff_ms = 1000;
    f->rng = (uint64_t)now_ms() * 2654435761u + (uint64_t)(uintptr_t)f + 1;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (!f->e || (f->o.rate > 0 && pthread_create(&f->thread, NULL, fetch_main, f))) {
        kc__enrich_fetch_free(f);
        return NULL;
    }
    f->started = f->o.rate > 0;
    return f;
}

void kc__enrich_fetch_free(kc__enrich_fetch *f)
{
    if (!f)
        return;
    pthread_mutex_lock(&f->mu);
    f->stop = true;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
    if (f->started)
        pthread_join(f->thread, NULL);
    while (f->n)
        remove_at(f, f->n - 1);
    free(f->e);
    pthread_cond_destroy(&f->cv);
    pthread_mutex_destroy(&f->mu);
    free(f);
}

void kc__enrich_fetch_get_stats(kc__enrich_fetch *f, kc__enrich_fetch_stats *ret)
{
    pthread_mutex_lock(&f->mu);
    *ret = f->st;
    ret->entries = f->n;
    ret->paused = now_ms() < f->pause_until_ms;
    pthread_mutex_unlock(&f->mu);
}

char *kc__enrich_fetch_metrics(void *ud)
{
    kc__enrich_fetch_stats s;
    kc__enrich_fetch_get_stats(ud, &s);
    char *out = NULL;
    if (asprintf(&out,
                 "# HELP kcache_enrich_fetch_requests_total GETs sent for pods the cache missed "
                 "after sync (and their namespaces).\n"
                 "# TYPE kcache_enrich_fetch_requests_total counter\n"
                 "kcache_enrich_fetch_requests_total %" PRIu64 "\n"
                 "# HELP kcache_enrich_fetch_responses_total Their outcomes.\n"
                 "# TYPE kcache_enrich_fetch_responses_total counter\n"
                 "kcache_enrich_fetch_responses_total{result=\"ok\"} %" PRIu64 "\n"
                 "kcache_enrich_fetch_responses_total{result=\"notfound\"} %" PRIu64 "\n"
                 "kcache_enrich_fetch_responses_total{result=\"throttled\"} %" PRIu64 "\n"
                 "kcache_enrich_fetch_responses_total{result=\"error\"} %" PRIu64 "\n"
                 "# HELP kcache_enrich_fetch_lookups_total Cache misses answered by the side "
                 "table: hit (a fetched pod), negative (a remembered 404 or failure).\n"
                 "# TYPE kcache_enrich_fetch_lookups_total counter\n"
                 "kcache_enrich_fetch_lookups_total{result=\"hit\"} %" PRIu64 "\n"
                 "kcache_enrich_fetch_lookups_total{result=\"negative\"} %" PRIu64 "\n"
                 "# HELP kcache_enrich_fetch_queued_total GETs queued; dropped: table full of "
                 "queued keys.\n"
                 "# TYPE kcache_enrich_fetch_queued_total counter\n"
                 "kcache_enrich_fetch_queued_total %" PRIu64 "\n"
                 "# TYPE kcache_enrich_fetch_dropped_total counter\n"
                 "kcache_enrich_fetch_dropped_total %" PRIu64 "\n"
                 "# TYPE kcache_enrich_fetch_evicted_total counter\n"
                 "kcache_enrich_fetch_evicted_total %" PRIu64 "\n"
                 "# HELP kcache_enrich_fetch_entries Side-table entries and their JSON bytes.\n"
                 "# TYPE kcache_enrich_fetch_entries gauge\n"
                 "kcache_enrich_fetch_entries %zu\n"
                 "# TYPE kcache_enrich_fetch_bytes gauge\n"
                 "kcache_enrich_fetch_bytes %zu\n"
                 "# HELP kcache_enrich_fetch_paused 1 while GETs wait out a 429/503 or failure.\n"
                 "# TYPE kcache_enrich_fetch_paused gauge\n"
                 "kcache_enrich_fetch_paused %d\n",
                 s.sent, s.ok, s.notfound, s.throttled, s.errors, s.hits, s.negative_hits, s.queued,
                 s.dropped, s.evicted, s.entries, s.bytes, s.paused ? 1 : 0) < 0)
        return NULL;
    return out;
}
