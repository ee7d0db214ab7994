/*
 * table_printers.c — the columns and cells of kubectl's default printers for the Table renderer
 * (#23, #94): pods (Name, Ready, Status, Restarts, Age; wide: IP, Node, Nominated Node,
 * Readiness Gates), deployments (Name, Ready, Up-to-date, Available, Age; wide: Containers,
 * Images, Selector), replicasets, statefulsets, daemonsets, services (Name, Type, Cluster-IP,
 * External-IP, Port(s), Age; wide: Selector), namespaces, nodes (wide: addresses, node info),
 * configmaps, secrets — the workloads' and nodes' priority-1 ("wide") cells from table_wide.c;
 * kc__table_printer also looks up the printer sets of table_event.c, table_more.c,
 * table_storage.c, table_batch.c, table_extra.c, table_cluster.c and table_hpa.c; custom
 * resources get Name/Age like upstream's CRD table convertor, other built-ins Name/Created At
 * like upstream's default convertor.
 *
 * Design: values are read from the stored kc_obj by JSON pointer; sub-trees that need iteration
 * (containerStatuses, ports, conditions, labels) are fetched raw and decoded with jansson — only
 * those fragments, never the whole object. Age uses upstream's HumanDuration rounding.
 * Thread-safe: pure functions over const tables.
 */
#include "server/discovery/table_internal.h"

#include "core/internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- helpers ------------------------------------------------------------------------------ */

json_t *kc__table_str(const kc_obj *o, const char *ptr, const char *dflt)
{
    char *s = NULL;
    size_t n;
    if (kc_obj_get_string(o, ptr, &s, &n, NULL) < 0)
        return json_string(dflt);
    json_t *v = json_stringn(s, n);
    free(s);
    return v;
}

int64_t kc__table_time(const kc_obj *o, const char *ptr)
{
    char *s = NULL;
    if (kc_obj_get_string(o, ptr, &s, NULL, NULL) < 0)
        return -1;
    int64_t t = kc__rfc3339_seconds(s);
    free(s);
    return t;
}

int64_t kc__table_int(const kc_obj *o, const char *ptr)
{
    int64_t v = 0;
    if (kc_obj_get_int(o, ptr, &v, NULL) < 0)
        return 0;
    return v;
}

/* Seconds since the epoch of an RFC 3339 timestamp; -1 when it does not parse. */
int64_t kc__rfc3339_seconds(const char *s)
{
    struct tm tm = {0};
    int used = 0;
    if (!s || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                     &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &used) != 6)
        return -1;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    int64_t t = (int64_t)timegm(&tm);
    const char *p = s + used;
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++)
            ;
    int oh, om;
    if ((*p == '+' || *p == '-') && sscanf(p + 1, "%2d:%2d", &oh, &om) == 2)
        t -= (*p == '+' ? 1 : -1) * (int64_t)(oh * 3600 + om * 60);
    return t;
}

void kc__human_duration(int64_t secs, char out[32])
{
    if (secs < -1) {
        snprintf(out, 32, "<invalid>");
        return;
    }
    if (secs < 0)
        secs = 0;
    int64_t minutes = secs / 60, hours = secs / 3600, days = hours / 24;
    if (secs < 120)
        snprintf(out, 32, "%llds", (long long)secs);
    else if (minutes < 10 && secs % 60)
        snprintf(out, 32, "%lldm%llds", (long long)minutes, (long long)(secs % 60));
    else if (minutes < 180)
        snprintf(out, 32, "%lldm", (long long)minutes);
    else if (hours < 8 && minutes % 60)
        snprintf(out, 32, "%lldh%lldm", (long long)hours, (long long)(minutes % 60));
    else if (hours < 48)
        snprintf(out, 32, "%lldh", (long long)hours);
    else if (hours < 24 * 8 && hours % 24)
        snprintf(out, 32, "%lldd%lldh", (long long)days, (long long)(hours % 24));
    else if (hours < 24 * 365 * 2)
        snprintf(out, 32, "%lldd", (long long)days);
    else if (hours < 24 * 365 * 8 && days % 365)
        snprintf(out, 32, "%lldy%lldd", (long long)(days / 365), (long long)(days % 365));
    else
        snprintf(out, 32, "%lldy", (long long)(days / 365));
}

