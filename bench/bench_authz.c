/*
 * bench_authz.c — the per-request cost of authorization in the embedded API server
 * (docs/server.md "Authorization"): sequential GETs of one ConfigMap over one keep-alive
 * connection, in-process server, for three set-ups:
 *   1. AlwaysAllow, no token (the default: the hook is one atomic compare and a prefix test);
 *   2. RBAC, as the admin (system:masters: authentication, then the cached ruleset's flag);
 *   3. RBAC, as a user granted by a RoleBinding among BINDINGS other bindings and roles (the
 *      cached ruleset walked);
 * and, in set-up 3, the first request after an RBAC change (the ruleset compiled again: one pass
 * over every binding under the store lock).
 * The three run interleaved (rounds of REQUESTS/10 each) so that load from elsewhere on the
 * machine hits them alike; besides wall-clock rates, the process CPU time per request (client and
 * server threads: steadier than the rate on a shared machine). Then the decision alone, in-process
 * (kc__authz_authenticate + kc__authz_allowed, thread CPU time per call), as the admin and as that
 * user. Usage: bench_authz [REQUESTS] [BINDINGS]   (defaults 20000 200) Prints `BENCH <metric>
 * <value> <unit>` lines; the ratios are to set-up 1.
 */
#include <curl/curl.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kcache/server.h"
#include "server/authz/authz.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU seconds of the whole process (client and server threads). */
static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static size_t sink(char *p, size_t sz, size_t n, void *ud)
{
    (void)p;
    (void)ud;
    return sz * n;
}

/* One request; the HTTP status. */
static long req(CURL *c, const char *url, const char *method, const char *body)
{
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    if (body)
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    else
        curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    long st = 0;
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &st);
    return st;
}

static CURL *handle(const char *token, struct curl_slist **h)
{
    CURL *c = curl_easy_init();
    char a[256];
    *h = curl_slist_append(NULL, "Content-Type: application/json");
    if (token) {
        snprintf(a, sizeof a, "Authorization: Bearer %s", token);
        *h = curl_slist_append(*h, a);
    }
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, *h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
    return c;
}

/* n GETs of the ConfigMap as token over c: seconds taken (negative on a failed request). */
static double run(CURL *c, kc_server *s, int n)
{
    char url[512];
    snprintf(url, sizeof url, "%s/api/v1/namespaces/default/configmaps/bench", kc_server_url(s));
    double t0 = now_s();
    for (int i = 0; i < n; i++)
        if (req(c, url, "GET", NULL) != 200)
            return -1;
    return now_s() - t0;
}

/* Thread CPU ns per decision (authenticate + authorize a GET of the ConfigMap) as token. */
static double decide_ns(kc_server *s, const char *token, int n)
{
    char h[128];
    snprintf(h, sizeof h, "Bearer %s", token);
    struct timespec a, b;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
    int ok = 0;
    for (int i = 0; i < n; i++) {
        kc__user u;
        kc__attrs at = {.user = &u,
                        .resource_request = true,
                        .verb = "get",
                        .group = "",
                        .version = "v1",
                        .resource = "configmaps",
                        .sub = "",
                        .ns = "default",
                        .name = "bench",
                        .path = ""};
        ok += kc__authz_authenticate(s, h, &u) == 0 && kc__authz_allowed(s, &at);
    }
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    double ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
    return ok == n ? ns / n : -1;
}

static kc_server *start(int mode)
{
    kc_server_opts o;
    memset(&o, 0, sizeof o);
    o.listen = "127.0.0.1:0";
    o.quiet = true;
    o.authorization = mode;
    if (mode) {
        o.token = "admin";
        o.users = "alice=alice";
    }
    kc_server *s = NULL;
    kc_error e = KC_ERROR_INIT;
    if (kc_server_new(&o, &s, &e) || kc_server_start(s, &e)) {
        fprintf(stderr, "bench_authz: server: %s\n", e.message ? e.message : "?");
        kc_error_clear(&e);
        kc_server_free(s);
        return NULL;
    }
    return s;
}

static void post(kc_server *s, const char *path, const char *body)
{
    struct curl_slist *h;
    CURL *c = handle("admin", &h);
    char url[512];
    snprintf(url, sizeof url, "%s%s", kc_server_url(s), path);
    long st = req(c, url, "POST", body);
    if (st != 201)
        fprintf(stderr, "bench_authz: POST %s: %ld\n", path, st);
    curl_easy_cleanup(c);
    curl_slist_free_all(h);
}

#define RBAC "/apis/rbac.authorization.k8s.io/v1/namespaces/default/"

