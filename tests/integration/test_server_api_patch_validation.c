/*
 * test_server_api_patch_validation.c — fieldValidation on PATCH (spec §3.1, §6 item 7, checklist
 * #20 and #7/#8), exactly as on POST and PUT, for every patch type (merge, JSON, strategic,
 * apply) and every mode: Strict → 400 `strict decoding error: unknown field "…"` and nothing
 * changes; Warn (the default) → 200 with one `Warning: 299` header per unknown field, the fields
 * dropped and the rest of the patch applied; Ignore → the same without warnings; anything else
 * → 400. Apply that creates is checked too, an applied unknown field is not recorded in
 * managedFields, and an unknown field already stored (seeded) is not blamed on a patch.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "server/storage/write.h"
#include "test_server_util.h"

#define MERGE "application/merge-patch+json"
#define JSONP "application/json-patch+json"
#define SMP   "application/strategic-merge-patch+json"
#define APPLY "application/apply-patch+yaml"

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

typedef struct ptype {
    const char *name, *ctype;
} ptype;

static const ptype types[] = {{"merge", MERGE}, {"json", JSONP}, {"smp", SMP}, {"apply", APPLY}};
static const char *const modes[] = {NULL, "Warn", "Strict", "Ignore"};

/* The patch of type t adding data.b, the unknown top-level field "bogus" and the unknown
 * metadata field "colour" to ConfigMap name. */
static void patch_body(const ptype *t, const char *name, char *out, size_t cap)
{
    if (!strcmp(t->name, "json"))
        snprintf(out, cap,
                 "[{\"op\":\"add\",\"path\":\"/bogus\",\"value\":1},"
                 "{\"op\":\"add\",\"path\":\"/metadata/colour\",\"value\":\"red\"},"
                 "{\"op\":\"add\",\"path\":\"/data/b\",\"value\":\"2\"}]");
    else if (!strcmp(t->name, "apply"))
        snprintf(out, cap,
                 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\","
                 "\"colour\":\"red\"},\"bogus\":1,\"data\":{\"b\":\"2\"}}",
                 name);
    else
        snprintf(out, cap,
                 "{\"bogus\":1,\"metadata\":{\"colour\":\"red\"},\"data\":{\"b\":\"2\"}}");
}

static long do_patch(kc_server *s, const ptype *t, const char *name, const char *mode, ts_resp *r)
{
    char path[256], body[512];
    snprintf(path, sizeof(path), CM_PATH "/%s?fieldManager=tester%s%s", name,
             mode ? "&fieldValidation=" : "", mode ? mode : "");
    patch_body(t, name, body, sizeof(body));
    ts_req(s, "PATCH", path, t->ctype, body, NULL, r);
    return r->status;
}

static void assert_no_unknown(json_t *obj)
{
    assert_null(json_object_get(obj, "bogus"));
    assert_null(ts_j(obj, "metadata.colour"));
}

/* The stored object after a patch of type t: data.b set (or not), never an unknown field; an
 * apply entry never owns one. */
static void check_stored(kc_server *s, const char *name, bool patched)
{
    char path[256];
    snprintf(path, sizeof(path), CM_PATH "/%s", name);
    ts_resp r;
    assert_int_equal(ts_get(s, path, &r), 200);
    assert_no_unknown(r.json);
    assert_string_equal(ts_s(r.json, "data.a"), "1");
    assert_string_equal(ts_s(r.json, "data.b"), patched ? "2" : "");
    json_t *mf = ts_j(r.json, "metadata.managedFields");
    for (size_t i = 0; i < json_array_size(mf); i++) {
        json_t *f = ts_j(json_array_get(mf, i), "fieldsV1");
        assert_null(json_object_get(f, "f:bogus"));
        assert_null(json_object_get(json_object_get(f, "f:metadata"), "f:colour"));
    }
    ts_resp_free(&r);
}

