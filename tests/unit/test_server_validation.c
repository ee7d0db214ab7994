/*
 * test_server_validation.c — the validation room (src/server/validation/) as pure functions: each
 * rule with the exact message and cause field paths of kube-apiserver 1.34 (pkg/apis/apps,
 * batch and core validation, apimachinery's ObjectMeta and field.ErrorList wording): 422
 * `<Kind>.<group> "<name>" is invalid: …`, one error bare, several as "[e1, e2]" with repeats
 * dropped from the message but kept as causes. Objects are given as after defaulting.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "server/testbed/seed.h"
#include "server/validation/validation.h"
#include "server/validation/validation_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *sq(const char *text)
{
    char *s = strdup(text);
    for (char *p = s; *p; p++)
        if (*p == '\'')
            *p = '"';
    json_error_t je;
    json_t *j = json_loads(s, 0, &je);
    if (!j)
        fail_msg("bad test JSON: %s: %s", je.text, s);
    free(s);
    return j;
}

#define CTR  "{'name':'c','image':'nginx','imagePullPolicy':'Always'}"
#define PODS "'restartPolicy':'Always','dnsPolicy':'ClusterFirst'"

/* A defaulted Deployment: selector sel (JSON or NULL), template labels tl, containers cs. */
static json_t *deploy(const char *name, const char *sel, const char *tl, const char *cs)
{
    char b[4096];
    snprintf(b, sizeof b,
             "{'apiVersion':'apps/v1','kind':'Deployment','metadata':{'name':'%s'},"
             "'spec':{'replicas':1,%s%s%s'template':{'metadata':{'labels':%s},'spec':{"
             "'containers':%s," PODS "}},'revisionHistoryLimit':10,"
             "'progressDeadlineSeconds':600}}",
             name, sel ? "'selector':" : "", sel ? sel : "", sel ? "," : "", tl, cs);
    return sq(b);
}

/* Validate and return the error (code in *code); the caller clears it. */
static kc_error run(const char *group, const char *kind, json_t *doc, json_t *old, int *code)
{
    kc_error err = KC_ERROR_INIT;
    *code = kc__validate_object(group, kind, doc, old, &err);
    json_decref(doc);
    json_decref(old);
    return err;
}

static void expect_msg(kc_error *e, int code, const char *msg)
{
    assert_int_equal(code, KC_EUNPROCESSABLE);
    assert_int_equal(e->http_status, 422);
    assert_string_equal(e->reason, "Invalid");
    assert_non_null(e->message);
    if (strcmp(e->message, msg) != 0)
        fail_msg("message\n got: %s\nwant: %s", e->message, msg);
}

static void expect_cause(kc_error *e, size_t i, const char *reason, const char *field,
                         const char *message)
{
    assert_true(i < e->n_causes);
    assert_string_equal(e->causes[i].reason, reason);
    assert_string_equal(e->causes[i].field, field);
    if (message)
        assert_string_equal(e->causes[i].message, message);
}

/* The brief's example: a selector that does not match the template's labels. */
static void test_server_validation_selector_mismatch(void **state)
{
    (void)state;
    int code;
    kc_error e =
        run("apps", "Deployment",
            deploy("x", "{'matchLabels':{'app':'x'}}", "{'app':'y'}", "[" CTR "]"), NULL, &code);
    expect_msg(&e, code,
               "Deployment.apps \"x\" is invalid: spec.template.metadata.labels: Invalid value: "
               "map[string]string{\"app\":\"y\"}: `selector` does not match template `labels`");
    assert_int_equal(e.n_causes, 1);
    expect_cause(&e, 0, "FieldValueInvalid", "spec.template.metadata.labels",
                 "Invalid value: map[string]string{\"app\":\"y\"}: `selector` does not match "
                 "template `labels`");
    assert_string_equal(e.kind, "Deployment");
    assert_string_equal(e.group, "apps");
    assert_string_equal(e.name, "x");
    kc_error_clear(&e);
}

/* apps/v1 requires spec.selector; a missing one selects nothing, so the labels mismatch too:
 * the aggregate "[a, b]". */
