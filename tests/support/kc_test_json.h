/*
 * tests/support/kc_test_json.h — JSON assertions shared by the server tests (jansson; header-only,
 * static): kc_test_json_load (a test's literal JSON, or fail) and kc_test_json_at (the value at a
 * dotted path — object keys and array indexes, "spec.containers.0.image" — equals a JSON text;
 * on a mismatch both sides are printed).
 */
#ifndef KC_TEST_JSON_H
#define KC_TEST_JSON_H

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static inline json_t *kc_test_json_load(const char *s)
{
    json_error_t e;
    json_t *v = json_loads(s, JSON_DECODE_ANY, &e);
    if (!v)
        fail_msg("bad test JSON: %s: %s", s, e.text);
    return v;
}

static inline void kc_test_json_at(const json_t *doc, const char *path, const char *want_json)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    const json_t *v = doc;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ".", &save); tok && v; tok = strtok_r(NULL, ".", &save))
        v = json_is_array(v) ? json_array_get(v, (size_t)atoi(tok)) : json_object_get(v, tok);
    json_t *want = kc_test_json_load(want_json);
    char *got = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    bool same = v && json_equal((json_t *)v, want);
    json_decref(want);
    if (!same) {
        fprintf(stderr, "%s\n  got  %s\n  want %s\n", path, got ? got : "(absent)", want_json);
        free(got);
        fail_msg("%s: value differs (above)", path);
    }
    free(got);
}

#endif
