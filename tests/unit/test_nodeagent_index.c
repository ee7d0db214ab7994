/*
 * test_nodeagent_index — the node agent cache's lookups, fed through its writer without a server:
 * every key kind (ns/name, uid, container id with containerd://, cri-o://, docker:// and bare),
 * the container index and strings (CI1, CI2), tombstones answering for the deleted pod only
 * (DP4, DP5, CA6), the count bound (CA7), namespaces and their tombstones (DP5), stats, metrics
 * and the fd (enrich-semantics §5–§7).
 */
#include "nodeagent_fixture.h"

#include <poll.h>

static const char *const C1[] = {"containerd://aaa1", "cri-o://bbb2"};
static const char *const C2[] = {"docker://ccc3"};

static void test_nodeagent_index_keys(void **state)
{
    (void)state;
    nafx f;
    nafx_up(&f, NULL);
    nafx_ns_add(&f, nafx_ns("team"));
    nafx_add(&f, nafx_pod("team", "web-0", "u1", "web", C1, 2));
    nafx_add(&f, nafx_pod("team", "db-0", "u2", "db", C2, 1));
    kc_podmeta_result r;
    assert_int_equal(nafx_find(&f, "team", "web-0", NULL, NULL, &r), 0);
    assert_string_equal(kc_obj_uid(kc_podmeta_pod_obj(r.pod)), "u1");
    assert_int_equal(r.container, -1);
    assert_non_null(r.ns);
    assert_string_equal(kc_obj_label(kc_podmeta_ns_obj(r.ns), "team"), "x");
    kc_podmeta_result_clear(&r);
    assert_null(r.pod);
    assert_int_equal(nafx_find(&f, NULL, NULL, "u2", NULL, &r), 0);
    assert_string_equal(kc_obj_name(kc_podmeta_pod_obj(r.pod)), "db-0");
    kc_podmeta_result_clear(&r);
    const char *ids[] = {"containerd://aaa1", "aaa1", "cri-o://bbb2", "bbb2",
                         "docker://ccc3",     "ccc3"};
    const char *want[] = {"web-0", "web-0", "web-0", "web-0", "db-0", "db-0"};
    const int cont[] = {0, 0, 1, 1, 0, 0};
    for (int i = 0; i < 6; i++) {
        assert_int_equal(nafx_find(&f, NULL, NULL, NULL, ids[i], &r), 0);
        assert_string_equal(kc_obj_name(kc_podmeta_pod_obj(r.pod)), want[i]);
        assert_int_equal(r.container, cont[i]);
        kc_podmeta_container c;
        assert_int_equal(kc_podmeta_pod_container(r.pod, (size_t)r.container, &c), 0);
        assert_string_equal(c.id, kc__pm_strip_runtime(ids[i]));
        assert_int_equal(c.kind, KC_PODMETA_CONTAINER);
        kc_podmeta_result_clear(&r);
    }
    /* the container strings, pre-extracted (CI1) */
    assert_int_equal(nafx_find(&f, "team", "web-0", NULL, NULL, &r), 0);
    assert_int_equal(kc_podmeta_pod_container_count(r.pod), 2);
    kc_podmeta_container c;
    assert_int_equal(kc_podmeta_pod_container(r.pod, 1, &c), 0);
    assert_string_equal(c.name, "c1");
    assert_string_equal(c.image, "img1");
    assert_string_equal(c.image_id, "id1");
    assert_string_equal(c.container_id, "cri-o://bbb2");
    assert_int_equal(kc_podmeta_pod_container(r.pod, 2, &c), KC_ENOTFOUND);
    assert_int_equal(kc_podmeta_pod_find_container(r.pod, "c1", NULL), 1);
    assert_int_equal(kc_podmeta_pod_find_container(r.pod, NULL, "bbb2"), 1);
    assert_int_equal(kc_podmeta_pod_find_container(r.pod, "c0", "bbb2"), -1);
    kc_podmeta_result_clear(&r);
    /* misses, and a key that disagrees with the others */
    assert_int_equal(nafx_find(&f, "team", "nope", NULL, NULL, &r), KC_ENOTFOUND);
    assert_null(r.pod);
    assert_int_equal(r.container, -1);
    assert_int_equal(nafx_find(&f, NULL, NULL, "u2", "aaa1", &r), KC_ENOTFOUND);
    assert_int_equal(nafx_find(&f, "team", NULL, NULL, NULL, &r), KC_EINVAL);
    assert_int_equal(nafx_find(&f, NULL, NULL, NULL, NULL, &r), KC_EINVAL);
    kc_podmeta_stats s;
    kc_podmeta_get_stats(f.pm, &s);
    assert_int_equal(s.pods, 2);
    assert_int_equal(s.namespaces, 1);
    assert_int_equal(s.hits, 9);
    assert_int_equal(s.lookups, 11);
    assert_int_equal(s.misses, 2);
    assert_true(s.heap_bytes > 0);
    char *m = kc_podmeta_metrics_render(f.pm);
    assert_non_null(strstr(m, "kcache_podmeta_pods 2\n"));
    assert_non_null(strstr(m, "kcache_podmeta_lookups_total{result=\"miss\"} 2\n"));
    free(m);
    /* the fd: readable after the changes, drained to 0 */
    struct pollfd p = {kc_podmeta_fd(f.pm), POLLIN, 0};
    assert_int_equal(poll(&p, 1, 0), 1);
    assert_true(kc_podmeta_fd_drain(f.pm) >= 3);
    assert_int_equal(kc_podmeta_fd_drain(f.pm), 0);
    assert_int_equal(poll(&p, 1, 0), 0);
    nafx_down(&f);
}

