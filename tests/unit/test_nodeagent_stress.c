/*
 * test_nodeagent_stress — lock-free readers against a churning writer (src/nodeagent/pm_hazard.c):
 * three reader threads look pods up by ns/name, uid and container id while the writer adds,
 * updates and deletes ~100 pods (a node's worth) thousands of times, publishing a snapshot per
 * event and reclaiming the old ones. Every answer must be the pod asked for with its strings
 * intact, and the run must be clean under ThreadSanitizer and AddressSanitizer (use after free of
 * a reclaimed snapshot or entry). enrich-semantics CA2, CA3, CA4.
 */
#include "nodeagent_fixture.h"

#include <pthread.h>
#include <stdatomic.h>

#define PODS   100
#define EVENTS 3000

static _Atomic bool done;
static _Atomic uint64_t found;

typedef struct reader {
    nafx *f;
    int kind;
    uint64_t bad;
} reader;

static void *read_loop(void *arg)
{
    reader *r = arg;
    unsigned i = (unsigned)r->kind * 7;
    while (!atomic_load(&done)) {
        i = (i + 1) % PODS;
        char name[32], uid[32], cid[96];
        snprintf(name, sizeof name, "pod-%u", i);
        snprintf(uid, sizeof uid, "uid-%u", i);
        snprintf(cid, sizeof cid, "containerd://%064u", i);
        kc_podmeta_query q = {.wait_ms = -1};
        if (r->kind == 0)
            q.ns = "default", q.name = name;
        else if (r->kind == 1)
            q.uid = uid;
        else
            q.container_id = cid;
        kc_podmeta_result res;
        if (kc_podmeta_lookup(r->f->pm, &q, &res, NULL) != 0)
            continue;
        const kc_obj *o = kc_podmeta_pod_obj(res.pod);
        kc_podmeta_container c;
        if (strcmp(kc_obj_name(o), name) != 0 || strcmp(kc_obj_uid(o), uid) != 0 ||
            kc_podmeta_pod_container(res.pod, 0, &c) != 0 || strcmp(c.container_id, cid) != 0 ||
            (r->kind == 2 && res.container != 0) || !kc_obj_label(o, "app"))
            if (r->bad++ == 0)
                fprintf(stderr, "kind %d %s: got %s %s cont %d\n", r->kind, name, kc_obj_name(o),
                        kc_obj_uid(o), res.container);
        atomic_fetch_add_explicit(&found, 1, memory_order_relaxed);
        kc_podmeta_result_clear(&res);
    }
    return NULL;
}

static void test_nodeagent_stress_readers_vs_writer(void **state)
{
    (void)state;
    nafx f;
    kc_podmeta_opts o = {.node_name = "n1", .max_tombstones = 50};
    nafx_up(&f, &o);
    atomic_store(&done, false);
    reader rs[3] = {{&f, 0, 0}, {&f, 1, 0}, {&f, 2, 0}};
    pthread_t th[3];
    for (int i = 0; i < 3; i++)
        assert_int_equal(pthread_create(&th[i], NULL, read_loop, &rs[i]), 0);
    for (unsigned e = 0; e < EVENTS; e++) {
        unsigned i = (e * 37) % PODS;
        char name[32], uid[32], cid[96], app[16];
        snprintf(name, sizeof name, "pod-%u", i);
        snprintf(uid, sizeof uid, "uid-%u", i);
        snprintf(cid, sizeof cid, "containerd://%064u", i);
        snprintf(app, sizeof app, "v%u", e);
        const char *cids[] = {cid};
        kc_obj *obj = nafx_pod("default", name, uid, app, cids, 1);
        if (e % 5 == 4)
            kc__pm_pod_handlers.on_delete(f.pm, obj, false);
        else
            kc__pm_pod_handlers.on_add(f.pm, obj); /* add, or update of the same name */
        kc_obj_unref(obj);
    }
    atomic_store(&done, true);
    for (int i = 0; i < 3; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(rs[i].bad, 0);
    }
    assert_true(atomic_load(&found) > 0);
    kc_podmeta_stats s;
    kc_podmeta_get_stats(f.pm, &s);
    assert_true(s.pods + s.tombstones <= PODS + 50);
    assert_int_equal(s.misses + s.hits + s.tombstone_hits, s.lookups);
    nafx_down(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nodeagent_stress_readers_vs_writer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
