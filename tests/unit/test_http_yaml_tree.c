/*
 * test_http_yaml_tree.c — the kubeconfig YAML tree (yaml_tree.c) on its edges: maps, sequences
 * and scalars with their lines; a repeated key keeps its first value (and the dropped value's
 * children are absorbed); aliases, non-scalar keys, nesting over KC__YAML_MAX_DEPTH and syntax
 * errors are KC_ECONFIG naming the problem; empty input is an empty tree.
 */
#include "http/internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static kc__ynode *parse_ok(const char *text)
{
    kc__ynode *root = NULL;
    kc_error e = KC_ERROR_INIT;
    int rc = kc__yaml_parse(text, strlen(text), &root, &e);
    if (rc != 0)
        fail_msg("kc__yaml_parse: %d (%s)", rc, e.message ? e.message : "");
    kc_error_clear(&e);
    return root;
}

/* Expect KC_ECONFIG with a message containing want. */
static void parse_fails(const char *text, const char *want)
{
    kc__ynode *root = (kc__ynode *)0x1;
    kc_error e = KC_ERROR_INIT;
    assert_int_equal(kc__yaml_parse(text, strlen(text), &root, &e), KC_ECONFIG);
    assert_non_null(e.message);
    if (!strstr(e.message, want))
        fail_msg("message '%s' does not contain '%s'", e.message, want);
    assert_ptr_equal(root, (kc__ynode *)0x1); /* not written on failure */
    kc_error_clear(&e);
}

static void test_tree_shape(void **state)
{
    (void)state;
    kc__ynode *root = parse_ok("a: x\nlist:\n  - 1\n  - {k: v}\nm:\n  n: y\n");
    assert_int_equal(root->type, KC__Y_MAP);
    assert_int_equal(root->n, 3);
    assert_string_equal(kc__ynode_str(root, "a"), "x");
    const kc__ynode *list = kc__ynode_get(root, "list");
    assert_non_null(list);
    assert_int_equal(list->type, KC__Y_SEQ);
    assert_int_equal(list->line, 3);
    assert_int_equal(list->n, 2);
    assert_string_equal(list->items[0]->scalar, "1");
    assert_string_equal(kc__ynode_str(list->items[1], "k"), "v");
    assert_string_equal(kc__ynode_str(kc__ynode_get(root, "m"), "n"), "y");
    assert_int_equal(kc__ynode_get(kc__ynode_get(root, "m"), "n")->line, 6);
    kc__ynode_free(root);
}

static void test_repeated_key_keeps_first(void **state)
{
    (void)state;
    kc__ynode *root =
        parse_ok("k: first\nk: second\nm: {a: 1}\nm: {b: [2, 3], c: {d: 4}}\nz: end\n");
    assert_int_equal(root->n, 3);
    assert_string_equal(kc__ynode_str(root, "k"), "first");
    const kc__ynode *m = kc__ynode_get(root, "m");
    assert_int_equal(m->n, 1);
    assert_string_equal(kc__ynode_str(m, "a"), "1");
    assert_null(kc__ynode_get(m, "b"));
    assert_string_equal(kc__ynode_str(root, "z"), "end");
    kc__ynode_free(root);
}

static void test_empty_input(void **state)
{
    (void)state;
    kc__ynode *root = (kc__ynode *)0x1;
    assert_int_equal(kc__yaml_parse("", 0, &root, NULL), 0);
    assert_null(root);
}

static void test_refused(void **state)
{
    (void)state;
    parse_fails("a: &x 1\nb: *x\n", "aliases are not supported (line 2)");
    parse_fails("? [a]\n: 1\n", "map key is not a scalar (line 1)");
    parse_fails("a: [1, 2\n", "YAML error at line");
    /* KC__YAML_MAX_DEPTH (64) open sequences fit; one more does not */
    char deep[256];
    memset(deep, '[', 64);
    memset(deep + 64, ']', 64);
    deep[128] = '\0';
    kc__ynode_free(parse_ok(deep));
    memset(deep, '[', 65);
    memset(deep + 65, ']', 65);
    deep[130] = '\0';
    parse_fails(deep, "nested deeper than 64 (line 1)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree_shape),
        cmocka_unit_test(test_repeated_key_keeps_first),
        cmocka_unit_test(test_empty_input),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
