/*
 * test_json_owner — owner references: the controller's apiVersion/kind/name extracted at decode
 * time, ownership tests by uid, and kc_doc_set_controller_reference / set_owner_reference /
 * remove_owner_reference with controller-runtime's controllerutil semantics.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "json_fixture.h"

#include <kcache/owner.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char OWNED[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"s\",\"namespace\":\"ns\","
    "\"uid\":\"u-s\",\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"Other\",\"name\":\"o\","
    "\"uid\":\"u-other\"},{\"apiVersion\":\"apps/v1\",\"kind\":\"Deploy\\u006dent\",\"name\":"
    "\"web\",\"uid\":\"u-web\",\"controller\":true,\"blockOwnerDeletion\":true}]}}";

/* The controller's four fields come from the same entry (metav1.GetControllerOf); escapes are
 * unescaped; "" without a controller. */
static void test_json_owner_controller_accessors(void **state)
{
    (void)state;
    kc_obj *o = jf_obj(OWNED);
    assert_string_equal(kc_obj_controller_uid(o), "u-web");
    assert_string_equal(kc_obj_controller_api_version(o), "apps/v1");
    assert_string_equal(kc_obj_controller_kind(o), "Deployment");
    assert_string_equal(kc_obj_controller_name(o), "web");
    assert_int_equal(kc_obj_owner_count(o), 2);
    kc_obj_unref(o);

    o = jf_obj(
        "{\"metadata\":{\"name\":\"x\",\"ownerReferences\":[{\"kind\":\"K\",\"uid\":\"u\"}]}}");
    assert_string_equal(kc_obj_controller_uid(o), "");
    assert_string_equal(kc_obj_controller_kind(o), "");
    assert_string_equal(kc_obj_controller_name(o), "");
    assert_string_equal(kc_obj_controller_api_version(o), "");
    kc_obj_unref(o);

    /* a controller entry with only a kind: the others are "" (not the next string) */
    o = jf_obj("{\"metadata\":{\"name\":\"x\",\"ownerReferences\":[{\"kind\":\"K\","
               "\"controller\":true}]}}");
    assert_string_equal(kc_obj_controller_uid(o), "");
    assert_string_equal(kc_obj_controller_api_version(o), "");
    assert_string_equal(kc_obj_controller_kind(o), "K");
    assert_string_equal(kc_obj_controller_name(o), "");
    kc_obj_unref(o);

    assert_string_equal(kc_obj_controller_kind(NULL), "");
    assert_string_equal(kc_obj_controller_name(NULL), "");
    assert_string_equal(kc_obj_controller_api_version(NULL), "");
}

/* Wrong types and NULs in owner fields are refused at decode time, as the uid's always were. */
static void test_json_owner_decode_checks(void **state)
{
    (void)state;
    const char *bad[] = {
        "{\"metadata\":{\"ownerReferences\":[{\"kind\":1,\"controller\":true}]}}",
        "{\"metadata\":{\"ownerReferences\":[{\"name\":\"a\\u0000b\"}]}}",
        "{\"metadata\":{\"ownerReferences\":[{\"name\":\"a\",\"name\":\"b\"}]}}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kc_obj *o = NULL;
        kc_error err = KC_ERROR_INIT;
        assert_int_equal(kc_obj_parse(bad[i], strlen(bad[i]), NULL, &o, &err), KC_EPARSE);
        assert_null(o);
        kc_error_clear(&err);
    }
}

/* Heap: the four controller strings sit back to back in the string arena (no header field). */
static void test_json_owner_heap_cost(void **state)
{
    (void)state;
    kc_obj *none =
        jf_obj("{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"s\"}}");
    kc_obj *one =
        jf_obj("{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"s\","
               "\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"c\","
               "\"uid\":\"0123\",\"controller\":true}]}}");
    size_t n0, n1;
    kc_obj_json(none, &n0);
    kc_obj_json(one, &n1);
    /* the difference is the text plus uid, apiVersion, kind and name with their NULs */
    size_t extra = kc_obj_heap_size(one) - kc_obj_heap_size(none) - (n1 - n0);
    assert_true(extra <= strlen("0123v1ConfigMapc") + 4 + 3 /* label-array alignment */);
    kc_obj_unref(none);
    kc_obj_unref(one);
}

static kc_obj *owner_obj(const char *apiv, const char *kind, const char *ns, const char *name,
                         const char *uid)
{
    char j[512];
    snprintf(j, sizeof j,
             "{\"apiVersion\":\"%s\",\"kind\":\"%s\",\"metadata\":{\"name\":\"%s\",\"namespace\":"
             "\"%s\",\"uid\":\"%s\"}}",
             apiv, kind, name, ns, uid);
    return jf_obj(j);
}

