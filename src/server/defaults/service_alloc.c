/*
 * service_alloc.c — the Service registry's create/update rules around allocations
 * (service_alloc.h), after k8s.io/kubernetes pkg/registry/core/service/storage (storage.go:
 * patchAllocatedValues, normalizeClusterIPs, dropTypeDependentFields; alloc.go:
 * initIPFamilyFields, allocClusterIPs, initNodePorts, updateNodePorts, health check node ports)
 * and the immutability of spec.clusterIPs[0] (validation). Single-stack: the server serves one
 * IP family, that of its service CIDR (a headless selectorless Service still lists both
 * families, as upstream allows). Messages are upstream's, values printed as Go's %#v.
 * Runs under the caller's lock.
 */
#include "server/defaults/service_alloc_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What this write reserved, to undo on failure or after a dry run. */
typedef struct txn {
    kc__svc_alloc *a;
    uint64_t ips[2];
    size_t n_ips;
    uint64_t *ports;
    size_t n_ports, cap_ports;
} txn;

static void txn_undo(txn *t)
{
    for (size_t i = 0; i < t->n_ips; i++)
        kc__slots_set(&t->a->ips, t->ips[i], false);
    for (size_t i = 0; i < t->n_ports; i++)
        kc__slots_set(&t->a->ports, t->ports[i], false);
    t->n_ips = t->n_ports = 0;
}

static int fail_set(kc__svc_fail *f, int code, const char *field, const char *fmt, ...)
    KC__PRINTF(4, 5);
static int fail_set(kc__svc_fail *f, int code, const char *field, const char *fmt, ...)
{
    snprintf(f->field, sizeof(f->field), "%s", field ? field : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->msg, sizeof(f->msg), fmt, ap);
    va_end(ap);
    return code;
}

static const char *str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static const char *stype(const json_t *spec)
{
    return *str(spec, "type") ? str(spec, "type") : "ClusterIP";
}
static bool needs_cip(const json_t *spec)
{
    return strcmp(stype(spec), "ExternalName") != 0;
}
static bool needs_np(const json_t *spec)
{
    return !strcmp(stype(spec), "NodePort") || !strcmp(stype(spec), "LoadBalancer");
}
static bool needs_hc(const json_t *spec)
{
    return !strcmp(stype(spec), "LoadBalancer") &&
           !strcmp(str(spec, "externalTrafficPolicy"), "Local");
}
static bool should_alloc_np(const json_t *spec)
{
    return !strcmp(stype(spec), "NodePort") ||
           (!strcmp(stype(spec), "LoadBalancer") &&
            !json_is_false(json_object_get(spec, "allocateLoadBalancerNodePorts")));
}
static json_int_t node_port(const json_t *p)
{
    return json_integer_value(json_object_get(p, "nodePort"));
}
static bool empty_list(const json_t *v)
{
    return json_array_size(v) == 0;
}

/* Go's %#v of a []string (a JSON array of strings). */
static void go_strings(const json_t *arr, char *out, size_t cap)
{
    size_t o = (size_t)snprintf(out, cap, "[]string{");
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v)
    {
        if (o < cap)
            o += (size_t)snprintf(out + o, cap - o, "%s\"%s\"", i ? ", " : "",
                                  json_string_value(v) ? json_string_value(v) : "");
    }
    if (o < cap)
        snprintf(out + o, cap - o, "}");
}

/* ---- carrying values over an update -----------------------------------------------------------
 */

/* patchAllocatedValues: values the new object omits are the stored ones. Node ports are
 * matched by port name, never one that the new object already uses. */