/* BINDINGS roles and bindings for other users, then alice's. */
static void policy(kc_server *s, int bindings)
{
    char body[1024];
    for (int i = 0; i <= bindings; i++) {
        const char *who = i == bindings ? "alice" : "someone";
        snprintf(body, sizeof body,
                 "{\"metadata\":{\"name\":\"r%d\"},\"rules\":[{\"apiGroups\":[\"\"],\"resources\":"
                 "[\"secrets\",\"configmaps\"],\"verbs\":[\"get\",\"list\"]}]}",
                 i);
        post(s, RBAC "roles", body);
        snprintf(body, sizeof body,
                 "{\"metadata\":{\"name\":\"b%d\"},\"subjects\":[{\"kind\":\"User\",\"name\":"
                 "\"%s%d\"}],\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":"
                 "\"Role\",\"name\":\"r%d\"}}",
                 i, who, i == bindings ? 0 : i, i);
        if (i == bindings) /* alice's own subject name, no suffix */
            snprintf(body, sizeof body,
                     "{\"metadata\":{\"name\":\"b%d\"},\"subjects\":[{\"kind\":\"User\",\"name\":"
                     "\"alice\"}],\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\","
                     "\"kind\":\"Role\",\"name\":\"r%d\"}}",
                     i, i);
        post(s, RBAC "rolebindings", body);
    }
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 20000, bindings = argc > 2 ? atoi(argv[2]) : 200;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const char *cm = "{\"metadata\":{\"name\":\"bench\"},\"data\":{\"a\":\"b\"}}";
    kc_server *s0 = start(KC_SERVER_AUTHZ_ALWAYS_ALLOW), *s1 = start(KC_SERVER_AUTHZ_RBAC);
    if (!s0 || !s1)
        return 1;
    post(s0, "/api/v1/namespaces/default/configmaps", cm);
    post(s1, "/api/v1/namespaces/default/configmaps", cm);
    policy(s1, bindings);
    struct curl_slist *h[3];
    CURL *c[3] = {handle(NULL, &h[0]), handle("admin", &h[1]), handle("alice", &h[2])};
    kc_server *srv[3] = {s0, s1, s1};
    double t[3] = {0}, cpu[3] = {0};
    for (int k = 0; k < 3; k++)
        run(c[k], srv[k], 10); /* warm-up: connection, ruleset */
    int round = n / 10 > 0 ? n / 10 : 1, ok = 1;
    for (int r = 0; r < 10 && ok; r++)
        for (int k = 0; k < 3 && ok; k++) {
            double c0 = cpu_s(), dt = run(c[k], srv[k], round);
            cpu[k] += cpu_s() - c0;
            ok = dt >= 0;
            t[k] += dt;
        }
    for (int k = 0; k < 3; k++) {
        curl_easy_cleanup(c[k]);
        curl_slist_free_all(h[k]);
    }
    double admin_ns = decide_ns(s1, "admin", 200000), user_ns = decide_ns(s1, "alice", 200000);
    /* the first request after an RBAC change compiles alice's rules again */
    double worst = 0;
    for (int i = 0; i < 20; i++) {
        char body[256];
        snprintf(body, sizeof body, "{\"metadata\":{\"name\":\"x%d\"},\"rules\":[]}", i);
        post(s1, RBAC "roles", body);
        double ns = decide_ns(s1, "alice", 1);
        worst = ns > worst ? ns : worst;
    }
    kc_server_free(s0);
    kc_server_free(s1);
    if (!ok)
        return 1;
    printf("GETs of one ConfigMap, one keep-alive connection each, %d requests per set-up\n",
           round * 10);
    double rate[3];
    for (int k = 0; k < 3; k++)
        rate[k] = round * 10 / t[k];
    printf("BENCH authz_alwaysallow_get_rate %.0f req/s\n", rate[0]);
    printf("BENCH authz_rbac_admin_get_rate %.0f req/s\n", rate[1]);
    printf("BENCH authz_rbac_user_get_rate %.0f req/s\n", rate[2]);
    printf("BENCH authz_rbac_admin_ratio %.3f x\n", rate[1] / rate[0]);
    printf("BENCH authz_rbac_user_ratio %.3f x\n", rate[2] / rate[0]);
    for (int k = 0; k < 3; k++)
        printf("BENCH authz_%s_cpu_per_request %.1f us\n",
               k == 0   ? "alwaysallow"
               : k == 1 ? "rbac_admin"
                        : "rbac_user",
               cpu[k] * 1e6 / (round * 10));
    printf("BENCH authz_rbac_user_cpu_ratio %.3f x\n", cpu[2] / cpu[0]);
    printf("BENCH authz_decision_admin %.0f ns\n", admin_ns);
    printf("BENCH authz_decision_user %.0f ns (%d bindings)\n", user_ns, bindings + 1);
    printf("BENCH authz_decision_after_rbac_change_max %.0f us\n", worst / 1e3);
    curl_global_cleanup();
    return 0;
}
