/*
 * test_admission_fixture.h — the fixture of the admission webhook tests (test_server_admission*.c):
 * a test webhook (kc_twh.h) whose certificate names wh.default.svc, and a server that maps the
 * Service wh.default:443 to it (kc_server_opts.webhook_services); helpers that store webhook
 * configurations and build their webhooks.
 */
#ifndef KC_TEST_ADMISSION_FIXTURE_H
#define KC_TEST_ADMISSION_FIXTURE_H

#include "kc_twh.h"
#include "test_server_util.h"

typedef struct adm_fx {
    kc_server *srv;
    kc_twh *wh;
} adm_fx;

TS_UNUSED static int adm_setup(void **state)
{
    adm_fx *f = calloc(1, sizeof(*f));
    if (!f || !(f->wh = kc_twh_start("wh.default.svc")))
        return -1;
    char map[128];
    snprintf(map, sizeof(map), "wh.default:443=127.0.0.1:%d", kc_twh_port(f->wh));
    kc_server_opts o;
    memset(&o, 0, sizeof(o));
    o.webhook_services = map;
    if (!(f->srv = ts_start_opts(&o)))
        return -1;
    *state = f;
    return 0;
}

TS_UNUSED static int adm_teardown(void **state)
{
    adm_fx *f = *state;
    kc_server_free(f->srv);
    kc_twh_stop(f->wh);
    free(f);
    return 0;
}

/* Rules matching every operation on ConfigMaps. */
#define ADM_CM_RULES                                                                               \
    "\"rules\":[{\"operations\":[\"*\"],\"apiGroups\":[\"\"],\"apiVersions\":[\"v1\"],"            \
    "\"resources\":[\"configmaps\"]}]"

/* One webhook (JSON text, static per thread): name, the Service's name (port 443 in default),
 * the path, the caBundle, then extra fields (rules etc., a JSON fragment without braces; NULL =
 * ADM_CM_RULES). */
TS_UNUSED static char *adm_hook_full(const char *name, const char *svc, const char *path,
                                     const char *ca_bundle, const char *extra)
{
    static __thread char b[8][4096];
    static __thread int k;
    char *o = b[k++ % 8];
    snprintf(o, 4096,
             "{\"name\":\"%s\",\"clientConfig\":{\"service\":{\"name\":\"%s\",\"namespace\":"
             "\"default\",\"path\":\"%s\",\"port\":443},\"caBundle\":\"%s\"},"
             "\"sideEffects\":\"None\",\"admissionReviewVersions\":[\"v1\"],%s}",
             name, svc, path, ca_bundle, extra ? extra : ADM_CM_RULES);
    return o;
}

/* The same for Service wh with the test webhook's CA. */
TS_UNUSED static char *adm_hook(adm_fx *f, const char *name, const char *path, const char *extra)
{
    return adm_hook_full(name, "wh", path, kc_twh_ca_bundle(f->wh), extra);
}

/* Store a configuration: kind "Mutating" or "Validating", its name, the webhooks' JSON texts
 * (NULL-terminated). Returns the HTTP status. */
TS_UNUSED static long adm_config(adm_fx *f, const char *kind, const char *name, ...)
{
    char body[32768];
    int n = snprintf(body, sizeof(body),
                     "{\"apiVersion\":\"admissionregistration.k8s.io/v1\",\"kind\":"
                     "\"%sWebhookConfiguration\",\"metadata\":{\"name\":\"%s\"},\"webhooks\":[",
                     kind, name);
    va_list ap;
    va_start(ap, name);
    const char *h;
    for (int i = 0; (h = va_arg(ap, const char *)) != NULL; i++)
        n += snprintf(body + n, sizeof(body) - (size_t)n, "%s%s", i ? "," : "", h);
    va_end(ap);
    snprintf(body + n, sizeof(body) - (size_t)n, "]}");
    char path[256];
    snprintf(path, sizeof(path), "/apis/admissionregistration.k8s.io/v1/%swebhookconfigurations",
             kind[0] == 'M' ? "mutating" : "validating");
    ts_resp r;
    long st = ts_post(f->srv, path, body, &r);
    if (st != 201)
        fprintf(stderr, "adm_config %s: %ld %s\n", name, st, r.body ? r.body : "");
    ts_resp_free(&r);
    return st;
}

/* The i-th review path received, its request stanza (new reference of the review; *req
 * borrowed from it). */
TS_UNUSED static json_t *adm_review(adm_fx *f, const char *path, size_t i, json_t **req)
{
    json_t *rev = kc_twh_review(f->wh, path, i);
    *req = json_object_get(rev, "request");
    return rev;
}

#endif
