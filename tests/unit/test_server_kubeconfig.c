/*
 * test_server_kubeconfig.c — kubeconfig writer (src/server/http/kubeconfig_out.c): the file parses
 * back with libyaml to the expected cluster/user/context, strings that need quoting survive, the CA
 * is base64 of the PEM, the mode is 0600, the write is atomic (no temp file left), and a bad path
 * gives KC_EIO naming it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <openssl/evp.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "server/http/kubeconfig_out.h"

#define MAX_SCALARS 64

/* The document's scalars in order (keys and values alike). */
typedef struct scalars {
    char *s[MAX_SCALARS];
    int n;
} scalars;

static void read_scalars(const char *path, scalars *out)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    yaml_parser_t p;
    assert_true(yaml_parser_initialize(&p));
    yaml_parser_set_input_file(&p, f);
    out->n = 0;
    for (;;) {
        yaml_event_t ev;
        assert_true(yaml_parser_parse(&p, &ev));
        yaml_event_type_t t = ev.type;
        if (t == YAML_SCALAR_EVENT && out->n < MAX_SCALARS)
            out->s[out->n++] = strdup((const char *)ev.data.scalar.value);
        yaml_event_delete(&ev);
        if (t == YAML_STREAM_END_EVENT)
            break;
    }
    yaml_parser_delete(&p);
    fclose(f);
}

static void free_scalars(scalars *sc)
{
    for (int i = 0; i < sc->n; i++)
        free(sc->s[i]);
    sc->n = 0;
}

/* Value following the first occurrence of key after the scalar anchor (NULL = from the start). */
static const char *value_after(const scalars *sc, const char *anchor, const char *key)
{
    int i = 0;
    if (anchor)
        while (i < sc->n && strcmp(sc->s[i], anchor))
            i++;
    for (; i + 1 < sc->n; i++)
        if (!strcmp(sc->s[i], key))
            return sc->s[i + 1];
    return NULL;
}

static const char *value_of(const scalars *sc, const char *key)
{
    return value_after(sc, NULL, key);
}

static char tmpdir[256];

static int setup(void **state)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/kc_kcfg_XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    return 0;
}

static int teardown(void **state)
{
    DIR *d = opendir(tmpdir);
    struct dirent *de;
    char p[512];
    while (d && (de = readdir(d)))
        if (de->d_name[0] != '.') {
            snprintf(p, sizeof p, "%s/%s", tmpdir, de->d_name);
            unlink(p);
        }
    if (d)
        closedir(d);
    rmdir(tmpdir);
    return 0;
}

static int count_files(void)
{
    DIR *d = opendir(tmpdir);
    struct dirent *de;
    int n = 0;
    while ((de = readdir(d)))
        n += de->d_name[0] != '.';
    closedir(d);
    return n;
}

static void test_server_kubeconfig_plain_http(void **state)
{
    char path[512];
    snprintf(path, sizeof path, "%s/kc", tmpdir);
    assert_int_equal(kc__kubeconfig_write(path, "http://127.0.0.1:41234", NULL, NULL, NULL), 0);
    scalars sc;
    read_scalars(path, &sc);
    assert_string_equal(value_of(&sc, "apiVersion"), "v1");
    assert_string_equal(value_of(&sc, "kind"), "Config");
    assert_string_equal(value_of(&sc, "server"), "http://127.0.0.1:41234");
    assert_string_equal(value_of(&sc, "current-context"), "kcache");
    assert_string_equal(value_after(&sc, "contexts", "cluster"), "kcache");
    assert_string_equal(value_after(&sc, "contexts", "user"), "kcache");
    assert_null(value_of(&sc, "token"));
    assert_null(value_of(&sc, "certificate-authority-data"));
    assert_string_equal(value_of(&sc, "insecure-skip-tls-verify"), "true"); /* client-node */
    free_scalars(&sc);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(count_files(), 1); /* no temp file left behind */
}

static void test_server_kubeconfig_tls_and_token(void **state)
{
    char path[512];
    snprintf(path, sizeof path, "%s/kc", tmpdir);
    const char *ca = "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n";
    const char *token = "t0k: \"quoted\" #not-a-comment";
    assert_int_equal(kc__kubeconfig_write(path, "https://[::1]:6443", ca, token, NULL), 0);
    /* overwrite atomically: the second write replaces the first */
    assert_int_equal(kc__kubeconfig_write(path, "https://127.0.0.1:6443", ca, token, NULL), 0);
    scalars sc;
    read_scalars(path, &sc);
    assert_string_equal(value_of(&sc, "server"), "https://127.0.0.1:6443");
    assert_string_equal(value_of(&sc, "token"), token);
    const char *b64 = value_of(&sc, "certificate-authority-data");
    assert_non_null(b64);
    assert_null(value_of(&sc, "insecure-skip-tls-verify"));
    unsigned char dec[256];
    int n = EVP_DecodeBlock(dec, (const unsigned char *)b64, (int)strlen(b64));
    assert_true(n >= (int)strlen(ca));
    assert_memory_equal(dec, ca, strlen(ca));
    free_scalars(&sc);
    assert_int_equal(count_files(), 1);
}

static void test_server_kubeconfig_bad_directory(void **state)
{
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc__kubeconfig_write("/nonexistent-dir/kc", "http://x", NULL, NULL, &err),
                     KC_EIO);
    assert_non_null(strstr(err.message, "/nonexistent-dir/kc"));
    kc_error_clear(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_server_kubeconfig_plain_http, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_kubeconfig_tls_and_token, setup, teardown),
        cmocka_unit_test(test_server_kubeconfig_bad_directory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
