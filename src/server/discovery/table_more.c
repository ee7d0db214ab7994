/*
 * table_more.c — kubectl's printers of the identity, RBAC, coordination, networking and
 * scheduling kinds for the Table renderer, as upstream's printers.go writes them:
 * ServiceAccounts Name, Secrets (how many), Age; RoleBindings and ClusterRoleBindings Name, Role
 * ("Kind/name"), Age and, with -o wide, Users, Groups, ServiceAccounts ("namespace:name"),
 * comma-space joined (rbac.SubjectsStrings); Leases Name, Holder (spec.holderIdentity), Age;
 * Ingresses Name, Class (<none>), Hosts (up to 3, "*" when none, "a,b,c + N more..."), Address
 * (load-balancer IPs / hostnames, sorted, clipped to 16 bytes without -o wide), Ports ("80" or
 * "80, 443" with TLS), Age; NetworkPolicies Name, Pod-Selector, Age; PriorityClasses Name,
 * Value, Global-Default, Age, PreemptionPolicy; PodDisruptionBudgets Name, Min Available, Max
 * Unavailable (IntOrString, "N/A" when unset), Allowed Disruptions, Age; ControllerRevisions
 * Name, Controller ("statefulset.apps/web", "<none>"), Revision, Age; Endpoints Name, Endpoints
 * (up to 3 "ip:port", "+ N more...", "<none>" without subsets), Age. Thread-safe: pure
 * functions over const tables.
 */
#include "server/discovery/table_internal.h"

#include "core/internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *row_serviceaccount(const kc_obj *o, int64_t now)
{
    json_t *s = kc__table_json(o, "/secrets");
    json_t *row =
        json_pack("[s,I,o]", kc_obj_name(o), (json_int_t)json_array_size(s), kc__table_age(o, now));
    json_decref(s);
    return row;
}

/* Appends s to b, ", "-separated. */
static void join(kc__buf *b, const char *s)
{
    if (b->len)
        kc__buf_append_str(b, ", ");
    kc__buf_append_str(b, s);
}

static json_t *row_binding(const kc_obj *o, int64_t now)
{
    char role[600];
    json_t *ref = kc__table_json(o, "/roleRef");
    snprintf(role, sizeof role, "%s/%s", json_string_value(json_object_get(ref, "kind")) ?: "",
             json_string_value(json_object_get(ref, "name")) ?: "");
    json_decref(ref);
    json_t *row = json_pack("[s,s,o]", kc_obj_name(o), role, kc__table_age(o, now));
    kc__buf users = KC__BUF_INIT(0), groups = KC__BUF_INIT(0), sas = KC__BUF_INIT(0);
    json_t *subs = kc__table_json(o, "/subjects");
    size_t i;
    json_t *s;
    json_array_foreach(subs, i, s)
    {
        const char *kind = json_string_value(json_object_get(s, "kind")) ?: "";
        const char *name = json_string_value(json_object_get(s, "name")) ?: "";
        if (!strcmp(kind, "User")) {
            join(&users, name);
        } else if (!strcmp(kind, "Group")) {
            join(&groups, name);
        } else if (!strcmp(kind, "ServiceAccount")) {
            char sa[600];
            snprintf(sa, sizeof sa, "%s:%s",
                     json_string_value(json_object_get(s, "namespace")) ?: "", name);
            join(&sas, sa);
        }
    }
    json_decref(subs);
    json_array_append_new(row, json_string(users.len ? users.data : ""));
    json_array_append_new(row, json_string(groups.len ? groups.data : ""));
    json_array_append_new(row, json_string(sas.len ? sas.data : ""));
    kc__buf_free(&users);
    kc__buf_free(&groups);
    kc__buf_free(&sas);
    return row;
}

static json_t *row_lease(const kc_obj *o, int64_t now)
{
    return json_pack("[s,o,o]", kc_obj_name(o), kc__table_str(o, "/spec/holderIdentity", ""),
                     kc__table_age(o, now));
}

