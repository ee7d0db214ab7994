/*
 * test_defaults_util.h — helpers of the defaulting tests (header-only, static): expected
 * documents written with single quotes (turned into JSON), the stored object with its
 * server-chosen values (uid, timestamps, resourceVersion, managedFields, the uid anywhere else
 * in it) replaced by fixed tokens, and a comparison that prints both documents (sorted keys)
 * when they differ.
 */
#ifndef KC_TEST_DEFAULTS_UTIL_H
#define KC_TEST_DEFAULTS_UTIL_H

#include "test_server_util.h"

/* JSON text from a single-quoted form: every ' becomes ". Caller frees. */
TS_UNUSED static char *td_sq(const char *sq)
{
    char *s = strdup(sq);
    for (char *p = s; p && *p; p++)
        if (*p == '\'')
            *p = '"';
    return s;
}

/* Replace every string equal to from (anywhere in j) by to. */
TS_UNUSED static void td_replace(json_t *j, const char *from, const char *to)
{
    if (json_is_object(j)) {
        const char *k;
        json_t *v;
        json_object_foreach(j, k, v)
        {
            if (json_is_string(v) && !strcmp(json_string_value(v), from))
                json_object_set_new(j, k, json_string(to));
            else
                td_replace(v, from, to);
        }
    } else if (json_is_array(j)) {
        size_t i;
        json_t *v;
        json_array_foreach(j, i, v)
        {
            if (json_is_string(v) && !strcmp(json_string_value(v), from))
                json_array_set_new(j, i, json_string(to));
            else
                td_replace(v, from, to);
        }
    }
}

/* The object without what the server picks at random or by the clock. */
TS_UNUSED static void td_normalize(json_t *obj)
{
    json_t *m = json_object_get(obj, "metadata");
    char uid[64];
    snprintf(uid, sizeof(uid), "%s", json_string_value(json_object_get(m, "uid")) ?: "");
    json_object_del(m, "uid");
    json_object_del(m, "creationTimestamp");
    json_object_del(m, "resourceVersion");
    json_object_del(m, "managedFields");
    if (*uid)
        td_replace(obj, uid, "UID");
}

/* got (borrowed) equals the single-quoted expected document; prints both otherwise. */
TS_UNUSED static void td_expect(json_t *got, const char *expected_sq)
{
    char *txt = td_sq(expected_sq);
    json_error_t je;
    json_t *want = json_loads(txt, 0, &je);
    if (!want)
        fail_msg("expected document does not parse: %s (%s)", je.text, txt);
    free(txt);
    if (!json_equal(got, want)) {
        char *a = json_dumps(got, JSON_SORT_KEYS | JSON_INDENT(1));
        char *b = json_dumps(want, JSON_SORT_KEYS | JSON_INDENT(1));
        print_error("stored:\n%s\nexpected:\n%s\n", a, b);
        free(a);
        free(b);
        json_decref(want);
        fail();
    }
    json_decref(want);
}

/* POST body (single-quoted) to path, then GET it back by name: the normalized stored object
 * (caller json_decref). Fails the test unless the create gives 201. */
TS_UNUSED static json_t *td_create_get(kc_server *s, const char *path, const char *body_sq)
{
    char *body = td_sq(body_sq);
    ts_resp r;
    ts_post(s, path, body, &r);
    free(body);
    if (r.status != 201)
        fail_msg("create %s: HTTP %ld: %s", path, r.status, r.body ? r.body : "");
    char url[512];
    snprintf(url, sizeof(url), "%s/%s", path, ts_s(r.json, "metadata.name"));
    ts_resp_free(&r);
    assert_int_equal(ts_get(s, url, &r), 200);
    json_t *obj = json_incref(r.json);
    ts_resp_free(&r);
    td_normalize(obj);
    return obj;
}

#endif
