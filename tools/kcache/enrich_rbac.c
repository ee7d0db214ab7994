/*
 * enrich_rbac.c — the daemon's start-up check of the RBAC it needs (enrich-semantics RB1): get,
 * list and watch on pods and namespaces of the core group, cluster-wide.
 *
 * Design: one SelfSubjectAccessReview per (verb, resource) — six POSTs, once — answered by the
 * API server's own authorizer, so what it says is what the informers will meet. A missing `watch`
 * would otherwise show only later and obliquely: the LIST succeeds, the cache syncs, and every
 * watch gets 403 while the data silently ages. Every denied pair is named in one message. When
 * the review itself cannot be made (transport failure, a status other than 201/200), the check
 * says so and the caller goes on (the API server may be down at a cold start: CA4 wants answers
 * from file-derived fields then, not an exit).
 */
#include "enrich_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcache/error.h"

#define SSAR_PATH "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"

/* 1 allowed, 0 denied, -1 unknown (why in msg). */
static int may(kc_client *client, const char *verb, const char *resource, char *msg, size_t n)
{
    char body[512];
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":\"SelfSubjectAccessReview\","
             "\"spec\":{\"resourceAttributes\":{\"verb\":\"%s\",\"group\":\"\",\"version\":\"v1\","
             "\"resource\":\"%s\"}}}",
             verb, resource);
    int status = 0;
    char *resp = NULL;
    size_t len = 0;
    kc_error err = KC_ERROR_INIT;
    int rc = kc_client_raw(client, "POST", SSAR_PATH, NULL, body, strlen(body), &status, &resp,
                           &len, &err);
    int ret = -1;
    if (rc) {
        snprintf(msg, n, "cannot check RBAC: %s", err.message ? err.message : kc_strerror(rc));
    } else if (status != 201 && status != 200) {
        snprintf(msg, n, "cannot check RBAC: SelfSubjectAccessReview answered HTTP %d", status);
    } else {
        json_t *o = json_loadb(resp, len, 0, NULL);
        json_t *allowed = json_object_get(json_object_get(o, "status"), "allowed");
        if (json_is_boolean(allowed))
            ret = json_is_true(allowed);
        else
            snprintf(msg, n, "cannot check RBAC: no status.allowed in the review");
        json_decref(o);
    }
    free(resp);
    kc_error_clear(&err);
    return ret;
}

int kc__enrich_rbac_check(kc_client *client, char *msg, size_t n)
{
    static const char *const verbs[] = {"get", "list", "watch"};
    static const char *const resources[] = {"pods", "namespaces"};
    char denied[256] = "";
    size_t dl = 0;
    for (size_t r = 0; r < 2; r++)
        for (size_t v = 0; v < 3; v++) {
            int ok = may(client, verbs[v], resources[r], msg, n);
            if (ok < 0)
                return -1;
            if (!ok && dl < sizeof denied)
                dl += (size_t)snprintf(denied + dl, sizeof denied - dl, "%s%s %s", dl ? ", " : "",
                                       verbs[v], resources[r]);
        }
    if (!dl)
        return 0;
    snprintf(msg, n,
             "RBAC: the API server does not allow this user to %s (the daemon needs get, list and "
             "watch on pods and namespaces, core group, cluster-wide)",
             denied);
    return 1;
}
