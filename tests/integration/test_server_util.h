/*
 * test_server_util.h — helpers for the embedded-server integration tests (header-only, static):
 * start a kc_server on 127.0.0.1:0, send requests with libcurl, parse JSON replies with jansson,
 * and follow a watch stream on a background thread (lines queued under a mutex + condvar; waits
 * use deadlines, never sleeps).
 */
#ifndef KC_TEST_SERVER_UTIL_H
#define KC_TEST_SERVER_UTIL_H

#include <curl/curl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kc_test.h"
#include "kcache/server.h"

#define TS_UNUSED __attribute__((unused))

typedef struct ts_resp {
    long status;
    char *body;
    size_t len;
    char ctype[256];
    char retry_after[32];
    char warnings[1024]; /* every Warning header's value, each followed by '\n' */
    json_t *json;        /* parsed body or NULL */
} ts_resp;

static size_t ts_body_cb(char *p, size_t sz, size_t n, void *ud)
{
    ts_resp *r = ud;
    char *b = realloc(r->body, r->len + sz * n + 1);
    if (!b)
        return 0;
    memcpy(b + r->len, p, sz * n);
    r->body = b;
    r->len += sz * n;
    b[r->len] = 0;
    return sz * n;
}

static size_t ts_hdr_cb(char *p, size_t sz, size_t n, void *ud)
{
    ts_resp *r = ud;
    size_t l = sz * n;
    char line[512];
    if (l >= sizeof(line))
        return l;
    memcpy(line, p, l);
    line[l] = 0;
    char *e = strpbrk(line, "\r\n");
    if (e)
        *e = 0;
    if (!strncasecmp(line, "Content-Type: ", 14))
        snprintf(r->ctype, sizeof(r->ctype), "%.200s", line + 14);
    if (!strncasecmp(line, "Retry-After: ", 13))
        snprintf(r->retry_after, sizeof(r->retry_after), "%.20s", line + 13);
    if (!strncasecmp(line, "Warning: ", 9)) {
        size_t have = strlen(r->warnings);
        snprintf(r->warnings + have, sizeof(r->warnings) - have, "%s\n", line + 9);
    }
    return l;
}

/* Fixture pieces the server accepts (it validates built-in objects as kube-apiserver does,
 * docs/server.md "Validation of built-in types"): one container, and a Deployment's selector
 * (app=a) with a matching template. */
#define TS_CONTAINERS "\"containers\":[{\"name\":\"c\",\"image\":\"nginx\"}]"
#define TS_DEP_SPEC                                                                                \
    "\"selector\":{\"matchLabels\":{\"app\":\"a\"}},\"template\":{\"metadata\":{\"labels\":{"      \
    "\"app\":\"a\"}},\"spec\":{" TS_CONTAINERS "}}"

TS_UNUSED static kc_server *ts_start_opts(kc_server_opts *o)
{
    return kc_test_server_start(o);
}

TS_UNUSED static kc_server *ts_start(void)
{
    kc_server_opts o;
    memset(&o, 0, sizeof(o));
    return ts_start_opts(&o);
}

TS_UNUSED static void ts_resp_free(ts_resp *r)
{
    free(r->body);
    json_decref(r->json);
    memset(r, 0, sizeof(*r));
}

/* Send one request. headers: extra "Name: value" lines, NULL-terminated (may be NULL). */
TS_UNUSED static int ts_req_h(kc_server *s, const char *method, const char *path, const char *ctype,
                              const char *body, const char *accept, const char *const *headers,
                              ts_resp *r)
{
    memset(r, 0, sizeof(*r));
    CURL *c = curl_easy_init();
    if (!c)
        return -1;
    char url[2048];
    snprintf(url, sizeof(url), "%s%s", kc_server_url(s), path);
    struct curl_slist *h = NULL;
    char buf[512];
    if (ctype) {
        snprintf(buf, sizeof(buf), "Content-Type: %s", ctype);
        h = curl_slist_append(h, buf);
    }
    if (accept) {
        snprintf(buf, sizeof(buf), "Accept: %s", accept);
        h = curl_slist_append(h, buf);
    }
    for (const char *const *p = headers; p && *p; p++)
        h = curl_slist_append(h, *p);
    h = curl_slist_append(h, "Expect:");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    }
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, ts_body_cb);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, ts_hdr_cb);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
    CURLcode rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    if (rc != CURLE_OK)
        return -1;
    if (r->body)
        r->json = json_loadb(r->body, r->len, 0, NULL);
    return 0;
}