/* metav1.IsControlledBy compares the controller's uid; ownership any reference's uid. */
static void test_json_owner_obj_tests(void **state)
{
    (void)state;
    kc_obj *o = jf_obj(OWNED);
    kc_obj *web = owner_obj("apps/v1", "Deployment", "ns", "web", "u-web");
    kc_obj *other = owner_obj("v1", "Other", "ns", "o", "u-other");
    kc_obj *web2 = owner_obj("apps/v1", "Deployment", "ns", "web", "u-web-recreated");
    assert_true(kc_obj_is_controlled_by(o, web));
    assert_false(kc_obj_is_controlled_by(o, other));
    assert_false(kc_obj_is_controlled_by(o, web2)); /* same name, new uid: not the owner */
    assert_true(kc_obj_is_owned_by(o, web));
    assert_true(kc_obj_is_owned_by(o, other));
    assert_false(kc_obj_is_owned_by(o, web2));
    assert_false(kc_obj_is_owned_by(NULL, web));
    assert_false(kc_obj_is_owned_by(o, NULL));
    assert_false(kc_obj_is_controlled_by(o, NULL));
    kc_obj_unref(o);
    kc_obj_unref(web);
    kc_obj_unref(other);
    kc_obj_unref(web2);
}

static void want_ref_string(const kc_doc *d, size_t i, const char *field, const char *want)
{
    char ptr[96];
    const char *s = NULL;
    snprintf(ptr, sizeof ptr, "/metadata/ownerReferences/%zu/%s", i, field);
    assert_int_equal(kc_doc_get_string(d, ptr, &s, NULL, NULL), 0);
    assert_string_equal(s, want);
}

static size_t ref_count(const kc_doc *d)
{
    size_t n = 0;
    if (kc_doc_count(d, "/metadata/ownerReferences", &n, NULL))
        return 0;
    return n;
}

/* SetControllerReference: the four fields from the owner, controller and blockOwnerDeletion true;
 * set twice → still one reference (upsertOwnerRef); the new owner's uid replaces the old one's. */
static void test_json_owner_set_controller(void **state)
{
    (void)state;
    kc_doc *d = jf_doc("{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"s\","
                       "\"namespace\":\"ns\"}}");
    kc_obj *cm = owner_obj("v1", "ConfigMap", "ns", "c", "u-1");
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_doc_set_controller_reference(d, cm, &err), 0);
    assert_int_equal(ref_count(d), 1);
    want_ref_string(d, 0, "apiVersion", "v1");
    want_ref_string(d, 0, "kind", "ConfigMap");
    want_ref_string(d, 0, "name", "c");
    want_ref_string(d, 0, "uid", "u-1");
    bool b = false;
    assert_int_equal(kc_doc_get_bool(d, "/metadata/ownerReferences/0/controller", &b, NULL), 0);
    assert_true(b);
    b = false;
    assert_int_equal(kc_doc_get_bool(d, "/metadata/ownerReferences/0/blockOwnerDeletion", &b, NULL),
                     0);
    assert_true(b);
    assert_true(kc_doc_is_owned_by(d, cm));
    assert_int_equal(kc_doc_set_controller_reference(d, cm, &err), 0);
    assert_int_equal(ref_count(d), 1);
    /* re-created under the same name (new uid): the same object for referSameObject */
    kc_obj *cm2 = owner_obj("v1", "ConfigMap", "ns", "c", "u-2");
    assert_int_equal(kc_doc_set_controller_reference(d, cm2, &err), 0);
    assert_int_equal(ref_count(d), 1);
    want_ref_string(d, 0, "uid", "u-2");
    assert_false(kc_doc_is_owned_by(d, cm));
    /* the stored form reads back through the decode-time accessors */
    kc_obj *o = NULL;
    assert_int_equal(kc_doc_to_obj(d, &o, &err), 0);
    assert_true(kc_obj_is_controlled_by(o, cm2));
    assert_string_equal(kc_obj_controller_kind(o), "ConfigMap");
    kc_obj_unref(o);
    kc_obj_unref(cm);
    kc_obj_unref(cm2);
    kc_doc_free(d);
}

/* Another controller: KC_ECONFLICT, reason AlreadyOwned (controllerutil.AlreadyOwnedError),
 * naming the other owner; a plain owner reference may still be added. */
