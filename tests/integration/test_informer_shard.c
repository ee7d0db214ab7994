/*
 * Sharded informers (docs/informer.md, "Sharded informers"; controller-semantics S6, S8, S12,
 * S13, A14) against the embedded API server, each test twice: with the server honouring
 * shardSelector (filtered pages and watches, the canonical echo in metadata.shardInfo: S8,
 * server_sharding "yes") and with it ignoring the parameter, as an old or gate-off
 * kube-apiserver does (S12: every list and watch complete, no echo, server_sharding "no"), where
 * whatever each store holds is the client-side filter's work (S13.2). The results must be equal.
 */
#include "test_informer_fixture.h"

#include "kcache/shard.h"

#include <pthread.h>

#define NQ 4

static bool IGNORED = true, HONOURED = false; /* cmocka prestates: kc_server ignores the param */

/* ifx_up with the server's shardSelector switch; *st is "ignored". */
static void up(ifx *f, const char *seed, void **st)
{
    memset(f, 0, sizeof(*f));
    kc_server_opts o = {.seed_spec = seed, .bookmark_interval_ms = 200};
    o.ignore_shard_selector = *(bool *)*st;
    f->srv = kc_test_server_start(&o);
    assert_non_null(f->srv);
    ifx_client_for(f, kc_server_url(f->srv));
}

static kc_informer_server_sharding want_sharding(void **st)
{
    return *(bool *)*st ? KC_INFORMER_SHARDING_NO : KC_INFORMER_SHARDING_YES;
}

/* Handler counts, waited on with a condition variable (never sleeps). */
typedef struct counts {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t adds, updates, deletes, tombstones;
    kc_shard_selector *expect; /* every object seen must match it (when set) */
    size_t foreign;            /* objects seen outside expect */
} counts;

static void counts_init(counts *c)
{
    memset(c, 0, sizeof(*c));
    pthread_mutex_init(&c->mu, NULL);
    kc__cond_init_monotonic(&c->cv);
}

static void counts_free(counts *c)
{
    kc_shard_selector_free(c->expect);
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
}

static void bump(counts *c, size_t *field, kc_obj *obj)
{
    pthread_mutex_lock(&c->mu);
    (*field)++;
    if (c->expect && !kc_shard_selector_match(c->expect, obj))
        c->foreign++;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

static void on_add(void *ud, kc_obj *o)
{
    bump(ud, &((counts *)ud)->adds, o);
}

static void on_update(void *ud, kc_obj *o, kc_obj *n)
{
    (void)o;
    bump(ud, &((counts *)ud)->updates, n);
}

static void on_delete(void *ud, kc_obj *o, bool tombstone)
{
    counts *c = ud;
    pthread_mutex_lock(&c->mu);
    c->deletes++;
    c->tombstones += tombstone;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    (void)o;
}

/* Wait until *field >= n (bounded): true when reached. */
static bool counts_wait(counts *c, const size_t *field, size_t n, int64_t timeout_ms)
{
    uint64_t deadline = kc__deadline_after_ms(timeout_ms);
    pthread_mutex_lock(&c->mu);
    while (*field < n && kc__cond_wait_until(&c->cv, &c->mu, deadline) == 0)
        ;
    bool ok = *field >= n;
    pthread_mutex_unlock(&c->mu);
    return ok;
}

static kc_shard_range quarter(unsigned i)
{
    kc_shard_range r;
    assert_int_equal(kc_shard_range_split(NQ, i, &r), 0);
    return r;
}

static kc_informer *new_inf(ifx *f, const kc_gvr *gvr, kc_shard_field field,
                            const kc_shard_range *r, size_t n, kc_informer_list_mode mode)
{
    kc_informer_opts o = {.ns = "default",
                          .list_mode = mode,
                          .page_size = 50, /* several pages: the echo is checked per page */
                          .shard_field = field,
                          .shard_ranges = r,
                          .shard_ranges_count = n};
    kc_informer *inf = NULL;
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_informer_new(f->client, gvr, &o, &inf, &e), 0, &e);
    return inf;
}

static size_t kc_informer_status_objects(kc_informer *inf)
{
    kc_informer_status s;
    kc_informer_get_status(inf, &s);
    return (size_t)s.objects;
}

