/*
 * table_extra.c — kubectl's printers of the rarer core, networking, certificates, node and
 * aggregation kinds for the Table renderer, as upstream's printers.go (and kube-aggregator's
 * APIService table) write them: ReplicationControllers Name, Desired, Current, Ready, Age and,
 * with -o wide, Containers, Images, Selector (labels.FormatLabels); PodTemplates Name,
 * Containers, Images, Pod Labels; ResourceQuotas Name, Request, Limit ("resource: used/hard" of
 * every status.hard key, sorted, the "limits.*" ones under Limit, quantities canonical, a
 * missing used "0"), Age; CertificateSigningRequests Name, Age, SignerName, Requestor
 * (spec.username), RequestedDuration (expirationSeconds humanised, "<none>"), Condition
 * ("Denied" / "Approved" / "Pending", then ",Failed", ",Issued"); EndpointSlices Name,
 * AddressType, Ports and Endpoints (up to 3, "a,b,c + N more...", "<unset>" when none), Age;
 * IngressClasses Name, Controller, Parameters ("Kind.group/name", "<none>"), Age; RuntimeClasses
 * Name, Handler, Age; ServiceCIDRs Name, CIDRs, Age; IPAddresses Name, ParentRef
 * ("resource.group/namespace/name") and an Age cell without a column, as upstream sends it;
 * APIServices Name, Service ("namespace/name" or "Local"), Available, Age.
 * Thread-safe: pure functions over const tables.
 */
#include "server/discovery/table_internal.h"

#include "core/internal.h"
#include "server/validation/validation_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kc__table_quantity(const json_t *v, const char *absent, char *out, size_t cap)
{
    kc__vquantity q;
    if (!v || json_is_null(v))
        snprintf(out, cap, "%s", absent);
    else if (kc__v_quantity_parse(v, &q))
        kc__v_quantity_string(&q, out, cap);
    else
        snprintf(out, cap, "%s", json_string_value(v) ?: "");
}

static json_t *row_replicationcontroller(const kc_obj *o, int64_t now)
{
    json_t *row =
        json_pack("[s,I,I,I,o]", kc_obj_name(o), (json_int_t)kc__table_int(o, "/spec/replicas"),
                  (json_int_t)kc__table_int(o, "/status/replicas"),
                  (json_int_t)kc__table_int(o, "/status/readyReplicas"), kc__table_age(o, now));
    if (row) {
        kc__wide_containers(o, "/spec/template/spec/containers", row);
        kc__wide_selector_map(o, "/spec/selector", row);
    }
    return row;
}

static json_t *row_podtemplate(const kc_obj *o, int64_t now)
{
    (void)now;
    json_t *row = json_pack("[s]", kc_obj_name(o));
    if (row) {
        kc__wide_containers(o, "/template/spec/containers", row);
        kc__wide_selector_map(o, "/template/metadata/labels", row);
    }
    return row;
}

int kc__table_cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* printResourceQuota: every status.hard resource by name, "name: used/hard", comma-space joined;
 * a name whose first dot-separated piece is "limits" (with more pieces) goes to Limit. */
static json_t *row_resourcequota(const kc_obj *o, int64_t now)
{
    json_t *hard = kc__table_json(o, "/status/hard"), *used = kc__table_json(o, "/status/used");
    size_t n = json_object_size(hard), k = 0;
    const char **keys = calloc(n ? n : 1, sizeof(*keys));
    const char *key;
    json_t *v;
    json_object_foreach(hard, key, v)
    {
        if (keys)
            keys[k++] = key;
    }
    if (keys)
        qsort(keys, k, sizeof(*keys), kc__table_cmp_str);
    kc__buf req = KC__BUF_INIT(0), lim = KC__BUF_INIT(0);
    for (size_t i = 0; i < k; i++) {
        char u[80], h[80];
        kc__table_quantity(json_object_get(used, keys[i]), "0", u, sizeof u);
        kc__table_quantity(json_object_get(hard, keys[i]), "0", h, sizeof h);
        kc__buf *b = kc__starts_with(keys[i], "limits.") ? &lim : &req;
        kc__buf_printf(b, "%s%s: %s/%s", b->len ? ", " : "", keys[i], u, h);
    }
    json_t *row = json_pack("[s,s,s,o]", kc_obj_name(o), req.len ? req.data : "",
                            lim.len ? lim.data : "", kc__table_age(o, now));
    kc__buf_free(&req);
    kc__buf_free(&lim);
    free(keys);
    json_decref(hard);
    json_decref(used);
    return row;
}

