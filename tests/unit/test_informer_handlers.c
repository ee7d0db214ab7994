/*
 * Unit tests for handler registrations (no server): changes are pushed straight into an informer
 * that is never started, as the reflector would push them. Covers delivery order, per-registration
 * sync markers, late registration snapshots, the overflow policy (coalescing per key while
 * lagging: no lost deletes, per-key final state exact), and on_add_ex's in_initial_list
 * (client-go's isInInitialList, which the controller's priority queue reads, spec C12).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "informer/internal.h"

#include <stdio.h>
#include <string.h>

static kc_config *g_cfg;
static kc_client *g_client;

static int setup(void **st)
{
    if (kc_config_from_url("http://127.0.0.1:1", NULL, NULL, &g_cfg, NULL) != 0)
        return -1;
    return kc_client_new(g_cfg, NULL, &g_client, NULL);
}

static int teardown(void **st)
{
    kc_client_free(g_client);
    kc_config_unref(g_cfg);
    return 0;
}

static kc_informer *new_inf(size_t cap)
{
    kc_gvr g = {"", "v1", "configmaps"};
    kc_informer_opts o = {.handler_queue_cap = cap};
    kc_informer *inf = NULL;
    assert_int_equal(kc_informer_new(g_client, &g, &o, &inf, NULL), 0);
    return inf;
}

static kc_obj *mk(const char *name, int rv)
{
    char buf[256];
    int n = snprintf(buf, sizeof(buf),
                     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\","
                     "\"namespace\":\"n\",\"uid\":\"u-%s\",\"resourceVersion\":\"%d\"}}",
                     name, name, rv);
    kc_obj *o = NULL;
    assert_int_equal(kc_obj_parse(buf, (size_t)n, NULL, &o, NULL), 0);
    return o;
}

/* Apply an event to the informer's store and push it, as the reflector does. */
static void event(kc_informer *inf, kc_watch_type t, const char *name, int rv)
{
    kc_obj *o = mk(name, rv);
    kc_store_change ch;
    pthread_mutex_lock(&inf->ev_mu);
    assert_int_equal(kc_store_apply(inf->store, t, o, &ch, NULL), 0);
    kc__inf_push_change(inf, &ch);
    pthread_mutex_unlock(&inf->ev_mu);
    kc_store_change_clear(&ch);
    kc_obj_unref(o);
}

static void synced(kc_informer *inf)
{
    pthread_mutex_lock(&inf->ev_mu);
    inf->ev_synced = true;
    kc__inf_push_synced(inf);
    pthread_mutex_unlock(&inf->ev_mu);
}

/* A handler that mirrors into a store, records a log, and can be held (gate) to simulate a slow
 * consumer. */
typedef struct rec {
    kc_store *mirror;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool gate_closed;
    int holding; /* callbacks waiting at the gate */
    char log[8192];
    int contradictions;
} rec;

static void hold(rec *r)
{
    pthread_mutex_lock(&r->mu);
    r->holding++;
    pthread_cond_broadcast(&r->cv);
    while (r->gate_closed)
        pthread_cond_wait(&r->cv, &r->mu);
    r->holding--;
    pthread_mutex_unlock(&r->mu);
}

static void logf_(rec *r, const char *what, kc_obj *o)
{
    char line[64];
    snprintf(line, sizeof(line), "%s %s@%s;", what, kc_obj_name(o), kc_obj_resource_version(o));
    strncat(r->log, line, sizeof(r->log) - strlen(r->log) - 1);
}

static void r_add(void *ud, kc_obj *o)
{
    rec *r = ud;
    hold(r);
    kc_obj *cur = kc_store_get(r->mirror, "n", kc_obj_name(o));
    r->contradictions += cur != NULL;
    kc_obj_unref(cur);
    kc_store_apply(r->mirror, KC_WATCH_ADDED, o, NULL, NULL);
    logf_(r, "add", o);
}

static void r_update(void *ud, kc_obj *old, kc_obj *o)
{
    rec *r = ud;
    hold(r);
    kc_obj *cur = kc_store_get(r->mirror, "n", kc_obj_name(o));
    r->contradictions += !cur || strcmp(kc_obj_resource_version(cur), kc_obj_resource_version(old));
    kc_obj_unref(cur);
    kc_store_apply(r->mirror, KC_WATCH_MODIFIED, o, NULL, NULL);
    logf_(r, "update", o);
}

static void r_delete(void *ud, kc_obj *o, bool tomb)
{
    rec *r = ud;
    hold(r);
    kc_obj *cur = kc_store_get(r->mirror, "n", kc_obj_name(o));
    r->contradictions += cur == NULL;
    kc_obj_unref(cur);
    kc_store_apply(r->mirror, KC_WATCH_DELETED, o, NULL, NULL);
    logf_(r, tomb ? "tombstone" : "delete", o);
}

