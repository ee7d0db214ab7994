/*
 * fuzz_jsonpath.c — libFuzzer target for the CLI's JSONPath templates (tools/kcache/jsonpath.c,
 * evaluated by jsonpath_eval.c: `kcache get -o jsonpath=…`, `-o custom-columns=…`, `--sort-by`).
 *
 * The input is parsed twice: as a template and as a relaxed expression (custom-columns' form).
 * A rejected one must say "jsonpath: … at offset N" with N within the input. An accepted
 * template is printed against a fixed List of Pods (ranges, filters, slices, recursion all have
 * something to walk), and an accepted expression's values are looked up and printed as Go's
 * fmt.Sprint would (custom-columns' cells).
 */
#include "jsonpath.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char DOC[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"metadata\":{\"resourceVersion\":\"\"},\"items\":["
    "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"labels\":{\"app\":\"web\",\"a.b/c\":\"x\"}},"
    "\"spec\":{\"containers\":[{\"name\":\"c1\",\"image\":\"nginx\"},{\"name\":\"c2\"}],"
    "\"priority\":5,\"ratio\":0.25,\"on\":true,\"none\":null},\"status\":{\"phase\":\"Running\"}},"
    "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"b\"},\"spec\":{\"containers\":[],\"priority\":"
    "-3,\"ratio\":1.5e300},\"status\":{\"phase\":\"Pending\"}}]}";

static void check_error(const char *err, size_t size)
{
    const char *at = strstr(err, " at offset ");
    if (strncmp(err, "jsonpath: ", 10) || !at || (size_t)atol(at + 11) > size)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static json_t *doc;
    if (!doc && !(doc = json_loads(DOC, 0, NULL)))
        abort();
    if (size > JP_MAX_LEN + 16)
        return 0;
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    size_t len = strlen(text);
    char err[256] = "";
    FILE *out = fopen("/dev/null", "w");
    for (int relaxed = 0; relaxed < 2 && out; relaxed++) {
        jp_tmpl *t = NULL;
        if (jp_parse(text, relaxed, &t, err, sizeof err)) {
            if (t)
                abort();
            check_error(err, len);
            continue;
        }
        if (!relaxed) {
            (void)jp_print(t, doc, size & 1, out, err, sizeof err);
        } else {
            json_t **vals = NULL;
            size_t n = 0;
            if (jp_find(t, doc, &vals, &n) == 0)
                for (size_t i = 0; i < n; i++)
                    free(jp_sprint(vals[i], size & 1));
            free(vals);
        }
        jp_free(t);
    }
    if (out)
        fclose(out);
    free(text);
    return 0;
}