/* DP5 / CA6: web-0 deleted and recreated with another uid and container. */
/* CI1/CI2: a status string with escapes (unescaped into the entry, the others read in place from
 * the projected object's text) answers like any other; the NUL-terminated strings
 * kc_podmeta_pod_container hands out are made once per entry and stay put. */
static void test_nodeagent_index_escaped(void **state)
{
    (void)state;
    nafx f;
    nafx_up(&f, NULL);
    static const char body[] =
        "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"esc-0\",\"namespace\":"
        "\"team\",\"uid\":\"u9\"},\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"containerStatuses\":"
        "[{\"name\":\"ap\\u0069\",\"image\":\"reg\\/app:1\",\"imageID\":\"sha\",\"containerID\":"
        "\"containerd:\\/\\/e5c\"},{\"name\":\"side\",\"containerID\":\"cri-o://f00\"}],"
        "\"initContainerStatuses\":[{\"name\":\"init\",\"containerID\":\"docker://1n1\"}]}}";
    kc_decode_opts o = {.keep = NAFX_KEEP};
    kc_obj *obj = NULL;
    assert_int_equal(kc_obj_parse(body, strlen(body), &o, &obj, NULL), 0);
    nafx_add(&f, obj);
    const char *ids[] = {"e5c", "containerd://e5c", "f00", "1n1"};
    const int cont[] = {0, 0, 1, 2};
    kc_podmeta_result r;
    for (int i = 0; i < 4; i++) {
        assert_int_equal(nafx_find(&f, NULL, NULL, NULL, ids[i], &r), 0);
        assert_int_equal(r.container, cont[i]);
        kc_podmeta_result_clear(&r);
    }
    assert_int_equal(nafx_find(&f, NULL, NULL, NULL, "e5", &r), KC_ENOTFOUND);
    assert_int_equal(nafx_find(&f, NULL, NULL, "u9", NULL, &r), 0);
    assert_int_equal(kc_podmeta_pod_container_count(r.pod), 3);
    kc_podmeta_container c, c2;
    assert_int_equal(kc_podmeta_pod_container(r.pod, 0, &c), 0);
    assert_string_equal(c.name, "api");
    assert_string_equal(c.image, "reg/app:1");
    assert_string_equal(c.image_id, "sha");
    assert_string_equal(c.container_id, "containerd://e5c");
    assert_string_equal(c.id, "e5c");
    assert_int_equal(kc_podmeta_pod_container(r.pod, 0, &c2), 0);
    assert_ptr_equal(c.name, c2.name); /* made once */
    assert_int_equal(kc_podmeta_pod_container(r.pod, 1, &c), 0);
    assert_string_equal(c.name, "side");
    assert_string_equal(c.image, ""); /* absent */
    assert_string_equal(c.id, "f00");
    assert_int_equal(kc_podmeta_pod_container(r.pod, 2, &c), 0);
    assert_string_equal(c.name, "init");
    assert_int_equal(c.kind, KC_PODMETA_INIT);
    assert_int_equal(kc_podmeta_pod_find_container(r.pod, "api", "e5c"), 0);
    assert_int_equal(kc_podmeta_pod_find_container(r.pod, "ap", NULL), -1);
    assert_int_equal(kc_podmeta_pod_find_container(r.pod, NULL, "docker://1n1"), 2);
    kc_podmeta_result_clear(&r);
    nafx_down(&f);
}