static void test_server_validation_selector_required(void **state)
{
    (void)state;
    int code;
    kc_error e =
        run("apps", "Deployment", deploy("x", NULL, "{'app':'nginx'}", "[" CTR "]"), NULL, &code);
    expect_msg(
        &e, code,
        "Deployment.apps \"x\" is invalid: [spec.selector: Required value, "
        "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"nginx\"}: "
        "`selector` does not match template `labels`]");
    assert_int_equal(e.n_causes, 2);
    expect_cause(&e, 0, "FieldValueRequired", "spec.selector", "Required value");
    kc_error_clear(&e);
    /* an empty selector: invalid, printed as the protobuf type's String() */
    e = run("apps", "Deployment", deploy("x", "{}", "{'app':'nginx'}", "[" CTR "]"), NULL, &code);
    expect_msg(&e, code,
               "Deployment.apps \"x\" is invalid: spec.selector: Invalid value: "
               "&LabelSelector{MatchLabels:map[string]string{},MatchExpressions:[]"
               "LabelSelectorRequirement{},}: empty selector is invalid for deployment");
    kc_error_clear(&e);
}

/* Containers: at least one; names required, DNS-1123 labels, unique; image required; ports. */
static void test_server_validation_containers(void **state)
{
    (void)state;
    int code;
    kc_error e = run("apps", "Deployment",
                     deploy("d", "{'matchLabels':{'a':'b'}}", "{'a':'b'}", "[]"), NULL, &code);
    expect_msg(&e, code,
               "Deployment.apps \"d\" is invalid: spec.template.spec.containers: Required value");
    kc_error_clear(&e);
    e = run("apps", "Deployment",
            deploy("d", "{'matchLabels':{'a':'b'}}", "{'a':'b'}",
                   "[{'name':'Web_1','image':'nginx'},{'name':'','image':''},"
                   "{'name':'c','image':'x','ports':[{'containerPort':70000,'protocol':'TCP'},"
                   "{'containerPort':0,'protocol':'HTTP','name':'http'},"
                   "{'containerPort':8080,'protocol':'TCP','name':'http'}]},"
                   "{'name':'c','image':'x'}]"),
            NULL, &code);
    assert_int_equal(code, KC_EUNPROCESSABLE);
    expect_cause(&e, 0, "FieldValueInvalid", "spec.template.spec.containers[0].name",
                 "Invalid value: \"Web_1\": a lowercase RFC 1123 label must consist of lower "
                 "case alphanumeric characters or '-', and must start and end with an "
                 "alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
                 "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')");
    expect_cause(&e, 1, "FieldValueRequired", "spec.template.spec.containers[1].name",
                 "Required value");
    expect_cause(&e, 2, "FieldValueRequired", "spec.template.spec.containers[1].image",
                 "Required value");
    expect_cause(&e, 3, "FieldValueInvalid",
                 "spec.template.spec.containers[2].ports[0].containerPort",
                 "Invalid value: 70000: must be between 1 and 65535, inclusive");
    expect_cause(&e, 4, "FieldValueRequired",
                 "spec.template.spec.containers[2].ports[1].containerPort", "Required value");
    expect_cause(&e, 5, "FieldValueNotSupported",
                 "spec.template.spec.containers[2].ports[1].protocol",
                 "Unsupported value: \"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\"");
    expect_cause(&e, 6, "FieldValueDuplicate", "spec.template.spec.containers[2].ports[2].name",
                 "Duplicate value: \"http\"");
    expect_cause(&e, 7, "FieldValueDuplicate", "spec.template.spec.containers[3].name",
                 "Duplicate value: \"c\"");
    assert_int_equal(e.n_causes, 8);
    assert_non_null(strstr(e.message, "Deployment.apps \"d\" is invalid: [spec.template.spec."
                                      "containers[0].name: Invalid value: \"Web_1\": "));
    kc_error_clear(&e);
}

/* Workloads need restartPolicy Always; Jobs OnFailure or Never ("Required value: valid values"
 * when defaulted to Always); negative replicas. */
static void test_server_validation_restart_policy(void **state)
{
    (void)state;
    int code;
    json_t *d = deploy("d", "{'matchLabels':{'a':'b'}}", "{'a':'b'}", "[" CTR "]");
    json_object_set_new(
        json_object_get(json_object_get(json_object_get(d, "spec"), "template"), "spec"),
        "restartPolicy", json_string("OnFailure"));
    json_object_set_new(json_object_get(d, "spec"), "replicas", json_integer(-1));
    kc_error e = run("apps", "Deployment", d, NULL, &code);
    expect_msg(&e, code,
               "Deployment.apps \"d\" is invalid: [spec.replicas: Invalid value: -1: must be "
               "greater than or equal to 0, spec.template.spec.restartPolicy: Unsupported value: "
               "\"OnFailure\": supported values: \"Always\"]");
    kc_error_clear(&e);
    e = run("batch", "Job",
            sq("{'metadata':{'name':'j'},'spec':{'backoffLimit':6,'selector':{'matchLabels':{"
               "'batch.kubernetes.io/controller-uid':'u'}},'template':{'metadata':{'labels':{"
               "'batch.kubernetes.io/controller-uid':'u'}},'spec':{'containers':[" CTR "]," PODS
               "}}}}"),
            NULL, &code);
    expect_msg(&e, code,
               "Job.batch \"j\" is invalid: spec.template.spec.restartPolicy: Required value: "
               "valid values: \"OnFailure\", \"Never\"");
    kc_error_clear(&e);
}