static kc_informer_reg *add_counts(kc_informer *inf, counts *c)
{
    kc_informer_handlers h = {
        .on_add = on_add, .on_update = on_update, .on_delete = on_delete, .ud = c};
    kc_informer_reg *reg = NULL;
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_informer_add_handler(inf, &h, NULL, &reg, &e), 0, &e);
    return reg;
}

static void start_synced(kc_informer *inf)
{
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_informer_start(inf, &e), 0, &e);
    IFX_RC(kc_informer_wait_synced(inf, 30000, &e), 0, &e);
}

/* Every object of s matches sel; returns how many there are. */
static size_t all_match(kc_store *s, const kc_shard_selector *sel)
{
    kc_obj **v = NULL;
    size_t n = 0;
    assert_int_equal(kc_store_list(s, &v, &n, NULL), 0);
    for (size_t i = 0; i < n; i++) {
        if (!kc_shard_selector_match(sel, v[i]))
            fprintf(stderr, "object %s/%s out of range\n", kc_obj_namespace(v[i]),
                    kc_obj_name(v[i]));
        assert_true(kc_shard_selector_match(sel, v[i]));
        kc_obj_unref(v[i]);
    }
    free(v);
    return n;
}

static kc_shard_selector *sel_of(kc_shard_field field, const kc_shard_range *r, size_t n)
{
    kc_shard_selector *sel = NULL;
    assert_int_equal(kc_shard_selector_new(field, r, n, &sel, NULL), 0);
    return sel;
}

/* Objects of gvr in default whose uid falls in r (the server's full LIST, filtered here). */
static int count_cb(void *ud, kc_obj *o)
{
    void **a = ud;
    if (kc_shard_selector_match(a[0], o))
        (*(size_t *)a[1])++;
    kc_obj_unref(o);
    return 0;
}

static size_t server_count(ifx *f, const kc_gvr *gvr, const kc_shard_selector *sel)
{
    size_t n = 0;
    void *a[2] = {(void *)sel, &n};
    assert_int_equal(kc_client_list_all(f->client, gvr, "default", NULL, NULL, count_cb, a, NULL),
                     0);
    return n;
}

/* S13.1/S13.2/S12: four quarter informers over 300 pods: each holds exactly its quarter (every
 * object in range, as many as the server has in it), so together they are disjoint and complete;
 * the server ignored the selector, so server_sharding is "no". Streaming and paged lists both. */
static void test_shard_quarters_partition_pods(void **st)
{
    ifx f;
    up(&f, "pods=300:ns=default", st);
    kc_informer *inf[NQ];
    kc_shard_range r[NQ];
    size_t total = 0;
    for (unsigned i = 0; i < NQ; i++) {
        r[i] = quarter(i);
        inf[i] = new_inf(&f, &ifx_pods, KC_SHARD_FIELD_UID, &r[i], 1,
                         i % 2 ? KC_INFORMER_LIST_PAGED : KC_INFORMER_LIST_AUTO);
        start_synced(inf[i]);
    }
    for (unsigned i = 0; i < NQ; i++) {
        kc_shard_selector *sel = sel_of(KC_SHARD_FIELD_UID, &r[i], 1);
        size_t n = all_match(kc_informer_store(inf[i]), sel);
        assert_int_equal(n, server_count(&f, &ifx_pods, sel));
        assert_true(n > 0 && n < 300); /* 300 random uids: every quarter is hit, none has all */
        total += n;
        kc_informer_status s;
        kc_informer_get_status(inf[i], &s);
        assert_int_equal(s.server_sharding, want_sharding(st));
        assert_int_equal(s.objects, n);
        kc_shard_selector_free(sel);
    }
    assert_int_equal(total, 300);
    /* The ranges are part of the name (and of a cache's identity). */
    assert_string_equal(kc_informer_name(inf[1]),
                        "default/pods(shard uid:4000000000000000-8000000000000000)");
    for (unsigned i = 0; i < NQ; i++)
        kc_informer_free(inf[i]);
    ifx_down(&f);
}

