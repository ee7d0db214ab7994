/*
 * informer/health.c — /readyz, /healthz, /livez and /metrics for a kc_cache over libmicrohttpd.
 *
 * One MHD daemon with its internal polling thread; every request renders a fresh answer from
 * kc_informer_get_status (no state is cached here, so /readyz flips exactly when an informer's
 * readiness does). Responses are small texts built in a bounded kc__buf (1 MiB ceiling).
 * /readyz follows the API server's format: "ok" on success; on failure (503) or with ?verbose one
 * line per check, "[+]informer <name> ok" / "[-]informer <name> failed: <reason>[: last error
 * …]", then "readyz check passed|failed"; the last error (code, HTTP status, reason, message, age,
 * failures in a row) is shown while the informer keeps failing. Metrics use the Prometheus text
 * format 0.0.4, one series per informer labelled informer (its unique name), group, version,
 * resource and namespace, followed by the text of each added metrics source (render callbacks of
 * other layers, e.g. a controller's work queue: this layer never includes theirs). The sources
 * list has its own lock, held while the sources render, so that once
 * kc_health_remove_metrics_source returns its callback is never running. Informers outside the
 * cache (kc_health_add_informer: a component running its own, like kc_podmeta) are listed after
 * the cache's, in /readyz and in the same metric families, under a lock of their own held while
 * they are read, so that once kc_health_remove_informer returns the endpoint no longer reads one.
 */
#include "informer/internal.h"
#include "kcache/health.h"
#include "kcache/rv.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct metrics_source {
    char *(*render)(void *ud);
    void *ud;
} metrics_source;

typedef struct extra_informer {
    kc_informer *inf;
    bool required;
} extra_informer;

struct kc_health {
    kc_cache *cache;
    pthread_mutex_t informers_mu; /* guards informers; held while they are read */
    extra_informer *informers;    /* kc_health_add_informer: outside the cache */
    size_t n_informers;
    struct MHD_Daemon *d;
    int port;
    char url[64];
    pthread_mutex_t sources_mu; /* guards sources; held while they render */
    metrics_source *sources;
    size_t n_sources;
};

/* ---- rendering ------------------------------------------------------------------------------- */

static void label_escaped(kc__buf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\' || *s == '"')
            kc__buf_append_char(b, '\\');
        if (*s == '\n') {
            kc__buf_append_str(b, "\\n");
            continue;
        }
        kc__buf_append_char(b, *s);
    }
}

typedef struct metric {
    const char *name, *type, *help;
} metric;

static const metric METRICS[] = {
    {"kcache_informer_objects", "gauge", "Objects in the informer's store."},
    {"kcache_informer_watermark", "gauge",
     "Store resourceVersion watermark (NaN when not numeric)."},
    {"kcache_informer_relists_total", "counter", "Full relists after the initial list."},
    {"kcache_informer_watch_restarts_total", "counter", "Watch requests started."},
    {"kcache_informer_events_applied_total", "counter", "Watch events applied to the store."},
    {"kcache_informer_bookmarks_total", "counter", "Watch bookmarks received."},
    {"kcache_informer_errors_total", "counter", "List or watch failures."},
    {"kcache_informer_last_sync_duration_seconds", "gauge", "Duration of the last full list."},
    {"kcache_informer_synced", "gauge", "1 once the initial list has been applied."},
    {"kcache_informer_ready", "gauge", "1 when synced and fresh enough (max staleness)."},
    {"kcache_informer_disconnected_seconds", "gauge",
     "Seconds the watch has been down (0 when up)."},
    {"kcache_informer_lagging_handlers", "gauge", "Handler registrations currently coalescing."},
    {"kcache_informer_consecutive_errors", "gauge",
     "List or watch failures since the last success (0 when healthy)."},
    {"kcache_informer_last_error_timestamp_seconds", "gauge",
     "Unix time of the last list or watch failure (0 when none)."},
    {"kcache_informer_events_dropped_total", "counter",
     "Changes handlers lost because memory ran out while coalescing."},
    {"kcache_informer_server_sharding", "gauge",
     "Sharded informers: 1 when the API server echoed the shard selector, 0 when it did not (the "
     "client filters alone), NaN when not known yet or unsharded."},
};