static void patch_allocated(json_t *spec, const json_t *ospec)
{
    if (needs_cip(ospec) && needs_cip(spec)) {
        if (!*str(spec, "clusterIP") && *str(ospec, "clusterIP"))
            json_object_set(spec, "clusterIP", json_object_get(ospec, "clusterIP"));
        if (empty_list(json_object_get(spec, "clusterIPs")) &&
            !empty_list(json_object_get(ospec, "clusterIPs")))
            json_object_set_new(spec, "clusterIPs",
                                json_deep_copy(json_object_get(ospec, "clusterIPs")));
    }
    if (needs_np(ospec) && needs_np(spec)) {
        const json_t *oports = json_object_get(ospec, "ports"),
                     *nports = json_object_get(spec, "ports");
        size_t i, j;
        json_t *p, *q;
        json_array_foreach(nports, i, p)
        {
            if (node_port(p) || !json_is_object(p))
                continue;
            json_int_t val = 0;
            json_array_foreach(oports, j, q) if (!strcmp(str(q, "name"), str(p, "name"))) val =
                node_port(q);
            bool used = false;
            json_array_foreach(nports, j, q) used |= val && node_port(q) == val;
            if (val && !used)
                json_object_set_new(p, "nodePort", json_integer(val));
        }
    }
    if (needs_hc(ospec) && needs_hc(spec) &&
        !json_integer_value(json_object_get(spec, "healthCheckNodePort")) &&
        json_object_get(ospec, "healthCheckNodePort"))
        json_object_set(spec, "healthCheckNodePort", json_object_get(ospec, "healthCheckNodePort"));
}

static bool same(const json_t *a, const json_t *b, const char *key)
{
    const json_t *x = json_object_get(a, key), *y = json_object_get(b, key);
    if ((!x || json_is_null(x)) && (!y || json_is_null(y)))
        return true;
    return x && y && json_equal(x, y);
}

/* normalizeClusterIPs: clusterIP and clusterIPs kept consistent for old and new clients. */
static void normalize(json_t *spec, const json_t *ospec)
{
    const char *cip = str(spec, "clusterIP");
    json_t *cips = json_object_get(spec, "clusterIPs");
    if (!ospec) {
        if (*cip && empty_list(cips))
            json_object_set_new(spec, "clusterIPs", json_pack("[s]", cip));
        return;
    }
    if (!empty_list(json_object_get(ospec, "clusterIPs")) && empty_list(cips) &&
        !strcmp(str(ospec, "clusterIP"), cip))
        json_object_set_new(spec, "clusterIPs",
                            json_deep_copy(json_object_get(ospec, "clusterIPs")));
    if (strcmp(str(ospec, "clusterIP"), cip) != 0) {
        if (*str(ospec, "clusterIP") && !*cip && same(ospec, spec, "clusterIPs"))
            json_object_del(spec, "clusterIPs");
        if (*cip && same(ospec, spec, "clusterIPs"))
            json_object_set_new(spec, "clusterIPs", json_pack("[s]", cip));
    }
}

static bool same_node_ports(const json_t *a, const json_t *b)
{
    const json_t *pa = json_object_get(a, "ports"), *pb = json_object_get(b, "ports");
    if (json_array_size(pa) != json_array_size(pb))
        return false;
    for (size_t i = 0; i < json_array_size(pa); i++)
        if (node_port(json_array_get(pa, i)) != node_port(json_array_get(pb, i)))
            return false;
    return true;
}

/* dropTypeDependentFields: after a type change, values the server set and the user left as
 * they were are dropped (they are released after the commit). */
static void drop_type_dependent(json_t *svc, json_t *spec, const json_t *ospec)
{
    if (needs_cip(ospec) && !needs_cip(spec)) {
        if (same(ospec, spec, "clusterIPs")) {
            json_object_del(spec, "clusterIP");
            json_object_del(spec, "clusterIPs");
        }
        if (same(ospec, spec, "ipFamilies"))
            json_object_del(spec, "ipFamilies");
        if (same(ospec, spec, "ipFamilyPolicy"))
            json_object_del(spec, "ipFamilyPolicy");
    }
    if (needs_np(ospec) && !needs_np(spec) && same_node_ports(ospec, spec)) {
        size_t i;
        json_t *p;
        json_array_foreach(json_object_get(spec, "ports"), i, p) json_object_del(p, "nodePort");
    }
    if (needs_hc(ospec) && !needs_hc(spec) && same(ospec, spec, "healthCheckNodePort"))
        json_object_del(spec, "healthCheckNodePort");
    bool olb = !strcmp(stype(ospec), "LoadBalancer"), nlb = !strcmp(stype(spec), "LoadBalancer");
    if (olb && !nlb && same(ospec, spec, "allocateLoadBalancerNodePorts"))
        json_object_del(spec, "allocateLoadBalancerNodePorts");
    if (olb && !nlb && same(ospec, spec, "loadBalancerClass"))
        json_object_del(spec, "loadBalancerClass");
    bool oext = needs_np(ospec) || (!strcmp(stype(ospec), "ClusterIP") &&
                                    !empty_list(json_object_get(ospec, "externalIPs")));
    bool next = needs_np(spec) || (!strcmp(stype(spec), "ClusterIP") &&
                                   !empty_list(json_object_get(spec, "externalIPs")));
    if (oext && !next && same(ospec, spec, "externalTrafficPolicy"))
        json_object_del(spec, "externalTrafficPolicy");
    if (!nlb)
        json_object_set_new(json_object_get(svc, "status"), "loadBalancer", json_object());
}