/* S13.2: watch events (ADDED, MODIFIED, DELETED) reach only the informer whose range holds the
 * object's uid; the other three see neither the store change nor a handler call, although their
 * (full, unsharded) watch streams carried the event: their watermark passes its RV. */
static void test_shard_watch_events_reach_one_informer(void **st)
{
    ifx f;
    up(&f, "configmaps=40:ns=default", st);
    kc_informer *inf[NQ];
    counts c[NQ];
    kc_informer_reg *reg[NQ];
    kc_shard_range r[NQ];
    for (unsigned i = 0; i < NQ; i++) {
        r[i] = quarter(i);
        counts_init(&c[i]);
        c[i].expect = sel_of(KC_SHARD_FIELD_UID, &r[i], 1);
        inf[i] = new_inf(&f, &ifx_cm, KC_SHARD_FIELD_UID, &r[i], 1, KC_INFORMER_LIST_AUTO);
        reg[i] = add_counts(inf[i], &c[i]);
        start_synced(inf[i]);
        assert_int_equal(kc_informer_reg_wait_idle(reg[i], 10000, NULL), 0);
    }
    size_t adds0[NQ];
    for (unsigned i = 0; i < NQ; i++)
        adds0[i] = c[i].adds;
    bool hit[NQ] = {false};
    for (int k = 0; k < 24; k++) {
        char name[32], rv[KC_STORE_RV_MAX];
        snprintf(name, sizeof name, "w-%d", k);
        assert_int_equal(ifx_cm_create(&f, "default", name, "1", rv), 0);
        kc_obj *o = NULL;
        assert_int_equal(kc_client_get(f.client, &ifx_cm, "default", name, &o, NULL), 0);
        uint64_t h = kc_shard_hash(kc_obj_uid(o), strlen(kc_obj_uid(o)));
        unsigned owner = (unsigned)(h >> 62); /* quarter index (S15) */
        kc_obj_unref(o);
        hit[owner] = true;
        kc_store_cond kc = {KC_STORE_WAIT_KEY_RV, "default", name, rv, NULL, 0};
        assert_int_equal(kc_store_wait(kc_informer_store(inf[owner]), &kc, 10000, NULL), 0);
        assert_int_equal(ifx_cm_update(&f, "default", name, "2"), 0);
        assert_int_equal(ifx_cm_delete(&f, "default", name), 0);
        kc_store_cond gone = {KC_STORE_WAIT_KEY_GONE, "default", name, NULL, NULL, 0};
        assert_int_equal(kc_store_wait(kc_informer_store(inf[owner]), &gone, 10000, NULL), 0);
        for (unsigned i = 0; i < NQ; i++) {
            if (i == owner)
                continue;
            /* A bookmark (every 200 ms) carries the RV past the create. */
            kc_store_cond wm = {KC_STORE_WAIT_WATERMARK, NULL, NULL, rv, NULL, 0};
            assert_int_equal(kc_store_wait(kc_informer_store(inf[i]), &wm, 10000, NULL), 0);
            kc_obj *x = kc_store_get(kc_informer_store(inf[i]), "default", name);
            assert_null(x);
        }
    }
    size_t created = 0;
    for (unsigned i = 0; i < NQ; i++) {
        assert_int_equal(kc_informer_reg_wait_idle(reg[i], 10000, NULL), 0);
        pthread_mutex_lock(&c[i].mu);
        assert_int_equal(c[i].foreign, 0); /* no handler call for another quarter's object */
        size_t added = c[i].adds - adds0[i];
        /* Each create reached its quarter as an add (or, coalesced, at least as the delete) */
        assert_true(c[i].deletes <= added);
        created += c[i].deletes;
        pthread_mutex_unlock(&c[i].mu);
    }
    assert_int_equal(created, 24); /* every delete reached exactly one informer */
    size_t quarters_hit = 0;
    for (unsigned i = 0; i < NQ; i++)
        quarters_hit += hit[i];
    assert_true(quarters_hit >= 2);
    for (unsigned i = 0; i < NQ; i++) {
        kc_informer_free(inf[i]);
        counts_free(&c[i]);
    }
    ifx_down(&f);
}