static void metric_value(kc__buf *b, size_t m, const kc_informer_status *st)
{
    switch (m) {
    case 0:
        kc__buf_printf(b, "%llu", (unsigned long long)st->objects);
        break;
    case 1: {
        uint64_t v;
        if (kc_rv_parse(st->watermark, &v, NULL) == 0)
            kc__buf_printf(b, "%llu", (unsigned long long)v);
        else
            kc__buf_append_str(b, "NaN");
        break;
    }
    case 2:
        kc__buf_printf(b, "%llu", (unsigned long long)st->relists);
        break;
    case 3:
        kc__buf_printf(b, "%llu", (unsigned long long)st->watch_restarts);
        break;
    case 4:
        kc__buf_printf(b, "%llu", (unsigned long long)st->events_applied);
        break;
    case 5:
        kc__buf_printf(b, "%llu", (unsigned long long)st->bookmarks);
        break;
    case 6:
        kc__buf_printf(b, "%llu", (unsigned long long)st->errors);
        break;
    case 7:
        kc__buf_printf(b, "%.6f", st->last_sync_duration_s);
        break;
    case 8:
        kc__buf_append_str(b, st->synced ? "1" : "0");
        break;
    case 9:
        kc__buf_append_str(b, st->ready ? "1" : "0");
        break;
    case 10:
        kc__buf_printf(b, "%.3f", (double)st->disconnected_ms / 1000.0);
        break;
    case 11:
        kc__buf_printf(b, "%zu", st->lagging_handlers);
        break;
    case 12:
        kc__buf_printf(b, "%llu", (unsigned long long)st->consecutive_errors);
        break;
    case 13:
        kc__buf_printf(b, "%.3f", (double)st->last_error_unix_ms / 1000.0);
        break;
    case 14:
        kc__buf_printf(b, "%llu", (unsigned long long)st->events_dropped);
        break;
    case 15:
        kc__buf_append_str(b, st->server_sharding == KC_INFORMER_SHARDING_YES  ? "1"
                              : st->server_sharding == KC_INFORMER_SHARDING_NO ? "0"
                                                                               : "NaN");
        break;
    }
}

/* {informer="NAME",group="…",version="…",resource="…",namespace="…"}: the name is unique per
 * informer of a cache (kc_informer_name), so no two series share a label set; the other labels
 * let queries aggregate per resource or namespace. */
static void series_labels(kc__buf *b, const kc_informer *inf)
{
    static const char *const keys[] = {"informer", "group", "version", "resource", "namespace"};
    const char *vals[] = {kc_informer_name(inf), inf->spec.group, inf->spec.version,
                          inf->spec.resource, inf->spec.ns ? inf->spec.ns : ""};
    for (size_t k = 0; k < KC__ARRAY_LEN(keys); k++) {
        kc__buf_printf(b, "%c%s=\"", k ? ',' : '{', keys[k]);
        label_escaped(b, vals[k]);
        kc__buf_append_char(b, '"');
    }
    kc__buf_append_char(b, '}');
}

/* The cache's informers, then the n_extra of extra. */
static kc_informer *informer_at(kc_cache *cache, size_t n_cache, const extra_informer *extra,
                                size_t i)
{
    return i < n_cache ? kc_cache_informer_at(cache, i) : extra[i - n_cache].inf;
}

static char *metrics_text(kc_cache *cache, const extra_informer *extra, size_t n_extra)
{
    kc__buf b = KC__BUF_INIT(1024 * 1024);
    size_t nc = kc_cache_informer_count(cache), n = nc + n_extra;
    kc_informer_status *sts = calloc(n ? n : 1, sizeof(*sts));
    if (!sts)
        return NULL;
    for (size_t i = 0; i < n; i++)
        kc_informer_get_status(informer_at(cache, nc, extra, i), &sts[i]);
    for (size_t m = 0; m < KC__ARRAY_LEN(METRICS); m++) {
        kc__buf_printf(&b, "# HELP %s %s\n# TYPE %s %s\n", METRICS[m].name, METRICS[m].help,
                       METRICS[m].name, METRICS[m].type);
        for (size_t i = 0; i < n; i++) {
            kc__buf_append_str(&b, METRICS[m].name);
            series_labels(&b, informer_at(cache, nc, extra, i));
            kc__buf_append_char(&b, ' ');
            metric_value(&b, m, &sts[i]);
            kc__buf_append_char(&b, '\n');
        }
    }
    kc__buf_printf(&b,
                   "# HELP kcache_cache_ready 1 when every required informer is ready.\n"
                   "# TYPE kcache_cache_ready gauge\nkcache_cache_ready %d\n",
                   kc_cache_ready(cache) ? 1 : 0);
    free(sts);
    return kc__buf_steal(&b, NULL);
}

