/*
 * table_cluster.c — kubectl's printers of the cluster-plumbing kinds for the Table renderer, as
 * upstream's printers.go writes them: Mutating/ValidatingWebhookConfigurations Name, Webhooks
 * (how many), Age; ValidatingAdmissionPolicies Name, Validations (how many), ParamKind
 * ("apiVersion/Kind", "<unset>"), Age; ValidatingAdmissionPolicyBindings Name, PolicyName,
 * ParamRef ("namespace/name", "*\/name" without a namespace, the selector's generated Go String()
 * for a selector, "<unset>"), Age; FlowSchemas Name, PriorityLevel, MatchingPrecedence,
 * DistinguisherMethod ("<none>"), Age, MissingPL (the Dangling condition's status, "?"), listed
 * by matching precedence then name; PriorityLevelConfigurations Name, Type,
 * NominalConcurrencyShares, Queues, HandSize, QueueLengthLimit (integers, "<none>" where the
 * spec has no limited / queuing part), Age; CSIDrivers Name, AttachRequired (true unless set),
 * PodInfoOnMount, StorageCapacity, TokenRequests (audiences, "<unset>"), RequiresRepublish,
 * Modes ("<none>"), Age; CSINodes Name, Drivers (how many), Age; VolumeAttachments Name,
 * Attacher, PV, Node, Attached, Age; VolumeAttributesClasses Name (" (default)" for the alpha
 * default-class annotation), DriverName, Age; DeviceClasses
 * and ResourceClaimTemplates Name, Age; ResourceClaims Name, State ("deleted", "pending",
 * "allocated", "reserved", comma-joined), Age; ResourceSlices Name, Node, Driver, Pool, Age.
 * Thread-safe: pure functions over const tables.
 */
#include "server/discovery/table_internal.h"

#include "core/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *row_webhooks(const kc_obj *o, int64_t now)
{
    return json_pack("[s,I,o]", kc_obj_name(o), kc__table_count(o, "/webhooks"),
                     kc__table_age(o, now));
}

static json_t *row_vap(const kc_obj *o, int64_t now)
{
    char pk[600] = "<unset>";
    json_t *p = kc__table_json(o, "/spec/paramKind");
    if (json_is_object(p))
        snprintf(pk, sizeof pk, "%s/%s", json_string_value(json_object_get(p, "apiVersion")) ?: "",
                 json_string_value(json_object_get(p, "kind")) ?: "");
    json_decref(p);
    return json_pack("[s,I,s,o]", kc_obj_name(o), kc__table_count(o, "/spec/validations"), pk,
                     kc__table_age(o, now));
}

/* The generated (*metav1.LabelSelector).String(): matchLabels by key, then the requirements. */
static void selector_go_string(const json_t *sel, kc__buf *b)
{
    const json_t *ml = json_object_get(sel, "matchLabels");
    size_t n = json_object_size(ml), k = 0, i, j;
    const char **keys = calloc(n ? n : 1, sizeof(*keys));
    const char *key;
    json_t *v, *e;
    json_object_foreach((json_t *)ml, key, v)
    {
        if (keys)
            keys[k++] = key;
    }
    if (keys)
        qsort(keys, k, sizeof(*keys), kc__table_cmp_str);
    kc__buf_append_str(b, "&LabelSelector{MatchLabels:map[string]string{");
    for (i = 0; i < k; i++)
        kc__buf_printf(b, "%s: %s,", keys[i],
                       json_string_value(json_object_get(ml, keys[i])) ?: "");
    free(keys);
    kc__buf_append_str(b, "},MatchExpressions:[]LabelSelectorRequirement{");
    json_array_foreach(json_object_get(sel, "matchExpressions"), i, e)
    {
        kc__buf_printf(b, "LabelSelectorRequirement{Key:%s,Operator:%s,Values:[",
                       json_string_value(json_object_get(e, "key")) ?: "",
                       json_string_value(json_object_get(e, "operator")) ?: "");
        json_array_foreach(json_object_get(e, "values"), j, v)
            kc__buf_printf(b, "%s%s", j ? " " : "", json_string_value(v) ?: "");
        kc__buf_append_str(b, "],},");
    }
    kc__buf_append_str(b, "},}");
}

