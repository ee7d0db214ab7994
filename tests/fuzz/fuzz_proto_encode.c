/*
 * fuzz_proto_encode.c — the protobuf encoder of the embedded server's replies (api/proto.c,
 * proto_encode.c over the generated table) on arbitrary JSON documents, as stored objects may
 * hold anything JSON writes put there: never crash, memory bounded by the input, and what it
 * writes always decodes (proto_decode.c) to a document that is a fixed point:
 * decode(encode(d)) == d for d = decode(encode(x)). The input is a JSON document; its apiVersion
 * and kind pick the message (others: KC_ENOTFOUND). Seeds: tests/fuzz/corpus/proto_encode/, one
 * document per served built-in kind with every field set (test_server_proto with
 * KC_PROTO_JSON_CORPUS_DIR set).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/api/api_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Encode JSON text; decode the result. NULL when the kind has no message or the text is no JSON
 * document; aborts when the encoder's output does not decode. */
static json_t *encode_decode(const char *text, size_t len)
{
    kc__buf b = KC__BUF_INIT(0);
    int rc = kc__proto_obj(&b, text, len);
    json_t *doc = NULL;
    if (rc == 0) {
        kc_error e = KC_ERROR_INIT;
        if (kc__proto_to_json(b.data, b.len, &doc, &e) != 0 &&
            !(e.message && strstr(e.message, "nesting too deep"))) {
            fprintf(stderr, "encoder output does not decode: %s\n", e.message ? e.message : "");
            abort();
        }
        kc_error_clear(&e);
    } else if (rc != KC_ENOTFOUND && rc != KC_EINVAL) {
        abort();
    }
    kc__buf_free(&b);
    return doc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 20)
        return 0;
    json_t *d = encode_decode((const char *)data, size);
    if (!d)
        return 0;
    char *text = json_dumps(d, JSON_COMPACT);
    if (!text)
        abort();
    json_t *again = encode_decode(text, strlen(text));
    if (again && !json_equal(d, again)) {
        char *t2 = json_dumps(again, JSON_COMPACT);
        fprintf(stderr, "not a fixed point:\n%s\n%s\n", text, t2 ? t2 : "");
        abort();
    }
    json_decref(again);
    free(text);
    json_decref(d);
    return 0;
}