json_t *kc__table_age(const kc_obj *o, int64_t now)
{
    char *ts = NULL;
    char buf[32];
    if (kc_obj_get_string(o, "/metadata/creationTimestamp", &ts, NULL, NULL) < 0)
        return json_string("<unknown>");
    int64_t t = kc__rfc3339_seconds(ts);
    free(ts);
    if (t < 0)
        return json_string("<unknown>");
    kc__human_duration(now - t, buf);
    return json_string(buf);
}

/* ---- columns ------------------------------------------------------------------------------ */

static json_t *row_default(const kc_obj *o, int64_t now)
{
    return json_pack("[s,o]", kc_obj_name(o),
                     kc__table_str(o, "/metadata/creationTimestamp", "<unknown>"));
}

/* kubectl's printPod: phase, overridden by status.reason, then by the first container's waiting
 * or terminated reason; "Terminating" while deleting. A container counts as ready when it says
 * ready and is running (or reports no state at all). */
static json_t *row_pod(const kc_obj *o, int64_t now)
{
    json_t *cs = kc__table_json(o, "/status/containerStatuses");
    json_t *spec_c = kc__table_json(o, "/spec/containers");
    json_t *phase = kc__table_str(o, "/status/reason", NULL);
    if (!phase)
        phase = kc__table_str(o, "/status/phase", "Pending");
    size_t total = json_array_size(spec_c), ready = 0;
    int64_t restarts = 0;
    char reason[128];
    snprintf(reason, sizeof reason, "%s", json_string_value(phase) ? json_string_value(phase) : "");
    bool running = false;
    for (size_t i = json_array_size(cs); i-- > 0;) {
        const json_t *c = json_array_get(cs, i);
        const json_t *st = json_object_get(c, "state");
        const json_t *term = json_object_get(st, "terminated");
        const char *wr =
            json_string_value(json_object_get(json_object_get(st, "waiting"), "reason"));
        const char *tr = json_string_value(json_object_get(term, "reason"));
        restarts += json_integer_value(json_object_get(c, "restartCount"));
        if (wr && *wr) {
            snprintf(reason, sizeof reason, "%s", wr);
        } else if (tr && *tr) {
            snprintf(reason, sizeof reason, "%s", tr);
        } else if (json_is_object(term)) {
            json_int_t sig = json_integer_value(json_object_get(term, "signal"));
            if (sig)
                snprintf(reason, sizeof reason, "Signal:%lld", (long long)sig);
            else
                snprintf(reason, sizeof reason, "ExitCode:%lld",
                         (long long)json_integer_value(json_object_get(term, "exitCode")));
        } else if (json_is_true(json_object_get(c, "ready")) &&
                   (!st || json_object_get(st, "running"))) {
            running = true;
            ready++;
        }
    }
    if (strcmp(reason, "Completed") == 0 && running)
        snprintf(reason, sizeof reason, "Running");
    if (total == 0)
        total = json_array_size(cs);
    json_decref(cs);
    json_decref(spec_c);
    json_decref(phase);
    char rd[48], rs[24];
    snprintf(rd, sizeof rd, "%zu/%zu", ready, total);
    snprintf(rs, sizeof rs, "%lld", (long long)restarts);
    json_t *row = json_pack("[s,s,s,s,o]", kc_obj_name(o), rd,
                            kc_obj_deleting(o) ? "Terminating" : reason, rs, kc__table_age(o, now));
    if (row)
        kc__wide_pod(o, row);
    return row;
}