static json_t *row_vapb(const kc_obj *o, int64_t now)
{
    json_t *pr = kc__table_json(o, "/spec/paramRef");
    kc__buf b = KC__BUF_INIT(0);
    const char *name = json_string_value(json_object_get(pr, "name"));
    const char *ns = json_string_value(json_object_get(pr, "namespace"));
    if (name && *name)
        kc__buf_printf(&b, "%s/%s", ns && *ns ? ns : "*", name);
    else if (json_is_object(json_object_get(pr, "selector")))
        selector_go_string(json_object_get(pr, "selector"), &b);
    json_decref(pr);
    json_t *row = json_pack("[s,o,s,o]", kc_obj_name(o), kc__table_str(o, "/spec/policyName", ""),
                            b.len ? b.data : "<unset>", kc__table_age(o, now));
    kc__buf_free(&b);
    return row;
}

static json_t *row_flowschema(const kc_obj *o, int64_t now)
{
    json_t *conds = kc__table_json(o, "/status/conditions");
    const char *missing = "?";
    size_t i;
    json_t *c;
    json_array_foreach(conds, i, c)
    {
        if (kc__streq(json_string_value(json_object_get(c, "type")), "Dangling")) {
            missing = json_string_value(json_object_get(c, "status")) ?: "";
            break;
        }
    }
    json_t *row = json_pack("[s,o,I,o,o,s]", kc_obj_name(o),
                            kc__table_str(o, "/spec/priorityLevelConfiguration/name", ""),
                            (json_int_t)kc__table_int(o, "/spec/matchingPrecedence"),
                            kc__table_str(o, "/spec/distinguisherMethod/type", "<none>"),
                            kc__table_age(o, now), missing);
    json_decref(conds);
    return row;
}

/* apihelpers.FlowSchemaSequence: matching precedence, then name. */
static int cmp_flowschema(const kc_obj *a, const kc_obj *b)
{
    int64_t pa = kc__table_int(a, "/spec/matchingPrecedence");
    int64_t pb = kc__table_int(b, "/spec/matchingPrecedence");
    if (pa != pb)
        return pa < pb ? -1 : 1;
    return strcmp(kc_obj_name(a) ?: "", kc_obj_name(b) ?: "");
}

static json_t *int_or_none(const json_t *parent, const char *key)
{
    return parent ? json_integer(json_integer_value(json_object_get(parent, key)))
                  : json_string("<none>");
}

static json_t *row_plc(const kc_obj *o, int64_t now)
{
    json_t *lim = kc__table_json(o, "/spec/limited");
    const json_t *limited = json_is_object(lim) ? lim : NULL;
    const json_t *q = json_object_get(json_object_get(limited, "limitResponse"), "queuing");
    if (!json_is_object(q))
        q = NULL;
    json_t *row = json_pack("[s,o,o,o,o,o,o]", kc_obj_name(o), kc__table_str(o, "/spec/type", ""),
                            int_or_none(limited, "nominalConcurrencyShares"),
                            int_or_none(q, "queues"), int_or_none(q, "handSize"),
                            int_or_none(q, "queueLengthLimit"), kc__table_age(o, now));
    json_decref(lim);
    return row;
}

static bool bool_at(const kc_obj *o, const char *ptr, bool dflt)
{
    bool v;
    return kc_obj_get_bool(o, ptr, &v, NULL) == 0 ? v : dflt;
}