/* extractCSRStatus: Denied over Approved over Pending, then ",Failed", then ",Issued". */
static void csr_condition(const kc_obj *o, char *out, size_t cap)
{
    json_t *conds = kc__table_json(o, "/status/conditions");
    bool approved = false, denied = false, failed = false;
    size_t i;
    json_t *c;
    json_array_foreach(conds, i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        approved |= kc__streq(t, "Approved");
        denied |= kc__streq(t, "Denied");
        failed |= kc__streq(t, "Failed");
    }
    json_decref(conds);
    json_t *cert = kc__table_str(o, "/status/certificate", "");
    snprintf(out, cap, "%s%s%s",
             denied     ? "Denied"
             : approved ? "Approved"
                        : "Pending",
             failed ? ",Failed" : "", json_string_length(cert) ? ",Issued" : "");
    json_decref(cert);
}

static json_t *row_csr(const kc_obj *o, int64_t now)
{
    char cond[48], dur[32] = "<none>";
    csr_condition(o, cond, sizeof cond);
    int64_t secs;
    if (kc_obj_get_int(o, "/spec/expirationSeconds", &secs, NULL) == 0)
        kc__human_duration(secs, dur);
    json_t *signer = kc__table_str(o, "/spec/signerName", "");
    if (!json_string_length(signer)) {
        json_decref(signer);
        signer = json_string("<none>");
    }
    return json_pack("[s,o,o,o,s,s]", kc_obj_name(o), kc__table_age(o, now), signer,
                     kc__table_str(o, "/spec/username", ""), dur, cond);
}

/* listWithMoreString over up to 3 items: "a,b,c + N more...", "<unset>" when empty. */
typedef struct more_list {
    kc__buf b;
    size_t listed, count;
} more_list;

static void more_add(more_list *l, const char *s)
{
    if (l->listed < 3) {
        if (l->listed++)
            kc__buf_append_char(&l->b, ',');
        kc__buf_append_str(&l->b, s);
    }
    l->count++;
}

static json_t *more_done(more_list *l)
{
    if (l->count > 3)
        kc__buf_printf(&l->b, " + %zu more...", l->count - 3);
    json_t *out = json_string(l->b.len ? l->b.data : "<unset>");
    kc__buf_free(&l->b);
    return out;
}

static json_t *row_endpointslice(const kc_obj *o, int64_t now)
{
    more_list ports = {KC__BUF_INIT(0), 0, 0}, eps = {KC__BUF_INIT(0), 0, 0};
    json_t *pa = kc__table_json(o, "/ports"), *ea = kc__table_json(o, "/endpoints");
    size_t i, j;
    json_t *p, *e, *a;
    json_array_foreach(pa, i, p)
    {
        char num[32];
        json_t *port = json_object_get(p, "port"), *name = json_object_get(p, "name");
        if (json_is_integer(port))
            snprintf(num, sizeof num, "%lld", (long long)json_integer_value(port));
        more_add(&ports, json_is_integer(port)  ? num
                         : json_is_string(name) ? json_string_value(name)
                                                : "*");
    }
    json_array_foreach(ea, i, e)
    {
        json_array_foreach(json_object_get(e, "addresses"), j, a)
            more_add(&eps, json_string_value(a) ?: "");
    }
    json_decref(pa);
    json_decref(ea);
    return json_pack("[s,o,o,o,o]", kc_obj_name(o), kc__table_str(o, "/addressType", ""),
                     more_done(&ports), more_done(&eps), kc__table_age(o, now));
}

