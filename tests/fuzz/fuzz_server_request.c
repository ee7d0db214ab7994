/*
 * fuzz_server_request.c — the request-path parsers of the embedded server that see raw client
 * input before any JSON parser: URL routing (kc__route_parse), Accept negotiation
 * (kc__negotiate) and protobuf request bodies (kc__proto_to_json). The first input byte picks the
 * parser ('r', 'a', 'p'; anything else runs all three); the rest is the input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/storage/srv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || size > 1 << 20)
        return 0;
    char mode = (char)data[0];
    char *s = malloc(size);
    if (!s)
        return 0;
    memcpy(s, data + 1, size - 1);
    s[size - 1] = 0; /* NUL-terminated view (stops at an embedded NUL) */
    if (mode == 'r' || (mode != 'a' && mode != 'p')) {
        kc__route r;
        kc__route_parse(s, &r);
    }
    if (mode == 'a' || (mode != 'r' && mode != 'p')) {
        enum kc__fmt f;
        kc_error e = KC_ERROR_INIT;
        kc__negotiate(s, &f, &e);
        kc_error_clear(&e);
    }
    if (mode == 'p' || (mode != 'r' && mode != 'a')) {
        json_t *doc = NULL;
        kc_error e = KC_ERROR_INIT;
        if (kc__proto_to_json((const char *)data + 1, size - 1, &doc, &e) == 0)
            json_decref(doc);
        kc_error_clear(&e);
    }
    free(s);
    return 0;
}