static void test_nodeagent_index_recreate(void **state)
{
    (void)state;
    nafx f;
    nafx_up(&f, NULL);
    const char *const old_c[] = {"containerd://old1"}, *const new_c[] = {"containerd://new1"};
    nafx_add(&f, nafx_pod("ns", "web-0", "u-old", "v1", old_c, 1));
    nafx_del(&f, nafx_pod("ns", "web-0", "u-old", "v1", old_c, 1));
    kc_podmeta_result r;
    assert_int_equal(nafx_find(&f, "ns", "web-0", NULL, NULL, &r), 0); /* DP4: the tombstone */
    assert_true(kc_podmeta_pod_deleted(r.pod));
    assert_true(kc_podmeta_pod_deleted_at_ms(r.pod) > 0);
    kc_podmeta_result_clear(&r);
    nafx_add(&f, nafx_pod("ns", "web-0", "u-new", "v2", new_c, 1));
    struct {
        const char *ns, *name, *uid, *cid, *want_uid;
        bool deleted;
    } cases[] = {
        {"ns", "web-0", NULL, NULL, "u-new", false}, /* the newest wins by name alone */
        {NULL, NULL, NULL, "old1", "u-old", true},   /* the old file's id: the tombstone */
        {NULL, NULL, NULL, "containerd://new1", "u-new", false},
        {NULL, NULL, "u-old", NULL, "u-old", true},        /* by uid */
        {"ns", "web-0", NULL, "old1", "u-old", true},      /* id with name: the tombstone */
        {"ns", "web-0", NULL, "unknown9", "u-new", false}, /* id not in any status: live only */
        {"ns", "web-0", "u-new", "unknown9", "u-new", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = nafx_find(&f, cases[i].ns, cases[i].name, cases[i].uid, cases[i].cid, &r);
        assert_int_equal(rc, 0);
        assert_string_equal(kc_obj_uid(kc_podmeta_pod_obj(r.pod)), cases[i].want_uid);
        assert_int_equal(kc_podmeta_pod_deleted(r.pod), cases[i].deleted);
        assert_string_equal(kc_obj_label(kc_podmeta_pod_obj(r.pod), "app"),
                            cases[i].deleted ? "v1" : "v2");
        kc_podmeta_result_clear(&r);
    }
    /* DP5: once the new pod is gone too, an unknown id does not fall back to a tombstone */
    nafx_del(&f, nafx_pod("ns", "web-0", "u-new", "v2", new_c, 1));
    assert_int_equal(nafx_find(&f, "ns", "web-0", NULL, "unknown9", &r), KC_ENOTFOUND);
    assert_int_equal(nafx_find(&f, "ns", "web-0", "u-old", "new1", &r), KC_ENOTFOUND);
    nafx_down(&f);
}

/* CA7: at most max_tombstones, the oldest evicted first; a deleted namespace stays while its
 * pods' tombstones do (DP5); grace < 0 keeps none. */
static void test_nodeagent_index_tombstone_bound(void **state)
{
    (void)state;
    nafx f;
    kc_podmeta_opts o = {.node_name = "n1", .max_tombstones = 2};
    nafx_up(&f, &o);
    nafx_ns_add(&f, nafx_ns("gone"));
    char name[16];
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "p%d", i);
        nafx_add(&f, nafx_pod("gone", name, name, "x", NULL, 0));
    }
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "p%d", i);
        nafx_del(&f, nafx_pod("gone", name, name, "x", NULL, 0));
    }
    kc_obj *nso = nafx_ns("gone");
    kc__pm_ns_handlers.on_delete(f.pm, nso, false);
    kc_obj_unref(nso);
    kc_podmeta_stats s;
    kc_podmeta_get_stats(f.pm, &s);
    assert_int_equal(s.pods, 0);
    assert_int_equal(s.tombstones, 2);
    assert_int_equal(s.tombstones_evicted, 1);
    kc_podmeta_result r;
    assert_int_equal(nafx_find(&f, "gone", "p0", NULL, NULL, &r), KC_ENOTFOUND);
    assert_int_equal(nafx_find(&f, "gone", "p2", NULL, NULL, &r), 0);
    assert_non_null(r.ns); /* the namespace's tombstone */
    kc_podmeta_result_clear(&r);
    nafx_down(&f);

    kc_podmeta_opts none = {.node_name = "n1", .deleted_grace_ms = -1};
    nafx_up(&f, &none);
    nafx_add(&f, nafx_pod("a", "p", "u", "x", NULL, 0));
    nafx_del(&f, nafx_pod("a", "p", "u", "x", NULL, 0));
    assert_int_equal(nafx_find(&f, "a", "p", NULL, NULL, &r), KC_ENOTFOUND);
    nafx_down(&f);
}

