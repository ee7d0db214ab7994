/*
 * fuzz_patch.c — libFuzzer target for the server's patch engines (merge, JSON, strategic) and
 * server-side apply (YAML/JSON bodies, field sets, conflicts).
 *
 * Input: byte 0 selects the engine (bits 0-1: 0 merge, 1 JSON patch, 2 strategic, 3 apply),
 * bit 2 applies to a missing object (apply: create), bit 3 sets force (apply) or marks the object
 * a custom resource (strategic → 415 path); the rest is the patch body. Every call works against
 * a fixed Pod that already has managedFields from two managers. Nothing may crash or leak; a
 * successful result must be an object, and recording it as an Update write must succeed.
 */
#include "server/patch/patch.h"

#include <stdint.h>
#include <stdlib.h>

static const char POD[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"d\","
    "\"labels\":{\"app\":\"web\"},\"finalizers\":[\"f\"],\"managedFields\":[{\"manager\":\"a\","
    "\"operation\":\"Apply\",\"apiVersion\":\"v1\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{"
    "\"f:metadata\":{\"f:labels\":{\"f:app\":{}}},\"f:spec\":{\"f:containers\":{"
    "\"k:{\\\"name\\\":\\\"web\\\"}\":{\".\":{},\"f:image\":{},\"f:name\":{}}}}}},{\"manager\":"
    "\"b\",\"operation\":\"Update\",\"apiVersion\":\"v1\",\"time\":\"2026-01-01T00:00:00Z\","
    "\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:spec\":{\"f:nodeName\":{}}}}]},\"spec\":{"
    "\"nodeName\":\"n1\",\"containers\":[{\"name\":\"web\",\"image\":\"nginx\",\"ports\":[{"
    "\"containerPort\":80}],\"env\":[{\"name\":\"A\",\"value\":\"1\"}]}],\"volumes\":[{\"name\":"
    "\"v\",\"emptyDir\":{}}]}}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t sel = data[0];
    const char *body = (const char *)data + 1;
    size_t len = size - 1;
    json_t *cur = json_loads(POD, 0, NULL);
    if (!cur)
        return 0;
    json_t *out = NULL;
    kc_error err = KC_ERROR_INIT;
    int rc;
    switch (sel & 3) {
    case 0:
        rc = kc__patch_apply(KC__PATCH_MERGE, cur, body, len, "Pod", true, &out, &err);
        break;
    case 1:
        rc = kc__patch_apply(KC__PATCH_JSON, cur, body, len, "Pod", true, &out, &err);
        break;
    case 2:
        rc = kc__patch_apply(KC__PATCH_STRATEGIC, cur, body, len, "Pod", !(sel & 8), &out, &err);
        break;
    default:
        rc = kc__apply((sel & 4) ? NULL : cur, body, len, "fuzz", (sel & 8) != 0,
                       "2026-11-29T00:00:00Z", &out, &err);
        break;
    }
    if (rc == 0 && !json_is_object(out))
        abort();
    if (rc != 0 && out)
        abort();
    /* Record the write as an Update too (what server-core does for non-apply writes). */
    if (rc == 0 &&
        kc__managed_fields_update(out, (sel & 4) ? NULL : cur, "fuzz-update", NULL, NULL) != 0)
        abort();
    json_decref(out);
    kc_error_clear(&err);
    json_decref(cur);
    return 0;
}