static void ingress_hosts(const json_t *rules, kc__buf *b)
{
    size_t i, n = 0;
    json_t *r;
    bool more = false;
    json_array_foreach(rules, i, r)
    {
        const char *h = json_string_value(json_object_get(r, "host"));
        if (n == 3)
            more = true;
        if (!more && h && *h) {
            if (n++)
                kc__buf_append_char(b, ',');
            kc__buf_append_str(b, h);
        }
    }
    if (!n)
        kc__buf_append_str(b, "*");
    else if (more)
        kc__buf_printf(b, " + %zu more...", json_array_size(rules) - 3);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The load balancer's IPs and hostnames, a sorted set joined with ","; clipped to 13 bytes +
 * "..." past 16 (upstream's LoadBalancerWidth) unless wide. */
static void ingress_address(const json_t *lb, kc__buf *b)
{
    size_t n = json_array_size(lb), k = 0, i;
    const char **v = calloc(n ? 2 * n : 1, sizeof(*v));
    json_t *e;
    json_array_foreach(lb, i, e)
    {
        const char *ip = json_string_value(json_object_get(e, "ip"));
        const char *host = json_string_value(json_object_get(e, "hostname"));
        if (v && ip && *ip)
            v[k++] = ip;
        if (v && host && *host)
            v[k++] = host;
    }
    if (v)
        qsort(v, k, sizeof(*v), cmp_str);
    for (i = 0; i < k; i++) {
        if (i && !strcmp(v[i], v[i - 1]))
            continue;
        if (b->len)
            kc__buf_append_char(b, ',');
        kc__buf_append_str(b, v[i]);
    }
    free(v);
    if (b->len > 16 && b->data) {
        b->len = 13;
        kc__buf_append_str(b, "...");
    }
}

static json_t *row_ingress(const kc_obj *o, int64_t now)
{
    json_t *rules = kc__table_json(o, "/spec/rules");
    json_t *lb = kc__table_json(o, "/status/loadBalancer/ingress");
    json_t *tls = kc__table_json(o, "/spec/tls");
    kc__buf hosts = KC__BUF_INIT(0), addr = KC__BUF_INIT(0);
    ingress_hosts(rules, &hosts);
    ingress_address(lb, &addr);
    json_t *row = json_pack("[s,o,s,s,s,o]", kc_obj_name(o),
                            kc__table_str(o, "/spec/ingressClassName", "<none>"),
                            hosts.data ? hosts.data : "*", addr.len ? addr.data : "",
                            json_array_size(tls) ? "80, 443" : "80", kc__table_age(o, now));
    kc__buf_free(&hosts);
    kc__buf_free(&addr);
    json_decref(rules);
    json_decref(lb);
    json_decref(tls);
    return row;
}

static json_t *row_networkpolicy(const kc_obj *o, int64_t now)
{
    json_t *row = json_pack("[s]", kc_obj_name(o));
    if (row) {
        kc__wide_label_selector(o, "/spec/podSelector", row);
        json_array_append_new(row, kc__table_age(o, now));
    }
    return row;
}

static json_t *row_priorityclass(const kc_obj *o, int64_t now)
{
    bool global = false;
    kc_obj_get_bool(o, "/globalDefault", &global, NULL);
    return json_pack("[s,I,b,o,o]", kc_obj_name(o), (json_int_t)kc__table_int(o, "/value"), global,
                     kc__table_age(o, now), kc__table_str(o, "/preemptionPolicy", ""));
}

/* An IntOrString at ptr as intstr.String() writes it; "N/A" when absent. */
static json_t *int_or_string(const kc_obj *o, const char *ptr)
{
    json_t *v = kc__table_json(o, ptr);
    char buf[64];
    if (json_is_integer(v))
        snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v));
    json_t *out = json_is_integer(v)  ? json_string(buf)
                  : json_is_string(v) ? json_string(json_string_value(v))
                                      : json_string("N/A");
    json_decref(v);
    return out;
}