static json_t *row_ingressclass(const kc_obj *o, int64_t now)
{
    json_t *p = kc__table_json(o, "/spec/parameters");
    kc__buf b = KC__BUF_INIT(0);
    if (json_is_object(p)) {
        const json_t *g = json_object_get(p, "apiGroup");
        kc__buf_printf(&b, "%s%s%s/%s", json_string_value(json_object_get(p, "kind")) ?: "",
                       json_is_string(g) ? "." : "", json_string_value(g) ?: "",
                       json_string_value(json_object_get(p, "name")) ?: "");
    }
    json_decref(p);
    json_t *row = json_pack("[s,o,s,o]", kc_obj_name(o), kc__table_str(o, "/spec/controller", ""),
                            b.len ? b.data : "<none>", kc__table_age(o, now));
    kc__buf_free(&b);
    return row;
}

static json_t *row_runtimeclass(const kc_obj *o, int64_t now)
{
    return json_pack("[s,o,o]", kc_obj_name(o), kc__table_str(o, "/handler", ""),
                     kc__table_age(o, now));
}

static json_t *row_servicecidr(const kc_obj *o, int64_t now)
{
    json_t *cidrs = kc__table_json(o, "/spec/cidrs");
    kc__buf b = KC__BUF_INIT(0);
    size_t i;
    json_t *c;
    json_array_foreach(cidrs, i, c)
        kc__buf_printf(&b, "%s%s", i ? "," : "", json_string_value(c) ?: "");
    json_decref(cidrs);
    json_t *row = json_pack("[s,s,o]", kc_obj_name(o), b.len ? b.data : "", kc__table_age(o, now));
    kc__buf_free(&b);
    return row;
}

/* printIPAddress: lower-cased "resource[.group]", "/namespace" when set, "/name"; "<none>". */
static json_t *row_ipaddress(const kc_obj *o, int64_t now)
{
    json_t *ref = kc__table_json(o, "/spec/parentRef");
    kc__buf b = KC__BUF_INIT(0);
    if (json_is_object(ref)) {
        const char *g = json_string_value(json_object_get(ref, "group")) ?: "";
        const char *ns = json_string_value(json_object_get(ref, "namespace")) ?: "";
        kc__buf_printf(&b, "%s%s%s", json_string_value(json_object_get(ref, "resource")) ?: "",
                       *g ? "." : "", g);
        for (size_t k = 0; k < b.len; k++)
            b.data[k] = (char)tolower((unsigned char)b.data[k]);
        kc__buf_printf(&b, "%s%s/%s", *ns ? "/" : "", ns,
                       json_string_value(json_object_get(ref, "name")) ?: "");
    }
    json_decref(ref);
    json_t *row =
        json_pack("[s,s,o]", kc_obj_name(o), b.len ? b.data : "<none>", kc__table_age(o, now));
    kc__buf_free(&b);
    return row;
}

/* kube-aggregator's APIService table: the Available condition's status, "(reason)" appended when
 * it is not True and has a reason; "Unknown" without the condition. */
static json_t *row_apiservice(const kc_obj *o, int64_t now)
{
    char svc[600] = "Local", avail[300] = "Unknown";
    json_t *ref = kc__table_json(o, "/spec/service");
    if (json_is_object(ref))
        snprintf(svc, sizeof svc, "%s/%s",
                 json_string_value(json_object_get(ref, "namespace")) ?: "",
                 json_string_value(json_object_get(ref, "name")) ?: "");
    json_decref(ref);
    json_t *conds = kc__table_json(o, "/status/conditions");
    size_t i;
    json_t *c;
    json_array_foreach(conds, i, c)
    {
        if (!kc__streq(json_string_value(json_object_get(c, "type")), "Available"))
            continue;
        const char *st = json_string_value(json_object_get(c, "status")) ?: "";
        const char *why = json_string_value(json_object_get(c, "reason")) ?: "";
        if (kc__streq(st, "True") || !*why)
            snprintf(avail, sizeof avail, "%s", st);
        else
            snprintf(avail, sizeof avail, "%s (%s)", st, why);
        break;
    }
    json_decref(conds);
    return json_pack("[s,s,s,o]", kc_obj_name(o), svc, avail, kc__table_age(o, now));
}

