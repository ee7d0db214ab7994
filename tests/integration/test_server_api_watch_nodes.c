/*
 * test_server_api_watch_nodes.c — node agents' watches and lists (fieldSelector=spec.nodeName=X)
 * served through the server's node indexes (the hub's pinned watchers, the store's cached
 * nodeName): each node's watch receives exactly what a watch of every pod filtered client-side
 * gives (spec §9 #80: a pod leaving the node's selection → DELETED, entering → ADDED; #73 initial
 * state), while pods are created on nodes and pending, bound (pods/binding), relabelled, deleted
 * and recreated on another node, and one is named with an escaped nodeName; a node's LIST (spec
 * §4 #59), its Exact LIST of a past RV (#63, rolled back over a pod that moved since) and a new
 * watch's initial events are the full list filtered client-side.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_server_util.h"

#define PODS_NS "/api/v1/namespaces/default/pods"
#define START                                                                                      \
    "watch=1&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"

/* The nodes watched: "" is the pending pods' (spec.nodeName unset). */
#define N_NODES 4
static const char *const nodes[N_NODES] = {"n1", "n2", "n3", ""};
static const char *const markers[N_NODES] = {"zz-n1", "zz-n2", "zz-n3", "zz-none"};

typedef struct evrec {
    char type[16], name[64], node[64];
    unsigned long long rv;
} evrec;

static int setup(void **state)
{
    *state = ts_start();
    return *state ? 0 : -1;
}

static int teardown(void **state)
{
    kc_server_free(*state);
    return 0;
}

static void pod(kc_server *s, const char *name, const char *node_json)
{
    ts_resp r;
    assert_int_equal(ts_post(s, PODS_NS, ts_pod(name, node_json), &r), 201);
    ts_resp_free(&r);
}

static long patch(kc_server *s, const char *name, const char *body)
{
    char path[256];
    snprintf(path, sizeof path, PODS_NS "/%s", name);
    ts_resp r;
    ts_req(s, "PATCH", path, "application/merge-patch+json", body, NULL, &r);
    long st = r.status;
    ts_resp_free(&r);
    return st;
}

