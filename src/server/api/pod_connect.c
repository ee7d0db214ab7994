/*
 * pod_connect.c — the pods subresources a kubelet serves (log, exec, attach, portforward,
 * proxy), answered as an API server whose nodes have no reachable kubelet.
 *
 * Design: kcache serve runs no kubelet, so these can never stream. Rather than a bare 404 "the
 * server could not find the requested resource" (which reads as a missing API), the reply
 * follows the API server's own checks before it would dial the kubelet
 * (pkg/registry/core/pod/strategy.go LogLocation / streamLocation): an unknown pod → 404 NotFound;
 * a container the pod does not have → 400 "container X is not valid for pod P"; a pod without
 * spec.nodeName → the log is empty (200, as upstream's nil location), exec/attach/portforward →
 * 400 "pod P does not have a host assigned"; a scheduled pod → 503 ServiceUnavailable naming the
 * node and saying there is no kubelet (where upstream would fail to dial it).
 * Thread-safe: takes srv->mu to read the pod.
 */
#include "server/api/api_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool kc__pod_connect_sub(const kc__rsrc *r, const char *sub)
{
    static const char *const subs[] = {"log", "exec", "attach", "portforward", "proxy"};
    if (r->group[0] || strcmp(r->plural, "pods") != 0)
        return false;
    for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++)
        if (strcmp(sub, subs[i]) == 0)
            return true;
    return false;
}

/* Whether pod has a container (or init / ephemeral container) named name. */
static bool has_container(const kc_obj *pod, const char *name)
{
    static const char *const lists[] = {"/spec/containers", "/spec/initContainers",
                                        "/spec/ephemeralContainers"};
    for (size_t l = 0; l < sizeof(lists) / sizeof(lists[0]); l++) {
        for (int i = 0; i < 1000; i++) {
            char ptr[64];
            snprintf(ptr, sizeof(ptr), "%s/%d/name", lists[l], i);
            char *s = NULL;
            if (kc_obj_get_string(pod, ptr, &s, NULL, NULL) != 0)
                break;
            bool eq = strcmp(s, name) == 0;
            free(s);
            if (eq)
                return true;
        }
    }
    return false;
}

static int answer(kc__req *req, const kc_obj *pod)
{
    const char *sub = req->route.sub, *name = req->route.name;
    bool log = strcmp(sub, "log") == 0;
    if (log && req->method != KC__M_GET)
        return kc__fail(&req->err, 405, "MethodNotAllowed",
                        "the server does not allow this method on the requested resource");
    const char *c = MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, "container");
    if (c && *c && !has_container(pod, c))
        return kc__fail(&req->err, 400, "BadRequest", "container %s is not valid for pod %s", c,
                        name);
    char *node = NULL;
    if (kc_obj_get_string(pod, "/spec/nodeName", &node, NULL, NULL) != 0 || !*node) {
        free(node);
        if (log)
            return kc__reply_text(req, 200, "");
        return kc__fail(&req->err, 400, "BadRequest", "pod %s does not have a host assigned", name);
    }
    int rc = kc__fail(&req->err, 503, "ServiceUnavailable",
                      "no kubelet behind kcache serve: pods/%s of pod %s cannot reach node %s", sub,
                      name, node);
    free(node);
    return rc;
}

int kc__pod_connect(kc__req *req, kc__rsrc *r)
{
    if (!req->route.has_name)
        return kc__fail_generic(&req->err, 404);
    kc_server *srv = req->srv;
    pthread_mutex_lock(&srv->mu);
    kc__entry *e = kc__store_find(r, req->route.ns, req->route.name);
    kc_obj *pod = e ? kc_obj_ref(e->obj) : NULL;
    pthread_mutex_unlock(&srv->mu);
    if (!pod)
        return kc__fail_notfound(&req->err, r, req->route.name);
    int rc = answer(req, pod);
    kc_obj_unref(pod);
    return rc;
}