static json_t *row_pdb(const kc_obj *o, int64_t now)
{
    return json_pack("[s,o,o,I,o]", kc_obj_name(o), int_or_string(o, "/spec/minAvailable"),
                     int_or_string(o, "/spec/maxUnavailable"),
                     (json_int_t)kc__table_int(o, "/status/disruptionsAllowed"),
                     kc__table_age(o, now));
}

/* metav1.GetControllerOf + formatResourceName: "kind.group/name" lower-cased kind.group. */
static json_t *controller_of(const kc_obj *o)
{
    json_t *refs = kc__table_json(o, "/metadata/ownerReferences");
    json_t *out = NULL;
    size_t i;
    json_t *ref;
    json_array_foreach(refs, i, ref)
    {
        if (!json_is_true(json_object_get(ref, "controller")))
            continue;
        const char *av = json_string_value(json_object_get(ref, "apiVersion")) ?: "";
        const char *slash = strchr(av, '/');
        kc__buf b = KC__BUF_INIT(0);
        kc__buf_append_str(&b, json_string_value(json_object_get(ref, "kind")) ?: "");
        if (slash)
            kc__buf_printf(&b, ".%.*s", (int)(slash - av), av);
        for (size_t k = 0; k < b.len; k++)
            b.data[k] = (char)tolower((unsigned char)b.data[k]);
        kc__buf_printf(&b, "/%s", json_string_value(json_object_get(ref, "name")) ?: "");
        out = json_string(b.data ? b.data : "");
        kc__buf_free(&b);
        break;
    }
    json_decref(refs);
    return out ? out : json_string("<none>");
}

static json_t *row_controllerrevision(const kc_obj *o, int64_t now)
{
    return json_pack("[s,o,I,o]", kc_obj_name(o), controller_of(o),
                     (json_int_t)kc__table_int(o, "/revision"), kc__table_age(o, now));
}

/* One address (with its port unless port < 0) into b, while fewer than 3 are listed. */
static void endpoint(kc__buf *b, size_t *listed, bool *more, const char *ip, json_int_t port)
{
    if (*listed == 3)
        *more = true;
    if (*more)
        return;
    if (b->len)
        kc__buf_append_char(b, ',');
    bool v6 = strchr(ip, ':') != NULL; /* net.JoinHostPort brackets IPv6 */
    if (port < 0)
        kc__buf_append_str(b, ip);
    else
        kc__buf_printf(b, v6 ? "[%s]:%lld" : "%s:%lld", ip, (long long)port);
    (*listed)++;
}

/* upstream's formatEndpoints with every port. */
static json_t *endpoints_cell(const kc_obj *o)
{
    json_t *subsets = kc__table_json(o, "/subsets");
    if (!json_array_size(subsets)) {
        json_decref(subsets);
        return json_string("<none>");
    }
    kc__buf b = KC__BUF_INIT(0);
    size_t listed = 0, count = 0, i, j, k;
    bool more = false;
    json_t *ss, *port, *addr;
    json_array_foreach(subsets, i, ss)
    {
        json_t *addrs = json_object_get(ss, "addresses");
        json_t *ports = json_object_get(ss, "ports");
        if (!json_array_size(ports)) {
            count += json_array_size(addrs);
            json_array_foreach(addrs, k, addr) endpoint(
                &b, &listed, &more, json_string_value(json_object_get(addr, "ip")) ?: "", -1);
            continue;
        }
        json_array_foreach(ports, j, port)
        {
            count += json_array_size(addrs);
            json_array_foreach(addrs, k, addr)
                endpoint(&b, &listed, &more, json_string_value(json_object_get(addr, "ip")) ?: "",
                         json_integer_value(json_object_get(port, "port")));
        }
    }
    json_decref(subsets);
    if (more)
        kc__buf_printf(&b, " + %zu more...", count - 3);
    json_t *out = json_string(b.len ? b.data : "");
    kc__buf_free(&b);
    return out;
}

static json_t *row_endpoints(const kc_obj *o, int64_t now)
{
    return json_pack("[s,o,o]", kc_obj_name(o), endpoints_cell(o), kc__table_age(o, now));
}

