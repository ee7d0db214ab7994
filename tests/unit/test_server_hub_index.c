/*
 * test_server_hub_index.c — the hub's index of watchers pinned to a field value
 * (kc__hub_subscribe_pinned, src/server/storage/hub_index.c): for every node value, a watcher
 * pinned to spec.nodeName=<node> receives exactly what an unpinned watcher with the same filter
 * receives (spec §9 #80: an object moving out of the selection → DELETED with its old state, in →
 * ADDED), for pods created, bound, moved between nodes, unbound and deleted, with the nodeName
 * absent, escaped ("n\u0033") or not a string; and the pinned watchers of other nodes are not
 * offered the event at all (their filter is not called). Buckets come and go as watchers do.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "kcache/selector.h"
#include "server/storage/hub.h"

static int key_pods; /* the resource key: compared by address */

/* A watch-like filter (the transitions of src/server/api/watch.c) on one field selector. */
typedef struct sel_filter {
    kc_field_selector *fs;
    size_t calls;
} sel_filter;

static kc_watch_type sel_filt(void *ud, const kc__hub_event *ev, kc_obj **ret)
{
    sel_filter *f = ud;
    f->calls++;
    bool nm = kc_field_selector_match(f->fs, ev->obj);
    if (ev->type != KC_WATCH_MODIFIED) {
        *ret = ev->obj;
        return nm ? ev->type : 0;
    }
    bool om = ev->old && kc_field_selector_match(f->fs, ev->old);
    if (nm) {
        *ret = ev->obj;
        return om ? KC_WATCH_MODIFIED : KC_WATCH_ADDED;
    }
    *ret = ev->old;
    return om ? KC_WATCH_DELETED : 0;
}

/* A pod named name at rv; node_json the raw JSON of spec.nodeName (NULL: no such member). */
static kc_obj *pod(const char *name, uint64_t rv, const char *node_json)
{
    char buf[400];
    int n = snprintf(buf, sizeof buf,
                     "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
                     "\"namespace\":\"default\",\"resourceVersion\":\"%llu\"},\"spec\":{%s%s}}",
                     name, (unsigned long long)rv, node_json ? "\"nodeName\":" : "",
                     node_json ? node_json : "");
    kc_obj *o = NULL;
    assert_int_equal(kc_obj_parse(buf, (size_t)n, NULL, &o, NULL), 0);
    return o;
}

#define N_NODES 5
static const char *const nodes[N_NODES] = {"n0", "n1", "n2", "n3", ""};

typedef struct rig {
    kc__hub *hub;
    sel_filter pf[N_NODES], rf[N_NODES];
    kc__watcher *pinned[N_NODES], *ref[N_NODES];
} rig;

static void rig_init(rig *g)
{
    memset(g, 0, sizeof *g);
    g->hub = kc__hub_new(NULL, 0);
    assert_non_null(g->hub);
    for (size_t i = 0; i < N_NODES; i++) {
        char text[64];
        snprintf(text, sizeof text, "spec.nodeName=%s", nodes[i]);
        assert_int_equal(kc_field_selector_parse(text, &g->pf[i].fs, NULL), 0);
        assert_int_equal(kc_field_selector_parse(text, &g->rf[i].fs, NULL), 0);
        g->ref[i] = kc__hub_subscribe(g->hub, &key_pods, sel_filt, &g->rf[i]);
        g->pinned[i] = kc__hub_subscribe_pinned(g->hub, &key_pods, sel_filt, &g->pf[i],
                                                "/spec/nodeName", nodes[i]);
        assert_non_null(g->ref[i]);
        assert_non_null(g->pinned[i]);
    }
}

static void rig_free(rig *g)
{
    /* unsubscribe in an order that empties buckets in the middle of the table too */
    for (size_t k = 0; k < N_NODES; k++) {
        size_t i = (k * 2) % N_NODES;
        kc__watcher_free(g->pinned[i]);
        kc__watcher_free(g->ref[i]);
        kc_field_selector_free(g->pf[i].fs);
        kc_field_selector_free(g->rf[i].fs);
    }
    kc__hub_free(g->hub);
}