static void rec_init(rec *r)
{
    memset(r, 0, sizeof(*r));
    assert_int_equal(kc_store_new(NULL, &r->mirror, NULL), 0);
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
}

static void gate(rec *r, bool closed)
{
    pthread_mutex_lock(&r->mu);
    r->gate_closed = closed;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

/* A recording registration whose callbacks wait at a closed gate (a slow consumer). */
static kc_informer_reg *add_gated(kc_informer *inf, rec *r)
{
    rec_init(r);
    kc_informer_handlers h = {
        .on_add = r_add, .on_update = r_update, .on_delete = r_delete, .ud = r};
    kc_informer_reg *reg;
    assert_int_equal(kc_informer_add_handler(inf, &h, NULL, &reg, NULL), 0);
    gate(r, true);
    return reg;
}

/* Mirror equals the informer's store (same keys, same RVs). */
static void assert_mirror_equal(kc_informer *inf, rec *r)
{
    kc_obj **v;
    size_t n;
    assert_int_equal(kc_store_list(inf->store, &v, &n, NULL), 0);
    assert_int_equal(kc_store_len(r->mirror), n);
    for (size_t i = 0; i < n; i++) {
        kc_obj *m = kc_store_get(r->mirror, "n", kc_obj_name(v[i]));
        assert_non_null(m);
        assert_string_equal(kc_obj_resource_version(m), kc_obj_resource_version(v[i]));
        kc_obj_unref(m);
    }
    kc_obj_array_free(v, n);
}

static void test_informer_handlers_order_and_sync(void **st)
{
    kc_informer *inf = new_inf(0);
    rec r;
    rec_init(&r);
    kc_informer_handlers h = {
        .on_add = r_add, .on_update = r_update, .on_delete = r_delete, .ud = &r};
    kc_informer_reg *reg;
    assert_int_equal(kc_informer_add_handler(inf, &h, NULL, &reg, NULL), 0);
    event(inf, KC_WATCH_ADDED, "a", 1);
    event(inf, KC_WATCH_MODIFIED, "a", 2);
    assert_false(kc_informer_reg_synced(reg));
    kc_error e = KC_ERROR_INIT; /* not synced before the informer is: a timeout that says so */
    assert_int_equal(kc_informer_reg_wait_synced(reg, 0, &e), KC_ETIMEOUT);
    assert_int_equal(e.code, KC_ETIMEOUT);
    assert_non_null(strstr(e.message, "not synced within 0 ms"));
    kc_error_clear(&e);
    synced(inf);
    event(inf, KC_WATCH_DELETED, "a", 3);
    assert_int_equal(kc_informer_reg_wait_synced(reg, 5000, NULL), 0);
    assert_int_equal(kc_informer_reg_wait_idle(reg, 5000, NULL), 0);
    assert_string_equal(r.log, "add a@1;update a@2;delete a@3;");
    assert_int_equal(r.contradictions, 0);
    kc_informer_free(inf);
    kc_store_free(r.mirror);
}

static void test_informer_handlers_late_registration_gets_snapshot(void **st)
{
    kc_informer *inf = new_inf(0);
    event(inf, KC_WATCH_ADDED, "a", 1);
    event(inf, KC_WATCH_ADDED, "b", 2);
    synced(inf);
    rec r;
    rec_init(&r);
    kc_informer_handlers h = {
        .on_add = r_add, .on_update = r_update, .on_delete = r_delete, .ud = &r};
    kc_informer_reg *reg;
    assert_int_equal(kc_informer_add_handler(inf, &h, NULL, &reg, NULL), 0);
    assert_int_equal(kc_informer_reg_wait_synced(reg, 5000, NULL), 0);
    assert_int_equal(kc_store_len(r.mirror), 2); /* snapshot delivered before "synced" */
    event(inf, KC_WATCH_MODIFIED, "a", 3);
    assert_int_equal(kc_informer_reg_wait_idle(reg, 5000, NULL), 0);
    assert_mirror_equal(inf, &r);
    assert_int_equal(r.contradictions, 0);
    kc_informer_free(inf);
    kc_store_free(r.mirror);
}

/* Overflow: a slow handler with a queue of 4 falls behind by hundreds of changes on 10 keys,
 * including deletes and re-creates; after it catches up its view equals the store. */
static void test_informer_handlers_overflow_coalesces_without_losing_deletes(void **st)
{
    kc_informer *inf = new_inf(4);
    rec r;
    kc_informer_reg *reg = add_gated(inf, &r);
    char name[8];
    int rv = 1;
    for (int round = 0; round < 30; round++)
        for (int k = 0; k < 10; k++) {
            snprintf(name, sizeof(name), "k%d", k);
            kc_obj *cur = kc_store_get(inf->store, "n", name);
            bool del = (round + k) % 4 == 3;
            if (!cur)
                event(inf, KC_WATCH_ADDED, name, ++rv);
            else if (del)
                event(inf, KC_WATCH_DELETED, name, ++rv);
            else
                event(inf, KC_WATCH_MODIFIED, name, ++rv);
            kc_obj_unref(cur);
        }
    event(inf, KC_WATCH_DELETED, "k0", ++rv); /* the last change of k0 is a delete */
    synced(inf);
    assert_true(kc_informer_reg_lagging(reg));
    kc_informer_status s;
    kc_informer_get_status(inf, &s);
    assert_int_equal(s.lagging_handlers, 1);
    gate(&r, false);
    assert_int_equal(kc_informer_reg_wait_synced(reg, 5000, NULL), 0);
    assert_int_equal(kc_informer_reg_wait_idle(reg, 5000, NULL), 0);
    assert_false(kc_informer_reg_lagging(reg));
    assert_mirror_equal(inf, &r);
    assert_int_equal(r.contradictions, 0);
    kc_obj *k0 = kc_store_get(r.mirror, "n", "k0");
    assert_null(k0);
    kc_informer_free(inf);
    kc_store_free(r.mirror);
}

/* event(), then the push to the registrations at once (the reflector's end of a read). */
static void event_now(kc_informer *inf, kc_watch_type t, const char *name, int rv)
{
    event(inf, t, name, rv);
    pthread_mutex_lock(&inf->ev_mu);
    kc__inf_flush(inf);
    pthread_mutex_unlock(&inf->ev_mu);
}

static bool fail_coalesce(const char *site)
{
    return strcmp(site, "informer.coalesce") == 0;
}

static void count_warnings(void *ud, kc_log_level level, const char *sub, const char *msg)
{
    int *n = ud;
    if (level == KC_LOG_LEVEL_WARN && strcmp(sub, "informer") == 0 &&
        strstr(msg, "out of memory coalescing n/k") && strstr(msg, "change dropped"))
        __atomic_fetch_add(n, 1, __ATOMIC_RELAXED);
}

/* Out of memory while lagging: each change that cannot be coalesced is lost for that handler, and
 * counted in the informer's status (events_dropped) as well as logged. The allocation fails
 * through the test hook (kc__alloc_fail_hook_set). */
static void test_informer_handlers_oom_drops_are_counted_in_status(void **st)
{
    kc_informer *inf = new_inf(1);
    rec r;
    kc_informer_reg *reg = add_gated(inf, &r);
    event_now(inf, KC_WATCH_ADDED, "a", 1); /* taken by the dispatcher, which waits at the gate */
    pthread_mutex_lock(&r.mu);
    while (r.holding == 0)
        pthread_cond_wait(&r.cv, &r.mu);
    pthread_mutex_unlock(&r.mu);
    event_now(inf, KC_WATCH_ADDED, "b", 2); /* fills the queue (cap 1) */
    int warnings = 0;
    assert_int_equal(kc_log_set(count_warnings, &warnings, KC_LOG_LEVEL_WARN), 0);
    kc__alloc_fail_hook_set(fail_coalesce);
    char name[8];
    for (int k = 0; k < 5; k++) { /* five new keys: each needs a coalescing entry */
        snprintf(name, sizeof(name), "k%d", k);
        event_now(inf, KC_WATCH_ADDED, name, 3 + k);
    }
    kc__alloc_fail_hook_set(NULL);
    assert_int_equal(kc_log_set(NULL, NULL, KC_LOG_LEVEL_WARN), 0);
    kc_informer_status s;
    kc_informer_get_status(inf, &s);
    assert_int_equal(s.events_dropped, 5);
    assert_int_equal(warnings, 5);
    event_now(inf, KC_WATCH_ADDED, "c", 9); /* memory is back: coalesced, not dropped */
    gate(&r, false);
    assert_int_equal(kc_informer_reg_wait_idle(reg, 5000, NULL), 0);
    kc_informer_get_status(inf, &s);
    assert_int_equal(s.events_dropped, 5);
    assert_string_equal(r.log, "add a@1;add b@2;add c@9;"); /* k0..k4 were lost for it */
    kc_informer_free(inf);
    kc_store_free(r.mirror);
}

static int push_cb(void *ud, const kc_store_change *ch)
{
    kc__inf_push_change(ud, ch);
    return 0;
}

static void test_informer_handlers_relist_tombstones(void **st)
{
    kc_informer *inf = new_inf(0);
    rec r;
    rec_init(&r);
    kc_informer_handlers h = {
        .on_add = r_add, .on_update = r_update, .on_delete = r_delete, .ud = &r};
    kc_informer_reg *reg;
    assert_int_equal(kc_informer_add_handler(inf, &h, NULL, &reg, NULL), 0);
    event(inf, KC_WATCH_ADDED, "a", 1);
    event(inf, KC_WATCH_ADDED, "b", 2);
    /* A relist in which b vanished and a changed. */
    kc_store_batch *b;
    assert_int_equal(kc_store_batch_new(inf->store, &b, NULL), 0);
    kc_obj *a2 = mk("a", 5);
    assert_int_equal(kc_store_batch_add(b, a2, NULL), 0);
    kc_obj_unref(a2);
    pthread_mutex_lock(&inf->ev_mu);
    assert_int_equal(kc_store_replace(inf->store, b, "6", push_cb, inf, NULL), 0);
    pthread_mutex_unlock(&inf->ev_mu);
    assert_int_equal(kc_informer_reg_wait_idle(reg, 5000, NULL), 0);
    assert_string_equal(r.log, "add a@1;add b@2;update a@5;tombstone b@2;");
    assert_mirror_equal(inf, &r);
    assert_int_equal(r.contradictions, 0);
    kc_informer_free(inf);
    kc_store_free(r.mirror);
}

/* ---- on_add_ex: in_initial_list ---------------------------------------------------------------
 */

typedef struct initial_rec {
    pthread_mutex_t mu;
    char log[512];
    int plain_adds; /* on_add calls: 0 when on_add_ex is set too (it replaces on_add) */
} initial_rec;

static void initial_add_ex(void *ud, kc_obj *o, bool initial)
{
    initial_rec *r = ud;
    char line[64];
    snprintf(line, sizeof line, "%s:%d;", kc_obj_name(o), initial ? 1 : 0);
    pthread_mutex_lock(&r->mu);
    strncat(r->log, line, sizeof(r->log) - strlen(r->log) - 1);
    pthread_mutex_unlock(&r->mu);
}

static void initial_add_plain(void *ud, kc_obj *o)
{
    (void)o;
    initial_rec *r = ud;
    pthread_mutex_lock(&r->mu);
    r->plain_adds++;
    pthread_mutex_unlock(&r->mu);
}

static kc_informer_reg *initial_reg(kc_informer *inf, initial_rec *r)
{
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->mu, NULL);
    kc_informer_handlers h = {.on_add = initial_add_plain, .on_add_ex = initial_add_ex, .ud = r};
    kc_informer_reg *reg = NULL;
    assert_int_equal(kc_informer_add_handler(inf, &h, NULL, &reg, NULL), 0);
    return reg;
}