/* The strings of the array at ptr (member key of each element when key is set), ","-joined. */
static void join_at(const kc_obj *o, const char *ptr, const char *key, kc__buf *b)
{
    json_t *a = kc__table_json(o, ptr);
    size_t i;
    json_t *v;
    json_array_foreach(a, i, v)
    {
        const json_t *s = key ? json_object_get(v, key) : v;
        kc__buf_printf(b, "%s%s", i ? "," : "", json_string_value(s) ?: "");
    }
    json_decref(a);
}

static json_t *row_csidriver(const kc_obj *o, int64_t now)
{
    kc__buf tokens = KC__BUF_INIT(0), modes = KC__BUF_INIT(0);
    json_t *tr = kc__table_json(o, "/spec/tokenRequests");
    bool has_tokens = json_is_array(tr);
    json_decref(tr);
    join_at(o, "/spec/tokenRequests", "audience", &tokens);
    join_at(o, "/spec/volumeLifecycleModes", NULL, &modes);
    json_t *row = json_pack(
        "[s,b,b,b,s,b,s,o]", kc_obj_name(o), bool_at(o, "/spec/attachRequired", true),
        bool_at(o, "/spec/podInfoOnMount", false), bool_at(o, "/spec/storageCapacity", false),
        has_tokens ? (tokens.len ? tokens.data : "") : "<unset>",
        bool_at(o, "/spec/requiresRepublish", false), modes.len ? modes.data : "<none>",
        kc__table_age(o, now));
    kc__buf_free(&tokens);
    kc__buf_free(&modes);
    return row;
}

static json_t *row_csinode(const kc_obj *o, int64_t now)
{
    return json_pack("[s,I,o]", kc_obj_name(o), kc__table_count(o, "/spec/drivers"),
                     kc__table_age(o, now));
}

static json_t *row_volumeattachment(const kc_obj *o, int64_t now)
{
    return json_pack("[s,o,o,o,b,o]", kc_obj_name(o), kc__table_str(o, "/spec/attacher", ""),
                     kc__table_str(o, "/spec/source/persistentVolumeName", ""),
                     kc__table_str(o, "/spec/nodeName", ""), bool_at(o, "/status/attached", false),
                     kc__table_age(o, now));
}

/* storageutil.IsDefaultAnnotationForVolumeAttributesClass: " (default)" after the name. */
static json_t *row_vac(const kc_obj *o, int64_t now)
{
    char name[300];
    json_t *a = kc__table_str(
        o, "/metadata/annotations/volumeattributesclass.alpha.kubernetes.io~1is-default-class", "");
    snprintf(name, sizeof name, "%s%s", kc_obj_name(o),
             kc__streq(json_string_value(a), "true") ? " (default)" : "");
    json_decref(a);
    return json_pack("[s,o,o]", name, kc__table_str(o, "/driverName", ""), kc__table_age(o, now));
}

static json_t *row_name_age(const kc_obj *o, int64_t now)
{
    return json_pack("[s,o]", kc_obj_name(o), kc__table_age(o, now));
}

static json_t *row_resourceclaim(const kc_obj *o, int64_t now)
{
    kc__buf b = KC__BUF_INIT(0);
    bool deleting = kc_obj_deleting(o);
    json_t *alloc = kc__table_json(o, "/status/allocation");
    if (deleting)
        kc__buf_append_str(&b, "deleted");
    if (!alloc || json_is_null(alloc)) {
        if (!deleting)
            kc__buf_append_str(&b, "pending");
    } else {
        kc__buf_printf(&b, "%sallocated", b.len ? "," : "");
        if (kc__table_count(o, "/status/reservedFor"))
            kc__buf_append_str(&b, ",reserved");
    }
    json_decref(alloc);
    json_t *row = json_pack("[s,s,o]", kc_obj_name(o), b.len ? b.data : "", kc__table_age(o, now));
    kc__buf_free(&b);
    return row;
}

static json_t *row_resourceslice(const kc_obj *o, int64_t now)
{
    return json_pack("[s,o,o,o,o]", kc_obj_name(o), kc__table_str(o, "/spec/nodeName", ""),
                     kc__table_str(o, "/spec/driver", ""), kc__table_str(o, "/spec/pool/name", ""),
                     kc__table_age(o, now));
}