/* The wide cells of a workload: Containers, Images (+ Selector). */
static json_t *with_template(const kc_obj *o, json_t *row, bool selector)
{
    if (row) {
        kc__wide_containers(o, "/spec/template/spec/containers", row);
        if (selector)
            kc__wide_label_selector(o, "/spec/selector", row);
    }
    return row;
}

static json_t *row_deployment(const kc_obj *o, int64_t now)
{
    char rd[48];
    snprintf(rd, sizeof rd, "%lld/%lld", (long long)kc__table_int(o, "/status/readyReplicas"),
             (long long)kc__table_int(o, "/spec/replicas"));
    json_t *row = json_pack(
        "[s,s,I,I,o]", kc_obj_name(o), rd, (json_int_t)kc__table_int(o, "/status/updatedReplicas"),
        (json_int_t)kc__table_int(o, "/status/availableReplicas"), kc__table_age(o, now));
    return with_template(o, row, true);
}

/* Comma-joined strings of arr (array of strings), or of field f of each object element. */
static void join(kc__buf *b, const json_t *arr, const char *f)
{
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v)
    {
        const char *s = json_string_value(f ? json_object_get(v, f) : v);
        if (s && *s)
            kc__buf_printf(b, "%s%s", b->len ? "," : "", s);
    }
}

static json_t *row_service(const kc_obj *o, int64_t now)
{
    json_t *type = kc__table_str(o, "/spec/type", "ClusterIP");
    json_t *ips = kc__table_json(o, "/spec/externalIPs");
    json_t *ports = kc__table_json(o, "/spec/ports");
    json_t *ingress = kc__table_json(o, "/status/loadBalancer/ingress");
    kc__buf ext = KC__BUF_INIT(4096), pb = KC__BUF_INIT(4096);
    const char *t = json_string_value(type);
    if (t && strcmp(t, "ExternalName") == 0) {
        json_t *en = kc__table_str(o, "/spec/externalName", "");
        kc__buf_append_str(&ext, json_string_value(en) ? json_string_value(en) : "");
        json_decref(en);
    } else if (t && strcmp(t, "LoadBalancer") == 0) {
        join(&ext, ingress, "ip");
        join(&ext, ingress, "hostname");
        join(&ext, ips, NULL);
        if (ext.len == 0)
            kc__buf_append_str(&ext, "<pending>");
    } else {
        join(&ext, ips, NULL);
    }
    size_t i;
    json_t *p;
    json_array_foreach(ports, i, p)
    {
        const char *proto = json_string_value(json_object_get(p, "protocol"));
        json_int_t port = json_integer_value(json_object_get(p, "port"));
        json_int_t np = json_integer_value(json_object_get(p, "nodePort"));
        if (np)
            kc__buf_printf(&pb, "%s%lld:%lld/%s", i ? "," : "", (long long)port, (long long)np,
                           proto ? proto : "TCP");
        else
            kc__buf_printf(&pb, "%s%lld/%s", i ? "," : "", (long long)port, proto ? proto : "TCP");
    }
    json_t *row = json_pack(
        "[s,o,o,s,s,o]", kc_obj_name(o), type, kc__table_str(o, "/spec/clusterIP", "<none>"),
        ext.len ? ext.data : "<none>", pb.len ? pb.data : "<none>", kc__table_age(o, now));
    if (row)
        kc__wide_selector_map(o, "/spec/selector", row);
    kc__buf_free(&ext);
    kc__buf_free(&pb);
    json_decref(ips);
    json_decref(ports);
    json_decref(ingress);
    return row;
}

static json_t *row_namespace(const kc_obj *o, int64_t now)
{
    return json_pack("[s,o,o]", kc_obj_name(o), kc__table_str(o, "/status/phase", "Active"),
                     kc__table_age(o, now));
}