/* A Deployment's rolling update: percents, not both 0, at most 100% unavailable; Recreate. */
static void test_server_validation_strategy(void **state)
{
    (void)state;
    int code;
    json_t *d = deploy("d", "{'matchLabels':{'a':'b'}}", "{'a':'b'}", "[" CTR "]");
    json_object_set_new(json_object_get(d, "spec"), "strategy",
                        sq("{'type':'RollingUpdate','rollingUpdate':{'maxUnavailable':0,"
                           "'maxSurge':'0%'}}"));
    kc_error e = run("apps", "Deployment", d, NULL, &code);
    expect_msg(&e, code,
               "Deployment.apps \"d\" is invalid: spec.strategy.rollingUpdate.maxUnavailable: "
               "Invalid value: 0: may not be 0 when `maxSurge` is 0");
    kc_error_clear(&e);
    d = deploy("d", "{'matchLabels':{'a':'b'}}", "{'a':'b'}", "[" CTR "]");
    json_object_set_new(json_object_get(d, "spec"), "strategy",
                        sq("{'type':'RollingUpdate','rollingUpdate':{'maxUnavailable':'110%',"
                           "'maxSurge':'x'}}"));
    e = run("apps", "Deployment", d, NULL, &code);
    expect_msg(&e, code,
               "Deployment.apps \"d\" is invalid: [spec.strategy.rollingUpdate.maxSurge: Invalid "
               "value: x: a valid percent string must be a numeric string followed by an ending "
               "'%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%'), "
               "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 110%: must not be "
               "greater than 100%]");
    kc_error_clear(&e);
    d = deploy("d", "{'matchLabels':{'a':'b'}}", "{'a':'b'}", "[" CTR "]");
    json_object_set_new(json_object_get(d, "spec"), "strategy",
                        sq("{'type':'Recreate','rollingUpdate':{'maxSurge':1}}"));
    e = run("apps", "Deployment", d, NULL, &code);
    expect_msg(&e, code,
               "Deployment.apps \"d\" is invalid: spec.strategy.rollingUpdate: Forbidden: may not "
               "be specified when strategy `type` is 'Recreate'");
    kc_error_clear(&e);
}