#define ADMREG      "admissionregistration.k8s.io"
#define FLOWCONTROL "flowcontrol.apiserver.k8s.io"
#define WEBHOOK_COLS                                                                               \
    {                                                                                              \
        COL_NAME,                                                                                  \
            {"Webhooks", "integer", "",                                                            \
             "Webhooks indicates the number of webhooks registered in this configuration"},        \
            COL_AGE                                                                                \
    }
#define COL_PARAM_REF                                                                              \
    {                                                                                              \
        "ParamRef", "string", "",                                                                  \
            "ParamRef indicates the param resource which sets the configration param"              \
    }

const kc__printer kc__printers_cluster[] = {
    {ADMREG, "mutatingwebhookconfigurations", WEBHOOK_COLS, 3, row_webhooks, 0},
    {ADMREG, "validatingwebhookconfigurations", WEBHOOK_COLS, 3, row_webhooks, 0},
    {ADMREG,
     "validatingadmissionpolicies",
     {COL_NAME,
      {"Validations", "integer", "",
       "Validations indicates the number of validation rules defined in this configuration"},
      {"ParamKind", "string", "",
       "ParamKind specifies the kind of resources used to parameterize this policy"},
      COL_AGE},
     4,
     row_vap,
     0},
    {ADMREG,
     "validatingadmissionpolicybindings",
     {COL_NAME,
      {"PolicyName", "string", "",
       "PolicyName indicates the policy definition which the policy binding binded to"},
      COL_PARAM_REF,
      COL_AGE},
     4,
     row_vapb,
     0},
    {FLOWCONTROL,
     "flowschemas",
     {COL_NAME,
      {"PriorityLevel", "string", "",
       "`name` is the name of the priority level configuration "
       "being referenced Required."},
      {"MatchingPrecedence", "string", "",
       "`matchingPrecedence` is used to choose among the FlowSchemas that match a given request. "
       "The chosen FlowSchema is among those with the numerically lowest (which we take to be "
       "logically highest) MatchingPrecedence.  Each MatchingPrecedence value must be ranged in "
       "[1,10000]. Note that if the precedence is not specified, it will be set to 1000 as "
       "default."},
      {"DistinguisherMethod", "string", "",
       "`distinguisherMethod` defines how to compute the flow distinguisher for requests that "
       "match this schema. `nil` specifies that the distinguisher is disabled and thus will "
       "always be the empty string."},
      COL_AGE,
      {"MissingPL", "string", "",
       "references a broken or non-existent PriorityLevelConfiguration"}},
     6,
     row_flowschema,
     0},
    {FLOWCONTROL,
     "prioritylevelconfigurations",
     {COL_NAME,
      {"Type", "string", "",
       "`type` indicates whether this priority level is subject to limitation on request "
       "execution.  A value of `\"Exempt\"` means that requests of this priority level are not "
       "subject to a limit (and thus are never queued) and do not detract from the capacity made "
       "available to other priority levels.  A value of `\"Limited\"` means that (a) requests of "
       "this priority level _are_ subject to limits and (b) some of the server's limited "
       "capacity is made available exclusively to this priority level. Required."},
      {"NominalConcurrencyShares", "string", "",
       "`nominalConcurrencyShares` (NCS) contributes to the computation of the "
       "NominalConcurrencyLimit (NominalCL) of this level."},
      {"Queues", "string", "",
       "`queues` is the number of queues for this priority level. The queues exist independently "
       "at each apiserver. The value must be positive.  Setting it to 1 effectively precludes "
       "shufflesharding and thus makes the distinguisher method of associated flow schemas "
       "irrelevant.  This field has a default value of 64."},
      {"HandSize", "string", "",
       "`handSize` is a small positive number that configures the shuffle sharding of requests "
       "into queues.  When enqueuing a request at this priority level the request's flow "
       "identifier (a string pair) is hashed and the hash value is used to shuffle the list of "
       "queues and deal a hand of the size specified here.  This field has a default value of "
       "8."},
      {"QueueLengthLimit", "string", "",
       "`queueLengthLimit` is the maximum number of requests allowed to be waiting in a given "
       "queue of this priority level at a time; excess requests are rejected.  This value must "
       "be positive.  If not specified, it will be defaulted to 50."},
      COL_AGE},
     7,
     row_plc,
     0},
    {"storage.k8s.io",
     "csidrivers",
     {COL_NAME,
      {"AttachRequired", "boolean", "",
       "attachRequired indicates this CSI volume driver requires an attach operation."},
      {"PodInfoOnMount", "boolean", "",
       "podInfoOnMount indicates this CSI volume driver requires additional pod information "
       "(like podName, podUID, etc.) during mount operations."},
      {"StorageCapacity", "boolean", "",
       "storageCapacity indicates that the CSI volume driver wants pod scheduling to consider "
       "the storage capacity that the driver deployment will report."},
      {"TokenRequests", "string", "",
       "tokenRequests indicates the CSI driver needs pods' service account tokens it is "
       "mounting volume for to do necessary authentication."},
      {"RequiresRepublish", "boolean", "",
       "requiresRepublish indicates the CSI driver wants `NodePublishVolume` being periodically "
       "called to reflect any possible change in the mounted volume."},
      {"Modes", "string", "",
       "volumeLifecycleModes defines what kind of volumes this CSI volume driver supports."},
      COL_AGE},
     8,
     row_csidriver,
     0},
    {"storage.k8s.io",
     "csinodes",
     {COL_NAME,
      {"Drivers", "integer", "",
       "Drivers indicates the number of CSI drivers registered on the node"},
      COL_AGE},
     3,
     row_csinode,
     0},
    {"storage.k8s.io",
     "volumeattachments",
     {COL_NAME,
      {"Attacher", "string", "name",
       "attacher indicates the name of the volume driver that MUST handle this request. This is "
       "the name returned by GetPluginName()."},
      {"PV", "string", "",
       "persistentVolumeName represents the name of the persistent volume to attach."},
      {"Node", "string", "", "nodeName represents the node that the volume should be attached to."},
      {"Attached", "boolean", "",
       "attached indicates the volume is successfully attached. This field must only be set by "
       "the entity completing the attach operation, i.e. the external-attacher."},
      COL_AGE},
     6,
     row_volumeattachment,
     0},
    {"storage.k8s.io",
     "volumeattributesclasses",
     {COL_NAME,
      {"DriverName", "string", "", "Name of the CSI driver This field is immutable."},
      COL_AGE},
     3,
     row_vac,
     0},
    {"resource.k8s.io", "deviceclasses", {COL_NAME, COL_AGE}, 2, row_name_age, 0},
    {"resource.k8s.io", "resourceclaimtemplates", {COL_NAME, COL_AGE}, 2, row_name_age, 0},
    {"resource.k8s.io",
     "resourceclaims",
     {COL_NAME,
      {"State", "string", "",
       "A summary of the current state (allocated, pending, reserved, etc.)."},
      COL_AGE},
     3,
     row_resourceclaim,
     0},
    {"resource.k8s.io",
     "resourceslices",
     {COL_NAME,
      {"Node", "string", "",
       "NodeName identifies the node which provides the resources in this pool."},
      {"Driver", "string", "",
       "Driver identifies the DRA driver providing the capacity information."},
      {"Pool", "string", "", "Name is used to identify the pool."},
      COL_AGE},
     5,
     row_resourceslice,
     0},
};
const size_t kc__printers_cluster_len =
    sizeof(kc__printers_cluster) / sizeof(kc__printers_cluster[0]);

kc__row_cmp kc__table_row_cmp(const kc__printer *p)
{
    return p->row == row_flowschema ? cmp_flowschema : NULL;
}