TS_UNUSED static int ts_req(kc_server *s, const char *method, const char *path, const char *ctype,
                            const char *body, const char *accept, ts_resp *r)
{
    return ts_req_h(s, method, path, ctype, body, accept, NULL, r);
}

/* Shorthands. */
TS_UNUSED static long ts_post(kc_server *s, const char *path, const char *body, ts_resp *r)
{
    ts_req(s, "POST", path, "application/json", body, NULL, r);
    return r->status;
}
TS_UNUSED static long ts_get(kc_server *s, const char *path, ts_resp *r)
{
    ts_req(s, "GET", path, NULL, NULL, NULL, r);
    return r->status;
}

/* JSON path lookup "a.b.c" (array index as number segment). Borrowed. */
TS_UNUSED static json_t *ts_j(json_t *j, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", path);
    char *save = NULL;
    for (char *t = strtok_r(buf, ".", &save); t && j; t = strtok_r(NULL, ".", &save)) {
        if (json_is_array(j))
            j = json_array_get(j, (size_t)atoi(t));
        else
            j = json_object_get(j, t);
    }
    return j;
}
TS_UNUSED static const char *ts_s(json_t *j, const char *path)
{
    const char *v = json_string_value(ts_j(j, path));
    return v ? v : "";
}
TS_UNUSED static unsigned long long ts_rv(json_t *obj)
{
    return strtoull(ts_s(obj, "metadata.resourceVersion"), NULL, 10);
}

/* ---- watch follower ------------------------------------------------------------------------- */

typedef struct ts_watch {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cond;
    char url[2048];
    char *partial;
    size_t plen;
    char **lines;
    size_t n, cap, next;
    int stop, ended;
    long status;
    char ctype[256];
} ts_watch;

static size_t ts_w_body(char *p, size_t sz, size_t n, void *ud)
{
    ts_watch *w = ud;
    size_t l = sz * n;
    pthread_mutex_lock(&w->mu);
    w->partial = realloc(w->partial, w->plen + l + 1);
    memcpy(w->partial + w->plen, p, l);
    w->plen += l;
    char *nl;
    while ((nl = memchr(w->partial, '\n', w->plen))) {
        size_t ll = (size_t)(nl - w->partial);
        if (w->n == w->cap) {
            w->cap = w->cap ? w->cap * 2 : 64;
            w->lines = realloc(w->lines, w->cap * sizeof(char *));
        }
        char *line = malloc(ll + 1);
        memcpy(line, w->partial, ll);
        line[ll] = 0;
        w->lines[w->n++] = line;
        memmove(w->partial, nl + 1, w->plen - ll - 1);
        w->plen -= ll + 1;
    }
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->mu);
    return l;
}

static size_t ts_w_hdr(char *p, size_t sz, size_t n, void *ud)
{
    ts_watch *w = ud;
    if (sz * n > 14 && sz * n < 250 && !strncasecmp(p, "Content-Type: ", 14)) {
        pthread_mutex_lock(&w->mu);
        snprintf(w->ctype, sizeof(w->ctype), "%.*s", (int)(sz * n - 16), p + 14);
        pthread_mutex_unlock(&w->mu);
    }
    return sz * n;
}

static int ts_w_progress(void *ud, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
    ts_watch *w = ud;
    pthread_mutex_lock(&w->mu);
    int stop = w->stop;
    pthread_mutex_unlock(&w->mu);
    return stop;
}

static void *ts_w_thread(void *ud)
{
    ts_watch *w = ud;
    CURL *c = curl_easy_init();
    curl_easy_setopt(c, CURLOPT_URL, w->url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, ts_w_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, w);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, ts_w_hdr);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, w);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, ts_w_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, w);
    curl_easy_perform(c);
    long st = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &st);
    curl_easy_cleanup(c);
    pthread_mutex_lock(&w->mu);
    w->status = st;
    w->ended = 1;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

