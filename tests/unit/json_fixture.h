/*
 * json_fixture.h — helpers shared by the json unit tests of stored objects and documents (header
 * only, static functions): parse a text into a kc_obj or a kc_doc, failing the test with the
 * error's detail when it does not parse. Include after <cmocka.h>.
 */
#ifndef KC_TEST_JSON_FIXTURE_H
#define KC_TEST_JSON_FIXTURE_H

#include <kcache/doc.h>

#include <string.h>

static inline kc_obj *jf_obj(const char *json)
{
    kc_obj *o = NULL;
    kc_error err = KC_ERROR_INIT;
    int r = kc_obj_parse(json, strlen(json), NULL, &o, &err);
    if (r)
        fail_msg("kc_obj_parse: %s (%s)", kc_errno_name(r), err.message);
    return o;
}

static inline kc_doc *jf_doc(const char *json)
{
    kc_doc *d = NULL;
    kc_error err = KC_ERROR_INIT;
    int r = kc_doc_parse(json, strlen(json), &d, &err);
    if (r)
        fail_msg("kc_doc_parse: %s (%s)", kc_errno_name(r), err.message);
    return d;
}

#endif
