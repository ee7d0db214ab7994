/*
 * bench_client.c — REST client throughput against the embedded API server (TLS + token):
 *   1. GETs/s of one object through one kc_client (keep-alive connection reused), vs
 *   2. GETs/s with a new curl handle — so a new TCP+TLS connection — per request, which is what
 *      the official Kubernetes C client does; both reported, and their ratio;
 *   3. LIST of N pods (default 100000; argv[1] for a smaller N) end to end: request → every item
 *      decoded into a kc_obj, in objects/s (one unpaged LIST, and paged with limit=500).
 * Each figure: one warm-up run, then the median of 3 runs. Prints human text and
 * `BENCH <metric> <value> <unit>` lines.
 */
#include "kcache/client.h"
#include "kcache/server.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TOKEN "bench-token"
#define RUNS  3

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return v[n / 2];
}

static void die(const char *what, int rc, const kc_error *err)
{
    fprintf(stderr, "bench_client: %s: %s %s\n", what, kc_errno_name(rc),
            err && err->message ? err->message : "");
    exit(1);
}

static const kc_gvr CM = {"", "v1", "configmaps"};
static const kc_gvr PODS = {"", "v1", "pods"};

static double gets_keepalive(kc_client *c, int n)
{
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
        kc_obj *o = NULL;
        kc_error err = KC_ERROR_INIT;
        int rc = kc_client_get(c, &CM, "default", "bench", &o, &err);
        if (rc)
            die("GET", rc, &err);
        kc_obj_unref(o);
    }
    return n / (now_s() - t0);
}

typedef struct body {
    char buf[65536];
    size_t len;
} body;

static size_t sink(char *p, size_t sz, size_t n, void *ud)
{
    body *b = ud;
    if (b->len + sz * n > sizeof b->buf)
        return 0;
    memcpy(b->buf + b->len, p, sz * n);
    b->len += sz * n;
    return sz * n;
}

/* The official C client's pattern: curl_easy_init … perform … cleanup for every call. */
static double gets_new_handle(kc_server *s, int n)
{
    char url[256];
    snprintf(url, sizeof url, "%s/api/v1/namespaces/default/configmaps/bench", kc_server_url(s));
    const char *ca = kc_server_ca_pem(s);
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
        CURL *e = curl_easy_init();
        struct curl_slist *h = curl_slist_append(NULL, "Authorization: Bearer " TOKEN);
        h = curl_slist_append(h, "Accept: application/json");
        struct curl_blob b = {(void *)ca, strlen(ca), CURL_BLOB_COPY};
        static body bd;
        bd.len = 0;
        curl_easy_setopt(e, CURLOPT_URL, url);
        curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &b);
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, sink);
        curl_easy_setopt(e, CURLOPT_WRITEDATA, &bd);
        CURLcode cc = curl_easy_perform(e);
        long code = 0;
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
        curl_slist_free_all(h);
        curl_easy_cleanup(e);
        if (cc != CURLE_OK || code != 200) {
            fprintf(stderr, "bench_client: new-handle GET failed: %s %ld\n", curl_easy_strerror(cc),
                    code);
            exit(1);
        }
        /* decode like the keep-alive path does, so only the transport differs */
        kc_obj *o = NULL;
        if (kc_obj_parse(bd.buf, bd.len, NULL, &o, NULL) != 0) {
            fprintf(stderr, "bench_client: bad GET body\n");
            exit(1);
        }
        kc_obj_unref(o);
    }
    return n / (now_s() - t0);
}

static int count_item(void *ud, kc_obj *o)
{
    (*(size_t *)ud)++;
    kc_obj_unref(o);
    return 0;
}

/* objects/s of wall time; *ret_cpu gets objects per CPU-second of the whole process (client and
 * the in-process server together), which is less sensitive to a loaded machine. */
static double list_pods(kc_client *c, int64_t limit, size_t want, double *ret_cpu)
{
    size_t n = 0;
    kc_list_opts lo = {.limit = limit};
    kc_error err = KC_ERROR_INIT;
    double c0 = cpu_s();
    double t0 = now_s();
    int rc = limit ? kc_client_list_all(c, &PODS, NULL, &lo, NULL, count_item, &n, &err)
                   : kc_client_list(c, &PODS, NULL, &lo, NULL, count_item, &n, &err);
    double dt = now_s() - t0;
    if (ret_cpu)
        *ret_cpu = (double)n / (cpu_s() - c0);
    if (rc)
        die("LIST", rc, &err);
    if (n != want) {
        fprintf(stderr, "bench_client: LIST returned %zu pods, want %zu\n", n, want);
        exit(1);
    }
    return (double)n / dt;
}