TS_UNUSED static ts_watch *ts_watch_start(kc_server *s, const char *path)
{
    ts_watch *w = calloc(1, sizeof(*w));
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cond, NULL);
    snprintf(w->url, sizeof(w->url), "%s%s", kc_server_url(s), path);
    pthread_create(&w->th, NULL, ts_w_thread, w);
    return w;
}

static struct timespec ts_deadline(int ms)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += ms / 1000;
    t.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

/* Next event (parsed; caller json_decref) or NULL on timeout / end of stream. */
TS_UNUSED static json_t *ts_watch_next(ts_watch *w, int timeout_ms)
{
    struct timespec dl = ts_deadline(timeout_ms);
    json_t *ev = NULL;
    pthread_mutex_lock(&w->mu);
    while (w->next == w->n && !w->ended)
        if (pthread_cond_timedwait(&w->cond, &w->mu, &dl) != 0)
            break;
    if (w->next < w->n)
        ev = json_loads(w->lines[w->next++], 0, NULL);
    pthread_mutex_unlock(&w->mu);
    return ev;
}

/* Next event that is not a BOOKMARK. */
TS_UNUSED static json_t *ts_watch_next_nb(ts_watch *w, int timeout_ms)
{
    for (;;) {
        json_t *ev = ts_watch_next(w, timeout_ms);
        if (!ev || strcmp(ts_s(ev, "type"), "BOOKMARK") != 0)
            return ev;
        json_decref(ev);
    }
}

/* true when the stream ended within timeout_ms (all lines may not be consumed). */
TS_UNUSED static int ts_watch_wait_end(ts_watch *w, int timeout_ms)
{
    struct timespec dl = ts_deadline(timeout_ms);
    pthread_mutex_lock(&w->mu);
    while (!w->ended)
        if (pthread_cond_timedwait(&w->cond, &w->mu, &dl) != 0)
            break;
    int e = w->ended;
    pthread_mutex_unlock(&w->mu);
    return e;
}

TS_UNUSED static void ts_watch_free(ts_watch *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->th, NULL);
    for (size_t i = 0; i < w->n; i++)
        free(w->lines[i]);
    free(w->lines);
    free(w->partial);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cond);
    free(w);
}

/* A ConfigMap body. */
TS_UNUSED static char *ts_cm(const char *name, const char *labels_json)
{
    static __thread char b[1024];
    snprintf(b, sizeof(b),
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\""
             "%s%s},\"data\":{\"k\":\"v\"}}",
             name, labels_json ? ",\"labels\":" : "", labels_json ? labels_json : "");
    return b;
}

#define CM_PATH "/api/v1/namespaces/default/configmaps"

/* A Pod body (static per thread): name, spec.nodeName's JSON text (NULL: no nodeName). */
TS_UNUSED static char *ts_pod(const char *name, const char *node_json)
{
    static __thread char b[1024];
    snprintf(b, sizeof(b),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\"},"
             "\"spec\":{%s%s%s" TS_CONTAINERS "}}",
             name, node_json ? "\"nodeName\":" : "", node_json ? node_json : "",
             node_json ? "," : "");
    return b;
}

/* POST a v1 Binding of pod default/name to node (query: "" or "?…" appended); the status. */
TS_UNUSED static long ts_bind(kc_server *s, const char *name, const char *node, const char *query)
{
    char path[512], body[512];
    snprintf(path, sizeof(path), "/api/v1/namespaces/default/pods/%s/binding%s", name, query);
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"%s\"},"
             "\"target\":{\"kind\":\"Node\",\"name\":\"%s\"}}",
             name, node);
    ts_resp r;
    ts_req(s, "POST", path, "application/json", body, NULL, &r);
    long st = r.status;
    ts_resp_free(&r);
    return st;
}

/* Group fixture of the server API tests: a server holding ConfigMap default/t1 ({"a":"b"}), in
 * *state. */
TS_UNUSED static int ts_group_setup_t1(void **state)
{
    kc_server *s = ts_start();
    if (!s)
        return -1;
    ts_resp r;
    ts_post(s, CM_PATH, ts_cm("t1", "{\"a\":\"b\"}"), &r);
    ts_resp_free(&r);
    *state = s;
    return 0;
}

TS_UNUSED static int ts_group_teardown(void **state)
{
    kc_server_free(*state);
    return 0;
}

#endif