/* Labels and annotations: key syntax, value syntax, 256 KiB of annotations. */
static void test_server_validation_labels_annotations(void **state)
{
    (void)state;
    int code;
    kc_error e =
        run("", "ConfigMap", sq("{'metadata':{'name':'cm','labels':{'bad key':'ok','k':'-v'}}}"),
            NULL, &code);
    expect_msg(&e, code,
               "ConfigMap \"cm\" is invalid: [metadata.labels: Invalid value: \"bad key\": name "
               "part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
               "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
               "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), "
               "metadata.labels: Invalid value: \"-v\": a valid label must be an empty string or "
               "consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
               "an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex "
               "used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')]");
    assert_null(e.group);
    kc_error_clear(&e);
    e = run("", "ConfigMap", sq("{'metadata':{'name':'cm','labels':{'Example.com/a':'b'}}}"), NULL,
            &code);
    assert_int_equal(code, KC_EUNPROCESSABLE);
    expect_cause(
        &e, 0, "FieldValueInvalid", "metadata.labels",
        "Invalid value: \"Example.com/a\": prefix part a lowercase RFC 1123 subdomain "
        "must consist of lower case alphanumeric characters, '-' or '.', and must start "
        "and end with an alphanumeric character (e.g. 'example.com', regex used for "
        "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
    kc_error_clear(&e);
    /* annotation keys are compared lower-case; values are free */
    e = run("", "ConfigMap",
            sq("{'metadata':{'name':'cm','annotations':{'Example.com/A':'any value !'}}}"), NULL,
            &code);
    assert_int_equal(code, 0);
    kc_error_clear(&e);
    json_t *big = sq("{'metadata':{'name':'cm','annotations':{}}}");
    char *v = malloc(262144);
    memset(v, 'x', 262143);
    v[262143] = 0;
    json_object_set_new(json_object_get(json_object_get(big, "metadata"), "annotations"), "k",
                        json_string(v)); /* 1 + 262143 bytes: at the limit */
    json_t *bigger = json_deep_copy(big);
    e = run("", "ConfigMap", big, NULL, &code);
    assert_int_equal(code, 0);
    json_object_set_new(json_object_get(json_object_get(bigger, "metadata"), "annotations"), "k2",
                        json_string(""));
    e = run("", "ConfigMap", bigger, NULL, &code);
    expect_msg(&e, code,
               "ConfigMap \"cm\" is invalid: metadata.annotations: Too long: may not be more than "
               "262144 bytes");
    expect_cause(&e, 0, "FieldValueTooLong", "metadata.annotations",
                 "Too long: may not be more than 262144 bytes");
    free(v);
    kc_error_clear(&e);
}

/* Quantities: requests <= limits, canonical forms in the message, no negative values. */
static void test_server_validation_resources(void **state)
{
    (void)state;
    int code;
    kc_error e = run("", "Pod",
                     sq("{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c','image':'x',"
                        "'resources':{'requests':{'cpu':'1500m','memory':'2Gi'},'limits':{"
                        "'cpu':1,'memory':'1536Mi'}}}]," PODS "}}"),
                     NULL, &code);
    expect_msg(&e, code,
               "Pod \"p\" is invalid: [spec.containers[0].resources.requests: Invalid value: "
               "\"1500m\": must be less than or equal to cpu limit of 1, "
               "spec.containers[0].resources.requests: Invalid value: \"2Gi\": must be less than "
               "or equal to memory limit of 1536Mi]");
    kc_error_clear(&e);
    e = run("", "Pod",
            sq("{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c','image':'x',"
               "'resources':{'limits':{'cpu':'-1'}}}]," PODS "}}"),
            NULL, &code);
    expect_msg(&e, code,
               "Pod \"p\" is invalid: spec.containers[0].resources.limits[cpu]: Invalid value: "
               "\"-1\": must be greater than or equal to 0");
    kc_error_clear(&e);
    /* canonical String(): 1000 → 1k, 0.5 → 500m, 1.5Gi → 1536Mi, 1e3 stays, 100Mi < 1024 → 100Mi */
    static const char *const in[] = {"1000", "0.5", "1.5Gi", "1e3", "100Mi", "512", "0"};
    static const char *const out[] = {"1k", "500m", "1536Mi", "1e3", "100Mi", "512", "0"};
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
        kc__vquantity q;
        char s[64];
        json_t *j = json_string(in[i]);
        assert_true(kc__v_quantity_parse(j, &q));
        kc__v_quantity_string(&q, s, sizeof s);
        assert_string_equal(s, out[i]);
        json_decref(j);
    }
}

/* Updates: the selector is immutable; a StatefulSet's spec may change in listed fields only. */
static void test_server_validation_updates(void **state)
{
    (void)state;
    int code;
    kc_error e = run("apps", "Deployment",
                     deploy("d", "{'matchLabels':{'a':'c'}}", "{'a':'c'}", "[" CTR "]"),
                     deploy("d", "{'matchLabels':{'a':'b'}}", "{'a':'b'}", "[" CTR "]"), &code);
    expect_msg(&e, code,
               "Deployment.apps \"d\" is invalid: spec.selector: Invalid value: "
               "&LabelSelector{MatchLabels:map[string]string{a: c,},MatchExpressions:[]"
               "LabelSelectorRequirement{},}: field is immutable");
    kc_error_clear(&e);
#define STS(extra)                                                                                 \
    "{'metadata':{'name':'s'},'spec':{'replicas':1,'serviceName':'s'" extra                        \
    ",'podManagementPolicy':'OrderedReady','updateStrategy':{'type':'RollingUpdate'},"             \
    "'selector':{'matchLabels':{'a':'b'}},'template':{'metadata':{'labels':{'a':'b'}},"            \
    "'spec':{'containers':[" CTR "]," PODS "}}}}"
    e = run("apps", "StatefulSet", sq(STS(",'minReadySeconds':5")), sq(STS("")), &code);
    assert_int_equal(code, 0);
    e = run("apps", "StatefulSet", sq(STS(",'volumeClaimTemplates':[]")), sq(STS("")), &code);
    expect_msg(&e, code,
               "StatefulSet.apps \"s\" is invalid: spec: Forbidden: updates to statefulset spec "
               "for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', "
               "'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and "
               "'minReadySeconds' are forbidden");
    expect_cause(&e, 0, "FieldValueForbidden", "spec", NULL);
    kc_error_clear(&e);
}

