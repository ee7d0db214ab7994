/*
 * What an informer watches is checked where it enters (issue 16 point 6): kc_informer_new and
 * kc_cache_get_informer refuse malformed selectors, field selector terms without an operator,
 * and resources / versions / groups / namespaces that are not Kubernetes names, with KC_EINVAL and
 * a message that names the field and the reason — instead of starting a reflector that retries
 * the server's 400 forever (or, for "namespaces/ns-1/pods", lists another resource). The REST
 * verbs refuse the same gvrs and names with a '/' (the server unescapes the path before routing).
 * Equivalent selectors name one informer of a cache.
 */
#include "test_informer_fixture.h"

typedef struct bad_case {
    const char *label, *field; /* selectors */
    kc_gvr gvr;
    const char *ns;
    const char *want; /* in the message */
} bad_case;

static const bad_case BAD[] = {
    {"a in (", NULL, {"", "v1", "configmaps"}, NULL, "bad label selector \"a in (\""},
    {"a b", NULL, {"", "v1", "configmaps"}, NULL, "bad label selector \"a b\""},
    {"a=b,,", NULL, {"", "v1", "configmaps"}, NULL, "identifier after ','"},
    {"a=b=c", NULL, {"", "v1", "configmaps"}, NULL, "bad label selector \"a=b=c\""},
    {"a=b,", NULL, {"", "v1", "configmaps"}, NULL, "(at byte 4)"},
    {NULL, "metadata.name", {"", "v1", "configmaps"}, NULL, "can't understand 'metadata.name'"},
    {NULL, "a=b=c", {"", "v1", "configmaps"}, NULL, "bad field selector \"a=b=c\""},
    {NULL, "=x", {"", "v1", "configmaps"}, NULL, "the field path is empty"},
    {NULL, "spec..x=1", {"", "v1", "configmaps"}, NULL, "empty segment"},
    {NULL, "a b=c", {"", "v1", "configmaps"}, NULL, "field \"a b\""},
    {NULL, NULL, {"", "v1", "namespaces/ns-1/pods"}, NULL, "bad gvr.resource"},
    {NULL, NULL, {"", "v1", "pods?watch=1"}, NULL, "not a path, subresource or query"},
    {NULL, NULL, {"", "v1", "pods/status"}, NULL, "bad gvr.resource \"pods/status\""},
    {NULL, NULL, {"", "v1", "Pods"}, NULL, "bad gvr.resource"},
    {NULL, NULL, {"", "v1", ""}, NULL, "bad gvr.resource"},
    {NULL, NULL, {"", "v1", NULL}, NULL, "bad gvr.resource"},
    {NULL, NULL, {"", "V1", "pods"}, NULL, "bad gvr.version \"V1\""},
    {NULL, NULL, {"", "1", "pods"}, NULL, "bad gvr.version"},
    {NULL, NULL, {"", "v1/x", "pods"}, NULL, "bad gvr.version"},
    {NULL, NULL, {"", NULL, "pods"}, NULL, "bad gvr.version"},
    {NULL, NULL, {"Apps", "v1", "deployments"}, NULL, "bad gvr.group \"Apps\""},
    {NULL, NULL, {"apps/v1", "v1", "deployments"}, NULL, "bad gvr.group"},
    {NULL, NULL, {"a..b", "v1", "deployments"}, NULL, "bad gvr.group"},
    {NULL, NULL, {"", "v1", "pods"}, "Default", "bad namespace \"Default\""},
    {NULL, NULL, {"", "v1", "pods"}, "a/b", "bad namespace"},
};

static void check_bad(const bad_case *b, int rc, const kc_error *e)
{
    if (rc != KC_EINVAL || !e->message || !strstr(e->message, b->want))
        fprintf(stderr, "case label=%s field=%s resource=%s: rc %s, message %s (want \"%s\")\n",
                b->label ? b->label : "-", b->field ? b->field : "-",
                b->gvr.resource ? b->gvr.resource : "(null)", kc_errno_name(rc),
                e->message ? e->message : "(none)", b->want);
    assert_int_equal(rc, KC_EINVAL);
    assert_non_null(e->message);
    assert_non_null(strstr(e->message, b->want));
}

/* kc_informer_new, or kc_cache_get_informer on ud (a cache), for one case. */
typedef int (*start_fn)(void *ud, kc_client *client, const kc_gvr *gvr, const kc_informer_opts *o,
                        kc_informer **ret, kc_error *e);

static int by_new(void *ud, kc_client *client, const kc_gvr *gvr, const kc_informer_opts *o,
                  kc_informer **ret, kc_error *e)
{
    return kc_informer_new(client, gvr, o, ret, e);
}

static int by_cache(void *ud, kc_client *client, const kc_gvr *gvr, const kc_informer_opts *o,
                    kc_informer **ret, kc_error *e)
{
    return kc_cache_get_informer(ud, gvr, o, ret, e);
}

