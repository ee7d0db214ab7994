/*
 * fuzz_authz_proto.c — the protobuf decoder of the authorization room (authz/review_proto.c),
 * which reads raw client bodies ("k8s\0" + runtime.Unknown) of the review resources, TokenRequest
 * and RBAC objects: any input either decodes into a JSON object or is refused, never read past
 * its end, nesting bounded.
 */
#include <stdint.h>
#include <stdlib.h>

#include "server/authz/authz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 20)
        return 0;
    json_t *doc = kc__authz_proto_doc((const char *)data, size);
    if (doc && !json_is_object(doc))
        abort();
    json_decref(doc);
    return 0;
}