char *kc_health_metrics_text(kc_cache *cache)
{
    return cache ? metrics_text(cache, NULL, 0) : NULL;
}

/* ---- other layers' metrics ------------------------------------------------------------------ */

static void render_sources(kc_health *h, kc__buf *b)
{
    pthread_mutex_lock(&h->sources_mu);
    for (size_t i = 0; i < h->n_sources; i++) {
        char *m = h->sources[i].render(h->sources[i].ud);
        if (m)
            kc__buf_append_str(b, m);
        free(m);
    }
    pthread_mutex_unlock(&h->sources_mu);
}

int kc_health_add_metrics_source(kc_health *h, char *(*render)(void *ud), void *ud)
{
    if (!h || !render)
        return KC_EINVAL;
    int rc = 0;
    pthread_mutex_lock(&h->sources_mu);
    if (h->n_sources >= KC_HEALTH_METRICS_SOURCES_MAX) {
        rc = KC_EBUSY;
    } else {
        metrics_source *ns = realloc(h->sources, (h->n_sources + 1) * sizeof(*ns));
        if (ns) {
            h->sources = ns;
            h->sources[h->n_sources++] = (metrics_source){render, ud};
        } else {
            rc = KC_ENOMEM;
        }
    }
    pthread_mutex_unlock(&h->sources_mu);
    return rc;
}

int kc_health_remove_metrics_source(kc_health *h, char *(*render)(void *ud), void *ud)
{
    if (!h || !render)
        return KC_EINVAL;
    int rc = KC_ENOTFOUND;
    pthread_mutex_lock(&h->sources_mu);
    for (size_t i = 0; i < h->n_sources; i++) {
        if (h->sources[i].render == render && h->sources[i].ud == ud) {
            memmove(&h->sources[i], &h->sources[i + 1],
                    (h->n_sources - i - 1) * sizeof(h->sources[0]));
            h->n_sources--;
            rc = 0;
            break;
        }
    }
    pthread_mutex_unlock(&h->sources_mu);
    return rc;
}

int kc_health_add_informer(kc_health *h, kc_informer *inf, bool required)
{
    if (!h || !inf)
        return KC_EINVAL;
    int rc = 0;
    pthread_mutex_lock(&h->informers_mu);
    for (size_t i = 0; i < h->n_informers && !rc; i++)
        if (h->informers[i].inf == inf)
            rc = KC_EEXISTS;
    if (!rc && h->n_informers >= KC_HEALTH_INFORMERS_MAX)
        rc = KC_EBUSY;
    if (!rc) {
        extra_informer *ni = realloc(h->informers, (h->n_informers + 1) * sizeof(*ni));
        if (ni) {
            h->informers = ni;
            h->informers[h->n_informers++] = (extra_informer){inf, required};
        } else {
            rc = KC_ENOMEM;
        }
    }
    pthread_mutex_unlock(&h->informers_mu);
    return rc;
}

int kc_health_remove_informer(kc_health *h, kc_informer *inf)
{
    if (!h || !inf)
        return KC_EINVAL;
    int rc = KC_ENOTFOUND;
    pthread_mutex_lock(&h->informers_mu);
    for (size_t i = 0; i < h->n_informers; i++) {
        if (h->informers[i].inf == inf) {
            memmove(&h->informers[i], &h->informers[i + 1],
                    (h->n_informers - i - 1) * sizeof(h->informers[0]));
            h->n_informers--;
            rc = 0;
            break;
        }
    }
    pthread_mutex_unlock(&h->informers_mu);
    return rc;
}

