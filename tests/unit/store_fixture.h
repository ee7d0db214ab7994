/*
 * store_fixture.h — shared by the kc_store unit tests (test_store_api.c, test_store_wait.c): a
 * small Pod built from its parts, a new store, an applied event, and the watermark's check. Each
 * helper asserts its own success. Everything is static: each test file gets its own copy.
 */
#ifndef KC_TEST_STORE_FIXTURE_H
#define KC_TEST_STORE_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "kcache/obj.h"
#include "kcache/store.h"

/* A Pod (ns NULL: cluster-scoped) with uid, rv and the label app (NULL: "x"). */
static inline kc_obj *mk(const char *ns, const char *name, const char *uid, const char *rv,
                         const char *app)
{
    char buf[1024];
    snprintf(buf, sizeof(buf),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",%s%s%s"
             "\"uid\":\"%s\",\"resourceVersion\":\"%s\",\"labels\":{\"app\":\"%s\"}}}",
             name, ns ? "\"namespace\":\"" : "", ns ? ns : "", ns ? "\"," : "", uid, rv,
             app ? app : "x");
    kc_obj *o = NULL;
    assert_int_equal(kc_obj_parse(buf, strlen(buf), NULL, &o, NULL), 0);
    return o;
}

static inline kc_store *new_store(void)
{
    kc_store *s = NULL;
    assert_int_equal(kc_store_new(NULL, &s, NULL), 0);
    return s;
}

static inline void put(kc_store *s, kc_watch_type t, kc_obj *o)
{
    assert_int_equal(kc_store_apply(s, t, o, NULL, NULL), 0);
    kc_obj_unref(o);
}

static inline void wm_is(kc_store *s, const char *want)
{
    char buf[KC_STORE_RV_MAX];
    assert_true(kc_store_watermark(s, buf, sizeof(buf)) >= 0);
    assert_string_equal(buf, want);
}

#endif