/* ---- IP families and cluster IPs --------------------------------------------------------------
 */

static const char *alt_family(const char *f)
{
    return !strcmp(f, "IPv4") ? "IPv6" : "IPv4";
}

/* initIPFamilyFields for a single-stack server. */
static int init_families(kc__svc_alloc *a, json_t *spec, const json_t *ospec, kc__svc_fail *f)
{
    if (!needs_cip(spec))
        return 0;
    bool headless_nosel = !strcmp(str(spec, "clusterIP"), "None") &&
                          json_object_size(json_object_get(spec, "selector")) == 0;
    if (!*str(spec, "ipFamilyPolicy")) {
        const char *op = ospec ? str(ospec, "ipFamilyPolicy") : "";
        json_object_set_new(spec, "ipFamilyPolicy",
                            json_string(*op              ? op
                                        : headless_nosel ? "RequireDualStack"
                                                         : "SingleStack"));
    }
    const char *pol = str(spec, "ipFamilyPolicy");
    json_t *cips = json_object_get(spec, "clusterIPs"), *fams = json_object_get(spec, "ipFamilies");
    char v[256];
    go_strings(cips, v, sizeof(v));
    size_t i;
    json_t *x;
    json_array_foreach(cips, i, x)
    {
        uint64_t slot;
        const char *ip = json_string_value(x) ? json_string_value(x) : "";
        if ((i > 0 || strcmp(ip, "None") != 0) && *ip && kc__ip_slot(a, ip, &slot) == -2)
            return fail_set(f, KC_EUNPROCESSABLE, "",
                            "spec.clusterIPs[%zu]: Invalid value: \"%s\": must be a valid IP "
                            "address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                            i, ip);
    }
    if (!strcmp(pol, "SingleStack") && json_array_size(cips) == 2)
        return fail_set(f, KC_EUNPROCESSABLE, "spec.ipFamilyPolicy",
                        "Invalid value: \"SingleStack\": must be 'RequireDualStack' or "
                        "'PreferDualStack' when multiple cluster IPs are specified");
    if (!strcmp(pol, "SingleStack") && json_array_size(fams) == 2)
        return fail_set(f, KC_EUNPROCESSABLE, "spec.ipFamilyPolicy",
                        "Invalid value: \"SingleStack\": must be 'RequireDualStack' or "
                        "'PreferDualStack' when multiple IP families are specified");
    if (!json_is_array(fams)) {
        fams = json_array();
        if (!fams || json_object_set_new(spec, "ipFamilies", fams) < 0)
            return KC_ENOMEM;
    }
    json_array_foreach(cips, i, x)
    {
        const char *ip = json_string_value(x) ? json_string_value(x) : "";
        uint64_t slot;
        if (!strcmp(ip, "None"))
            break;
        if (i < json_array_size(fams) || !*ip)
            continue;
        if (kc__ip_slot(a, ip, &slot) == -1)
            return fail_set(
                f, KC_EUNPROCESSABLE, "",
                "spec.clusterIPs[%zu]: Invalid value: %s: %s is not configured on this cluster", i,
                v, alt_family(kc__ip_family(a)));
        json_array_append_new(fams, json_string(kc__ip_family(a)));
    }
    if (headless_nosel) {
        if (!json_array_size(fams))
            json_array_append_new(fams, json_string(kc__ip_family(a)));
        const char *f0 = json_string_value(json_array_get(fams, 0));
        if (json_array_size(fams) < 2 && strcmp(pol, "SingleStack") != 0)
            json_array_append_new(fams, json_string(alt_family(f0 ? f0 : "IPv4")));
        return 0;
    }
    if (!strcmp(pol, "RequireDualStack"))
        return fail_set(f, KC_EUNPROCESSABLE, "spec.ipFamilyPolicy",
                        "Invalid value: \"RequireDualStack\": this cluster is not configured "
                        "for dual-stack services");
    json_array_foreach(fams, i, x)
    {
        const char *fam = json_string_value(x) ? json_string_value(x) : "";
        if (strcmp(fam, kc__ip_family(a)) != 0)
            return fail_set(
                f, KC_EUNPROCESSABLE, "",
                "spec.ipFamilies[%zu]: Invalid value: \"%s\": not configured on this cluster", i,
                fam);
    }
    if (!json_array_size(fams))
        json_array_append_new(fams, json_string(kc__ip_family(a)));
    return 0;
}

static int alloc_cluster_ips(kc__svc_alloc *a, json_t *spec, txn *t, kc__svc_fail *f)
{
    if (!needs_cip(spec))
        return 0;
    json_t *cips = json_object_get(spec, "clusterIPs");
    const char *first = json_string_value(json_array_get(cips, 0));
    if (first && !strcmp(first, "None")) {
        json_object_set_new(spec, "clusterIP", json_string("None"));
        return 0;
    }
    if (!json_is_array(cips)) {
        cips = json_array();
        if (!cips || json_object_set_new(spec, "clusterIPs", cips) < 0)
            return KC_ENOMEM;
    }
    uint64_t slot;
    char txt[64];
    if (!first || !*first) {
        if (!kc__slots_next(&a->ips, &a->rng, &slot))
            return fail_set(f, KC_ESERVER, "", "failed to allocate a serviceIP: range is full");
        kc__ip_text(a, slot, txt);
        if (json_array_size(cips))
            json_array_set_new(cips, 0, json_string(txt));
        else
            json_array_append_new(cips, json_string(txt));
    } else {
        char v[256];
        go_strings(cips, v, sizeof(v));
        snprintf(txt, sizeof(txt), "%s", first);
        int in = kc__ip_slot(a, first, &slot);
        if (in != 1)
            return fail_set(f, KC_EUNPROCESSABLE, "spec.clusterIPs",
                            "Invalid value: %s: failed to allocate IP %s: the provided IP (%s) "
                            "is not in the valid range. The range of valid IPs is %s",
                            v, first, first, a->cidr);
        if (kc__slots_test(&a->ips, slot))
            return fail_set(f, KC_EUNPROCESSABLE, "spec.clusterIPs",
                            "Invalid value: %s: failed to allocate IP %s: provided IP is "
                            "already allocated",
                            v, first);
    }
    if (kc__slots_set(&a->ips, slot, true) != 0)
        return KC_ENOMEM;
    t->ips[t->n_ips++] = slot;
    json_object_set_new(spec, "clusterIP", json_string(txt));
    return 0;
}

/* ---- node ports -------------------------------------------------------------------------------
 */

static int port_reserve(kc__svc_alloc *a, txn *t, json_int_t np, const char *field, kc__svc_fail *f)
{
    if (np < a->port_lo || np > a->port_hi)
        return fail_set(f, KC_EUNPROCESSABLE, field,
                        "Invalid value: %lld: provided port is not in the valid range. The "
                        "range of valid ports is %s",
                        (long long)np, a->port_range);
    uint64_t slot = (uint64_t)(np - a->port_lo);
    if (kc__slots_test(&a->ports, slot))
        return fail_set(f, KC_EUNPROCESSABLE, field,
                        "Invalid value: %lld: provided port is already allocated", (long long)np);
    if (t->n_ports == t->cap_ports) {
        size_t cap = t->cap_ports ? t->cap_ports * 2 : 8;
        uint64_t *p = realloc(t->ports, cap * sizeof(*p));
        if (!p)
            return KC_ENOMEM;
        t->ports = p;
        t->cap_ports = cap;
    }
    if (kc__slots_set(&a->ports, slot, true) != 0)
        return KC_ENOMEM;
    t->ports[t->n_ports++] = slot;
    return 0;
}

static int port_next(kc__svc_alloc *a, txn *t, json_int_t *ret, kc__svc_fail *f)
{
    uint64_t slot;
    if (!kc__slots_next(&a->ports, &a->rng, &slot))
        return fail_set(f, KC_ESERVER, "", "failed to allocate a nodePort: range is full");
    *ret = (json_int_t)(a->port_lo + slot);
    return port_reserve(a, t, *ret, "", f);
}

static bool holds_port(const json_t *spec, json_int_t np)
{
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(spec, "ports"), i, p) if (node_port(p) == np) return true;
    return np && json_integer_value(json_object_get(spec, "healthCheckNodePort")) == np;
}