static json_t *row_node(const kc_obj *o, int64_t now)
{
    json_t *conds = kc__table_json(o, "/status/conditions");
    json_t *labels = kc__table_json(o, "/metadata/labels");
    const char *st = "Unknown";
    size_t i;
    json_t *c;
    json_array_foreach(conds, i, c)
    {
        if (kc__streq(json_string_value(json_object_get(c, "type")), "Ready")) {
            const char *s = json_string_value(json_object_get(c, "status"));
            st = kc__streq(s, "True") ? "Ready" : kc__streq(s, "False") ? "NotReady" : "Unknown";
        }
    }
    kc__buf status = KC__BUF_INIT(256), roles = KC__BUF_INIT(4096);
    bool unsched = false;
    kc_obj_get_bool(o, "/spec/unschedulable", &unsched, NULL);
    kc__buf_printf(&status, "%s%s", st, unsched ? ",SchedulingDisabled" : "");
    const char *k;
    json_t *v;
    json_object_foreach(labels, k, v)
    {
        static const char pfx[] = "node-role.kubernetes.io/";
        if (kc__starts_with(k, pfx) && k[sizeof pfx - 1])
            kc__buf_printf(&roles, "%s%s", roles.len ? "," : "", k + sizeof pfx - 1);
    }
    json_t *row = json_pack("[s,s,s,o,o]", kc_obj_name(o), status.data ? status.data : st,
                            roles.len ? roles.data : "<none>", kc__table_age(o, now),
                            kc__table_str(o, "/status/nodeInfo/kubeletVersion", ""));
    if (row)
        kc__wide_node(o, row);
    kc__buf_free(&status);
    kc__buf_free(&roles);
    json_decref(conds);
    json_decref(labels);
    return row;
}

json_int_t kc__table_count(const kc_obj *o, const char *ptr)
{
    json_t *v = kc__table_json(o, ptr);
    json_int_t n = (json_int_t)(json_is_array(v) ? json_array_size(v) : json_object_size(v));
    json_decref(v);
    return n;
}

static json_t *row_configmap(const kc_obj *o, int64_t now)
{
    return json_pack("[s,I,o]", kc_obj_name(o),
                     kc__table_count(o, "/data") + kc__table_count(o, "/binaryData"),
                     kc__table_age(o, now));
}

static json_t *row_secret(const kc_obj *o, int64_t now)
{
    return json_pack("[s,o,I,o]", kc_obj_name(o), kc__table_str(o, "/type", "Opaque"),
                     kc__table_count(o, "/data"), kc__table_age(o, now));
}

static json_t *row_replicaset(const kc_obj *o, int64_t now)
{
    json_t *row =
        json_pack("[s,I,I,I,o]", kc_obj_name(o), (json_int_t)kc__table_int(o, "/spec/replicas"),
                  (json_int_t)kc__table_int(o, "/status/replicas"),
                  (json_int_t)kc__table_int(o, "/status/readyReplicas"), kc__table_age(o, now));
    return with_template(o, row, true);
}

static json_t *row_statefulset(const kc_obj *o, int64_t now)
{
    char rd[48];
    snprintf(rd, sizeof rd, "%lld/%lld", (long long)kc__table_int(o, "/status/readyReplicas"),
             (long long)kc__table_int(o, "/spec/replicas"));
    return with_template(o, json_pack("[s,s,o]", kc_obj_name(o), rd, kc__table_age(o, now)), false);
}

static json_t *row_daemonset(const kc_obj *o, int64_t now)
{
    json_t *sel = kc__table_json(o, "/spec/template/spec/nodeSelector");
    kc__buf b = KC__BUF_INIT(4096);
    const char *k;
    json_t *v;
    json_object_foreach(sel, k, v)
    {
        kc__buf_printf(&b, "%s%s=%s", b.len ? "," : "", k,
                       json_string_value(v) ? json_string_value(v) : "");
    }
    json_t *row = json_pack("[s,I,I,I,I,I,s,o]", kc_obj_name(o),
                            (json_int_t)kc__table_int(o, "/status/desiredNumberScheduled"),
                            (json_int_t)kc__table_int(o, "/status/currentNumberScheduled"),
                            (json_int_t)kc__table_int(o, "/status/numberReady"),
                            (json_int_t)kc__table_int(o, "/status/updatedNumberScheduled"),
                            (json_int_t)kc__table_int(o, "/status/numberAvailable"),
                            b.len ? b.data : "<none>", kc__table_age(o, now));
    kc__buf_free(&b);
    json_decref(sel);
    return with_template(o, row, true);
}

