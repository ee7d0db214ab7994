/*
 * fuzz_proto_body.c — protobuf request bodies of the embedded server ("k8s\0" + runtime.Unknown;
 * api/proto.c, proto_decode.c over the generated table): never crash, memory bounded by the input
 * (libFuzzer's -rss_limit_mb), and for every body that decodes, the round trip through the
 * encoder (proto_encode.c) decodes to the same JSON: decode(encode(decode(x))) == decode(x).
 * Seeds: tests/fuzz/corpus/proto_body/, one valid body per served built-in kind (written by
 * test_server_proto with KC_PROTO_CORPUS_DIR set).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/api/api_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 20)
        return 0;
    json_t *doc = NULL;
    kc_error e = KC_ERROR_INIT;
    int rc = kc__proto_to_json((const char *)data, size, &doc, &e);
    if (rc) {
        /* every failure is a Status: 400 naming where, or 415 for a kind not served */
        if ((rc != KC_EBADREQUEST && rc != KC_EMEDIATYPE) || !e.message)
            abort();
        kc_error_clear(&e);
        return 0;
    }
    char *text = json_dumps(doc, JSON_COMPACT);
    if (!text)
        abort();
    kc__buf b = KC__BUF_INIT(0);
    rc = kc__proto_obj(&b, text, strlen(text));
    if (rc == 0) {
        json_t *back = NULL;
        if (kc__proto_to_json(b.data, b.len, &back, &e) != 0 || !json_equal(doc, back)) {
            char *t2 = back ? json_dumps(back, JSON_COMPACT) : NULL;
            fprintf(stderr, "round trip differs:\n%s\n%s\n%s\n", text, t2 ? t2 : "(error)",
                    e.message ? e.message : "");
            abort();
        }
        json_decref(back);
    } else if (rc != KC_EINVAL) { /* KC_EINVAL: nested deeper than the encoder goes */
        abort();
    }
    kc_error_clear(&e);
    kc__buf_free(&b);
    free(text);
    json_decref(doc);
    return 0;
}