/* A14 / range change: quarter 0 → quarters 0+1 adds exactly quarter 1's objects (no delete);
 * 0+1 → 1 deletes exactly quarter 0's (relist deletes: tombstones) and adds nothing. The
 * informer stays synced throughout; another informer on quarter 2 is untouched. */
static void test_shard_range_change_moves_objects(void **st)
{
    ifx f;
    up(&f, "configmaps=200:ns=default", st);
    kc_shard_range q[NQ] = {quarter(0), quarter(1), quarter(2), quarter(3)};
    counts c, other;
    counts_init(&c);
    counts_init(&other);
    kc_informer *inf = new_inf(&f, &ifx_cm, KC_SHARD_FIELD_UID, &q[0], 1, KC_INFORMER_LIST_AUTO);
    kc_informer *inf2 = new_inf(&f, &ifx_cm, KC_SHARD_FIELD_UID, &q[2], 1, KC_INFORMER_LIST_PAGED);
    kc_informer_reg *reg = add_counts(inf, &c);
    kc_informer_reg *reg2 = add_counts(inf2, &other);
    start_synced(inf);
    start_synced(inf2);
    assert_int_equal(kc_informer_reg_wait_idle(reg, 10000, NULL), 0);
    assert_int_equal(kc_informer_reg_wait_idle(reg2, 10000, NULL), 0);
    kc_shard_selector *s0 = sel_of(KC_SHARD_FIELD_UID, &q[0], 1);
    kc_shard_selector *s1 = sel_of(KC_SHARD_FIELD_UID, &q[1], 1);
    size_t n0 = server_count(&f, &ifx_cm, s0), n1 = server_count(&f, &ifx_cm, s1);
    assert_true(n0 > 0 && n1 > 0);
    assert_int_equal(c.adds, n0);
    size_t other_adds = other.adds;
    uint64_t relists0;
    kc_informer_status s;
    kc_informer_get_status(inf, &s);
    relists0 = s.relists;

    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_informer_set_shard_ranges(inf, KC_SHARD_FIELD_UID, q, 2, &e), 0, &e);
    assert_true(counts_wait(&c, &c.adds, n0 + n1, 20000));
    assert_int_equal(kc_informer_reg_wait_idle(reg, 10000, NULL), 0);
    assert_true(kc_informer_has_synced(inf));
    kc_shard_selector *s01 = sel_of(KC_SHARD_FIELD_UID, q, 2);
    assert_int_equal(all_match(kc_informer_store(inf), s01), n0 + n1);
    assert_int_equal(c.deletes, 0);
    assert_int_equal(c.adds, n0 + n1);
    kc_informer_get_status(inf, &s);
    assert_true(s.relists > relists0);
    assert_int_equal(s.server_sharding, want_sharding(st));

    IFX_RC(kc_informer_set_shard_ranges(inf, KC_SHARD_FIELD_UID, &q[1], 1, &e), 0, &e);
    assert_true(counts_wait(&c, &c.deletes, n0, 20000));
    assert_int_equal(kc_informer_reg_wait_idle(reg, 10000, NULL), 0);
    assert_int_equal(all_match(kc_informer_store(inf), s1), n1);
    assert_int_equal(c.deletes, n0);
    /* Relist deletes, as client-go's DeletedFinalStateUnknown: the object lives on elsewhere. */
    assert_int_equal(c.tombstones, n0);
    assert_int_equal(c.adds, n0 + n1);

    /* The other informer relisted nothing and saw nothing. */
    assert_int_equal(kc_informer_reg_wait_idle(reg2, 10000, NULL), 0);
    kc_informer_get_status(inf2, &s);
    assert_int_equal(s.relists, 0);
    assert_int_equal(other.adds, other_adds);
    assert_int_equal(other.deletes, 0);

    /* Bad ranges are refused, naming the argument; the informer keeps its ranges. */
    kc_shard_range bad = {.start = 5, .end = 5};
    IFX_RC(kc_informer_set_shard_ranges(inf, KC_SHARD_FIELD_UID, &bad, 1, &e), KC_EINVAL, &e);
    assert_non_null(strstr(e.message, "kc_informer_set_shard_ranges"));
    kc_error_clear(&e);
    assert_int_equal(kc_informer_set_shard_ranges(NULL, KC_SHARD_FIELD_UID, q, 1, NULL), KC_EINVAL);

    kc_shard_selector_free(s0);
    kc_shard_selector_free(s1);
    kc_shard_selector_free(s01);
    kc_informer_free(inf);
    kc_informer_free(inf2);
    counts_free(&c);
    counts_free(&other);
    ifx_down(&f);
}