/* Custom resources without printer columns: Name and Age (a "date" column, humanised). */
static json_t *row_custom(const kc_obj *o, int64_t now)
{
    return json_pack("[s,o]", kc_obj_name(o), kc__table_age(o, now));
}

static const kc__printer printers[] = {
    {"apps",
     "replicasets",
     {COL_NAME,
      {"Desired", "integer", "", "Number of desired pods."},
      {"Current", "integer", "", "Number of actual pods."},
      {"Ready", "integer", "", "Number of ready pods."},
      COL_AGE,
      {"Containers", "string", "", "Names of each container in the template."},
      {"Images", "string", "", "Images referenced by each container in the template."},
      {"Selector", "string", "",
       "Selector is a label query over pods that should match the replica count."}},
     8,
     row_replicaset,
     3},
    {"apps",
     "statefulsets",
     {
         COL_NAME,
         {"Ready", "string", "", "Number of the pod with ready state"},
         COL_AGE,
         {"Containers", "string", "", "Names of each container in the template."},
         {"Images", "string", "", "Images referenced by each container in the template."},
     },
     5,
     row_statefulset,
     2},
    {"apps",
     "daemonsets",
     {COL_NAME,
      {"Desired", "integer", "",
       "The total number of nodes that should be running the daemon pod."},
      {"Current", "integer", "", "The number of nodes that are running at least 1 daemon pod."},
      {"Ready", "integer", "",
       "The number of nodes that should be running the daemon pod and have one or more of the "
       "daemon pod running and ready."},
      {"Up-to-date", "integer", "",
       "The total number of nodes that are running updated daemon pod"},
      {"Available", "integer", "",
       "The number of nodes that should be running the daemon pod and have one or more of the "
       "daemon pod running and available."},
      {"Node Selector", "string", "",
       "NodeSelector is a selector which must be true for the pod to fit on a node."},
      COL_AGE,
      {"Containers", "string", "", "Names of each container in the template."},
      {"Images", "string", "", "Images referenced by each container in the template."},
      {"Selector", "string", "", "A label query over pods that are managed by the daemon set."}},
     11,
     row_daemonset,
     3},
    {"",
     "pods",
     {COL_NAME,
      {"Ready", "string", "", "The aggregate readiness state of this pod for accepting traffic."},
      {"Status", "string", "", "The aggregate status of the containers in this pod."},
      {"Restarts", "string", "",
       "The number of times the containers in this pod have been restarted and when the last "
       "container in this pod has restarted."},
      COL_AGE,
      {"IP", "string", "", "The IP address allocated to the pod."},
      {"Node", "string", "", "The node the pod is scheduled onto."},
      {"Nominated Node", "string", "", "The node a preempting pod is nominated to run on."},
      {"Readiness Gates", "string", "", "Pod readiness gates met, of those the pod has."}},
     9,
     row_pod,
     4},
    {"apps",
     "deployments",
     {COL_NAME,
      {"Ready", "string", "", "Number of the pod with ready state"},
      {"Up-to-date", "integer", "",
       "Total number of non-terminated pods targeted by this deployment that have the desired "
       "template spec."},
      {"Available", "integer", "",
       "Total number of available pods (ready for at least minReadySeconds) targeted by this "
       "deployment."},
      COL_AGE,
      {"Containers", "string", "", "Names of each container in the template."},
      {"Images", "string", "", "Images referenced by each container in the template."},
      {"Selector", "string", "",
       "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the "
       "ones affected by this deployment."}},
     8,
     row_deployment,
     3},
    {"",
     "services",
     {COL_NAME,
      {"Type", "string", "", "The type of the service."},
      {"Cluster-IP", "string", "", "The cluster ip of the service."},
      {"External-IP", "string", "", "The external ip of the service."},
      {"Port(s)", "string", "", "The ports of the service."},
      COL_AGE,
      {"Selector", "string", "",
       "Route service traffic to pods with label keys and values matching this selector."}},
     7,
     row_service,
     1},
    {"",
     "namespaces",
     {COL_NAME, {"Status", "string", "", "The status of the namespace"}, COL_AGE},
     3,
     row_namespace,
     0},
    {"",
     "nodes",
     {COL_NAME,
      {"Status", "string", "", "The status of the node"},
      {"Roles", "string", "", "The roles of the node"},
      COL_AGE,
      {"Version", "string", "", "Kubelet Version reported by the node."},
      {"Internal-IP", "string", "", "The node's first address of type InternalIP."},
      {"External-IP", "string", "", "The node's first address of type ExternalIP."},
      {"OS-Image", "string", "", "OS image reported by the node."},
      {"Kernel-Version", "string", "", "Kernel version reported by the node."},
      {"Container-Runtime", "string", "", "Container runtime version reported by the node."}},
     10,
     row_node,
     5},
    {"",
     "configmaps",
     {COL_NAME, {"Data", "integer", "", "Data contains the configuration data."}, COL_AGE},
     3,
     row_configmap,
     0},
    {"",
     "secrets",
     {COL_NAME,
      {"Type", "string", "", "The type of the secret"},
      {"Data", "integer", "", "Data contains the secret data."},
      COL_AGE},
     4,
     row_secret,
     0},
};

