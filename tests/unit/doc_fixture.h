/*
 * tests/unit/doc_fixture.h — what the kc_doc unit tests share (test_json_doc*.c): parse a text,
 * compare a document's output, check an error's code and message. Header-only (static); include
 * it after cmocka.h.
 */
#ifndef KC_TEST_DOC_FIXTURE_H
#define KC_TEST_DOC_FIXTURE_H

#include <kcache/doc.h>

#include <stdlib.h>
#include <string.h>

static inline kc_doc *parse(const char *json)
{
    kc_doc *d = NULL;
    kc_error err = KC_ERROR_INIT;
    int rc = kc_doc_parse(json, strlen(json), &d, &err);
    if (rc)
        fail_msg("parse %s: %s", json, err.message);
    return d;
}

/* The document's compact text equals want. */
static inline void want_json(const kc_doc *d, const char *want)
{
    char *s = NULL;
    size_t n = 0;
    assert_int_equal(kc_doc_json(d, &s, &n, NULL), 0);
    assert_string_equal(s, want);
    assert_int_equal(n, strlen(want));
    free(s);
}

/* The call failed with code and its message mentions every one of the words. */
static inline void want_err(int rc, const kc_error *err, int code, const char *word1,
                            const char *word2)
{
    assert_int_equal(rc, code);
    assert_int_equal(err->code, code);
    if (word1 && !strstr(err->message, word1))
        fail_msg("\"%s\" lacks \"%s\"", err->message, word1);
    if (word2 && !strstr(err->message, word2))
        fail_msg("\"%s\" lacks \"%s\"", err->message, word2);
}

#endif