static void one(kc_server *s, const ptype *t, const char *mode)
{
    char name[64];
    snprintf(name, sizeof(name), "fv-%s-%s", t->name, mode ? mode : "default");
    for (char *c = name; *c; c++)
        *c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
    ts_resp r;
    char body[256];
    snprintf(body, sizeof(body), "{\"metadata\":{\"name\":\"%s\"},\"data\":{\"a\":\"1\"}}", name);
    assert_int_equal(ts_post(s, CM_PATH, body, &r), 201);
    unsigned long long rv0 = ts_rv(r.json);
    ts_resp_free(&r);

    long st = do_patch(s, t, name, mode, &r);
    if (mode && !strcmp(mode, "Strict")) {
        if (st != 400)
            fail_msg("%s patch, Strict: HTTP %ld, want 400", t->name, st);
        assert_string_equal(ts_s(r.json, "reason"), "BadRequest");
        const char *msg = ts_s(r.json, "message");
        assert_non_null(strstr(msg, "strict decoding error: unknown field \""));
        ts_resp_free(&r);
        check_stored(s, name, false);
        char path[256];
        snprintf(path, sizeof(path), CM_PATH "/%s", name);
        assert_int_equal(ts_get(s, path, &r), 200);
        assert_int_equal(ts_rv(r.json), rv0); /* nothing was written */
        ts_resp_free(&r);
        return;
    }
    if (st != 200)
        fail_msg("%s patch, %s: HTTP %ld, want 200", t->name, mode ? mode : "default", st);
    assert_no_unknown(r.json);
    assert_string_equal(ts_s(r.json, "data.b"), "2");
    if (!mode || !strcmp(mode, "Warn")) {
        if (!strstr(r.warnings, "299 - \"unknown field \\\"bogus\\\"\"\n") ||
            !strstr(r.warnings, "299 - \"unknown field \\\"metadata.colour\\\"\"\n"))
            fail_msg("%s patch, %s: warnings \"%s\"", t->name, mode ? mode : "default", r.warnings);
    } else {
        assert_string_equal(r.warnings, "");
    }
    ts_resp_free(&r);
    check_stored(s, name, true);
}

static void test_server_patch_field_validation_every_type_and_mode_20(void **state)
{
    for (size_t t = 0; t < KC__ARRAY_LEN(types); t++)
        for (size_t m = 0; m < KC__ARRAY_LEN(modes); m++)
            one(*state, &types[t], modes[m]);
}

static void test_server_patch_field_validation_bad_mode_400(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    assert_int_equal(ts_post(s, CM_PATH, "{\"metadata\":{\"name\":\"fv-bad\"}}", &r), 201);
    ts_resp_free(&r);
    for (size_t t = 0; t < KC__ARRAY_LEN(types); t++) {
        if (do_patch(s, &types[t], "fv-bad", "Bogus", &r) != 400)
            fail_msg("%s patch, fieldValidation=Bogus: HTTP %ld, want 400", types[t].name,
                     r.status);
        assert_non_null(strstr(ts_s(r.json, "message"), "Unsupported value"));
        ts_resp_free(&r);
    }
}

/* Apply that creates the object: Strict refuses it (nothing created), Warn creates it without
 * the unknown fields and says so. */
static void test_server_apply_create_field_validation_45(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    assert_int_equal(do_patch(s, &types[3], "fv-new", "Strict", &r), 400);
    ts_resp_free(&r);
    assert_int_equal(ts_get(s, CM_PATH "/fv-new", &r), 404);
    ts_resp_free(&r);
    assert_int_equal(do_patch(s, &types[3], "fv-new", NULL, &r), 201);
    assert_no_unknown(r.json);
    assert_non_null(strstr(r.warnings, "unknown field \\\"bogus\\\""));
    ts_resp_free(&r);
}

/* An unknown field the object already has (seeding stores fixtures as given) is not the patch's:
 * a Strict patch that does not add one succeeds and leaves it alone. */
static void test_server_patch_strict_does_not_blame_stored_fields(void **state)
{
    kc_server *s = *state;
    const char *seed = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                       "\"fv-seeded\",\"namespace\":\"default\"},\"legacy\":true,\"data\":{}}";
    kc_error e = KC_ERROR_INIT;
    assert_int_equal(kc__create_json(s, seed, strlen(seed), false, &e), 0);
    for (size_t t = 0; t < 3; t++) { /* apply names its own fields: the applied body is checked */
        char path[128];
        snprintf(path, sizeof(path), CM_PATH "/fv-seeded?fieldValidation=Strict");
        const char *body = !strcmp(types[t].name, "json")
                               ? "[{\"op\":\"add\",\"path\":\"/data/x\",\"value\":\"1\"}]"
                               : "{\"data\":{\"x\":\"1\"}}";
        ts_resp r;
        ts_req(s, "PATCH", path, types[t].ctype, body, NULL, &r);
        if (r.status != 200)
            fail_msg("%s patch: HTTP %ld: %s", types[t].name, r.status, ts_s(r.json, "message"));
        assert_true(json_is_true(json_object_get(r.json, "legacy")));
        ts_resp_free(&r);
    }
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_ALL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_patch_field_validation_every_type_and_mode_20),
        cmocka_unit_test(test_server_patch_field_validation_bad_mode_400),
        cmocka_unit_test(test_server_apply_create_field_validation_45),
        cmocka_unit_test(test_server_patch_strict_does_not_blame_stored_fields),
    };
    int rc = cmocka_run_group_tests(tests, setup, teardown);
    curl_global_cleanup();
    return rc;
}
