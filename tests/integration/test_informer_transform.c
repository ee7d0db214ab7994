/*
 * test_informer_transform.c — kc_informer_opts.transform (client-go's SetTransform) against the
 * in-process API server: every object of the LIST and of WATCH events (added, modified, deleted)
 * goes through it before the store and the handlers; NULL keeps the decoded object; a result that
 * changes the identity the store keys and resumes by (namespace, name, uid, resourceVersion) is
 * refused and the decoded object stored. informer-semantics: the store holds what the informer
 * was configured to keep, keyed as the server names it.
 */
#include "test_informer_fixture.h"

#include <kcache/doc.h>

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

/* Adds label t=<phase> to ConfigMaps named "keep-*"; renames "rename-*" (refused); NULL for the
 * rest. */
typedef struct tf {
    _Atomic int calls;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int deletes_seen; /* handler deletes whose object carries the transform's label (under mu) */
} tf;

static kc_obj *transform(void *ud, kc_obj *obj)
{
    tf *t = ud;
    atomic_fetch_add(&t->calls, 1);
    const char *name = kc_obj_name(obj);
    if (strncmp(name, "keep-", 5) != 0 && strncmp(name, "rename-", 7) != 0)
        return NULL;
    kc_doc *d = NULL;
    kc_obj *out = NULL;
    if (kc_doc_from_obj(obj, &d, NULL))
        return NULL;
    if (name[0] == 'r')
        kc_doc_set_string(d, "/metadata/name", "renamed", NULL);
    else
        kc_doc_set_string(d, "/metadata/labels/t", "1", NULL);
    kc_doc_to_obj(d, &out, NULL);
    kc_doc_free(d);
    return out;
}

static void on_delete(void *ud, kc_obj *obj, bool unknown)
{
    (void)unknown;
    tf *t = ud;
    const char *l = kc_obj_label(obj, "t");
    pthread_mutex_lock(&t->mu);
    if (l && strcmp(l, "1") == 0)
        t->deletes_seen++;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
}

/* The handler's delete (handlers run on the informer's dispatcher, after the store): bounded
 * wait on a condition, no sleep. */
static int wait_deletes(tf *t, int want)
{
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 10;
    pthread_mutex_lock(&t->mu);
    while (t->deletes_seen < want && pthread_cond_timedwait(&t->cv, &t->mu, &dl) == 0)
        ;
    int n = t->deletes_seen;
    pthread_mutex_unlock(&t->mu);
    return n;
}

static void wait_key_rv(kc_informer *inf, const char *name, const char *rv)
{
    kc_store_cond c = {.kind = KC_STORE_WAIT_KEY_RV, .ns = "default", .name = name, .rv = rv};
    assert_int_equal(kc_store_wait(kc_informer_store(inf), &c, 10000, NULL), 0);
}

static void test_informer_transform_list_watch(void **state)
{
    (void)state;
    ifx f;
    ifx_up(&f, NULL);
    assert_int_equal(ifx_cm_create(&f, "default", "keep-a", "1", NULL), 0);
    assert_int_equal(ifx_cm_create(&f, "default", "rename-b", "1", NULL), 0);
    assert_int_equal(ifx_cm_create(&f, "default", "plain-c", "1", NULL), 0);
    tf t = {.calls = 0, .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    kc_informer_opts o = {.ns = "default", .transform = transform, .transform_ud = &t};
    kc_informer *inf = NULL;
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_informer_new(f.client, &ifx_cm, &o, &inf, &e), 0, &e);
    kc_informer_handlers h = {.on_delete = on_delete, .ud = &t};
    IFX_RC(kc_informer_add_handler(inf, &h, NULL, NULL, &e), 0, &e);
    IFX_RC(kc_informer_start(inf, &e), 0, &e);
    IFX_RC(kc_informer_wait_synced(inf, 10000, &e), 0, &e);
    kc_store *s = kc_informer_store(inf);
    kc_obj *a = kc_store_get(s, "default", "keep-a"), *b = kc_store_get(s, "default", "rename-b");
    assert_string_equal(kc_obj_label(a, "t"), "1"); /* the LIST's item, transformed */
    assert_non_null(b);                             /* the renaming refused: stored as decoded */
    assert_null(kc_obj_label(b, "t"));
    assert_null(kc_store_get(s, "default", "renamed"));
    kc_obj_unref(a);
    kc_obj_unref(b);
    /* a watch event (MODIFIED) goes through it too */
    char rv[KC_STORE_RV_MAX];
    assert_int_equal(ifx_cm_update(&f, "default", "keep-a", "2"), 0);
    assert_int_equal(ifx_cm_create(&f, "default", "keep-d", "1", rv), 0);
    wait_key_rv(inf, "keep-d", rv);
    a = kc_store_get(s, "default", "keep-a");
    kc_obj *d = kc_store_get(s, "default", "keep-d");
    assert_string_equal(kc_obj_label(d, "t"), "1");
    assert_string_equal(kc_obj_label(a, "t"), "1");
    char *v = NULL;
    assert_int_equal(kc_obj_get_string(a, "/data/v", &v, NULL, NULL), 0);
    assert_string_equal(v, "2");
    free(v);
    kc_obj_unref(a);
    kc_obj_unref(d);
    /* and the DELETED event's object: the handler sees the transformed last state */
    assert_int_equal(ifx_cm_delete(&f, "default", "keep-d"), 0);
    kc_store_cond gone = {.kind = KC_STORE_WAIT_KEY_GONE, .ns = "default", .name = "keep-d"};
    assert_int_equal(kc_store_wait(s, &gone, 10000, NULL), 0);
    assert_int_equal(wait_deletes(&t, 1), 1);
    kc_informer_stop(inf);
    kc_informer_free(inf);
    assert_true(atomic_load(&t.calls) >= 6); /* 3 listed, 1 modified, 1 added, 1 deleted */
    ifx_down(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_informer_transform_list_watch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
