/*
 * test_server_defaults.c — the defaults room's pure functions on kinds the integration tests do
 * not reach through a served resource (CronJob, ReplicationController, PodTemplate), image pull
 * policies, volume sources, quantities and QoS classes. Expected documents follow
 * k8s.io/kubernetes pkg/apis/{batch,core}/v1/defaults.go and pkg/apis/core/helper/qos.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "server/defaults/defaults.h"
#include "server/defaults/defaults_internal.h"

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

static void expect(json_t *got, const char *want_sq)
{
    json_t *want = sq(want_sq);
    if (!json_equal(got, want)) {
        char *a = json_dumps(got, JSON_SORT_KEYS), *b = json_dumps(want, JSON_SORT_KEYS);
        print_error("got:  %s\nwant: %s\n", a, b);
        free(a);
        free(b);
        fail();
    }
    json_decref(want);
}

#define POD_SPEC                                                                                   \
    "'spec':{'containers':[{'name':'c','image':'x:1','imagePullPolicy':'IfNotPresent',"            \
    "'resources':{},'terminationMessagePath':'/dev/termination-log',"                              \
    "'terminationMessagePolicy':'File'}],'restartPolicy':'OnFailure','dnsPolicy':"                 \
    "'ClusterFirst','schedulerName':'default-scheduler','securityContext':{},"                     \
    "'terminationGracePeriodSeconds':30}"

/* SetDefaults_CronJob: Allow, suspend false, history limits 3 and 1; the job template's pod
 * template is defaulted (not its JobSpec: SetDefaults_Job takes a Job). */
static void test_server_defaults_cronjob(void **state)
{
    (void)state;
    json_t *d = sq("{'spec':{'schedule':'*/5 * * * *','jobTemplate':{'spec':{'template':{"
                   "'spec':{'containers':[{'name':'c','image':'x:1'}],'restartPolicy':"
                   "'OnFailure'}}}}}}");
    assert_int_equal(kc__defaults_apply("batch", "CronJob", d), 0);
    expect(d, "{'spec':{'schedule':'*/5 * * * *','concurrencyPolicy':'Allow','suspend':false,"
              "'successfulJobsHistoryLimit':3,'failedJobsHistoryLimit':1,'jobTemplate':{"
              "'metadata':{'creationTimestamp':null},'spec':{'template':{'metadata':{"
              "'creationTimestamp':null}," POD_SPEC "}}}},'status':{}}");
    assert_int_equal(kc__defaults_apply("batch", "CronJob", d), 0); /* idempotent */
    json_decref(d);
}

/* SetDefaults_ReplicationController: selector and labels from the template, replicas 1;
 * PodTemplate: its template. */
static void test_server_defaults_rc_podtemplate(void **state)
{
    (void)state;
    json_t *rc = sq("{'metadata':{'name':'rc'},'spec':{'template':{'metadata':{'labels':{"
                    "'a':'b'}},'spec':{'containers':[{'name':'c','image':'x:1'}],"
                    "'restartPolicy':'OnFailure'}}}}");
    assert_int_equal(kc__defaults_apply("", "ReplicationController", rc), 0);
    expect(rc,
           "{'metadata':{'name':'rc','labels':{'a':'b'}},'spec':{'replicas':1,'selector':{"
           "'a':'b'},'template':{'metadata':{'creationTimestamp':null,'labels':{'a':'b'}}," POD_SPEC
           "}},'status':{'replicas':0}}");
    json_decref(rc);
    json_t *pt = sq("{'template':{'spec':{'containers':[{'name':'c','image':'x:1'}],"
                    "'restartPolicy':'OnFailure'}}}");
    assert_int_equal(kc__defaults_apply("", "PodTemplate", pt), 0);
    expect(pt, "{'template':{'metadata':{'creationTimestamp':null}," POD_SPEC "}}");
    json_decref(pt);
}

