/*
 * test_cli_enrich_reuse.c — the helper's answer cache (tools/kcache/enrich_reuse.c), the
 * generation page the daemon shares (enrich_daemon.c's hello) and the client's stamp
 * (enrich_client.c), driven through kc__enrich_reply with a fake view whose labels and counter
 * the test moves: an answer is reused while the counter holds and asked again after it moved —
 * a label changed shows in the next record (spec enrich-semantics.md CA3, §9 item 16), a pod
 * not known is asked again (CA3 for a pod that appears), a daemon that restarts or dies is not
 * reused from (CA4: file-derived fields, never a stale daemon's answers for long), and the
 * fulljson fast path (enrich_project.c) reads the same key as the whole-record parse (FN7).
 */
#include "enrich.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "kcache/error.h"

#define ID64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static const kc__enrich_fields fields = {.filename = "$!metadata!filename",
                                         .container_name = "$!CONTAINER_NAME",
                                         .container_id_full = "$!CONTAINER_ID_FULL"};

/* The fake cache: pod "web-0" has label gen=<gen_label> while known; lookups are counted. The
 * daemon's connection threads read what the test thread writes: atomics. */
static _Atomic int gen_label = 1, lookups, known = 1, fail_io;

static int fake_lookup(void *ud, const kc__enrich_key *key, kc__enrich_meta *ret)
{
    (void)ud;
    memset(ret, 0, sizeof *ret);
    atomic_fetch_add(&lookups, 1);
    if (atomic_load(&fail_io))
        return KC_EIO;
    if (!atomic_load(&known) || strcmp(key->pod, "web-0"))
        return KC_ENOTFOUND;
    int g = atomic_load(&gen_label);
    snprintf(ret->version, sizeof ret->version, "web-0/%d", g);
    if (key->have_version && !strcmp(key->have_version, ret->version)) {
        ret->same = true;
        return 0;
    }
    ret->pod = json_pack("{s:{s:s,s:s,s:{s:i}},s:{s:s}}", "metadata", "name", key->pod, "uid", "u1",
                         "labels", "gen", g, "spec", "nodeName", "n1");
    return 0;
}

static kc__enrich_out out_mmk(void)
{
    kc__enrich_out o = {.fmt = KC_ENRICH_FMT_MMK, .labels = true, .ns_meta = true, .de_dot = true};
    strcpy(o.de_dot_sep, "_");
    return o;
}

static kc__enrich_loop loop_of(const kc__enrich_out *o, kc__enrich_view v, bool mmexternal)
{
    return (kc__enrich_loop){
        .mmexternal = mmexternal, .max_line = 1 << 20, .fields = &fields, .out = o, .view = v};
}

static const char rec_web0[] =
    "{\"msg\":\"hello\",\"$!\":{\"metadata\":{\"filename\":"
    "\"\\/var\\/log\\/containers\\/web-0_shop_app-" ID64 ".log\",\"fileoffset\":\"0\"}}}";

/* The reply to rec_web0 (malloc'd) and whether it carries label gen=g / any pod metadata. */
static char *ask(kc__enrich_loop *l)
{
    char *r = kc__enrich_reply(l, rec_web0, sizeof rec_web0 - 1);
    assert_non_null(r);
    return r;
}

static bool has_gen(const char *r, int g)
{
    char want[32];
    snprintf(want, sizeof want, "\"gen\":%d", g);
    return strstr(r, want) != NULL;
}