/* One line per informer into lines ("[+]informer NAME ok" / "[-]informer NAME failed: why…");
 * false when a required informer is not ready. Shared with the webhook server's /readyz. */
/* inf's line; false when it is required and not ready. */
static bool readyz_check(kc_informer *inf, bool required, kc__buf *lines)
{
    kc_informer_status st;
    kc_informer_get_status(inf, &st);
    if (st.ready) {
        kc__buf_printf(lines, "[+]informer %s ok\n", kc_informer_name(inf));
        return true;
    }
    const char *why = st.phase == KC_INFORMER_PHASE_STOPPED ? "stopped"
                      : !st.synced                          ? "not synced"
                                                            : "stale";
    kc__buf_printf(lines, "[%c]informer %s %s: %s", required ? '-' : '+', kc_informer_name(inf),
                   required ? "failed" : "optional, failed", why);
    if (st.synced && st.disconnected_ms > 0)
        kc__buf_printf(lines, " (watch down for %.1fs)", (double)st.disconnected_ms / 1000.0);
    if (st.consecutive_errors > 0 && st.phase != KC_INFORMER_PHASE_STOPPED) {
        kc__buf_printf(lines, ": last error %.1fs ago (%llu in a row): ",
                       (double)st.last_error_age_ms / 1000.0,
                       (unsigned long long)st.consecutive_errors);
        kc__inf_error_text(&st, lines);
    }
    kc__buf_append_char(lines, '\n');
    return !required;
}

bool kc__health_readyz_checks(kc_cache *cache, kc__buf *lines)
{
    size_t n = kc_cache_informer_count(cache);
    bool ok = true;
    for (size_t i = 0; i < n; i++)
        if (!readyz_check(kc_cache_informer_at(cache, i), kc_cache_informer_required(cache, i),
                          lines))
            ok = false;
    return ok;
}

/* Returns the HTTP status; fills b with the body. */
static unsigned readyz(kc_health *h, bool verbose, kc__buf *b)
{
    kc__buf lines = KC__BUF_INIT(1024 * 1024);
    bool ok = kc__health_readyz_checks(h->cache, &lines);
    pthread_mutex_lock(&h->informers_mu);
    for (size_t i = 0; i < h->n_informers; i++)
        if (!readyz_check(h->informers[i].inf, h->informers[i].required, &lines))
            ok = false;
    pthread_mutex_unlock(&h->informers_mu);
    if (ok && !verbose) {
        kc__buf_append_str(b, "ok");
    } else {
        kc__buf_append(b, lines.data ? lines.data : "", lines.len);
        kc__buf_append_str(b, ok ? "readyz check passed\n" : "readyz check failed\n");
    }
    kc__buf_free(&lines);
    return ok ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE;
}

/* ---- MHD glue ---------------------------------------------------------------------------------
 */

static enum MHD_Result find_verbose(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
    (void)kind;
    (void)value;
    if (strcmp(key, "verbose") == 0) {
        *(bool *)cls = true;
        return MHD_NO;
    }
    return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    kc_health *h = cls;
    (void)version;
    (void)upload;
    (void)con_cls;
    if (*upload_size)
        *upload_size = 0;
    bool verbose = false;
    MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, find_verbose, &verbose);
    kc__buf b = KC__BUF_INIT(4 * 1024 * 1024);
    unsigned status = MHD_HTTP_OK;
    const char *ctype = "text/plain; charset=utf-8";
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
        status = MHD_HTTP_METHOD_NOT_ALLOWED;
        kc__buf_append_str(&b, "method not allowed\n");
    } else if (strcmp(url, "/readyz") == 0) {
        status = readyz(h, verbose, &b);
    } else if (strcmp(url, "/healthz") == 0 || strcmp(url, "/livez") == 0) {
        kc__buf_append_str(&b, verbose ? "[+]ping ok\nhealthz check passed\n" : "ok");
    } else if (strcmp(url, "/metrics") == 0) {
        pthread_mutex_lock(&h->informers_mu);
        char *m = metrics_text(h->cache, h->informers, h->n_informers);
        pthread_mutex_unlock(&h->informers_mu);
        if (m)
            kc__buf_append_str(&b, m);
        else
            status = MHD_HTTP_INTERNAL_SERVER_ERROR;
        free(m);
        render_sources(h, &b);
        ctype = "text/plain; version=0.0.4; charset=utf-8";
    } else {
        status = MHD_HTTP_NOT_FOUND;
        kc__buf_append_str(&b, "404 page not found\n");
    }
    size_t len = 0;
    char *body = kc__buf_steal(&b, &len);
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(body ? len : 0, body ? body : (char *)"",
                                        body ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    if (!resp) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", ctype);
    MHD_add_response_header(resp, "Cache-Control", "no-cache, private");
    enum MHD_Result r = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return r;
}