/* parsers.ParseImageName: "latest" when neither tag nor digest → Always. */
static void test_server_defaults_image_pull_policy(void **state)
{
    (void)state;
    static const struct {
        const char *image, *policy;
    } cases[] = {{"nginx", "Always"},
                 {"nginx:latest", "Always"},
                 {"nginx:1.25", "IfNotPresent"},
                 {"localhost:5000/app", "Always"},
                 {"localhost:5000/app:v2", "IfNotPresent"},
                 {"app@sha256:abc", "IfNotPresent"},
                 {"app:latest@sha256:abc", "Always"},
                 {"", "IfNotPresent"}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *pod = json_pack("{s:{s:[{s:s,s:s}]}}", "spec", "containers", "name", "c", "image",
                                cases[i].image);
        assert_int_equal(kc__defaults_apply("", "Pod", pod), 0);
        const char *got = json_string_value(json_object_get(
            json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"), 0),
            "imagePullPolicy"));
        if (!got || strcmp(got, cases[i].policy) != 0)
            fail_msg("%s: got %s, want %s", cases[i].image, got ? got : "(none)", cases[i].policy);
        json_decref(pod);
    }
}

/* Volume sources' defaults (generated walk): hostPath type "", secret / downwardAPI mode 420
 * and fieldRef v1, an explicit mode kept. */
static void test_server_defaults_volumes(void **state)
{
    (void)state;
    json_t *spec = sq("{'containers':[],'volumes':[{'name':'h','hostPath':{'path':'/x'}},"
                      "{'name':'s','secret':{'secretName':'s','defaultMode':256}},{'name':'d',"
                      "'downwardAPI':{'items':[{'path':'n','fieldRef':{'fieldPath':"
                      "'metadata.name'}}]}}]}");
    kc__dctx c = {0};
    kc__defaults_pod_spec(&c, spec, false);
    assert_int_equal(c.rc, 0);
    expect(json_object_get(spec, "volumes"),
           "[{'name':'h','hostPath':{'path':'/x','type':''}},{'name':'s','secret':{"
           "'secretName':'s','defaultMode':256}},{'name':'d','downwardAPI':{'defaultMode':420,"
           "'items':[{'path':'n','fieldRef':{'apiVersion':'v1','fieldPath':'metadata.name'}}]}}]");
    json_decref(spec);
}

static void test_server_defaults_quantities_qos(void **state)
{
    (void)state;
    long double v;
    assert_true(kc__quantity_value("100m", &v) && v > 0.0999L && v < 0.1001L);
    assert_true(kc__quantity_value("1Gi", &v) && v == 1073741824.0L);
    assert_true(kc__quantity_value("2.5e3", &v) && v == 2500.0L);
    assert_false(kc__quantity_value("12x", &v));
    assert_false(kc__quantity_value("", &v));
    static const struct {
        const char *resources, *qos;
    } cases[] = {
        {"{}", "BestEffort"},
        {"{'requests':{'cpu':'0'}}", "BestEffort"},
        {"{'requests':{'cpu':'100m'}}", "Burstable"},
        {"{'limits':{'cpu':'1','memory':'1Gi'}}", "Guaranteed"},
        {"{'limits':{'cpu':'1','memory':'1Gi'},'requests':{'cpu':'1000m','memory':'1024Mi'}}",
         "Guaranteed"},
        {"{'limits':{'cpu':'1','memory':'1Gi'},'requests':{'cpu':'500m'}}", "Burstable"},
        {"{'limits':{'cpu':'1'}}", "Burstable"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char buf[512];
        snprintf(buf, sizeof(buf),
                 "{'spec':{'containers':[{'name':'c','image':'x:1',"
                 "'resources':%s}]}}",
                 cases[i].resources);
        json_t *pod = sq(buf);
        kc__create_env env = {.reset_status = true};
        assert_int_equal(kc__defaults_apply("", "Pod", pod), 0);
        assert_int_equal(kc__defaults_prepare_create("", "Pod", pod, &env), 0);
        const char *q =
            json_string_value(json_object_get(json_object_get(pod, "status"), "qosClass"));
        if (!q || strcmp(q, cases[i].qos) != 0)
            fail_msg("%s: got %s, want %s", cases[i].resources, q ? q : "(none)", cases[i].qos);
        json_decref(pod);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_defaults_cronjob),
        cmocka_unit_test(test_server_defaults_rc_podtemplate),
        cmocka_unit_test(test_server_defaults_image_pull_policy),
        cmocka_unit_test(test_server_defaults_volumes),
        cmocka_unit_test(test_server_defaults_quantities_qos),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
