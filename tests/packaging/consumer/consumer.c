/*
 * consumer.c — a tiny program built against an *installed* libkcache alone (find_package and
 * pkg-config), proving the installed headers, library and package files work together without
 * libkcache-server (run_install_test.sh checks what it links). It edits a kc_doc, so a static
 * link proves the package files name jansson.
 */
#include <kcache.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    if (strcmp(kc_version(), KC_VERSION_STRING) != 0) {
        fprintf(stderr, "version mismatch: %s vs %s\n", kc_version(), KC_VERSION_STRING);
        return 1;
    }
    if (kc_rv_compare("9", "10") != KC_RV_LESS ||
        strcmp(kc_errno_name(KC_EGONE), "KC_EGONE") != 0) {
        fprintf(stderr, "rv/error API misbehaves\n");
        return 1;
    }
    kc_label_selector *sel = NULL;
    kc_error err = KC_ERROR_INIT;
    if (kc_label_selector_parse("app in (web,db),!canary", &sel, &err) != 0) {
        fprintf(stderr, "selector: %s\n", err.message);
        return 1;
    }
    char *s = kc_label_selector_string(sel);
    int ok = s && strcmp(s, "app in (db,web),!canary") == 0;
    printf("kcache %s consumer: %s\n", kc_version(), s ? s : "(null)");
    free(s);
    kc_label_selector_free(sel);
    kc_doc *d = NULL;
    char *js = NULL;
    if (kc_doc_new(&d, &err) != 0 || kc_doc_set_string(d, "/data/k", "v", &err) != 0 ||
        kc_doc_json(d, &js, NULL, &err) != 0 || strcmp(js, "{\"data\":{\"k\":\"v\"}}") != 0) {
        fprintf(stderr, "kc_doc: %s\n", js ? js : err.message);
        ok = 0;
    }
    free(js);
    kc_doc_free(d);
    return ok ? 0 : 1;
}