static void reset(void)
{
    atomic_store(&gen_label, 1);
    atomic_store(&lookups, 0);
    atomic_store(&known, 1);
    atomic_store(&fail_io, 0);
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* CA3 in-process (--standalone's view): reused while the counter holds, asked after it moved,
 * and the changed label is in the very next record. */
static void test_cli_enrich_reuse_counter(void **state)
{
    (void)state;
    reset();
    _Atomic uint64_t gen = 0;
    kc__enrich_out o = out_mmk();
    kc__enrich_loop l =
        loop_of(&o, (kc__enrich_view){.lookup = fake_lookup, .generation = &gen}, true);
    char *first = ask(&l);
    assert_true(has_gen(first, 1));
    for (int i = 0; i < 100; i++) {
        char *r = ask(&l);
        assert_string_equal(r, first); /* the same reply text */
        free(r);
    }
    assert_int_equal(atomic_load(&lookups), 1);
    assert_int_equal(l.reused, 100);
    assert_int_equal(l.stats.enriched, 101);
    atomic_store(&gen_label, 2); /* the cache applies a label patch, then bumps */
    atomic_fetch_add(&gen, 1);
    char *r = ask(&l);
    assert_true(has_gen(r, 2));
    assert_int_equal(atomic_load(&lookups), 2);
    free(r);
    free(first);
    kc__enrich_loop_release(&l);
}

/* A pod the view did not know is held as "not known" too, and asked again once the counter
 * moves (the pod arrived); an answer that is no answer (KC_EIO) is never held. */
static void test_cli_enrich_reuse_negative(void **state)
{
    (void)state;
    reset();
    atomic_store(&known, 0);
    _Atomic uint64_t gen = 0;
    kc__enrich_out o = out_mmk();
    kc__enrich_loop l =
        loop_of(&o, (kc__enrich_view){.lookup = fake_lookup, .generation = &gen}, true);
    for (int i = 0; i < 3; i++) {
        char *r = ask(&l);
        assert_false(has_gen(r, 1)); /* file-derived fields only */
        assert_non_null(strstr(r, "\"pod_name\":\"web-0\""));
        free(r);
    }
    assert_int_equal(atomic_load(&lookups), 1);
    assert_int_equal(l.stats.file_only, 3);
    atomic_store(&known, 1);
    atomic_fetch_add(&gen, 1);
    char *r = ask(&l);
    assert_true(has_gen(r, 1));
    free(r);
    assert_int_equal(atomic_load(&lookups), 2);
    atomic_store(&fail_io, 1); /* no answer now: asked every time */
    atomic_fetch_add(&gen, 1);
    for (int i = 0; i < 3; i++)
        free(ask(&l));
    assert_int_equal(atomic_load(&lookups), 5);
    assert_int_equal(l.stats.lookup_errors, 3);
    kc__enrich_loop_release(&l);
}

/* Filter mode holds the fields, not the text: two records of one pod keep their own messages. */
static void test_cli_enrich_reuse_filter(void **state)
{
    (void)state;
    reset();
    _Atomic uint64_t gen = 0;
    kc__enrich_out o = out_mmk();
    kc__enrich_loop l =
        loop_of(&o, (kc__enrich_view){.lookup = fake_lookup, .generation = &gen}, false);
    const char *a = "{\"msg\":\"one\",\"$!\":{\"metadata\":{\"filename\":\"/var/log/containers/"
                    "web-0_shop_app-" ID64 ".log\"}}}";
    const char *b = "{\"msg\":\"two\",\"$!\":{\"metadata\":{\"filename\":\"/var/log/containers/"
                    "web-0_shop_app-" ID64 ".log\"}}}";
    char *ra = kc__enrich_reply(&l, a, strlen(a)), *rb = kc__enrich_reply(&l, b, strlen(b));
    assert_non_null(strstr(ra, "\"msg\":\"one\""));
    assert_non_null(strstr(rb, "\"msg\":\"two\""));
    assert_true(has_gen(ra, 1) && has_gen(rb, 1));
    assert_int_equal(atomic_load(&lookups), 1);
    free(ra);
    free(rb);
    kc__enrich_loop_release(&l);
}

/* The cache itself: keys differing in one field (or absent vs empty) are apart; a stamp other
 * than the one held is a miss; more keys than slots stay bounded and correct; a record id's key
 * is held for KC_ENRICH_KEY_TTL_MS only (a link's target re-read every second, FN13). */
static void test_cli_enrich_reuse_cache(void **state)
{
    (void)state;
    kc__enrich_reuse *r = kc__enrich_reuse_new();
    kc__enrich_key k1 = {.ns = "a", .pod = "p", .container = "c"};
    kc__enrich_key k2 = {.ns = "a", .pod = "p", .container = "c", .uid = ""};
    kc__enrich_answer a = {.rc = 0, .reply = "{\"x\":1}", .reply_len = 7};
    kc__enrich_reuse_put(r, &k1, 5, &a);
    assert_null(kc__enrich_reuse_get(r, &k2, 5));
    assert_null(kc__enrich_reuse_get(r, &k1, 6));
    const kc__enrich_answer *h = kc__enrich_reuse_get(r, &k1, 5);
    assert_non_null(h);
    assert_string_equal(h->reply, "{\"x\":1}");
    char pod[32], text[32];
    for (int i = 0; i < 20000; i++) {
        snprintf(pod, sizeof pod, "p%d", i);
        snprintf(text, sizeof text, "%d", i);
        kc__enrich_key k = {.ns = "a", .pod = pod};
        kc__enrich_answer b = {.rc = KC_ENOTFOUND, .reply = text, .reply_len = strlen(text)};
        kc__enrich_reuse_put(r, &k, 1, &b);
        h = kc__enrich_reuse_get(r, &k, 1);
        assert_non_null(h);
        assert_string_equal(h->reply, text);
        assert_int_equal(h->rc, KC_ENOTFOUND);
    }
    /* the key memo: held for KC_ENRICH_KEY_TTL_MS from its derivation, absent fields kept absent */
    kc__enrich_key k3 = {.ns = "shop", .pod = "web-0", .container_id = ID64, .uid = "u1"}, got;
    kc__enrich_reuse_key_put(r, "id", 2, 1000, &k3);
    assert_int_equal(kc__enrich_reuse_key_get(r, "id", 2, 1000 + KC_ENRICH_KEY_TTL_MS - 1, &got),
                     0);
    assert_string_equal(got.ns, "shop");
    assert_string_equal(got.pod, "web-0");
    assert_string_equal(got.container_id, ID64);
    assert_string_equal(got.uid, "u1");
    assert_null(got.container);
    assert_null(got.container_hash);
    assert_int_equal(kc__enrich_reuse_key_get(r, "id", 2, 1000 + KC_ENRICH_KEY_TTL_MS, &got), -1);
    assert_int_equal(kc__enrich_reuse_key_get(r, "id", 2, 999, &got), -1);
    assert_int_equal(kc__enrich_reuse_key_get(r, "ie", 2, 1000, &got), -1);
    kc__enrich_reuse_free(r);
}

/* enrich_project.c: the projected fields give the key the whole record gives (file name and
 * journald); lines it cannot read fall back to the whole-record parse with the same replies. */
static void test_cli_enrich_reuse_projection(void **state)
{
    (void)state;
    const char *lines[] = {
        rec_web0,
        "{\"msg\":\"m\",\"$!\":{\"CONTAINER_NAME\":\"k8s_app_web-0_shop_u1_0\","
        "\"CONTAINER_ID_FULL\":\"" ID64 "\"}}",
        "{\"metadata\":3,\"$!\":{\"metadata\":{\"filename\":\"/var/log/containers/"
        "web-0_shop_app-" ID64 ".log\"}}}",
        "{\"$!\":{\"metadata\":{\"filename\":7}}}",
        "{\"$!\":",
        "[1,2]",
        "{\"a\":tru}",
    };
    char id[512];
    size_t idn;
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        json_t *rec = json_loads(lines[i], 0, NULL),
               *few = kc__enrich_record_fields(&fields, lines[i], strlen(lines[i]), id, sizeof id,
                                               &idn);
        kc__enrich_key k1, k2;
        int r1 =
            json_is_object(rec) ? kc__enrich_record_key(KC_ENRICH_FMT_MMK, &fields, rec, &k1) : -1;
        int r2 = few ? kc__enrich_record_key(KC_ENRICH_FMT_MMK, &fields, few, &k2) : -1;
        if (!r2) { /* whatever the projection names, the whole record names the same */
            assert_int_equal(r1, 0);
            assert_string_equal(k1.ns, k2.ns);
            assert_string_equal(k1.pod, k2.pod);
            assert_string_equal(k1.container_id, k2.container_id);
        }
        if (i < 2)
            assert_int_equal(r2, 0); /* rsyslog's forms take the fast path */
        json_decref(rec);
        json_decref(few);
    }
}

/* ---- through the daemon ------------------------------------------------------------------- */

static char sock_path[108];

static int setup(void **state)
{
    (void)state;
    snprintf(sock_path, sizeof sock_path, "/tmp/kc-enrich-reuse.%d.sock", (int)getpid());
    reset();
    return 0;
}

static kc__enrich_daemon *start(_Atomic uint64_t *gen, int gen_fd)
{
    char msg[256];
    kc__enrich_view v = {.lookup = fake_lookup, .generation = gen, .generation_fd = gen_fd};
    kc__enrich_daemon *d = kc__enrich_daemon_start(sock_path, v, 8, msg, sizeof msg);
    if (!d)
        fail_msg("%s", msg);
    return d;
}

/* Ask until pred holds for the reply (bounded: 5 s); the last reply (malloc'd). */
static char *ask_until(kc__enrich_loop *l, bool (*pred)(const char *))
{
    char *r = NULL;
    for (int64_t end = mono_ms() + 5000; mono_ms() < end;) {
        free(r);
        r = ask(l);
        if (pred(r))
            break;
        usleep(5 * 1000);
    }
    return r;
}

static bool is_bare(const char *r)
{
    return !strstr(r, "\"pod_id\"");
}

static bool is_gen3(const char *r)
{
    return has_gen(r, 3);
}

/* The helper reuses what the daemon answered while the shared counter holds (no request), asks
 * after it moved (CA3), stops reusing within the liveness interval when the daemon dies (CA4:
 * file-derived fields), and after a restart (a new page, its counter at 0 again) answers with the
 * new daemon's state, not with anything held from the old one. */
static void test_cli_enrich_reuse_daemon(void **state)
{
    (void)state;
    int fd;
    _Atomic uint64_t *gen = kc__enrich_genpage_new(&fd);
    assert_non_null(gen);
    atomic_store(gen, 7);
    kc__enrich_daemon *d = start(gen, fd);
    kc__enrich_client *c = kc__enrich_client_new(sock_path, 2000, 20, 100);
    kc__enrich_out o = out_mmk();
    kc__enrich_loop l = loop_of(&o, kc__enrich_client_view(c), true);
    free(ask(&l)); /* connects: the page arrives with the hello */
    free(ask(&l)); /* held at the page's counter */
    uint64_t asked = kc__enrich_daemon_requests(d);
    for (int i = 0; i < 50; i++)
        free(ask(&l));
    assert_int_equal(kc__enrich_daemon_requests(d), asked); /* no exchange at all */
    assert_int_equal(l.reused, 50);
    atomic_store(&gen_label, 2);
    atomic_fetch_add(gen, 1);
    char *r = ask(&l);
    assert_true(has_gen(r, 2)); /* the next record after the bump */
    free(r);
    assert_int_equal(kc__enrich_daemon_requests(d), asked + 1);
    /* the daemon dies: within the liveness interval the held answer is dropped */
    kc__enrich_daemon_stop(d);
    r = ask_until(&l, is_bare);
    assert_true(is_bare(r));
    free(r);
    /* a new daemon, a new page (counter 0, below the old one's 8), the label changed meanwhile */
    kc__enrich_genpage_free(gen, fd);
    gen = kc__enrich_genpage_new(&fd);
    atomic_store(&gen_label, 3);
    d = start(gen, fd);
    r = ask_until(&l, is_gen3);
    assert_true(has_gen(r, 3));
    free(r);
    free(ask(&l));
    asked = kc__enrich_daemon_requests(d);
    r = ask(&l);
    assert_true(has_gen(r, 3));
    free(r);
    assert_int_equal(kc__enrich_daemon_requests(d), asked); /* reused again */
    assert_int_equal(kc__enrich_client_connects(c), 2);
    kc__enrich_loop_release(&l);
    kc__enrich_client_free(c);
    kc__enrich_daemon_stop(d);
    kc__enrich_genpage_free(gen, fd);
}

/* A daemon whose view has no counter sends no page: the helper asks for every record (as
 * before: "v"/"same"), and a label change shows at once. */
static void test_cli_enrich_reuse_daemon_no_generation(void **state)
{
    (void)state;
    kc__enrich_daemon *d = start(NULL, -1);
    kc__enrich_client *c = kc__enrich_client_new(sock_path, 2000, 20, 100);
    kc__enrich_out o = out_mmk();
    kc__enrich_loop l = loop_of(&o, kc__enrich_client_view(c), true);
    for (int i = 0; i < 5; i++)
        free(ask(&l));
    assert_int_equal(kc__enrich_daemon_requests(d), 5); /* the hello is not a request */
    assert_int_equal(l.reused, 0);
    atomic_store(&gen_label, 2);
    char *r = ask(&l);
    assert_true(has_gen(r, 2));
    free(r);
    kc__enrich_loop_release(&l);
    kc__enrich_client_free(c);
    kc__enrich_daemon_stop(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cli_enrich_reuse_counter),
        cmocka_unit_test(test_cli_enrich_reuse_negative),
        cmocka_unit_test(test_cli_enrich_reuse_filter),
        cmocka_unit_test(test_cli_enrich_reuse_cache),
        cmocka_unit_test(test_cli_enrich_reuse_projection),
        cmocka_unit_test_setup(test_cli_enrich_reuse_daemon, setup),
        cmocka_unit_test_setup(test_cli_enrich_reuse_daemon_no_generation, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