int main(int argc, char **argv)
{
    size_t npods = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 100000;
    int ngets = argc > 2 ? atoi(argv[2]) : 2000;
    char spec[64];
    snprintf(spec, sizeof spec, "pods=%zu", npods);
    kc_server_opts so = {.listen = "127.0.0.1:0",
                         .tls = true,
                         .token = TOKEN,
                         .quiet = true,
                         .seed_spec = npods ? spec : NULL};
    kc_server *s = NULL;
    kc_error err = KC_ERROR_INIT;
    int rc = kc_server_new(&so, &s, &err);
    if (!rc)
        rc = kc_server_start(s, &err);
    if (rc)
        die("server", rc, &err);
    kc_config *cfg = NULL;
    rc = kc_config_from_url(kc_server_url(s), kc_server_ca_pem(s), TOKEN, &cfg, &err);
    kc_client_opts co = {.qps = -1, .request_timeout_ms = 600000};
    kc_client *c = NULL;
    if (!rc)
        rc = kc_client_new(cfg, &co, &c, &err);
    if (rc)
        die("client", rc, &err);
    const char *b = "{\"metadata\":{\"name\":\"bench\"},\"data\":{\"k\":\"v\"}}";
    rc = kc_client_create(c, &CM, "default", b, strlen(b), NULL, NULL, &err);
    if (rc)
        die("create", rc, &err);

    double ka[RUNS], nh[RUNS];
    gets_keepalive(c, ngets / 10);
    gets_new_handle(s, ngets / 20);
    for (int r = 0; r < RUNS; r++) {
        ka[r] = gets_keepalive(c, ngets);
        nh[r] = gets_new_handle(s, ngets / 4);
    }
    double ka_m = median(ka, RUNS), nh_m = median(nh, RUNS);
    printf("GET one object over TLS, keep-alive (one kc_client): %.0f GETs/s\n", ka_m);
    printf("GET one object over TLS, new curl handle per request: %.0f GETs/s\n", nh_m);
    printf("keep-alive / new connection: %.1fx\n", ka_m / nh_m);
    printf("BENCH client_get_keepalive %.0f req/s\n", ka_m);
    printf("BENCH client_get_new_connection %.0f req/s\n", nh_m);
    printf("BENCH client_get_keepalive_ratio %.2f x\n", ka_m / nh_m);

    if (npods) {
        double l1[RUNS], lp[RUNS], cpu1[RUNS], cpup[RUNS];
        list_pods(c, 0, npods, NULL); /* warm-up (first-touch page faults) */
        for (int r = 0; r < RUNS; r++) {
            l1[r] = list_pods(c, 0, npods, &cpu1[r]);
            lp[r] = list_pods(c, 500, npods, &cpup[r]);
        }
        double l1_m = median(l1, RUNS), lp_m = median(lp, RUNS);
        double c1_m = median(cpu1, RUNS), cp_m = median(cpup, RUNS);
        printf("LIST %zu pods, one request, decoded to kc_obj: %.0f objects/s (%.2f s); "
               "%.0f objects per CPU-second (client + in-process server)\n",
               npods, l1_m, npods / l1_m, c1_m);
        printf("LIST %zu pods, paged limit=500: %.0f objects/s (%.2f s); %.0f objects per "
               "CPU-second\n",
               npods, lp_m, npods / lp_m, cp_m);
        printf("BENCH client_list_pods_objects_per_s %.0f obj/s\n", l1_m);
        printf("BENCH client_list_pods_paged_objects_per_s %.0f obj/s\n", lp_m);
        printf("BENCH client_list_pods_objects_per_cpu_s %.0f obj/cpu-s\n", c1_m);
        printf("BENCH client_list_pods_paged_objects_per_cpu_s %.0f obj/cpu-s\n", cp_m);
    }
    kc_client_free(c);
    kc_config_unref(cfg);
    kc_server_free(s);
    return 0;
}
