/*
 * kubernetes_svc.c — the objects every cluster has for its API server in namespace default: the
 * Service `kubernetes` (ClusterIP, the service CIDR's first IP — reserved by the allocator — port
 * 443 "https" to the server's port; labels component=apiserver, provider=kubernetes), its
 * Endpoints (labelled endpointslice.kubernetes.io/skip-mirror, as the API server writes them) and
 * its EndpointSlice `kubernetes` (kubernetes.io/service-name), both naming the address the server
 * listens on. So `kubectl get svc kubernetes`, in-cluster style discovery and tests that look for
 * them work as on a cluster.
 *
 * Design: written as stored objects through the seeding path (kc__create_json_ex, as_stored: no
 * allocation for the reserved IP, no defaulting needed: they are written in their stored form), by
 * kc_server_start once the port is known and by a wiping restart. One that exists already (a
 * fixture, or an earlier start) is kept. Runs with srv->mu held.
 */
#include "server/http/http.h"

#include "server/defaults/service_alloc.h"
#include "server/storage/write.h"

#include <stdio.h>
#include <string.h>

static int create_one(kc_server *srv, const char *json, int n)
{
    if (n <= 0)
        return KC_ENOMEM;
    kc_error err = KC_ERROR_INIT;
    int rc = kc__create_json_ex(srv, json, (size_t)n, true, true, &err);
    bool exists = err.http_status == 409;
    kc_error_clear(&err);
    return exists ? 0 : rc;
}

int kc__kubernetes_service_create(kc_server *srv)
{
    char ip[64], buf[1024];
    const char *fam = kc__svc_alloc_first_ip(srv->svc_alloc, ip);
    int n = snprintf(buf, sizeof(buf),
                     "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":"
                     "\"kubernetes\",\"namespace\":\"default\",\"labels\":{\"component\":"
                     "\"apiserver\",\"provider\":\"kubernetes\"}},\"spec\":{\"ports\":[{\"name\":"
                     "\"https\",\"protocol\":\"TCP\",\"port\":443,\"targetPort\":%u}],"
                     "\"clusterIP\":\"%s\",\"clusterIPs\":[\"%s\"],\"type\":\"ClusterIP\","
                     "\"sessionAffinity\":\"None\",\"ipFamilies\":[\"%s\"],\"ipFamilyPolicy\":"
                     "\"SingleStack\",\"internalTrafficPolicy\":\"Cluster\"},\"status\":{"
                     "\"loadBalancer\":{}}}",
                     srv->adv_port, ip, ip, fam);
    int rc = create_one(srv, buf, n);
    if (rc)
        return rc;
    const char *efam = strchr(srv->adv_host, ':') ? "IPv6" : "IPv4";
    n = snprintf(buf, sizeof(buf),
                 "{\"apiVersion\":\"v1\",\"kind\":\"Endpoints\",\"metadata\":{\"name\":"
                 "\"kubernetes\",\"namespace\":\"default\",\"labels\":{"
                 "\"endpointslice.kubernetes.io/skip-mirror\":\"true\"}},\"subsets\":[{"
                 "\"addresses\":[{\"ip\":\"%s\"}],\"ports\":[{\"name\":\"https\",\"port\":%u,"
                 "\"protocol\":\"TCP\"}]}]}",
                 srv->adv_host, srv->adv_port);
    if ((rc = create_one(srv, buf, n)) != 0)
        return rc;
    n = snprintf(buf, sizeof(buf),
                 "{\"apiVersion\":\"discovery.k8s.io/v1\",\"kind\":\"EndpointSlice\","
                 "\"metadata\":{\"name\":\"kubernetes\",\"namespace\":\"default\",\"labels\":{"
                 "\"kubernetes.io/service-name\":\"kubernetes\"}},\"addressType\":\"%s\","
                 "\"endpoints\":[{\"addresses\":[\"%s\"],\"conditions\":{\"ready\":true}}],"
                 "\"ports\":[{\"name\":\"https\",\"port\":%u,\"protocol\":\"TCP\"}]}",
                 efam, srv->adv_host, srv->adv_port);
    return create_one(srv, buf, n);
}