const kc__printer kc__printers_extra[] = {
    {"",
     "replicationcontrollers",
     {COL_NAME,
      {"Desired", "integer", "",
       "Replicas is the number of desired replicas. This is a pointer to distinguish between "
       "explicit zero and unspecified. Defaults to 1. More info: "
       "https://kubernetes.io/docs/concepts/workloads/controllers/"
       "replicationcontroller#what-is-a-replicationcontroller"},
      {"Current", "integer", "",
       "Replicas is the most recently observed number of replicas. More info: "
       "https://kubernetes.io/docs/concepts/workloads/controllers/"
       "replicationcontroller#what-is-a-replicationcontroller"},
      {"Ready", "integer", "", "The number of ready replicas for this replication controller."},
      COL_AGE,
      COL_CONTAINERS,
      COL_IMAGES,
      {"Selector", "string", "",
       "Selector is a label query over pods that should match the Replicas count. If Selector is "
       "empty, it is defaulted to the labels present on the Pod template. Label keys and values "
       "that must match in order to be controlled by this replication controller, if empty "
       "defaulted to labels on Pod template. More info: "
       "https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/"
       "#label-selectors"}},
     8,
     row_replicationcontroller,
     3},
    {"",
     "podtemplates",
     {COL_NAME,
      COL_CONTAINERS,
      COL_IMAGES,
      {"Pod Labels", "string", "", "The labels for the pod template."}},
     4,
     row_podtemplate,
     0},
    {"",
     "resourcequotas",
     {COL_NAME,
      {"Request", "string", "",
       "Request represents a minimum amount of cpu/memory that a container may consume."},
      {"Limit", "string", "",
       "Limits control the maximum amount of cpu/memory that a container may use independent of "
       "contention on the node."},
      COL_AGE},
     4,
     row_resourcequota,
     0},
    {"certificates.k8s.io",
     "certificatesigningrequests",
     {COL_NAME,
      COL_AGE,
      {"SignerName", "string", "", "Requested signer for the request."},
      {"Requestor", "string", "", "Base64-encoded PKCS#10 CSR data"},
      {"RequestedDuration", "string", "",
       "expirationSeconds is the requested duration of validity of the issued certificate."},
      {"Condition", "string", "",
       "Conditions applied to the request, such as approval or denial."}},
     6,
     row_csr,
     0},
    {"discovery.k8s.io",
     "endpointslices",
     {COL_NAME,
      {"AddressType", "string", "",
       "addressType specifies the type of address carried by this EndpointSlice. All addresses "
       "in this slice must be the same type."},
      {"Ports", "string", "",
       "ports specifies the list of network ports exposed by each endpoint in this slice."},
      {"Endpoints", "string", "",
       "endpoints is a list of unique endpoints in this slice. Each slice may include a maximum "
       "of 1000 endpoints."},
      COL_AGE},
     5,
     row_endpointslice,
     0},
    {"networking.k8s.io",
     "ingressclasses",
     {COL_NAME,
      {"Controller", "string", "", "Controller that is responsible for handling this class"},
      {"Parameters", "string", "", "A reference to a resource with additional parameters"},
      COL_AGE},
     4,
     row_ingressclass,
     0},
    {"node.k8s.io",
     "runtimeclasses",
     {COL_NAME, {"Handler", "string", "", ""}, COL_AGE},
     3,
     row_runtimeclass,
     0},
    {"networking.k8s.io",
     "servicecidrs",
     {COL_NAME,
      {"CIDRs", "string", "",
       "CIDRs defines the IP blocks in CIDR notation (e.g. \"192.168.0.0/24\" or "
       "\"2001:db8::/64\") from which to assign service cluster IPs."},
      COL_AGE},
     3,
     row_servicecidr,
     0},
    {"networking.k8s.io",
     "ipaddresses",
     {COL_NAME,
      {"ParentRef", "string", "",
       "ParentRef references the resource that an IPAddress is "
       "attached to. An IPAddress must reference a parent object."}},
     2,
     row_ipaddress,
     0},
    {"apiregistration.k8s.io",
     "apiservices",
     {COL_NAME,
      {"Service", "string", "", "The reference to the service that hosts this API endpoint."},
      {"Available", "string", "", "Whether this service is available."},
      COL_AGE},
     4,
     row_apiservice,
     0},
};
const size_t kc__printers_extra_len = sizeof(kc__printers_extra) / sizeof(kc__printers_extra[0]);
