/*
 * fuzz_webhook_review.c — libFuzzer target for the webhook reviews (src/webhook/review*.c):
 * kc__wh_review on arbitrary bodies, for a validating, a mutating and a conversion route.
 *
 * Input: byte 0 selects the route (value % 3: validating, mutating, conversion; bit 2 sends a
 * Content-Type with a charset parameter, bit 3 a wrong one); the rest is the body. The handlers
 * use what they are given: the validating one reads every field, warns, annotates and denies
 * some; the mutating one edits the object through kc_doc and answers set_object; the conversion
 * one edits each object. Checks: nothing crashes or leaks; the status is 200, 400 or 415; a 200
 * body is JSON whose response.uid is the request's uid; a mutating patch decodes (base64) to a
 * JSON Patch that the embedded server's applier (kc__json_patch) turns the handler's starting
 * document into the document it asked for. No readiness wait happens (srv NULL).
 */
#include "server/patch/patch_internal.h"
#include "webhook/internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The transport's readiness wait: never called with srv NULL. */
bool kc__wh_wait_ready(kc_webhook_server *srv, int64_t timeout_ms)
{
    (void)srv;
    (void)timeout_ms;
    abort();
}

static char *g_from, *g_want; /* the mutating handler's starting and wanted documents */

static int validate(void *ud, const kc_admission_request *req, kc_admission_response *resp)
{
    (void)ud;
    size_t sum = strlen(req->uid) + strlen(req->kind.kind) + strlen(req->resource.resource) +
                 strlen(req->sub_resource) + strlen(req->request_kind.kind) +
                 strlen(req->request_resource.resource) + strlen(req->request_sub_resource) +
                 strlen(req->operation) + strlen(req->ns) + strlen(req->name) + strlen(req->user) +
                 strlen(req->user_uid) + strlen(req->options_json) + strlen(req->user_info_json) +
                 strlen(kc_obj_name(req->object)) + strlen(kc_obj_json(req->old_object, NULL));
    for (size_t i = 0; i < req->n_groups; i++)
        sum += strlen(req->groups[i]);
    kc_admission_response_warn(resp, req->name[0] ? req->name : "w");
    kc_admission_response_annotate(resp, req->ns[0] ? req->ns : "k", req->user);
    if (sum % 3 == 0)
        return kc_admission_response_deny(resp, sum % 2 ? 0 : 422, NULL, req->user);
    return sum % 7 == 0 ? KC_EINVAL : 0;
}

static int mutate(void *ud, const kc_admission_request *req, kc_admission_response *resp)
{
    (void)ud;
    if (!req->object)
        return 0;
    kc_doc *d = NULL;
    int rc = kc_doc_from_obj(req->object, &d, NULL);
    if (rc)
        return rc;
    kc_doc_json(d, &g_from, NULL, NULL);
    kc_doc_set_string(d, "/metadata/labels/fuzzed", req->operation, NULL);
    kc_doc_remove(d, "/spec/replicas", NULL);
    kc_doc_set_null(d, "/status", NULL);
    kc_doc_set_int(d, "/items/-", 1, NULL);
    kc_doc_remove(d, "/items/0", NULL);
    kc_doc_json(d, &g_want, NULL, NULL);
    rc = kc_admission_response_set_object(resp, d);
    kc_doc_free(d);
    return rc;
}

static int convert(void *ud, const char *desired, kc_doc *obj, kc_error *err)
{
    (void)ud;
    (void)desired;
    kc_doc_set_string(obj, "/spec/converted", "yes", NULL);
    if (kc_doc_has(obj, "/spec/fail"))
        return kc_error_set(err, KC_EINVAL, "refused");
    return 0;
}

/* The patch of a 200 mutating answer, applied to g_from, gives g_want. */
static void check_patch(const json_t *resp)
{
    const char *b64 = json_string_value(json_object_get(resp, "patch"));
    if (!b64) {
        if (json_object_get(resp, "patchType"))
            abort(); /* AR11 */
        return;
    }
    if (!g_from || !g_want)
        abort();
    unsigned char *p = NULL;
    size_t n = 0;
    if (kc_base64_decode(b64, strlen(b64), &p, &n, NULL))
        abort();
    json_t *ops = json_loadb((const char *)p, n, 0, NULL);
    json_t *doc = json_loads(g_from, JSON_DECODE_ANY, NULL);
    json_t *want = json_loads(g_want, JSON_DECODE_ANY, NULL);
    kc_error err = KC_ERROR_INIT;
    if (!ops || !doc || !want || kc__json_patch(&doc, ops, &err) || !kc__json_equal(doc, want))
        abort();
    kc_error_clear(&err);
    json_decref(ops);
    json_decref(doc);
    json_decref(want);
    free(p);
}

static void check_200(const kc__wh_route *r, const char *body, size_t len, const char *out,
                      size_t out_len)
{
    json_t *in = json_loadb(body, len, JSON_DECODE_ANY, NULL);
    json_t *ans = json_loadb(out, out_len, 0, NULL);
    if (!ans || !in)
        abort();
    json_t *resp = json_object_get(ans, "response");
    const char *uid = json_string_value(json_object_get(json_object_get(in, "request"), "uid"));
    const char *got = json_string_value(json_object_get(resp, "uid"));
    if (!uid || !got || strcmp(uid, got) != 0)
        abort();
    if (r->kind == KC__WH_MUTATING && json_is_true(json_object_get(resp, "allowed")))
        check_patch(resp);
    if (r->kind == KC__WH_VALIDATING && json_object_get(resp, "patch"))
        abort(); /* AR12 */
    json_decref(in);
    json_decref(ans);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    kc__wh_route r = {0};
    r.path = r.name = "/fuzz";
    r.kind = (kc__wh_kind)(data[0] % 3);
    r.admit = r.kind == KC__WH_MUTATING ? mutate : validate;
    r.convert = convert;
    r.cache_wait = true;
    const char *ct = (data[0] & 8)   ? "text/json"
                     : (data[0] & 4) ? "application/json; charset=utf-8"
                                     : "application/json";
    const char *body = (const char *)data + 1;
    size_t len = size - 1;
    int status = 0;
    char *out = NULL;
    size_t out_len = 0;
    const char *ctype = NULL;
    int rc = kc__wh_review(NULL, &r, ct, body, len, &status, &out, &out_len, &ctype);
    if (rc != 0 || !out || !ctype || (status != 200 && status != 400 && status != 415))
        abort();
    if ((data[0] & 8) && status != 415)
        abort();
    if (status == 200)
        check_200(&r, body, len, out, out_len);
    free(out);
    free(g_from);
    free(g_want);
    g_from = g_want = NULL;
    return 0;
}
