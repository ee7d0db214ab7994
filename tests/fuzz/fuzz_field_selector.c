/*
 * fuzz_field_selector.c — libFuzzer target for the field selector parser.
 *
 * Parses arbitrary bytes (NUL-terminated copy). When the text parses, the selector is matched
 * against a fixed Pod (exercising metadata fields, dotted paths, escaped strings, numbers, null)
 * and its canonical string must parse again to the same canonical string.
 */
#include "kcache/selector.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char OBJ[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-1\",\"namespace\":"
    "\"shop\",\"labels\":{\"app\":\"web\"}},\"spec\":{\"nodeName\":\"node-a\",\"hostNetwork\":"
    "true,\"priority\":5,\"schedulerName\":\"a\\\"b\\\\c\",\"x\":null,\"l\":[1,2]},"
    "\"status\":{\"phase\":\"Running\"}}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';

    kc_field_selector *sel = NULL;
    kc_error err = KC_ERROR_INIT;
    if (kc_field_selector_parse(text, &sel, &err) != 0) {
        if (!err.message || err.offset < 0 || (size_t)err.offset > strlen(text))
            abort();
        kc_error_clear(&err);
        free(text);
        return 0;
    }
    kc_obj *obj = NULL;
    if (kc_obj_parse(OBJ, sizeof OBJ - 1, NULL, &obj, NULL) == 0) {
        (void)kc_field_selector_match(sel, obj);
        kc_obj_unref(obj);
    }
    for (size_t i = 0; i < kc_field_selector_count(sel); i++)
        (void)kc_field_selector_exact(sel, kc_field_selector_field(sel, i));
    char *s1 = kc_field_selector_string(sel);
    if (s1) {
        kc_field_selector *again = NULL;
        if (kc_field_selector_parse(s1, &again, &err) != 0) {
            fprintf(stderr, "canonical form \"%s\" does not parse: %s\n", s1, err.message);
            abort();
        }
        char *s2 = kc_field_selector_string(again);
        if (s2 && strcmp(s1, s2) != 0) {
            fprintf(stderr, "canonical form not stable: \"%s\" -> \"%s\"\n", s1, s2);
            abort();
        }
        free(s2);
        kc_field_selector_free(again);
    }
    free(s1);
    kc_field_selector_free(sel);
    free(text);
    return 0;
}