static json_int_t port_number(const json_t *p)
{
    return json_integer_value(json_object_get(p, "port"));
}

/* initNodePorts: ports of the same number share one node port (a requested one if any). */
static int node_ports_create(kc__svc_alloc *a, json_t *spec, txn *t, kc__svc_fail *f)
{
    json_t *ports = json_object_get(spec, "ports");
    size_t i, j;
    json_t *p, *q;
    json_array_foreach(ports, i, p)
    {
        char field[64];
        snprintf(field, sizeof(field), "spec.ports[%zu].nodePort", i);
        json_int_t np = node_port(p), got = 0, req = 0;
        if (!json_is_object(p) || (!np && !should_alloc_np(spec)))
            continue;
        for (j = 0; j < i; j++) /* the node port an earlier port of this number got */
            if (port_number(json_array_get(ports, j)) == port_number(p) &&
                node_port(json_array_get(ports, j)))
                got = got ? got : node_port(json_array_get(ports, j));
        int rc = 0;
        if (!got) {
            json_array_foreach(ports, j, q) if (!req && port_number(q) == port_number(p)) req =
                node_port(q);
            if (req)
                rc = port_reserve(a, t, req, field, f);
            else
                rc = port_next(a, t, &req, f);
            if (!rc)
                json_object_set_new(p, "nodePort", json_integer(req));
        } else if (np != got) {
            if (!np)
                json_object_set_new(p, "nodePort", json_integer(got));
            else
                rc = port_reserve(a, t, np, field, f);
        }
        if (rc)
            return rc;
    }
    return 0;
}