/* Publish type for pod p moving from old_node to new_node (raw JSON, NULL = absent; old unused
 * for ADDED), at rv. */
static void ev(rig *g, kc_watch_type type, uint64_t rv, const char *old_node, const char *new_node)
{
    kc__hub_event e = {.type = type, .obj = pod("p", rv, new_node), .rv = rv};
    if (type != KC_WATCH_ADDED)
        e.old = pod("p", rv - 1, old_node);
    kc__hub_publish(g->hub, &key_pods, &e);
    kc__hub_event_release(&e);
}

/* Every pinned watcher's queue equals its unpinned twin's (type, rv, the object sent); returns the
 * number of events compared. */
static size_t same_streams(rig *g)
{
    size_t total = 0;
    for (size_t i = 0; i < N_NODES; i++) {
        assert_int_equal(kc__watcher_queued(g->pinned[i]), kc__watcher_queued(g->ref[i]));
        kc__hub_event a, b;
        while (kc__watcher_next(g->ref[i], &b, 0) == 0) {
            assert_int_equal(kc__watcher_next(g->pinned[i], &a, 0), 0);
            assert_int_equal(a.type, b.type);
            assert_int_equal(a.rv, b.rv);
            assert_ptr_equal(a.obj, b.obj); /* the same state: new, or old on a move out */
            kc__hub_event_release(&a);
            kc__hub_event_release(&b);
            total++;
        }
        assert_int_equal(kc__watcher_next(g->pinned[i], &a, 0), KC_ETIMEOUT);
    }
    return total;
}

static void test_server_hub_index_same_events_as_unindexed(void **state)
{
    rig g;
    rig_init(&g);
    uint64_t rv = 1;
    ev(&g, KC_WATCH_ADDED, rv++, NULL, NULL);                  /* pending, no nodeName: "" */
    ev(&g, KC_WATCH_MODIFIED, rv++, NULL, "\"n0\"");           /* bound: "" DELETED, n0 ADDED */
    ev(&g, KC_WATCH_MODIFIED, rv++, "\"n0\"", "\"n0\"");       /* on n0: MODIFIED */
    ev(&g, KC_WATCH_MODIFIED, rv++, "\"n0\"", "\"n1\"");       /* moved: n0 DELETED, n1 ADDED */
    ev(&g, KC_WATCH_MODIFIED, rv++, "\"n1\"", "\"n\\u0033\""); /* escaped n3 */
    ev(&g, KC_WATCH_MODIFIED, rv++, "\"n\\u0033\"", "\"n2\"");
    ev(&g, KC_WATCH_MODIFIED, rv++, "\"n2\"", "null"); /* null compares as "" */
    ev(&g, KC_WATCH_MODIFIED, rv++, "null", "\"\"");
    ev(&g, KC_WATCH_MODIFIED, rv++, "\"\"", "7"); /* a number as written */
    ev(&g, KC_WATCH_DELETED, rv++, "7", "7");
    ev(&g, KC_WATCH_ADDED, rv++, NULL, "\"n3\"");
    ev(&g, KC_WATCH_DELETED, rv++, "\"n3\"", "\"n3\"");
    ev(&g, KC_WATCH_ADDED, rv++, NULL, "\"elsewhere\""); /* a node nobody watches */
    size_t n = same_streams(&g);
    assert_int_equal(n, 16); /* the transitions above, counted by hand */
    rig_free(&g);
}