/* A14 (a replica that holds no range): an informer sharded on uid with no range is synced and
 * empty at once, without a request, and named "(shard uid:none)"; ranges given later fill it;
 * the same ranges again are a no-op (no relist); no range again empties it (relist deletes:
 * tombstones), and the informer stays synced throughout. */
static void test_shard_no_range(void **st)
{
    ifx f;
    up(&f, "configmaps=120:ns=default", st);
    counts c;
    counts_init(&c);
    kc_informer *inf = new_inf(&f, &ifx_cm, KC_SHARD_FIELD_UID, NULL, 0, KC_INFORMER_LIST_AUTO);
    assert_string_equal(kc_informer_name(inf), "default/configmaps(shard uid:none)");
    kc_informer_reg *reg = add_counts(inf, &c);
    kc_client_stats cs;
    kc_client_get_stats(f.client, &cs);
    uint64_t bytes0 = cs.bytes_received, conns0 = cs.connections;
    start_synced(inf);
    assert_int_equal(kc_informer_reg_wait_idle(reg, 10000, NULL), 0);
    assert_int_equal(kc_informer_status_objects(inf), 0);
    assert_int_equal(c.adds, 0);
    kc_client_get_stats(f.client, &cs); /* synced without a request */
    assert_int_equal(cs.bytes_received, bytes0);
    assert_int_equal(cs.connections, conns0);

    kc_shard_range q[2] = {quarter(1), quarter(2)};
    kc_shard_selector *s12 = sel_of(KC_SHARD_FIELD_UID, q, 2);
    size_t n = server_count(&f, &ifx_cm, s12);
    assert_true(n > 0);
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_informer_set_shard_ranges(inf, KC_SHARD_FIELD_UID, q, 2, &e), 0, &e);
    assert_true(counts_wait(&c, &c.adds, n, 20000));
    assert_int_equal(kc_informer_reg_wait_idle(reg, 10000, NULL), 0);
    assert_int_equal(all_match(kc_informer_store(inf), s12), n);
    kc_informer_status s;
    kc_informer_get_status(inf, &s);
    uint64_t relists = s.relists;
    /* the same set (here in another order of terms: the canonical selector is the same) */
    kc_shard_range same[2] = {q[1], q[0]};
    IFX_RC(kc_informer_set_shard_ranges(inf, KC_SHARD_FIELD_UID, same, 2, &e), 0, &e);

    IFX_RC(kc_informer_set_shard_ranges(inf, KC_SHARD_FIELD_UID, NULL, 0, &e), 0, &e);
    assert_true(counts_wait(&c, &c.deletes, n, 20000));
    assert_int_equal(kc_informer_reg_wait_idle(reg, 10000, NULL), 0);
    assert_int_equal(kc_informer_status_objects(inf), 0);
    assert_int_equal(c.tombstones, n);
    assert_true(kc_informer_has_synced(inf));
    /* one relist since: the move to no range (install counts it before the swap); the same set
     * made none */
    kc_informer_get_status(inf, &s);
    assert_int_equal(s.relists, relists + 1);
    kc_shard_selector_free(s12);
    kc_informer_free(inf);
    counts_free(&c);
    ifx_down(&f);
}

/* S6 / A15: sharding by namespace. FNV-1a("default") is in range 3 of 4 and FNV-1a("a") in range
 * 2; all-namespace informers on ranges 3, 2 and 0 hold exactly default's, a's and nothing. */