/* Pods: only images (and a few fields) may change on update. */
static void test_server_validation_pod_update(void **state)
{
    (void)state;
    int code;
#define POD(img, extra)                                                                            \
    "{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c','image':'" img "'}]," PODS extra   \
    "}}"
    kc_error e = run("", "Pod", sq(POD("nginx:2", "")), sq(POD("nginx:1", "")), &code);
    assert_int_equal(code, 0);
    e = run("", "Pod", sq(POD("nginx:1", ",'nodeName':'n2'")), sq(POD("nginx:1", "")), &code);
    expect_msg(&e, code,
               "Pod \"p\" is invalid: spec: Forbidden: pod updates may not change fields other "
               "than `spec.containers[*].image`,`spec.initContainers[*].image`,"
               "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing "
               "tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it "
               "was previously negative)");
    kc_error_clear(&e);
}

/* A repeated error is one entry of the message but every cause stays (ToAggregate, NewInvalid). */
static void test_server_validation_aggregate_dedup(void **state)
{
    (void)state;
    int code;
    kc_error e = run("", "Pod",
                     sq("{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c','image':'x',"
                        "'ports':[{'containerPort':0,'protocol':'TCP'}]}],'initContainers':[]," PODS
                        ",'nodeSelector':{'k1':'-x','k2':'-x'}}}"),
                     NULL, &code);
    assert_int_equal(code, KC_EUNPROCESSABLE);
    assert_int_equal(e.n_causes, 3);
    expect_cause(&e, 1, "FieldValueInvalid", "spec.nodeSelector", NULL);
    expect_cause(&e, 2, "FieldValueInvalid", "spec.nodeSelector", NULL);
    const char *first = strstr(e.message, "spec.nodeSelector: Invalid value: \"-x\"");
    assert_non_null(first);
    assert_null(strstr(first + 1, "spec.nodeSelector:")); /* once in the message */
    assert_non_null(strstr(e.message, "is invalid: [spec.containers[0].ports[0].containerPort: "
                                      "Required value, spec.nodeSelector: "));
    kc_error_clear(&e);
    /* valid objects of any kind pass */
    e = run("", "Secret", sq("{'metadata':{'name':'s','labels':{'app.kubernetes.io/name':'x'}}}"),
            NULL, &code);
    assert_int_equal(code, 0);
}

/* kc__seed_generate's objects (bench and demo seeds; stored by the fast path unvalidated) are
 * objects a real server accepts. */
static int seed_ok(void *ud, const char *json, size_t len)
{
    int *n = ud;
    json_t *d = json_loadb(json, len, 0, NULL);
    assert_non_null(d);
    const char *av = json_string_value(json_object_get(d, "apiVersion"));
    const char *kind = json_string_value(json_object_get(d, "kind"));
    assert_non_null(av);
    assert_non_null(kind);
    const char *slash = strchr(av, '/');
    char group[64] = "";
    if (slash)
        snprintf(group, sizeof group, "%.*s", (int)(slash - av), av);
    kc_error e = KC_ERROR_INIT;
    int rc = kc__validate_object(group, kind, d, NULL, &e);
    if (rc)
        fail_msg("seed object rejected: %s", e.message);
    kc_error_clear(&e);
    json_decref(d);
    (*n)++;
    return 0;
}

static void test_server_validation_seeds_valid(void **state)
{
    (void)state;
    int n = 0;
    assert_int_equal(
        kc__seed_generate("pods=3,configmaps=2,secrets=2,pvs=2,namespaces=2", seed_ok, &n, NULL),
        0);
    assert_int_equal(n, 11);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_validation_selector_mismatch),
        cmocka_unit_test(test_server_validation_selector_required),
        cmocka_unit_test(test_server_validation_containers),
        cmocka_unit_test(test_server_validation_restart_policy),
        cmocka_unit_test(test_server_validation_strategy),
        cmocka_unit_test(test_server_validation_labels_annotations),
        cmocka_unit_test(test_server_validation_resources),
        cmocka_unit_test(test_server_validation_updates),
        cmocka_unit_test(test_server_validation_pod_update),
        cmocka_unit_test(test_server_validation_aggregate_dedup),
        cmocka_unit_test(test_server_validation_seeds_valid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