/* kc_podmeta_new's checks and defaults. */
static void test_nodeagent_index_new(void **state)
{
    (void)state;
    kc_config *cfg = NULL;
    kc_client *c = NULL;
    assert_int_equal(kc_config_from_url("http://127.0.0.1:1", NULL, NULL, &cfg, NULL), 0);
    assert_int_equal(kc_client_new(cfg, NULL, &c, NULL), 0);
    kc_podmeta *pm = NULL;
    kc_error e = KC_ERROR_INIT;
    unsetenv("NODE_NAME");
    assert_int_equal(kc_podmeta_new(c, NULL, &pm, &e), KC_EINVAL);
    kc_error_clear(&e);
    kc_podmeta_opts bad = {.node_name = "Not_A_Node"};
    assert_int_equal(kc_podmeta_new(c, &bad, &pm, &e), KC_EINVAL);
    assert_non_null(strstr(e.message, "Not_A_Node"));
    kc_error_clear(&e);
    setenv("NODE_NAME", "node-a", 1);
    assert_int_equal(kc_podmeta_new(c, NULL, &pm, &e), 0);
    assert_false(kc_podmeta_ready(pm)); /* not started: not synced */
    assert_string_equal(kc_informer_name(kc_podmeta_pod_informer(pm)), "podmeta-pods");
    assert_string_equal(kc_informer_name(kc_podmeta_ns_informer(pm)), "podmeta-namespaces");
    assert_int_equal(kc_podmeta_wait_ready(pm, 10, &e), KC_ETIMEOUT);
    kc_error_clear(&e);
    kc_podmeta_free(pm);
    kc_podmeta_opts all = {.all_nodes = true, .no_namespaces = true, .name_prefix = "x-"};
    unsetenv("NODE_NAME");
    assert_int_equal(kc_podmeta_new(c, &all, &pm, &e), 0);
    assert_null(kc_podmeta_ns_informer(pm));
    assert_string_equal(kc_informer_name(kc_podmeta_pod_informer(pm)), "x-pods");
    kc_podmeta_free(pm);
    kc_client_free(c);
    kc_config_unref(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nodeagent_index_keys),
        cmocka_unit_test(test_nodeagent_index_escaped),
        cmocka_unit_test(test_nodeagent_index_recreate),
        cmocka_unit_test(test_nodeagent_index_tombstone_bound),
        cmocka_unit_test(test_nodeagent_index_new),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
