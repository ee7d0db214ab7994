/*
 * events_fixture.h — what the event recorder's integration tests share (test_events_recorder.c,
 * test_events_v1.c): a recorder on the client fixture's kc_client with fast retries,
 * flush and stats that fail the test on error, and string reads of an Event. Header-only (static).
 */
#ifndef KC_TEST_EVENTS_FIXTURE_H
#define KC_TEST_EVENTS_FIXTURE_H

#include "test_client_fixture.h"

#include "kcache/event.h"

#include <stdlib.h>

/* A recorder on the fixture's client with fast retries (tests never wait 10 s). */
static inline kc_event_recorder *recorder(const kc_event_recorder_opts *extra)
{
    kc_event_recorder_opts o = {
        .component = "test-controller", .host = "node-1", .retry_interval_ms = 1};
    if (extra)
        o = *extra;
    kc_event_recorder *rec = NULL;
    kc_error err = KC_ERROR_INIT;
    int rc = kc_event_recorder_new(cli, &o, &rec, &err);
    if (rc)
        fail_msg("recorder: %s %s", kc_errno_name(rc), err.message);
    return rec;
}

static inline void flush(kc_event_recorder *rec)
{
    kc_error err = KC_ERROR_INIT;
    int rc = kc_event_recorder_flush(rec, 30000, &err);
    if (rc)
        fail_msg("flush: %s %s", kc_errno_name(rc), err.message);
}

static inline kc_event_recorder_stats stats(kc_event_recorder *rec)
{
    kc_event_recorder_stats st;
    kc_event_recorder_get_stats(rec, &st);
    return st;
}

static inline char *str_of(const kc_obj *o, const char *ptr)
{
    char *s = NULL;
    if (kc_obj_get_string(o, ptr, &s, NULL, NULL) < 0)
        return NULL;
    return s;
}

static inline void assert_str(const kc_obj *o, const char *ptr, const char *want)
{
    char *s = str_of(o, ptr);
    assert_non_null(s);
    assert_string_equal(s, want);
    free(s);
}

#endif