static void test_json_owner_already_owned(void **state)
{
    (void)state;
    kc_doc *d = jf_doc("{\"metadata\":{\"name\":\"s\",\"namespace\":\"ns\",\"ownerReferences\":"
                       "[{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"name\":\"web\","
                       "\"uid\":\"u-web\",\"controller\":true}]}}");
    kc_obj *cm = owner_obj("v1", "ConfigMap", "ns", "c", "u-1");
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_doc_set_controller_reference(d, cm, &err), KC_ECONFLICT);
    assert_string_equal(err.reason, "AlreadyOwned");
    assert_non_null(strstr(err.message, "Deployment"));
    assert_non_null(strstr(err.message, "web"));
    assert_non_null(strstr(err.message, "u-web"));
    kc_error_clear(&err);
    assert_int_equal(ref_count(d), 1);
    /* SetOwnerReference: no controller flags, appended */
    assert_int_equal(kc_doc_set_owner_reference(d, cm, &err), 0);
    assert_int_equal(ref_count(d), 2);
    want_ref_string(d, 1, "uid", "u-1");
    assert_false(kc_doc_has(d, "/metadata/ownerReferences/1/controller"));
    assert_false(kc_doc_has(d, "/metadata/ownerReferences/1/blockOwnerDeletion"));
    /* the same controller again, another version of its group: updated, not refused */
    kc_obj *web = owner_obj("apps/v1beta1", "Deployment", "ns", "web", "u-web");
    assert_int_equal(kc_doc_set_controller_reference(d, web, &err), 0);
    assert_int_equal(ref_count(d), 2);
    want_ref_string(d, 0, "apiVersion", "apps/v1beta1");
    /* RemoveOwnerReference */
    assert_int_equal(kc_doc_remove_owner_reference(d, cm, &err), 0);
    assert_int_equal(ref_count(d), 1);
    assert_int_equal(kc_doc_remove_owner_reference(d, cm, &err), KC_ENOTFOUND);
    kc_error_clear(&err);
    kc_obj_unref(cm);
    kc_obj_unref(web);
    kc_doc_free(d);
}

/* Only the first controller reference counts (metav1.GetControllerOf): when it is the owner's, a
 * second (invalid) controller entry after it does not make the set fail. */
static void test_json_owner_first_controller_counts(void **state)
{
    (void)state;
    kc_doc *d =
        jf_doc("{\"metadata\":{\"name\":\"s\",\"namespace\":\"ns\",\"ownerReferences\":"
               "[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"c\",\"uid\":\"u-1\","
               "\"controller\":true},{\"apiVersion\":\"v1\",\"kind\":\"Other\",\"name\":"
               "\"o\",\"uid\":\"u-o\",\"controller\":true}]}}");
    kc_obj *cm = owner_obj("v1", "ConfigMap", "ns", "c", "u-1");
    kc_obj *other = owner_obj("v1", "Other", "ns", "o", "u-o");
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_doc_set_controller_reference(d, cm, &err), 0);
    assert_int_equal(kc_doc_set_controller_reference(d, other, &err), KC_ECONFLICT);
    assert_non_null(strstr(err.message, "ConfigMap"));
    kc_error_clear(&err);
    kc_obj_unref(cm);
    kc_obj_unref(other);
    kc_doc_free(d);
}

/* validateOwner: namespaced owner of a cluster-scoped object, or across namespaces → KC_EINVAL;
 * an owner missing uid/name/kind/apiVersion → KC_EINVAL naming the field. */
static void test_json_owner_invalid(void **state)
{
    (void)state;
    kc_doc *cluster = jf_doc("{\"metadata\":{\"name\":\"n\"}}");
    kc_doc *other_ns = jf_doc("{\"metadata\":{\"name\":\"n\",\"namespace\":\"b\"}}");
    kc_obj *cm = owner_obj("v1", "ConfigMap", "a", "c", "u-1");
    kc_obj *node = owner_obj("v1", "Node", "", "n1", "u-n");
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_doc_set_controller_reference(cluster, cm, &err), KC_EINVAL);
    assert_non_null(strstr(err.message, "cluster-scoped"));
    assert_int_equal(kc_doc_set_owner_reference(other_ns, cm, &err), KC_EINVAL);
    assert_non_null(strstr(err.message, "cross-namespace"));
    assert_int_equal(kc_doc_set_controller_reference(cluster, node, &err), 0);
    assert_int_equal(kc_doc_set_controller_reference(other_ns, node, &err), 0);
    const char *missing[] = {"uid", "name", "kind", "apiVersion"};
    kc_obj *bad[] = {owner_obj("v1", "K", "", "n", ""), owner_obj("v1", "K", "", "", "u"),
                     owner_obj("v1", "", "", "n", "u"), owner_obj("", "K", "", "n", "u")};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(kc_doc_set_controller_reference(other_ns, bad[i], &err), KC_EINVAL);
        assert_non_null(strstr(err.message, missing[i]));
        kc_obj_unref(bad[i]);
    }
    assert_int_equal(kc_doc_set_controller_reference(NULL, cm, &err), KC_EINVAL);
    assert_int_equal(kc_doc_set_owner_reference(other_ns, NULL, &err), KC_EINVAL);
    assert_int_equal(kc_doc_remove_owner_reference(NULL, cm, &err), KC_EINVAL);
    assert_false(kc_doc_is_owned_by(NULL, cm));
    kc_error_clear(&err);
    kc_obj_unref(cm);
    kc_obj_unref(node);
    kc_doc_free(cluster);
    kc_doc_free(other_ns);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_owner_controller_accessors),
        cmocka_unit_test(test_json_owner_decode_checks),
        cmocka_unit_test(test_json_owner_heap_cost),
        cmocka_unit_test(test_json_owner_obj_tests),
        cmocka_unit_test(test_json_owner_set_controller),
        cmocka_unit_test(test_json_owner_already_owned),
        cmocka_unit_test(test_json_owner_first_controller_counts),
        cmocka_unit_test(test_json_owner_invalid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