/* The initial list (the adds before the sync) is flagged; the adds of watch events after it are
 * not; on_add is not called when on_add_ex is set. */
static void test_informer_handlers_initial_list_flagged(void **st)
{
    kc_informer *inf = new_inf(0);
    initial_rec r;
    kc_informer_reg *reg = initial_reg(inf, &r);
    event(inf, KC_WATCH_ADDED, "a", 1);
    event(inf, KC_WATCH_ADDED, "b", 2);
    synced(inf);
    event(inf, KC_WATCH_ADDED, "c", 3);
    assert_int_equal(kc_informer_reg_wait_synced(reg, 5000, NULL), 0);
    assert_int_equal(kc_informer_reg_wait_idle(reg, 5000, NULL), 0);
    assert_string_equal(r.log, "a:1;b:1;c:0;");
    assert_int_equal(r.plain_adds, 0);
    kc_informer_free(inf);
    pthread_mutex_destroy(&r.mu);
}

/* A late registration's snapshot is its initial contents (client-go flags it too). */
static void test_informer_handlers_initial_list_late_snapshot(void **st)
{
    kc_informer *inf = new_inf(0);
    event(inf, KC_WATCH_ADDED, "a", 1);
    synced(inf);
    event(inf, KC_WATCH_ADDED, "b", 2);
    initial_rec r;
    kc_informer_reg *reg = initial_reg(inf, &r);
    assert_int_equal(kc_informer_reg_wait_synced(reg, 5000, NULL), 0);
    event(inf, KC_WATCH_ADDED, "c", 3);
    assert_int_equal(kc_informer_reg_wait_idle(reg, 5000, NULL), 0);
    if (strcmp(r.log, "a:1;b:1;c:0;") && strcmp(r.log, "b:1;a:1;c:0;")) /* snapshot: store order */
        fail_msg("log: %s", r.log);
    kc_informer_free(inf);
    pthread_mutex_destroy(&r.mu);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_informer_handlers_order_and_sync),
        cmocka_unit_test(test_informer_handlers_late_registration_gets_snapshot),
        cmocka_unit_test(test_informer_handlers_overflow_coalesces_without_losing_deletes),
        cmocka_unit_test(test_informer_handlers_oom_drops_are_counted_in_status),
        cmocka_unit_test(test_informer_handlers_relist_tombstones),
        cmocka_unit_test(test_informer_handlers_initial_list_flagged),
        cmocka_unit_test(test_informer_handlers_initial_list_late_snapshot),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
