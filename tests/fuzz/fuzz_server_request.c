/*
 * fuzz_server_request.c — the request-path parsers of the embedded server that see raw client
 * input before any JSON parser: URL routing (kc__route_parse), Accept negotiation
 * (kc__negotiate) and protobuf request bodies (kc__proto_to_json), and the admin endpoint's
 * faults (kc__faults_from_json, kc_server_faults_parse of each field: watchDelay, listDelay, the
 * rates). The first input byte picks the parser ('r', 'a', 'p', 'f'; anything else runs all four);
 * the rest is the input.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/api/api_internal.h"
#include "server/http/http.h"
#include "server/testbed/faults.h"

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
    bool all = mode != 'r' && mode != 'a' && mode != 'p' && mode != 'f';
    if (mode == 'r' || all) {
        kc__route r;
        kc__route_parse(s, &r);
    }
    if (mode == 'a' || all) {
        enum kc__fmt f;
        kc_error e = KC_ERROR_INIT;
        kc__negotiate(s, &f, &e);
        kc_error_clear(&e);
    }
    if (mode == 'p' || all) {
        json_t *doc = NULL;
        kc_error e = KC_ERROR_INIT;
        if (kc__proto_to_json((const char *)data + 1, size - 1, &doc, &e) == 0)
            json_decref(doc);
        kc_error_clear(&e);
    }
    if (mode == 'f' || all) {
        kc_server_faults f = {0};
        kc_error e = KC_ERROR_INIT;
        kc__faults_from_json((const char *)data + 1, size - 1, &f, &e);
        kc_error_clear(&e);
        static const char *const fields[] = {"watchDelay", "listDelay", "rate429", "rate500",
                                             "rate503"};
        for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
            kc_server_faults_parse(fields[i], s, &f, &e);
            kc_error_clear(&e);
        }
    }
    free(s);
    return 0;
}