static void test_shard_namespace_field(void **st)
{
    ifx f;
    up(&f, "configmaps=30:ns=default,configmaps=20:ns=a", st);
    size_t want[NQ] = {0, 0, 20, 30};
    for (unsigned i = 0; i < NQ; i++) {
        if (i == 1)
            continue;
        kc_shard_range r = quarter(i);
        kc_informer_opts o = {.shard_field = KC_SHARD_FIELD_NAMESPACE,
                              .shard_ranges = &r,
                              .shard_ranges_count = 1,
                              .list_mode = KC_INFORMER_LIST_PAGED};
        kc_informer *inf = NULL;
        kc_error e = KC_ERROR_INIT;
        IFX_RC(kc_informer_new(f.client, &ifx_cm, &o, &inf, &e), 0, &e);
        start_synced(inf);
        kc_shard_selector *sel = sel_of(KC_SHARD_FIELD_NAMESPACE, &r, 1);
        /* want: the seeded objects, plus the kube-root-ca.crt-like extras the server may add */
        size_t n = all_match(kc_informer_store(inf), sel);
        assert_true(n >= want[i]);
        if (want[i] == 0)
            assert_int_equal(n, 0);
        kc_shard_selector_free(sel);
        kc_informer_free(inf);
    }
    ifx_down(&f);
}

/* kc_informer_new checks the shard options (KC_EINVAL naming the field); a kc_cache applies its
 * defaults' ranges and keeps one informer per range set. */
static void test_shard_options_checked_and_cache(void **st)
{
    ifx f;
    up(&f, "configmaps=10:ns=default", st);
    kc_shard_range good = quarter(1), empty = {.start = 9, .end = 3};
    struct {
        kc_shard_field field;
        const kc_shard_range *r;
        size_t n;
    } bad[] = {
        {KC_SHARD_FIELD_UID, NULL, 1},       {KC_SHARD_FIELD_UID, &empty, 1},
        {KC_SHARD_FIELD_NONE, &good, 1},     {(kc_shard_field)7, &good, 1},
        {KC_SHARD_FIELD_NAMESPACE, NULL, 1},
    };
    for (size_t i = 0; i < KC__ARRAY_LEN(bad); i++) {
        kc_informer_opts o = {
            .shard_field = bad[i].field, .shard_ranges = bad[i].r, .shard_ranges_count = bad[i].n};
        kc_informer *inf = NULL;
        kc_error e = KC_ERROR_INIT;
        IFX_RC(kc_informer_new(f.client, &ifx_cm, &o, &inf, &e), KC_EINVAL, &e);
        assert_non_null(strstr(e.message, "kc_informer_opts.shard_"));
        assert_null(inf);
        kc_error_clear(&e);
    }
    /* A cache: defaults with a bad range are refused at kc_cache_new. */
    kc_informer_opts bad_defs = {
        .shard_field = KC_SHARD_FIELD_UID, .shard_ranges = &empty, .shard_ranges_count = 1};
    kc_cache_opts bco = {.defaults = &bad_defs, .defaults_size = sizeof bad_defs};
    kc_cache *cache = NULL;
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_cache_new(f.client, &bco, &cache, &e), KC_EINVAL, &e);
    assert_non_null(strstr(e.message, "kc_cache_opts.defaults"));
    kc_error_clear(&e);
    /* Good defaults apply to informers without ranges of their own (the array is copied). */
    kc_shard_range tmp = good;
    kc_informer_opts defs = {.shard_field = KC_SHARD_FIELD_UID,
                             .shard_ranges = &tmp,
                             .shard_ranges_count = 1,
                             .list_mode = KC_INFORMER_LIST_PAGED};
    kc_cache_opts co = {.defaults = &defs, .defaults_size = sizeof defs};
    IFX_RC(kc_cache_new(f.client, &co, &cache, &e), 0, &e);
    memset(&tmp, 0, sizeof tmp);
    kc_informer *a = NULL, *b = NULL, *a2 = NULL;
    kc_informer_opts none = {.ns = "default"};
    IFX_RC(kc_cache_get_informer(cache, &ifx_cm, &none, &a, &e), 0, &e);
    kc_shard_range q3 = quarter(3);
    kc_informer_opts own = {.ns = "default",
                            .shard_field = KC_SHARD_FIELD_UID,
                            .shard_ranges = &q3,
                            .shard_ranges_count = 1};
    IFX_RC(kc_cache_get_informer(cache, &ifx_cm, &own, &b, &e), 0, &e);
    IFX_RC(kc_cache_get_informer(cache, &ifx_cm, &none, &a2, &e), 0, &e);
    assert_ptr_equal(a, a2);
    assert_ptr_not_equal(a, b);
    assert_string_equal(kc_informer_name(a),
                        "default/configmaps(shard uid:4000000000000000-8000000000000000)");
    assert_string_equal(kc_informer_name(b),
                        "default/configmaps(shard uid:c000000000000000-10000000000000000)");
    IFX_RC(kc_cache_wait_synced(cache, 30000, &e), 0, &e);
    kc_shard_selector *sa = sel_of(KC_SHARD_FIELD_UID, &good, 1);
    kc_shard_selector *sb = sel_of(KC_SHARD_FIELD_UID, &q3, 1);
    all_match(kc_informer_store(a), sa);
    all_match(kc_informer_store(b), sb);
    kc_shard_selector_free(sa);
    kc_shard_selector_free(sb);
    kc_cache_free(cache);
    ifx_down(&f);
}

