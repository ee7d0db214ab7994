/*
 * fuzz_label_selector.c — libFuzzer target for the label selector parser.
 *
 * Parses arbitrary bytes (NUL-terminated copy; inputs with an embedded NUL are cut there, as any
 * C caller would see them). When the text parses, the selector is matched against a fixed label
 * set and a fixed object, and its canonical string must parse again to the same canonical string.
 */
#include "kcache/selector.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char OBJ[] = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\","
                          "\"namespace\":\"d\",\"labels\":{\"app\":\"web\",\"n\":\"10\",\"e\":\"\","
                          "\"example.com/x\":\"y\"}}}";

static const char *lookup(void *ud, const char *key)
{
    static const char *const kv[] = {"app", "web", "n", "10", "e", "", "in", "notin", NULL};
    (void)ud;
    for (size_t i = 0; kv[i]; i += 2)
        if (strcmp(kv[i], key) == 0)
            return kv[i + 1];
    return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';

    kc_label_selector *sel = NULL;
    kc_error err = KC_ERROR_INIT;
    if (kc_label_selector_parse(text, &sel, &err) != 0) {
        if (!err.message || err.offset < 0 || (size_t)err.offset > strlen(text))
            abort(); /* every parse error names the problem and its offset */
        kc_error_clear(&err);
        free(text);
        return 0;
    }
    (void)kc_label_selector_match_fn(sel, lookup, NULL);
    kc_obj *obj = NULL;
    if (kc_obj_parse(OBJ, sizeof OBJ - 1, NULL, &obj, NULL) == 0) {
        (void)kc_label_selector_match(sel, obj);
        kc_obj_unref(obj);
    }
    char *s1 = kc_label_selector_string(sel);
    if (s1) {
        kc_label_selector *again = NULL;
        if (kc_label_selector_parse(s1, &again, &err) != 0) {
            fprintf(stderr, "canonical form \"%s\" does not parse: %s\n", s1, err.message);
            abort();
        }
        char *s2 = kc_label_selector_string(again);
        if (s2 && strcmp(s1, s2) != 0) {
            fprintf(stderr, "canonical form not stable: \"%s\" -> \"%s\"\n", s1, s2);
            abort();
        }
        free(s2);
        kc_label_selector_free(again);
    }
    free(s1);
    kc_label_selector_free(sel);
    free(text);
    return 0;
}