/* updateNodePorts: requested ports the stored object did not hold are reserved, missing ones
 * allocated. */
static int node_ports_update(kc__svc_alloc *a, json_t *spec, const json_t *ospec, txn *t,
                             kc__svc_fail *f)
{
    json_t *ports = json_object_get(spec, "ports");
    size_t i;
    json_t *p;
    json_array_foreach(ports, i, p)
    {
        char field[64];
        snprintf(field, sizeof(field), "spec.ports[%zu].nodePort", i);
        json_int_t np = node_port(p);
        if (!json_is_object(p) || (!np && !should_alloc_np(spec)))
            continue;
        bool seen = false;
        for (size_t k = 0; k < i; k++)
            seen |= np && node_port(json_array_get(ports, k)) == np;
        int rc = 0;
        if (!np) {
            rc = port_next(a, t, &np, f);
            if (!rc)
                json_object_set_new(p, "nodePort", json_integer(np));
        } else if (!seen && !holds_port(ospec, np)) {
            rc = port_reserve(a, t, np, field, f);
        }
        if (rc)
            return rc;
    }
    return 0;
}

static int health_check_port(kc__svc_alloc *a, json_t *spec, const json_t *ospec, txn *t,
                             kc__svc_fail *f)
{
    if (!needs_hc(spec) || (ospec && needs_hc(ospec)))
        return 0;
    json_int_t hc = json_integer_value(json_object_get(spec, "healthCheckNodePort"));
    if (!hc) {
        int rc = port_next(a, t, &hc, f);
        if (!rc)
            json_object_set_new(spec, "healthCheckNodePort", json_integer(hc));
        return rc;
    }
    if (hc < a->port_lo || hc > a->port_hi)
        return fail_set(f, KC_ESERVER, "",
                        "failed to allocate requested HealthCheck NodePort %lld: provided port "
                        "is not in the valid range. The range of valid ports is %s",
                        (long long)hc, a->port_range);
    if (kc__slots_test(&a->ports, (uint64_t)(hc - a->port_lo)))
        return fail_set(f, KC_ESERVER, "",
                        "failed to allocate requested HealthCheck NodePort %lld: provided port "
                        "is already allocated",
                        (long long)hc);
    return port_reserve(a, t, hc, "", f);
}