static void test_server_hub_index_offers_only_the_nodes_of_the_event(void **state)
{
    rig g;
    rig_init(&g);
    ev(&g, KC_WATCH_ADDED, 1, NULL, "\"n0\"");
    ev(&g, KC_WATCH_MODIFIED, 2, "\"n0\"", "\"n0\"");
    ev(&g, KC_WATCH_MODIFIED, 3, "\"n0\"", "\"n1\"");
    /* n0 was offered all three, n1 the move, n2, n3 and "" nothing; the unpinned all */
    assert_int_equal(g.pf[0].calls, 3);
    assert_int_equal(g.pf[1].calls, 1);
    assert_int_equal(g.pf[2].calls + g.pf[3].calls + g.pf[4].calls, 0);
    for (size_t i = 0; i < N_NODES; i++)
        assert_int_equal(g.rf[i].calls, 3);
    /* an escaped value cannot be compared as it stands: every pinned watcher is offered it */
    ev(&g, KC_WATCH_ADDED, 4, NULL, "\"n\\u0032\"");
    for (size_t i = 0; i < N_NODES; i++)
        assert_true(g.pf[i].calls >= 1);
    assert_int_equal(same_streams(&g), 5);
    rig_free(&g);
}

/* A watcher pinning another field than the index's is offered every event (and a later watcher
 * of the first field still is indexed); pins go with their watchers. */
static void test_server_hub_index_other_field_and_unsubscribe(void **state)
{
    kc__hub *hub = kc__hub_new(NULL, 0);
    sel_filter a = {0}, b = {0}, c = {0};
    assert_int_equal(kc_field_selector_parse("spec.nodeName=n0", &a.fs, NULL), 0);
    assert_int_equal(kc_field_selector_parse("metadata.name=p", &b.fs, NULL), 0);
    assert_int_equal(kc_field_selector_parse("spec.nodeName=n1", &c.fs, NULL), 0);
    kc__watcher *wa =
        kc__hub_subscribe_pinned(hub, &key_pods, sel_filt, &a, "/spec/nodeName", "n0");
    kc__watcher *wb = kc__hub_subscribe_pinned(hub, &key_pods, sel_filt, &b, "/metadata/name", "p");
    kc__watcher *wc =
        kc__hub_subscribe_pinned(hub, &key_pods, sel_filt, &c, "/spec/nodeName", "n1");
    kc__hub_event e = {.type = KC_WATCH_ADDED, .obj = pod("p", 1, "\"n1\""), .rv = 1};
    kc__hub_publish(hub, &key_pods, &e);
    kc__hub_event_release(&e);
    assert_int_equal(a.calls, 0);
    assert_int_equal(b.calls, 1);
    assert_int_equal(c.calls, 1);
    assert_int_equal(kc__watcher_queued(wb), 1);
    assert_int_equal(kc__watcher_queued(wc), 1);
    /* the index emptied and refilled on another field */
    kc__watcher_free(wa);
    kc__watcher_free(wc);
    sel_filter d = {0};
    assert_int_equal(kc_field_selector_parse("metadata.name=q", &d.fs, NULL), 0);
    kc__watcher *wd = kc__hub_subscribe_pinned(hub, &key_pods, sel_filt, &d, "/metadata/name", "q");
    e = (kc__hub_event){.type = KC_WATCH_ADDED, .obj = pod("p", 2, NULL), .rv = 2};
    kc__hub_publish(hub, &key_pods, &e);
    kc__hub_event_release(&e);
    assert_int_equal(b.calls, 2);
    assert_int_equal(d.calls, 0); /* pinned to "q": the event's name is "p" */
    assert_int_equal(kc__hub_watchers(hub), 2);
    kc__watcher_free(wb);
    kc__watcher_free(wd);
    kc__hub_free(hub);
    kc_field_selector_free(a.fs);
    kc_field_selector_free(b.fs);
    kc_field_selector_free(c.fs);
    kc_field_selector_free(d.fs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_hub_index_same_events_as_unindexed),
        cmocka_unit_test(test_server_hub_index_offers_only_the_nodes_of_the_event),
        cmocka_unit_test(test_server_hub_index_other_field_and_unsubscribe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
