/*
 * faults.h — fault injection state of the embedded API server (owner: server-edge).
 *
 * Holds the kc_server_faults in force (changeable at run time from any thread) and a PRNG, and
 * answers the questions the request path and the watch streams ask. Thread-safe: one mutex.
 */
#ifndef KC_SERVER_FAULTS_H
#define KC_SERVER_FAULTS_H

#include "kcache/server.h"

typedef struct kc__faults kc__faults;

/* New fault state (init may be NULL = none; copied). seed 0 = from time. NULL on ENOMEM. */
kc__faults *kc__faults_new(const kc_server_faults *init, uint64_t seed);
void kc__faults_free(kc__faults *f);
void kc__faults_set(kc__faults *f, const kc_server_faults *faults);
void kc__faults_get(kc__faults *f, kc_server_faults *ret);

/* Should this request fail? Returns 0 (no), or the HTTP status to send (429, 500 or 503);
 * *ret_retry_after gets the Retry-After seconds to send (0 = no header). */
int kc__faults_inject(kc__faults *f, kc_server_verb verb, unsigned *ret_retry_after);

/* A random watch-event delay in nanoseconds drawn from [min,max] ms (0 when no delay set). */
uint64_t kc__faults_watch_delay_ns(kc__faults *f);

/* After a stream has sent `sent` events (sent >= 1): should the server close it now? */
bool kc__faults_close_watch(kc__faults *f, uint64_t sent);

/* true while watch_stall is set (events must not be delivered). */
bool kc__faults_stalled(kc__faults *f);

/* Parse "MIN[-MAX]" durations like "10ms-500ms", "50ms", "1s", "0" into milliseconds.
 * Errors: KC_EINVAL naming the bad text. */
int kc__faults_parse_delay(const char *text, unsigned *ret_min_ms, unsigned *ret_max_ms,
                           kc_error *err);

/* Faults as a JSON document (admin endpoint GET), new malloc'd string — caller frees. */
char *kc__faults_to_json(const kc_server_faults *faults);
/* Apply a JSON document (admin endpoint PUT/POST; fields absent keep their value in *inout).
 * Errors: KC_EBADREQUEST naming the bad field. */
int kc__faults_from_json(const char *json, size_t len, kc_server_faults *inout, kc_error *err);

#endif