/* ---- entry points -----------------------------------------------------------------------------
 */

static int write_spec(kc__svc_alloc *a, json_t *svc, json_t *spec, const json_t *ospec, txn *t,
                      kc__svc_fail *f)
{
    if (ospec) {
        patch_allocated(spec, ospec);
        normalize(spec, ospec);
        drop_type_dependent(svc, spec, ospec);
    } else {
        normalize(spec, NULL);
    }
    int rc = init_families(a, spec, ospec, f);
    if (rc)
        return rc;
    if (!ospec || !needs_cip(ospec)) {
        rc = alloc_cluster_ips(a, spec, t, f);
    } else if (needs_cip(spec)) {
        const json_t *o0 = json_array_get(json_object_get(ospec, "clusterIPs"), 0);
        const json_t *n0 = json_array_get(json_object_get(spec, "clusterIPs"), 0);
        if (o0 && (!n0 || !json_equal(o0, n0))) {
            char v[256];
            go_strings(json_object_get(spec, "clusterIPs"), v, sizeof(v));
            return fail_set(f, KC_EUNPROCESSABLE, "spec.clusterIPs[0]",
                            "Invalid value: %s: may not change once set", v);
        }
    }
    if (!rc && needs_np(spec))
        rc = ospec ? node_ports_update(a, spec, ospec, t, f) : node_ports_create(a, spec, t, f);
    if (!rc)
        rc = health_check_port(a, spec, ospec, t, f);
    return rc;
}

int kc__svc_alloc_write(kc__svc_alloc *a, json_t *svc, const json_t *old, bool dry_run,
                        kc__svc_fail *fail)
{
    json_t *spec = json_object_get(svc, "spec");
    if (!a || !json_is_object(spec))
        return 0;
    const json_t *ospec = old ? json_object_get(old, "spec") : NULL;
    if (old && !json_is_object(ospec))
        ospec = NULL;
    txn t = {.a = a};
    int rc = write_spec(a, svc, spec, ospec, &t, fail);
    if (rc || dry_run)
        txn_undo(&t);
    if (rc == KC_ENOMEM)
        fail_set(fail, KC_ENOMEM, "", "out of memory");
    free(t.ports);
    return rc;
}

static bool holds_ip(const json_t *spec, const char *ip)
{
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(spec, "clusterIPs"), i,
                       x) if (json_string_value(x) &&
                              !strcmp(json_string_value(x), ip)) return true;
    return !strcmp(str(spec, "clusterIP"), ip);
}

void kc__svc_alloc_release(kc__svc_alloc *a, const json_t *svc, const json_t *keep)
{
    const json_t *spec = json_object_get(svc, "spec");
    const json_t *kspec = keep ? json_object_get(keep, "spec") : NULL;
    if (!a || !json_is_object(spec))
        return;
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(spec, "clusterIPs"), i, x)
    {
        uint64_t slot;
        const char *ip = json_string_value(x);
        if (ip && !(kspec && holds_ip(kspec, ip)) && kc__ip_slot(a, ip, &slot) == 1)
            kc__slots_set(&a->ips, slot, false);
    }
    json_int_t hc = json_integer_value(json_object_get(spec, "healthCheckNodePort"));
    json_array_foreach(json_object_get(spec, "ports"), i, x)
    {
        json_int_t np = node_port(x);
        if (np >= a->port_lo && np <= a->port_hi && !(kspec && holds_port(kspec, np)))
            kc__slots_set(&a->ports, (uint64_t)(np - a->port_lo), false);
    }
    if (hc >= a->port_lo && hc <= a->port_hi && !(kspec && holds_port(kspec, hc)))
        kc__slots_set(&a->ports, (uint64_t)(hc - a->port_lo), false);
}
