/*
 * hub_fixture.h — shared by the hub tests (test_server_hub.c, test_server_hub_arm.c): two
 * resource keys and the helpers that build a small ConfigMap and publish it as one event.
 * Everything is static: each test file gets its own copy.
 */
#ifndef KC_TEST_HUB_FIXTURE_H
#define KC_TEST_HUB_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>

#include "core/internal.h"
#include "server/storage/hub.h"

static int key_pods, key_cms; /* resource keys: compared by address */

/* A ConfigMap at rv whose label sel is "yes" or "no"; asserts that it parses. */
static inline kc_obj *mkobj(uint64_t rv, bool sel)
{
    char buf[200];
    int n = snprintf(buf, sizeof buf,
                     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"o\","
                     "\"namespace\":\"default\",\"resourceVersion\":\"%llu\",\"labels\":"
                     "{\"sel\":\"%s\"}}}",
                     (unsigned long long)rv, sel ? "yes" : "no");
    kc_obj *o = NULL;
    assert_int_equal(kc_obj_parse(buf, (size_t)n, NULL, &o, NULL), 0);
    return o;
}

/* Publish one ADDED/MODIFIED event for rv and drop the caller's references. */
static inline void publish(kc__hub *hub, const void *key, kc_watch_type type, uint64_t rv, bool sel,
                           bool old_sel)
{
    kc__hub_event ev = {.type = type, .obj = mkobj(rv, sel), .rv = rv};
    if (type != KC_WATCH_ADDED)
        ev.old = mkobj(rv - 1, old_sel);
    kc__hub_publish(hub, key, &ev);
    kc__hub_event_release(&ev);
}

#endif