#define BINDING_COLS(what)                                                                         \
    {                                                                                              \
        COL_NAME,                                                                                  \
            {"Role", "string", "",                                                                 \
             "RoleRef can reference a Role in the current namespace or a "                         \
             "ClusterRole in the global namespace."},                                              \
            COL_AGE, {"Users", "string", "", "Users in the " what},                                \
            {"Groups", "string", "", "Groups in the " what},                                       \
        {                                                                                          \
            "ServiceAccounts", "string", "", "ServiceAccounts in the " what                        \
        }                                                                                          \
    }

const kc__printer kc__printers_more[] = {
    {"",
     "serviceaccounts",
     {COL_NAME,
      {"Secrets", "string", "",
       "Secrets is a list of the secrets in the same namespace that pods running using this "
       "ServiceAccount are allowed to use."},
      COL_AGE},
     3,
     row_serviceaccount,
     0},
    {"rbac.authorization.k8s.io", "rolebindings", BINDING_COLS("roleBinding"), 6, row_binding, 3},
    {"rbac.authorization.k8s.io", "clusterrolebindings", BINDING_COLS("clusterRoleBinding"), 6,
     row_binding, 3},
    {"coordination.k8s.io",
     "leases",
     {COL_NAME,
      {"Holder", "string", "",
       "holderIdentity contains the identity of the holder of a current lease."},
      COL_AGE},
     3,
     row_lease,
     0},
    {"networking.k8s.io",
     "ingresses",
     {COL_NAME,
      {"Class", "string", "",
       "The name of the IngressClass resource that should be used for additional configuration"},
      {"Hosts", "string", "",
       "Hosts that incoming requests are matched against before the ingress rule"},
      {"Address", "string", "",
       "Address is a list containing ingress points for the load-balancer"},
      {"Ports", "string", "", "Ports of TLS configurations that open"},
      COL_AGE},
     6,
     row_ingress,
     0},
    {"networking.k8s.io",
     "networkpolicies",
     {COL_NAME,
      {"Pod-Selector", "string", "",
       "podSelector selects the pods to which this NetworkPolicy object applies."},
      COL_AGE},
     3,
     row_networkpolicy,
     0},
    {"scheduling.k8s.io",
     "priorityclasses",
     {COL_NAME,
      {"Value", "integer", "",
       "value represents the integer value of this priority class. This is the actual priority "
       "that pods receive when they have the name of this class in their pod spec."},
      {"Global-Default", "boolean", "",
       "globalDefault specifies whether this PriorityClass should be considered as the default "
       "priority for pods that do not have any priority class."},
      COL_AGE,
      {"PreemptionPolicy", "string", "",
       "preemptionPolicy is the Policy for preempting pods with lower priority."}},
     5,
     row_priorityclass,
     0},
    {"policy",
     "poddisruptionbudgets",
     {COL_NAME,
      {"Min Available", "string", "",
       "An eviction is allowed if at least \"minAvailable\" pods selected by \"selector\" will "
       "still be available after the eviction, i.e. even in the absence of the evicted pod."},
      {"Max Unavailable", "string", "",
       "An eviction is allowed if at most \"maxUnavailable\" pods selected by \"selector\" are "
       "unavailable after the eviction, i.e. even in absence of the evicted pod."},
      {"Allowed Disruptions", "integer", "",
       "Number of pod disruptions that are currently allowed."},
      COL_AGE},
     5,
     row_pdb,
     0},
    {"",
     "endpoints",
     {COL_NAME, {"Endpoints", "string", "", "Endpoints of the endpoints"}, COL_AGE},
     3,
     row_endpoints,
     0},
    {"apps",
     "controllerrevisions",
     {COL_NAME,
      {"Controller", "string", "", "Controller of the object"},
      {"Revision", "string", "",
       "Revision indicates the revision of the state represented by Data."},
      COL_AGE},
     4,
     row_controllerrevision,
     0},
};
const size_t kc__printers_more_len = sizeof(kc__printers_more) / sizeof(kc__printers_more[0]);