static int parse_listen(const char *listen, struct sockaddr_in *sa)
{
    memset(sa, 0, sizeof(*sa));
    sa->sin_family = AF_INET;
    const char *l = listen ? listen : "127.0.0.1:0";
    const char *colon = strrchr(l, ':');
    if (!colon || colon - l >= 64)
        return KC_EINVAL;
    char host[64];
    memcpy(host, l, (size_t)(colon - l));
    host[colon - l] = '\0';
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (*end || port < 0 || port > 65535 || colon[1] == '\0')
        return KC_EINVAL;
    if (host[0] == '\0' || strcmp(host, "0.0.0.0") == 0)
        sa->sin_addr.s_addr = htonl(INADDR_ANY);
    else if (strcmp(host, "localhost") == 0)
        sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    else if (inet_pton(AF_INET, host, &sa->sin_addr) != 1)
        return KC_EINVAL;
    sa->sin_port = htons((uint16_t)port);
    return 0;
}

int(kc_health_new)(kc_cache *cache, const char *listen, const kc_health_opts *opts,
                   size_t opts_size, kc_health **ret, kc_error *err)
{
    KC__OPTS_TAKE(opts, kc_health_opts, err);
    struct sockaddr_in sa;
    if (!cache || !ret)
        return kc_error_set(err, KC_EINVAL, "health: cache and ret are required");
    if (parse_listen(listen, &sa) < 0)
        return kc_error_set(err, KC_EINVAL, "health: bad listen address %s",
                            listen ? listen : "(null)");
    kc_health *h = calloc(1, sizeof(*h));
    if (!h)
        return kc_error_set(err, KC_ENOMEM, "health: out of memory");
    h->cache = cache;
    pthread_mutex_init(&h->sources_mu, NULL);
    pthread_mutex_init(&h->informers_mu, NULL);
    unsigned maxc = (opts && opts->max_connections) ? opts->max_connections : 64;
    h->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, 0, NULL, NULL,
                            on_request, h, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                            MHD_OPTION_CONNECTION_LIMIT, maxc, MHD_OPTION_CONNECTION_TIMEOUT,
                            (unsigned)30, MHD_OPTION_END);
    if (!h->d) {
        pthread_mutex_destroy(&h->sources_mu);
        pthread_mutex_destroy(&h->informers_mu);
        free(h);
        return kc_error_set(err, KC_EIO, "health: cannot listen on %s",
                            listen ? listen : "127.0.0.1:0");
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    h->port = info ? info->port : ntohs(sa.sin_port);
    char host[INET_ADDRSTRLEN];
    if (sa.sin_addr.s_addr == htonl(INADDR_ANY))
        strcpy(host, "127.0.0.1");
    else
        inet_ntop(AF_INET, &sa.sin_addr, host, sizeof(host));
    snprintf(h->url, sizeof(h->url), "http://%s:%d", host, h->port);
    *ret = h;
    return 0;
}

const char *kc_health_url(const kc_health *h)
{
    return h ? h->url : NULL;
}

int kc_health_port(const kc_health *h)
{
    return h ? h->port : KC_EINVAL;
}

void kc_health_free(kc_health *h)
{
    if (!h)
        return;
    MHD_stop_daemon(h->d);
    pthread_mutex_destroy(&h->sources_mu);
    pthread_mutex_destroy(&h->informers_mu);
    free(h->sources);
    free(h->informers);
    free(h);
}