static const kc__printer default_printer = {
    "",
    "",
    {COL_NAME,
     {"Created At", "date", "",
      "CreationTimestamp is a timestamp representing the server time when this object was "
      "created."}},
    2,
    row_default,
    0};

static const kc__printer custom_printer = {
    "",
    "",
    {COL_NAME,
     {"Age", "date", "",
      "Custom resource definition column (in JSONPath format): .metadata.creationTimestamp"}},
    2,
    row_custom,
    0};

/* Built-in API groups: core (""), groups without a dot, and *.k8s.io. */
static bool builtin_group(const char *g)
{
    static const char suffix[] = ".k8s.io";
    size_t n = strlen(g);
    return !strchr(g, '.') ||
           (n >= sizeof suffix - 1 && strcmp(g + n - (sizeof suffix - 1), suffix) == 0);
}

int kc__table_column_priority(const kc__printer *p, size_t i)
{
    /* events: Subobject, Source, First Seen, Count and Name are -o wide only (upstream) */
    if (p->row == kc__table_row_event || p->row == kc__table_row_event_v1)
        return i == 4 || i == 5 || i >= 7 ? 1 : 0;
    return i + p->nwide >= p->ncols ? 1 : 0; /* the other printers' wide columns come last */
}

const kc__printer *kc__table_printer(const char *group, const char *resource)
{
    const struct {
        const kc__printer *set;
        size_t n;
    } sets[] = {{printers, KC__ARRAY_LEN(printers)},
                {kc__printers_more, kc__printers_more_len},
                {kc__printers_event, 2},
                {kc__printers_storage, kc__printers_storage_len},
                {kc__printers_extra, kc__printers_extra_len},
                {kc__printers_cluster, kc__printers_cluster_len},
                {&kc__printer_job, 1},
                {&kc__printer_cronjob, 1},
                {&kc__printer_hpa, 1}};
    const char *g = group ? group : "";
    for (size_t i = 0; i < KC__ARRAY_LEN(sets); i++)
        for (size_t k = 0; k < sets[i].n; k++)
            if (kc__streq(sets[i].set[k].group, g) && kc__streq(sets[i].set[k].resource, resource))
                return &sets[i].set[k];
    return builtin_group(g) ? &default_printer : &custom_printer;
}