/* S13.1: server_sharding follows the server: "yes" while it echoes the selector; after it starts
 * ignoring shardSelector (as after a downgrade), the next relist (here forced by a range change)
 * finds no echo and says "no", and the store still holds exactly the range (S13.2). */
static void test_shard_server_switch_seen_at_relist(void **st)
{
    ifx f;
    up(&f, "configmaps=60:ns=default", st);
    kc_shard_range q[2] = {quarter(0), quarter(1)};
    kc_informer *inf = new_inf(&f, &ifx_cm, KC_SHARD_FIELD_UID, q, 1, KC_INFORMER_LIST_PAGED);
    counts c;
    counts_init(&c);
    kc_informer_reg *reg = add_counts(inf, &c);
    start_synced(inf);
    kc_informer_status s;
    kc_informer_get_status(inf, &s);
    assert_int_equal(s.server_sharding, KC_INFORMER_SHARDING_YES);
    assert_int_equal(kc_server_set_shard_selector_ignored(f.srv, true), 0);
    kc_shard_selector *s1 = sel_of(KC_SHARD_FIELD_UID, &q[1], 1);
    size_t n1 = server_count(&f, &ifx_cm, s1);
    assert_int_equal(kc_informer_reg_wait_idle(reg, 10000, NULL), 0);
    size_t deletes_before = c.deletes;
    size_t n0 = kc_informer_status_objects(inf);
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_informer_set_shard_ranges(inf, KC_SHARD_FIELD_UID, &q[1], 1, &e), 0, &e);
    assert_true(counts_wait(&c, &c.deletes, deletes_before + n0, 20000));
    assert_int_equal(kc_informer_reg_wait_idle(reg, 10000, NULL), 0);
    assert_int_equal(all_match(kc_informer_store(inf), s1), n1);
    kc_informer_get_status(inf, &s);
    assert_int_equal(s.server_sharding, KC_INFORMER_SHARDING_NO);
    kc_shard_selector_free(s1);
    kc_informer_free(inf);
    counts_free(&c);
    ifx_down(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_prestate(test_shard_quarters_partition_pods, &IGNORED),
        cmocka_unit_test_prestate(test_shard_quarters_partition_pods, &HONOURED),
        cmocka_unit_test_prestate(test_shard_watch_events_reach_one_informer, &IGNORED),
        cmocka_unit_test_prestate(test_shard_watch_events_reach_one_informer, &HONOURED),
        cmocka_unit_test_prestate(test_shard_range_change_moves_objects, &IGNORED),
        cmocka_unit_test_prestate(test_shard_range_change_moves_objects, &HONOURED),
        cmocka_unit_test_prestate(test_shard_no_range, &IGNORED),
        cmocka_unit_test_prestate(test_shard_no_range, &HONOURED),
        cmocka_unit_test_prestate(test_shard_namespace_field, &IGNORED),
        cmocka_unit_test_prestate(test_shard_namespace_field, &HONOURED),
        cmocka_unit_test_prestate(test_shard_options_checked_and_cache, &HONOURED),
        cmocka_unit_test_prestate(test_shard_server_switch_seen_at_relist, &HONOURED),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