static void check_all_bad(start_fn start, void *ud, kc_client *client)
{
    for (size_t i = 0; i < sizeof(BAD) / sizeof(BAD[0]); i++) {
        const bad_case *b = &BAD[i];
        kc_informer_opts o = {.ns = b->ns, .label_selector = b->label, .field_selector = b->field};
        kc_informer *inf = (kc_informer *)0x1;
        kc_error e = KC_ERROR_INIT;
        check_bad(b, start(ud, client, &b->gvr, &o, &inf, &e), &e);
        assert_ptr_equal(inf, (kc_informer *)0x1); /* untouched */
        kc_error_clear(&e);
    }
}

static void test_informer_validation_new_refuses_bad_specs(void **st)
{
    ifx f;
    ifx_up(&f, NULL);
    check_all_bad(by_new, NULL, f.client);
    ifx_down(&f);
}

static void test_informer_validation_cache_refuses_bad_specs(void **st)
{
    ifx f;
    ifx_up(&f, NULL);
    kc_cache *c = NULL;
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_cache_new(f.client, NULL, &c, &e), 0, &e);
    check_all_bad(by_cache, c, f.client);
    assert_int_equal(kc_cache_informer_count(c), 0); /* nothing was started */
    kc_cache_free(c);
    ifx_down(&f);
}

static void test_informer_validation_equivalent_selectors_share_an_informer(void **st)
{
    ifx f;
    ifx_up(&f, NULL);
    kc_cache *c = NULL;
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_cache_new(f.client, NULL, &c, &e), 0, &e);
    kc_informer_opts o1 = {.label_selector = "b=2, a=1", .field_selector = "metadata.name==x"};
    kc_informer_opts o2 = {.label_selector = "a=1,b=2", .field_selector = "metadata.name=x"};
    kc_informer *i1 = NULL, *i2 = NULL;
    IFX_RC(kc_cache_get_informer(c, &ifx_cm, &o1, &i1, &e), 0, &e);
    IFX_RC(kc_cache_get_informer(c, &ifx_cm, &o2, &i2, &e), 0, &e);
    assert_ptr_equal(i1, i2);
    assert_string_equal(kc_informer_name(i1), "configmaps{a=1,b=2}[metadata.name=x]");
    assert_int_equal(kc_cache_informer_count(c), 1);
    kc_cache_free(c);
    ifx_down(&f);
}

static void test_informer_validation_good_specs_accepted(void **st)
{
    ifx f;
    ifx_up(&f, NULL);
    static const kc_gvr good[] = {
        {"", "v1", "pods"},
        {NULL, "v1", "configmaps"},
        {"apps", "v1", "deployments"},
        {"rbac.authorization.k8s.io", "v1", "clusterroles"},
        {"example.com", "v1beta1", "my-widgets"},
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        kc_informer_opts o = {.ns = "kube-system",
                              .label_selector = "app in (web,db),!legacy,tier!=front,x>3",
                              .field_selector = "status.phase=Running,spec.node-name!=n\\,1"};
        kc_informer *inf = NULL;
        kc_error e = KC_ERROR_INIT;
        IFX_RC(kc_informer_new(f.client, &good[i], &o, &inf, &e), 0, &e);
        kc_informer_free(inf);
    }
    ifx_down(&f);
}

/* The verbs: a resource with a '/' used to reach another URL (the server unescapes %2F). */
static void test_informer_validation_verbs_refuse_paths(void **st)
{
    ifx f;
    ifx_up(&f, "pods=1:ns=ns-1");
    kc_error e = KC_ERROR_INIT;
    kc_gvr bad = {"", "v1", "namespaces/ns-1/pods"};
    kc_list_meta meta = {0};
    assert_int_equal(kc_client_list(f.client, &bad, NULL, NULL, &meta, NULL, NULL, &e), KC_EINVAL);
    assert_non_null(strstr(e.message, "bad gvr.resource"));
    kc_error_clear(&e);
    kc_obj *o = NULL;
    assert_int_equal(kc_client_get(f.client, &ifx_pods, "ns-1", "x/status", &o, &e), KC_EINVAL);
    assert_non_null(strstr(e.message, "bad object name \"x/status\""));
    kc_error_clear(&e);
    assert_int_equal(kc_client_get(f.client, &ifx_pods, "ns-1", "..", &o, &e), KC_EINVAL);
    kc_error_clear(&e);
    assert_int_equal(kc_client_get(f.client, &ifx_pods, "ns/1", "a", &o, &e), KC_EINVAL);
    assert_non_null(strstr(e.message, "bad namespace"));
    kc_error_clear(&e);
    assert_null(o);
    ifx_down(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_informer_validation_new_refuses_bad_specs),
        cmocka_unit_test(test_informer_validation_cache_refuses_bad_specs),
        cmocka_unit_test(test_informer_validation_equivalent_selectors_share_an_informer),
        cmocka_unit_test(test_informer_validation_good_specs_accepted),
        cmocka_unit_test(test_informer_validation_verbs_refuse_paths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