static void del(kc_server *s, const char *name)
{
    char path[256];
    snprintf(path, sizeof path, PODS_NS "/%s?gracePeriodSeconds=0", name);
    ts_resp r;
    ts_req(s, "DELETE", path, NULL, NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    ts_resp_free(&r);
}

static ts_watch *watch_node(kc_server *s, const char *node)
{
    char path[512];
    if (node)
        snprintf(path, sizeof path, "/api/v1/pods?" START "&fieldSelector=spec.nodeName%%3D%s",
                 node);
    else
        snprintf(path, sizeof path, "/api/v1/pods?" START);
    return ts_watch_start(s, path);
}

/* Events of w (bookmarks skipped) into out until the end-of-initial-events bookmark (stop NULL)
 * or the ADDED of pod stop. Returns how many. */
static size_t read_until(ts_watch *w, const char *stop, evrec *out, size_t max)
{
    size_t n = 0;
    for (;;) {
        json_t *ev = ts_watch_next(w, 5000);
        assert_non_null(ev);
        const char *type = ts_s(ev, "type");
        if (strcmp(type, "BOOKMARK") == 0) {
            json_t *ann = ts_j(ev, "object.metadata.annotations");
            bool end = json_object_get(ann, "k8s.io/initial-events-end") != NULL;
            json_decref(ev);
            if (end && !stop)
                return n;
            continue;
        }
        assert_true(n < max);
        evrec *e = &out[n++];
        snprintf(e->type, sizeof e->type, "%s", type);
        snprintf(e->name, sizeof e->name, "%s", ts_s(ev, "object.metadata.name"));
        snprintf(e->node, sizeof e->node, "%s", ts_s(ev, "object.spec.nodeName"));
        e->rv = ts_rv(ts_j(ev, "object"));
        json_decref(ev);
        if (stop && strcmp(e->type, "ADDED") == 0 && strcmp(e->name, stop) == 0)
            return n;
    }
}

/* What a watch of spec.nodeName=node gets, from the unfiltered stream all[0..n): the selector
 * transitions applied client-side (the pods' previous nodes tracked), up to the ADDED of stop. */
static size_t expected(const evrec *all, size_t n, const char *node, const char *stop, evrec *out)
{
    char names[64][64], on[64][64];
    size_t known = 0, k = 0;
    for (size_t i = 0; i < n; i++) {
        const evrec *e = &all[i];
        size_t j = 0;
        while (j < known && strcmp(names[j], e->name) != 0)
            j++;
        bool had = j < known && strcmp(on[j], node) == 0, has = strcmp(e->node, node) == 0;
        if (j == known) {
            assert_true(known < 64);
            snprintf(names[known++], sizeof names[0], "%s", e->name);
        }
        snprintf(on[j], sizeof on[0], "%s", e->node);
        const char *t = NULL;
        if (strcmp(e->type, "MODIFIED") != 0)
            t = has ? e->type : NULL;
        else if (has)
            t = had ? "MODIFIED" : "ADDED";
        else if (had)
            t = "DELETED";
        if (strcmp(e->type, "DELETED") == 0)
            snprintf(on[j], sizeof on[0], "%s", "\x01gone"); /* on no node */
        if (t) {
            out[k] = *e;
            snprintf(out[k].type, sizeof out[k].type, "%s", t);
            k++;
        }
        if (stop && strcmp(e->type, "ADDED") == 0 && strcmp(e->name, stop) == 0)
            break;
    }
    return k;
}

static void same(const evrec *got, size_t ng, const evrec *want, size_t nw)
{
    for (size_t i = 0; i < ng && i < nw; i++) {
        assert_string_equal(got[i].type, want[i].type);
        assert_string_equal(got[i].name, want[i].name);
        assert_int_equal(got[i].rv, want[i].rv);
    }
    assert_int_equal(ng, nw);
}

/* Item names of a pod list (in order, joined by spaces), filtered to node unless NULL. */
static void list_names(json_t *list, const char *node, char *out, size_t cap)
{
    out[0] = '\0';
    json_t *items = ts_j(list, "items");
    for (size_t i = 0; i < json_array_size(items); i++) {
        json_t *it = json_array_get(items, i);
        if (node && strcmp(ts_s(it, "spec.nodeName"), node) != 0)
            continue;
        size_t l = strlen(out);
        snprintf(out + l, cap - l, "%s ", ts_s(it, "metadata.name"));
    }
}

static void node_list_is_filtered_full_list(kc_server *s, const char *node, const char *rv_query)
{
    char path[512], want[2048], got[2048];
    ts_resp all, one;
    snprintf(path, sizeof path, "/api/v1/pods%s", rv_query);
    assert_int_equal(ts_get(s, path, &all), 200);
    snprintf(path, sizeof path, "/api/v1/pods?fieldSelector=spec.nodeName%%3D%s%s%s", node,
             *rv_query ? "&" : "", *rv_query ? rv_query + 1 : "");
    assert_int_equal(ts_get(s, path, &one), 200);
    list_names(all.json, node, want, sizeof want);
    list_names(one.json, NULL, got, sizeof got);
    assert_string_equal(got, want);
    ts_resp_free(&all);
    ts_resp_free(&one);
}

static void test_server_watch_nodes_same_as_client_side_filter(void **state)
{
    kc_server *s = *state;
    pod(s, "a", "\"n1\"");
    pod(s, "b", NULL);
    pod(s, "c", "\"n2\"");
    pod(s, "d", "\"n2\"");
    ts_resp r;
    assert_int_equal(ts_get(s, "/api/v1/pods", &r), 200);
    unsigned long long rv1 = strtoull(ts_s(r.json, "metadata.resourceVersion"), NULL, 10);
    ts_resp_free(&r);

    /* the reference (every pod) and one watch per node, each subscribed once its initial events
     * ended */
    static evrec all[256], got[N_NODES][128], want[128];
    ts_watch *wall = watch_node(s, NULL), *w[N_NODES];
    size_t nall = read_until(wall, NULL, all, 256), ng[N_NODES];
    for (size_t i = 0; i < N_NODES; i++) {
        w[i] = watch_node(s, nodes[i]);
        ng[i] = read_until(w[i], NULL, got[i], 128);
    }

    assert_int_equal(ts_bind(s, "b", "n3", ""), 201); /* "" → n3 */
    assert_int_equal(patch(s, "a", "{\"metadata\":{\"labels\":{\"x\":\"1\"}}}"), 200);
    del(s, "c"); /* moved: n2 → n1 */
    pod(s, "c", "\"n1\"");
    long moved = patch(s, "d", "{\"spec\":{\"nodeName\":\"n1\"}}"); /* may be forbidden */
    assert_true(moved == 200 || moved == 422);
    pod(s, "e", "\"n\\u0032\""); /* n2, escaped */
    pod(s, "f", NULL);
    assert_int_equal(ts_bind(s, "f", "n1", ""), 201);
    del(s, "a");
    del(s, "b");
    pod(s, "g", "\"elsewhere\"");
    for (size_t i = 0; i < N_NODES; i++)
        pod(s, markers[i], *nodes[i] ? (i == 0 ? "\"n1\"" : i == 1 ? "\"n2\"" : "\"n3\"") : NULL);

    nall += read_until(wall, markers[N_NODES - 1], all + nall, 256 - nall);
    for (size_t i = 0; i < N_NODES; i++) {
        ng[i] += read_until(w[i], markers[i], got[i] + ng[i], 128 - ng[i]);
        size_t nw = expected(all, nall, nodes[i], markers[i], want);
        assert_true(nw >= 2);
        same(got[i], ng[i], want, nw);
        ts_watch_free(w[i]);
    }
    ts_watch_free(wall);

    /* LISTs now and at rv1 (c was on n2 then), and a new watch's initial events */
    char rvq[64];
    snprintf(rvq, sizeof rvq, "?resourceVersion=%llu&resourceVersionMatch=Exact", rv1);
    for (size_t i = 0; i < N_NODES; i++) {
        node_list_is_filtered_full_list(s, nodes[i], "");
        node_list_is_filtered_full_list(s, nodes[i], rvq);
        ts_resp one;
        char path[256], names[2048], init[2048] = "";
        snprintf(path, sizeof path, "/api/v1/pods?fieldSelector=spec.nodeName%%3D%s", nodes[i]);
        assert_int_equal(ts_get(s, path, &one), 200);
        list_names(one.json, NULL, names, sizeof names);
        ts_resp_free(&one);
        ts_watch *fresh = watch_node(s, nodes[i]);
        size_t n = read_until(fresh, NULL, want, 128);
        for (size_t k = 0; k < n; k++) {
            assert_string_equal(want[k].type, "ADDED");
            size_t l = strlen(init);
            snprintf(init + l, sizeof init - l, "%s ", want[k].name);
        }
        assert_string_equal(init, names);
        ts_watch_free(fresh);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_server_watch_nodes_same_as_client_side_filter, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
